"""A small server on fastmcp (pinned in .ci/run), served over Streamable HTTP.

    python fastmcp_server.py [--default-origin] [PORT]

The port is PORT, else the PORT environment variable, else 0 (any free
port); the server binds 127.0.0.1 and prints `PORT n` on stdout once it has
the socket. Stateless HTTP, which a 2026-07-28 deployment behind several
workers uses. Host/Origin protection is on, since the specification says
"Servers MUST validate the Origin header on all incoming connections"; with
`--default-origin` it keeps fastmcp 4.2.3's default
(`http_host_origin_protection = False`: no Origin check).
"""

import os
import socket
import sys

import anyio
import uvicorn
from fastmcp import FastMCP

mcp = FastMCP("protocheck-interop-fastmcp", version="1.0.0")


@mcp.tool(annotations={"readOnlyHint": True})
def echo(text: str) -> str:
    """Returns its text argument."""
    return text


@mcp.tool
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


@mcp.resource("memo://greeting")
def greeting() -> str:
    """A fixed greeting."""
    return "hello"


@mcp.prompt
def greet(who: str = "world") -> str:
    """Asks for a greeting."""
    return f"Say hello to {who}"


async def main(port: int, protect: bool) -> None:
    app = mcp.http_app(stateless_http=True, host_origin_protection=protect or None)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning")
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    args = sys.argv[1:]
    protect = "--default-origin" not in args
    args = [a for a in args if a != "--default-origin"]
    anyio.run(main, int(args[0] if args else os.environ.get("PORT", "0")), protect)
