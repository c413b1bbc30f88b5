"""A small server on fastmcp (pinned in .ci/run), served over Streamable HTTP.

    python fastmcp_server.py [PORT]

The port is PORT, else the PORT environment variable, else 0 (any free
port); the server binds 127.0.0.1 and prints `PORT n` on stdout once it has
the socket. fastmcp's defaults are kept, except two settings: stateless HTTP,
which a 2026-07-28 deployment behind several workers uses, and Host/Origin
protection, which fastmcp turns on by itself for a server it binds to
localhost but cannot see here, since the socket is bound before the app.
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


async def main(port: int) -> None:
    app = mcp.http_app(stateless_http=True, host_origin_protection=True)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning")
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("PORT", "0")))
