"""A protected MCP server on the official MCP Python SDK's public API (mcp 2.3.0).

    python sdk_auth_server.py --token TOKEN [PORT]

A resource server as the SDK documents one: `MCPServer(auth=AuthSettings(...),
token_verifier=...)` over Streamable HTTP (the SDK's default session mode,
`streamable_http_app()`), with the SDK's own bearer-token middleware. The
token verifier accepts exactly TOKEN (an opaque token, reported as issued for
this server's `resource_server_url`, with `validate_token_resource=True`,
and granted the one scope the server requires, `mcp`);
every other request gets the SDK's 401 with `WWW-Authenticate: Bearer …
resource_metadata=…`, and the SDK serves the RFC 9728 protected resource
metadata at `/.well-known/oauth-protected-resource/mcp`.

No authorization server runs. The issuer named in `AuthSettings` is a second
loopback port of this process that serves one document: the RFC 8414
authorization server metadata as the SDK's `build_metadata` writes it for its
own authorization server (no client registration, no revocation). Its
authorization and token endpoints are named there but not served; nothing
here issues tokens.

The MCP server's port is PORT, else the PORT environment variable, else 0
(any free port); both servers bind 127.0.0.1, and `PORT n` (the MCP
server's) is printed on stdout once both sockets are bound.
"""

import argparse
import os
import socket

import anyio
import uvicorn
from mcp.server import MCPServer
from mcp.server.auth.handlers.metadata import MetadataHandler
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_metadata
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.types import ToolAnnotations
from starlette.applications import Starlette
from starlette.routing import Route


# The scope every request needs (`AuthSettings.required_scopes`); the SDK lists
# it in the protected resource metadata's `scopes_supported`.
SCOPE = "mcp"


class FixedTokenVerifier:
    """The SDK's `TokenVerifier` protocol: one token, given on the command line."""

    def __init__(self, token: str, resource: str):
        self.token = token
        self.resource = resource

    async def verify_token(self, token: str) -> AccessToken | None:
        if token != self.token:
            return None
        return AccessToken(token=token, client_id="protocheck-interop", scopes=[SCOPE], resource=self.resource)


def bound(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    return sock


def build_server(token: str, port: int, issuer: str) -> MCPServer:
    resource = f"http://127.0.0.1:{port}/mcp"
    mcp = MCPServer(
        "protocheck-interop-sdk-auth",
        version="1.0.0",
        log_level="WARNING",
        token_verifier=FixedTokenVerifier(token, resource),
        auth=AuthSettings(
            # Strings, as the SDK's docs pass them: AuthSettings keeps a
            # path-less issuer without a trailing slash (RFC 8414 compares
            # issuers as exact strings).
            issuer_url=issuer,
            resource_server_url=resource,
            required_scopes=[SCOPE],
            validate_token_resource=True,
        ),
    )

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

    return mcp


def issuer_app(settings: AuthSettings) -> Starlette:
    metadata = build_metadata(
        settings.issuer_url,
        None,
        ClientRegistrationOptions(),
        RevocationOptions(),
    )
    return Starlette(
        routes=[
            Route(
                "/.well-known/oauth-authorization-server",
                endpoint=MetadataHandler(metadata).handle,
                methods=["GET"],
            )
        ]
    )


async def main(token: str, port: int) -> None:
    mcp_sock = bound(port)
    as_sock = bound(0)
    mcp_port = mcp_sock.getsockname()[1]
    issuer = f"http://127.0.0.1:{as_sock.getsockname()[1]}"
    mcp = build_server(token, mcp_port, issuer)
    app = mcp.streamable_http_app(host="127.0.0.1")
    assert mcp.settings.auth is not None
    print(f"PORT {mcp_port}", flush=True)
    async with anyio.create_task_group() as tg:
        for one, sock in [(app, mcp_sock), (issuer_app(mcp.settings.auth), as_sock)]:
            server = uvicorn.Server(uvicorn.Config(one, log_level="warning"))
            tg.start_soon(lambda s=server, k=sock: s.serve(sockets=[k]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--token", required=True, help="the one bearer token the server accepts")
    parser.add_argument("port", nargs="?", type=int, default=int(os.environ.get("PORT", "0")))
    args = parser.parse_args()
    anyio.run(main, args.token, args.port)
