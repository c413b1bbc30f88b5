"""Behaviours seen on published MCP servers, each written into the correct
2025-11-25 server of server.py from the specification text: `python3
observed.py NAME [PORT]` over Streamable HTTP (prints `PORT n`).

Each variant is a server a checker must judge as it is: a valid answer
larger than a checker's default read limit, a server error where a 4xx is
preferred, a message read as a response rather than a request, a Host
allow-list that refuses every request, a credential scheme of the server's
own. The expected verdict of each, with the specification sentence behind
it, is in tests/interop/EXPECTED.md (sections "## MCP 2025-11-25" and, for
the refusals, "## MCP").
"""

import io
import json
import socket
import sys
from http.server import ThreadingHTTPServer

import server
from server import MAX_BODY, PATH, RESOURCES, Handler, Server


class Observed(Server):
    """The correct server, with two more hooks on the HTTP side."""

    def refusal(self, handler):
        """(status, body, headers) to answer any request with, before anything else."""
        return None

    def post_answer(self, msg):
        """(status, body) to answer a parsed POST body with instead of serving it."""
        return None


# --- item: protocheck's own limits -------------------------------------------

BUNDLE_URI = "ui://apps/dashboard.html"
# An MCP Apps HTML bundle: a valid text resource of 1.36 MB, as one published
# server returns for its dashboard (scripts and styles inlined).
BUNDLE = ("<!doctype html><html><head><meta charset=\"utf-8\"><title>dashboard</title>"
          "<script>" + "/* inlined application bundle */ var x = 0;\n" * 31_000
          + "</script></head><body><div id=\"app\"></div></body></html>")
assert 1_300_000 < len(BUNDLE.encode()) < 1_400_000


class AppsBundle(Observed):
    """Lists an MCP Apps HTML bundle first and returns it whole, 1.36 MB of text.

    RESOURCES "Reading Resources": the result holds `contents`, each with a
    `uri` and `text` (or `blob`). No sentence bounds a resource's size: a
    result larger than a client chooses to read is still a valid result.
    `apps-bundle-over-limit` is the same server, checked with a read limit
    of 1 MiB (`--max-answer-bytes 1048576`): the read is not judged.
    """

    def dispatch(self, call, method, params):
        if method == "resources/list":
            bundle = {"uri": BUNDLE_URI, "name": "dashboard",
                      "mimeType": "text/html;profile=mcp-app"}
            return self.page("resources", [bundle] + RESOURCES, params)
        return super().dispatch(call, method, params)

    def read(self, params):
        if params.get("uri") == BUNDLE_URI:
            return {"contents": [{"uri": BUNDLE_URI, "mimeType": "text/html;profile=mcp-app",
                                  "text": BUNDLE}]}
        return super().read(params)


# --- item: one behaviour, one severity ---------------------------------------

def no_method(msg):
    """An object with an `id` and neither `method` nor `result` or `error`."""
    return isinstance(msg, dict) and "id" in msg and not ({"method", "result", "error"} & set(msg))


class ServerErrors(Observed):
    """Answers a JSON array, and an object with an `id` but no `method`,
    `result` or `error`, with HTTP 500 and an empty body, as a handler that
    throws on them does.

    BASIC "Messages": a message is a request, a response or a notification
    (2025-06-18 removed batching); TRANSPORTS "Sending Messages to the
    Server": input the server cannot accept gets an HTTP error status, "such
    as 400 Bad Request". A 500 refuses the input, as a server error: no array
    answers the batch, and nothing of either is processed.
    """

    def post_answer(self, msg):
        if isinstance(msg, list) or no_method(msg):
            return 500, b""
        return None


class AmbiguousAsResponse(Observed):
    """Takes an object with an `id` and neither `method` nor `result`/`error`
    for a malformed response, and answers it as a response it ignores: 202
    with no body.

    TRANSPORTS "Sending Messages to the Server": "If the input is a JSON-RPC
    response or notification: If the server accepts the input, the server
    MUST return HTTP status code 202 Accepted with no body." The object is no
    more a request (no `method`) than a response (no `result` or `error`).
    """

    def post_answer(self, msg):
        if no_method(msg):
            return 202, b""
        return None


class EmptyIgnoresCursor(Observed):
    """Lists no prompts, and serves every list from its start whatever the cursor.

    PAGINATION "Error Handling": "Invalid cursors SHOULD result in an error
    with code -32602 (Invalid params)". Ignoring the cursor answers an empty
    `prompts` list: the finding must not call it a page of items.
    """

    def decode_cursor(self, key, cursor, count):
        return 0

    def dispatch(self, call, method, params):
        if method == "prompts/list":
            return self.page("prompts", [], params)
        return super().dispatch(call, method, params)


# --- item: refusals are named, not graded ------------------------------------

