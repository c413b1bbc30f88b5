"""A correct server some of whose methods need authorization: every method is
open but `tools/call`, which an authorizing proxy in front of the tools
refuses without a bearer token. `variants.py` lists it with its own
(`python3 variants.py NAME [PORT]`).

Authorization, "Authorization Flow Steps" / "Protected Resource Metadata
Discovery Requirements": "MCP servers MUST implement one of the following
discovery mechanisms to provide authorization server location information
to MCP clients: WWW-Authenticate Header: Include the resource metadata URL
in the `WWW-Authenticate` HTTP header under `resource_metadata` when
returning 401 Unauthorized responses, as described in RFC9728 Section 5.1";
"Authorization Server Location": "MCP servers MUST implement the OAuth 2.0
Protected Resource Metadata (RFC9728) specification to indicate the
locations of authorization servers." Authorization, "Access Token Usage" /
"Error Handling": "Invalid or expired tokens MUST receive a HTTP 401
response" (a request without one is answered the same way, RFC 6750 §3).
Nothing in the specification orders authorization after header validation:
a refusal before the request is looked at is the proxy's answer, not the MCP
server's, and says nothing of how the server validates headers.
"""

import io
import json

from base import PATH, Server

# The RFC 9728 §3.1 path-inserted well-known URI of the endpoint.
PRM_PATH = "/.well-known/oauth-protected-resource" + PATH
# The RFC 8414 §3 path-inserted well-known URI of the authorization server
# `/as` the metadata lists.
AS_PATH = "/.well-known/oauth-authorization-server/as"
# The one token the proxy accepts; any other is invalid (Authorization,
# "Error Handling": "Invalid or expired tokens MUST receive a HTTP 401
# response").
TOKEN = "scoped-interop-token"


class TokenOnCall(Server):
    """`tools/call` without `Authorization` gets 401, `WWW-Authenticate:
    Bearer resource_metadata="…"` and the OAuth error body, before the server
    sees it; the protected resource metadata is served at its well-known
    URI. Every other method is served as the base server serves it."""

    def origin(self, handler):
        host = handler.headers.get("Host") or "127.0.0.1"
        return "http://" + host

    def other_method(self, handler):
        if handler.command == "GET" and handler.path == PRM_PATH:
            base = self.origin(handler)
            doc = {
                "resource": base + PATH,
                "authorization_servers": [base + "/as"],
                "scopes_supported": ["mcp:tools"],
                "bearer_methods_supported": ["header"],
            }
            return handler.send(200, json.dumps(doc).encode(), "application/json")
        if handler.command == "GET" and handler.path == AS_PATH:
            issuer = self.origin(handler) + "/as"
            doc = {
                "issuer": issuer,
                "authorization_endpoint": issuer + "/authorize",
                "token_endpoint": issuer + "/token",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "authorization_response_iss_parameter_supported": True,
                "client_id_metadata_document_supported": True,
                "scopes_supported": ["mcp:tools"],
            }
            return handler.send(200, json.dumps(doc).encode(), "application/json")
        super().other_method(handler)

    def post(self, handler):
        try:
            length = int(handler.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
        if length <= 0 or length > 1 << 20:
            return super().post(handler)
        raw = handler.rfile.read(length)
        try:
            msg = json.loads(raw)
        except ValueError:
            msg = None
        if (
            isinstance(msg, dict)
            and msg.get("method") == "tools/call"
            and handler.headers.get("Authorization") != "Bearer " + TOKEN
        ):
            challenge = (
                f'Bearer resource_metadata="{self.origin(handler)}{PRM_PATH}", '
                'scope="mcp:tools"'
            )
            if handler.headers.get("Authorization"):
                challenge += ', error="invalid_token"'
            body = json.dumps({
                "error": "invalid_token",
                "error_description": "tools/call needs a bearer token",
            }).encode()
            return handler.send(401, body, "application/json", [("WWW-Authenticate", challenge)])
        # The body was read here: the base server reads it again from a copy,
        # and the connection's own stream carries the next request.
        stream = handler.rfile
        handler.rfile = io.BytesIO(raw)
        try:
            super().post(handler)
        finally:
            handler.rfile = stream


VARIANTS = {
    "token-on-call": TokenOnCall,
}
