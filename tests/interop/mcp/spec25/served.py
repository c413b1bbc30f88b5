"""Correct 2025-11-25 servers that are judged where and as they are served:
at a URL with a trailing slash or a query the server needs, and behind a rate
limiter. `variants.py` lists them with its own.

Transports, "Streamable HTTP": "The server MUST provide a single HTTP
endpoint path (hereafter referred to as the MCP endpoint) that supports both
POST and GET methods. For example, this could be a URL like
`https://example.com/mcp`." The endpoint is the URL the server gives, as
given: RFC 3986 §6.2.3 lets a client normalise an empty path to "/" and
nothing else of a path, so `/mcp/` and `/mcp` are two resources, and a
server may refuse the one it does not serve (404).
"""

import json
import threading

from server import Server

# The query the `mounted-query` server needs, as its users are told to add it.
KEY = "key=interop-7f3a"


class Mounted(Server):
    """Serves the MCP endpoint at one exact request target; every other one
    (another path, the same path without its trailing slash, a missing or
    different query) gets 404 with a plain-text body, as a router answers."""

    target = "/mcp/"

    def refused_at_door(self, handler):
        if handler.path == self.target:
            return False
        handler.drain()
        handler.send(404, b"Not Found", "text/plain")
        return True


class MountedSlash(Mounted):
    """Mounted at `/mcp/`: `/mcp` is not its endpoint."""


class MountedQuery(Mounted):
    """Mounted at `/mcp?key=…`: the key travels in the query, and a request
    without it is not at the endpoint."""

    target = "/mcp?" + KEY


class RateLimited(Server):
    """The correct server behind a rate limiter that refuses every fourth
    request the process gets (any method), before the server sees it.

    RFC 6585 §4, "429 Too Many Requests": "The 429 status code indicates that
    the user has sent too many requests in a given amount of time ("rate
    limiting"). The response representations SHOULD include details
    explaining the condition, and MAY include a Retry-After header indicating
    how long to wait before making a new request." RFC 9110 §10.2.3: a server
    sends Retry-After "to indicate how long the user agent ought to wait
    before making a follow-up request". The refusal is the limiter's, not the
    MCP server's answer to the request.
    """

    every = 4

    def __init__(self):
        super().__init__()
        self.seen = 0
        self.limit_lock = threading.Lock()

    def refused_at_door(self, handler):
        with self.limit_lock:
            self.seen += 1
            refuse = self.seen % self.every == 0
        if refuse:
            handler.drain()
            body = b'{"error":"rate_limited","message":"Too many requests; retry in 1 s"}'
            handler.send(429, body, "application/json", [("Retry-After", "1")])
            return True
        return super().refused_at_door(handler)


class TokenOnCall(Server):
    """Every method is open but `tools/call`, which needs a bearer token: a
    call without one is refused before it reaches the server, with 401, a
    Bearer challenge and the OAuth error body, as an authorizing proxy in
    front of the tools answers.

    Authorization, "Token Requirements" / "Error Handling": "Invalid or
    expired tokens MUST receive a HTTP 401 response"; RFC 6750 §3: the
    resource server answers with `WWW-Authenticate: Bearer …`, and §3.1
    `invalid_token` is its error code, carried in the body as OAuth's
    `{"error": …, "error_description": …}`. That body is no JSON-RPC message:
    basic, "Messages": "All messages between MCP clients and servers MUST
    follow the JSON-RPC 2.0 specification" binds the messages, and this
    refusal carries none.
    """

    def refused_message(self, handler, msg):
        if msg.get("method") != "tools/call" or handler.headers.get("Authorization"):
            return False
        body = json.dumps({
            "error": "invalid_token",
            "error_description": "tools/call needs a bearer token",
        }).encode()
        challenge = 'Bearer realm="mcp", error="invalid_token", error_description="tools/call needs a bearer token"'
        handler.send(401, body, "application/json", [("WWW-Authenticate", challenge)])
        return True


VARIANTS = {
    "mounted-slash": MountedSlash,
    "mounted-query": MountedQuery,
    "rate-limited": RateLimited,
    "token-on-call": TokenOnCall,
}