class HostAllowList(Observed):
    """Accepts only `Host: localhost:PORT` and refuses every other request
    with 403 "Access is only allowed at localhost:PORT", as a DNS-rebinding
    guard with a default allow-list does.

    TRANSPORTS "Security Warning": servers MUST validate the Origin header
    to prevent DNS rebinding attacks (a Host allow-list is the same guard).
    Checked at http://127.0.0.1:PORT/mcp, it refuses everything: nothing of
    it can be judged, and no grade is given.
    """

    def refusal(self, handler):
        port = handler.server.server_address[1]
        allowed = f"localhost:{port}"
        if (handler.headers.get("Host") or "") != allowed:
            return 403, f"Access is only allowed at {allowed}".encode(), [("Content-Type", "text/plain")]
        return None


API_KEY = "protocheck-interop-key-7d2a"


class OwnScheme(Observed):
    """Requires its own API key (`X-Api-Key`) on /mcp and answers a request
    without it 401 with a JSON error and no `WWW-Authenticate`; it serves no
    protected resource metadata.

    AUTHORIZATION "Introduction": "Authorization is OPTIONAL for MCP
    implementations. When supported: Implementations using an HTTP-based
    transport SHOULD conform to this specification." A server with a scheme
    of its own departs from a SHOULD, not a MUST.
    """

    def refusal(self, handler):
        if handler.path.split("?")[0] != PATH:
            return None
        if handler.headers.get("X-Api-Key") != API_KEY:
            body = json.dumps({"error": "unauthorized", "message": "missing or invalid X-Api-Key"})
            return 401, body.encode(), [("Content-Type", "application/json")]
        return None


# --- Streamable HTTP with the hooks ------------------------------------------

class ObservedHandler(Handler):
    def refused(self):
        answer = self.srv.refusal(self)
        if answer is None:
            return False
        status, body, headers = answer
        self.drain()
        self.send(status, body, None, headers)
        return True

    def do_GET(self):
        if not self.refused():
            super().do_GET()

    def do_DELETE(self):
        if not self.refused():
            super().do_DELETE()

    def do_POST(self):
        if self.refused():
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 < length <= MAX_BODY:
            return super().do_POST()
        body = self.rfile.read(length)
        try:
            msg = json.loads(body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            msg = None
        answer = None if msg is None else self.srv.post_answer(msg)
        if answer is not None:
            status, text = answer
            return self.send(status, text)
        # Served as server.py serves it, from the bytes already read.
        real, self.rfile = self.rfile, io.BytesIO(body)
        try:
            super().do_POST()
        finally:
            self.rfile = real


def serve_http(srv, port):
    handler = type("H", (ObservedHandler,), {"srv": srv})
    httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
    httpd.daemon_threads = True
    httpd.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    print(f"PORT {httpd.server_address[1]}", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()


# --- item: a process that ends on a client's malformed line --------------------

class ExitsOnBadLine(Observed):
    """Over stdio, ends its process with status 1 on a line that is not JSON or
    is a JSON array, writing why to stderr, as a server whose stdio loop treats
    a decoding error as fatal does.

    TRANSPORTS "stdio": the client "MUST NOT write anything to the server's
    stdin that is not a valid MCP message"; nothing in the specification says
    what the server does with such a line, so ending the process breaks no
    sentence. Every other message is served as the correct server serves it.
    """

    def unparsable(self, err, emit):
        sys.stderr.write(f"fatal: reading stdin: {err}\n")
        sys.stderr.flush()
        sys.exit(1)

    def batch(self, session, items, emit):
        sys.stderr.write("fatal: reading stdin: a JSON array is not a message\n")
        sys.stderr.flush()
        sys.exit(1)


# --- item: answers in another order than the requests came ----------------------

class ServesEarlyLate(Observed):
    """Over stdio, serves the requests written before `initialize` (`ping`
    aside) with results, each 0.3 s later in a thread of its own, so a `ping`
    written after one is answered first; after `initialize` it serves as the
    correct server does. An SDK that serves stdin's lines side by side answers
    so.

    LIFECYCLE "Initialization": "The client SHOULD NOT send requests other
    than pings before the server has responded to the `initialize` request"
    binds the client; a server that serves them breaks no sentence. JSON-RPC
    2.0 pairs a response with its request by `id` alone, so responses may come
    in any order.
    """

    serves_before_initialize = True

    def stdio_delay(self, session, msg):
        if session.version or msg.get("method") in ("initialize", "ping"):
            return 0
        return 0.3


VARIANTS = {
    "serves-early-late": ServesEarlyLate,
    "exits-on-bad-line": ExitsOnBadLine,
    "apps-bundle": AppsBundle,
    "apps-bundle-over-limit": AppsBundle,
    "server-errors": ServerErrors,
    "ambiguous-as-response": AmbiguousAsResponse,
    "empty-ignores-cursor": EmptyIgnoresCursor,
    "host-allow-list": HostAllowList,
    "own-scheme": OwnScheme,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in VARIANTS:
        sys.exit("usage: observed.py {" + ",".join(VARIANTS) + "} [PORT | stdio]")
    if len(sys.argv) > 2 and sys.argv[2] == "stdio":
        server.serve_stdio(VARIANTS[sys.argv[1]]())
    else:
        serve_http(VARIANTS[sys.argv[1]](), int(sys.argv[2]) if len(sys.argv) > 2 else 0)
