"""A small server on the official MCP Python SDK's public API (mcp 2.3.0).

    python sdk_server.py MODE [PORT]

MODE is `stateless-json` (stateless, JSON responses), `stateless-sse`
(stateless, SSE responses), `stateful` (the SDK's session mode, SSE
responses) or `legacy-sse` (the SDK's 2024-11-05 HTTP+SSE transport,
`sse_app`: GET /sse opens the stream, POST /messages/ carries requests). The port is PORT, else the PORT environment variable, else 0
(any free port); the server binds 127.0.0.1 and prints `PORT n` on stdout
once it has the socket.

    python sdk_server.py stdio

serves the same tools, resource and prompt over stdio instead.
"""

import os
import socket
import sys

import anyio
import uvicorn
from mcp.server import MCPServer
from mcp.types import ToolAnnotations

MODES = {
    "stateless-json": {"stateless_http": True, "json_response": True},
    "stateless-sse": {"stateless_http": True, "json_response": False},
    "stateful": {"stateless_http": False, "json_response": False},
}

mcp = MCPServer("protocheck-interop-sdk", version="1.0.0", log_level="WARNING")


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
def echo(text: str) -> str:
    """Returns its text argument."""
    return text


@mcp.tool()
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


@mcp.resource("memo://greeting")
def greeting() -> str:
    """A fixed greeting."""
    return "hello"


@mcp.prompt()
def greet(who: str = "world") -> str:
    """Asks for a greeting."""
    return f"Say hello to {who}"


async def main(mode: str, port: int) -> None:
    if mode == "legacy-sse":
        app = mcp.sse_app(host="127.0.0.1")
    else:
        app = mcp.streamable_http_app(host="127.0.0.1", **MODES[mode])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning")
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "stdio":
        mcp.run("stdio")
        sys.exit(0)
    if len(sys.argv) < 2 or sys.argv[1] not in [*MODES, "legacy-sse"]:
        sys.exit("usage: sdk_server.py {" + ",".join([*MODES, "legacy-sse"]) + "} [PORT] | stdio")
    anyio.run(main, sys.argv[1], int(sys.argv[2] if len(sys.argv) > 2 else os.environ.get("PORT", "0")))
