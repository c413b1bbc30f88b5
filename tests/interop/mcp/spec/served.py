"""Correct servers that are judged where and as they are served: at a URL with
a trailing slash or a query the server needs, and behind a rate limiter.
`variants.py` lists them with its own (`python3 variants.py NAME [PORT]`).

HTTP transport: "The server MUST provide a single HTTP endpoint path
(hereafter referred to as the MCP endpoint) that supports both POST and GET
methods. For example, this could be a URL like `https://example.com/mcp`."
The endpoint is the URL the server gives, as given: RFC 3986 §6.2.3 lets a
client normalise an empty path to "/" and nothing else of a path, so
`/mcp/` and `/mcp` are two resources, and a server may refuse the one it
does not serve (404).
"""

import threading

from base import Server

# The query the `mounted-query` server needs, as its users are told to add it.
KEY = "key=interop-7f3a"


def drain(handler):
    """Reads the request body so that the connection can carry the next one."""
    try:
        length = int(handler.headers.get("Content-Length") or 0)
    except ValueError:
        length = 0
    if 0 < length <= 1 << 20:
        handler.rfile.read(length)
    elif length:
        handler.close_connection = True


class Mounted(Server):
    """Serves the MCP endpoint at one exact request target; every other one
    (another path, the same path without its trailing slash, a missing or
    different query) gets 404 with a plain-text body, as a router answers."""

    target = "/mcp/"

    def at_endpoint(self, handler):
        if handler.path == self.target:
            return True
        drain(handler)
        handler.send(404, b"Not Found", "text/plain")
        return False

    def post(self, handler):
        if self.at_endpoint(handler):
            super().post(handler)

    def other_method(self, handler):
        if self.at_endpoint(handler):
            super().other_method(handler)


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
    how long to wait before making a new request." RFC 9110 §10.2.3: a
    server sends Retry-After "to indicate how long the user agent ought to
    wait before making a follow-up request". The refusal is the limiter's,
    not the MCP server's answer to the request: a client that waits and
    sends it again gets the server's answer.
    """

    every = 4

    def __init__(self):
        super().__init__()
        self.count = 0
        self.lock = threading.Lock()

    def limited(self, handler):
        with self.lock:
            self.count += 1
            refuse = self.count % self.every == 0
        if refuse:
            drain(handler)
            body = b'{"error":"rate_limited","message":"Too many requests; retry in 1 s"}'
            handler.send(429, body, "application/json", [("Retry-After", "1")])
        return refuse

    def post(self, handler):
        if not self.limited(handler):
            super().post(handler)

    def other_method(self, handler):
        if not self.limited(handler):
            super().other_method(handler)


VARIANTS = {
    "mounted-slash": MountedSlash,
    "mounted-query": MountedQuery,
    "rate-limited": RateLimited,
}
