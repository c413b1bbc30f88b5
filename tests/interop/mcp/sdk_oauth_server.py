"""A protected MCP server with the official MCP Python SDK's own authorization server (mcp 2.3.0).

    python sdk_oauth_server.py [PORT]

The SDK's combined mode, as its documentation describes it:
`MCPServer(auth_server_provider=..., auth=AuthSettings(...))` serves, beside
the MCP endpoint `/mcp` (Streamable HTTP), the SDK's RFC 8414 metadata,
dynamic client registration (RFC 7591), the authorization endpoint and the
token endpoint (which checks PKCE S256 itself), and the RFC 9728 protected
resource metadata. Everything OAuth is the SDK's code; this file supplies
only the storage its `OAuthAuthorizationServerProvider` protocol asks for,
in memory:

- `authorize` approves at once (there is no person and no login page here:
  the consent a real server would ask for is taken as given) and sends the
  browser back with a fresh code, as the protocol's docstring describes;
- codes, access and refresh tokens are random strings bound to the client,
  the scopes, the PKCE challenge and the RFC 8707 `resource`.

Its bearer-token middleware then accepts those tokens on `/mcp` (the SDK's
`ProviderTokenVerifier`). The issuer is the server's own origin.

The port is PORT, else the PORT environment variable, else 0 (any free
port); it binds 127.0.0.1 and prints `PORT n` on stdout once bound.
"""

import os
import secrets
import socket
import sys
import time

import anyio
import uvicorn
from mcp.server import MCPServer
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp.types import ToolAnnotations

SCOPE = "mcp"
LIFETIME = 3600


class MemoryProvider:
    """The SDK's `OAuthAuthorizationServerProvider` protocol, kept in memory."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = AuthorizationCode(
            code=secrets.token_urlsafe(32),
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 60,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        self.codes[code.code] = code
        return construct_redirect_uri(str(params.redirect_uri), code=code.code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        code = self.codes.get(authorization_code)
        return code if code and code.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access = secrets.token_urlsafe(32)
        refresh = secrets.token_urlsafe(32)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + LIFETIME,
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=LIFETIME,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        token = self.refresh.get(refresh_token)
        return token if token and token.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        return self._issue(client.client_id, scopes or refresh_token.scopes, None)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found and found.expires_at and found.expires_at < time.time():
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


def main(port: int) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    origin = f"http://127.0.0.1:{port}"
    mcp = MCPServer(
        "protocheck-interop-sdk-oauth",
        version="1.0.0",
        log_level="WARNING",
        auth_server_provider=MemoryProvider(),
        auth=AuthSettings(
            issuer_url=origin,
            resource_server_url=f"{origin}/mcp",
            required_scopes=[SCOPE],
            validate_token_resource=True,
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE]
            ),
        ),
    )

    @mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def echo(text: str) -> str:
        """Returns its text argument."""
        return text

    app = mcp.streamable_http_app(host="127.0.0.1")
    print(f"PORT {port}", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    anyio.run(lambda: server.serve(sockets=[sock]))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else int(os.environ.get("PORT", "0")))
