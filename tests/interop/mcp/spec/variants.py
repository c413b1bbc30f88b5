"""The panel's hand-written servers: `python3 variants.py NAME [PORT]`.

Each variant changes one behaviour of the correct server in base.py. The
expected verdict of each, with the specification sentence behind it, is in
tests/interop/EXPECTED.md.
"""

import io
import json
import re
import sys
import time

import base
from base import MODERN, Refusal, Server

LEGACY = ["2025-11-25", "2025-06-18", "2025-03-26"]


class DualEra(Server):
    """Serves 2026-07-28 and the legacy revisions on one endpoint.

    HTTP "Protocol Version Header": "A server that supports clients
    implementing protocol versions earlier than 2025-06-18 (which did not
    define the MCP-Protocol-Version header) MAY treat a request that omits the
    header as protocol version 2025-03-26." Such a request is then a legacy
    one: server/discover, unknown there, gets a JSON-RPC -32601 in a 200.
    """

    supported = [MODERN] + LEGACY

    def handle(self, handler, msg):
        version = self.header(handler, "MCP-Protocol-Version")
        if version is None or version in LEGACY:
            return self.legacy(handler, msg, version or "2025-03-26")
        return super().handle(handler, msg)

    def legacy(self, handler, msg, version):
        method = msg["method"]
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if method == "initialize":
            asked = params.get("protocolVersion")
            return 200, {
                "protocolVersion": asked if asked in LEGACY else version,
                "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                "serverInfo": base.SERVER_INFO,
            }
        if method in ("ping",):
            return 200, {}
        if method in ("tools/list", "tools/call", "resources/list", "resources/read",
                      "resources/templates/list", "prompts/list", "prompts/get"):
            status, result = self.dispatch(handler, method, params)
            for key in ("resultType", "ttlMs", "cacheScope", "_meta"):
                result.pop(key, None)
            return status, result
        raise Refusal(200, -32601, "Method not found")


class DualEraSse(DualEra):
    """DualEra, answering every request as an SSE stream that carries the response.

    HTTP "Sending Messages": "If the body is a JSON-RPC request, the server
    MUST return either Content-Type: application/json (a single JSON object)
    or Content-Type: text/event-stream (an SSE response stream). The client
    MUST support both." "Receiving Messages": "The final JSON-RPC response
    SHOULD terminate the stream", and "servers SHOULD include the
    X-Accel-Buffering: no header" when initiating one.
    """

    def send_message(self, handler, status, doc, method):
        body = b"event: message\ndata: " + json.dumps(doc).encode() + b"\n\n"
        extra = [("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no")]
        handler.send(status, body, "text/event-stream", extra)


class DualEraHeaderlessModern(DualEra):
    """A dual-era server that serves a request without MCP-Protocol-Version as 2026-07-28.

    Only `initialize`, or a legacy MCP-Protocol-Version, is served as a legacy
    request; any other request without the header is served as the revision its
    `_meta` names. HTTP "Protocol Version Header": a server that supports
    clients older than 2025-06-18 "MAY treat a request that omits the header as
    protocol version 2025-03-26. A server that does not support such clients
    MUST reject a request without the header per Server Validation." Serving
    it as 2026-07-28 is neither.
    """

    def handle(self, handler, msg):
        handler.assumed_version = None  # the handler lives as long as its connection
        version = self.header(handler, "MCP-Protocol-Version")
        if version in LEGACY or (version is None and msg["method"] == "initialize"):
            return self.legacy(handler, msg, version or "2025-03-26")
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        handler.assumed_version = meta.get("io.modelcontextprotocol/protocolVersion")
        return Server.handle(self, handler, msg)

    def header(self, handler, name):
        value = super().header(handler, name)
        if value is None and name.lower() == "mcp-protocol-version":
            return getattr(handler, "assumed_version", None)
        return value


class DiscoverFirstGlobal(Server):
    """Refuses every request until some client has called server/discover, on any connection.

    BASIC "Statelessness": "Servers MUST NOT rely on prior requests over the
    same connection to establish context"; VERSION: "a client is free to
    invoke any RPC inline". The flag is the whole process's: the first
    request a fresh process gets is refused unless it is server/discover.
    """

    discovered = False

    def before(self, handler, method):
        if method == "server/discover":
            type(self).discovered = True
        elif not type(self).discovered:
            raise Refusal(400, -32600, "Call server/discover first")


class OriginPlain(Server):
    """Refuses a bad Origin with 403 and a plain-text body (the body MAY be anything)."""

    def refuse_origin(self, handler):
        handler.send(403, b"Forbidden: Origin not allowed\n", "text/plain; charset=utf-8")


class OriginPrefix(Server):
    """Checks Origin by string prefix: any Origin starting with http://localhost
    or http://127.0.0.1 is served (so is http://localhost.attacker.example),
    the rest get 403.

    HTTP "Security & Endpoint": "Servers MUST validate the Origin header on all
    incoming connections to prevent DNS rebinding attacks. If the Origin
    header is present and invalid, servers MUST respond with HTTP 403
    Forbidden." A name that merely starts with a loopback name is another
    host, which a rebinding page can be served from.
    """

    def origin_ok(self, origin):
        return origin.startswith(("http://localhost", "http://127.0.0.1"))


class WrongContentType(Server):
    """Answers the prompts requests as text/plain (with a JSON body)."""

    def result_type(self, method):
        if method in ("prompts/list", "prompts/get"):
            return "text/plain; charset=utf-8"
        return self.json_type


class SupportedBeyond(Server):
    """-32022 lists the legacy revisions too, beyond supportedVersions."""

    def unsupported_data(self, requested):
        return {"supported": [MODERN, "2025-11-25"], "requested": requested}


class NoSupported(Server):
    """-32022 without data.supported."""

    def unsupported_data(self, requested):
        return {"requested": requested}


class TtlFloat(Server):
    """ttlMs written as 30000.0: an integer in JSON Schema's sense."""

    ttl = 30000.0


class TtlFraction(Server):
    """ttlMs 1.5: not an integer."""

    ttl = 1.5


class CaseLower(Server):
    """Looks header names up as written in lower case, case-sensitively."""

    def header(self, handler, name):
        wanted = name.lower()
        for raw, value in handler.headers.items():
            if raw == wanted:
                return value
        return None


class MethodOnDiscoverOnly(Server):
    """Requires Mcp-Method on server/discover only."""

    def method_header_required(self, method):
        return method == "server/discover"


class PerConnection(Server):
    """tools/list grows once server/discover was seen on the same connection."""

    def before(self, handler, method):
        if method == "server/discover":
            handler.discovered = True

    def tools(self, handler):
        extra = []
        if getattr(handler, "discovered", False):
            extra = [{
                "name": "after_discover",
                "description": "Listed only on a connection that called server/discover.",
                "inputSchema": {"type": "object", "additionalProperties": False},
                "annotations": {"readOnlyHint": True},
            }]
        return base.TOOLS + extra


class DiscoverFirst(Server):
    """Refuses every request on a connection until server/discover was called on it."""

    def before(self, handler, method):
        if method == "server/discover":
            handler.discovered = True
        elif not getattr(handler, "discovered", False):
            raise Refusal(400, -32600, "Call server/discover on this connection first")


class NameUncheckedOnRead(Server):
    """Checks Mcp-Name on tools/call and prompts/get, never on resources/read.

    HTTP "Standard Request Headers": Mcp-Name is required for "`tools/call`,
    `resources/read`, `prompts/get` requests"; "Server Validation": "A required
    standard header (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) is
    missing" and "A header value does not match the corresponding request body
    value" are validation failures, answered 400 with -32020.
    """

    def name_header_checked(self, method):
        return method != "resources/read"


class NameUncheckedOnPrompt(Server):
    """Checks Mcp-Name on tools/call and resources/read, never on prompts/get.

    The same sentences as NameUncheckedOnRead, for `prompts/get`.
    """

    def name_header_checked(self, method):
        return method != "prompts/get"


class InitializeUnsupportedVersion(Server):
    """Answers a 2026-07-28 `initialize` with 400 and -32022, as if 2026-07-28
    were a version it does not support (it is the one it supports).

    HTTP "Protocol Version Header": "If the server does not implement the
    requested RPC method, it MUST respond with 404 Not Found and a JSON-RPC
    error with code -32601"; CHANGELOG removes `initialize` from 2026-07-28.
    The -32022 answer is for "If the server does not implement the requested
    protocol version", which is not the case here. A legacy `initialize`
    (without the modern headers) is refused as the base server refuses it.
    """

    def dispatch(self, handler, method, params):
        if method == "initialize":
            asked = params.get("protocolVersion") if isinstance(params, dict) else None
            raise Refusal(400, -32022, "Unsupported protocol version",
                          self.unsupported_data(asked))
        return super().dispatch(handler, method, params)


class ParamSentinelUndecoded(Server):
    """Decodes a Base64 sentinel `Mcp-Name`, but compares `Mcp-Param-{Name}`
    with the body as sent, undecoded.

    HTTP "Value Encoding": the encoding applies to `Mcp-Name` and
    `Mcp-Param-{Name}` values; clients MUST encode a value that is not safely
    representable as a plain header value (non-ASCII among them), and
    "servers MUST decode" it before comparing it with the body. A sentinel
    `Mcp-Param-Region` carrying the body's own value is therefore refused
    here as a mismatch, which a conforming server never does.
    """

    def decode_param(self, value):
        return value


class Listening(Server):
    """The correct server with completions and list-change listening too: it
    advertises `completions` and `listChanged` on tools, resources and
    prompts, and serves `completion/complete` and `subscriptions/listen`.

    COMPLETION: `completion/complete` takes a `ref` (`ref/prompt` or
    `ref/resource`) and an `argument`; an unknown prompt is invalid params
    (-32602). SUBSCRIPTIONS: "The first message carrying the subscription's
    id MUST be `notifications/subscriptions/acknowledged`" with the subset the
    server honours and the listen request's id as
    `_meta["io.modelcontextprotocol/subscriptionId"]`; the client ends the
    subscription by closing the stream. HTTP "Sending Messages": an SSE
    stream SHOULD carry `X-Accel-Buffering: no`.
    """

    def capabilities(self):
        return {
            "tools": {"listChanged": True},
            "resources": {"listChanged": True},
            "prompts": {"listChanged": True},
            "completions": {},
        }

    def dispatch(self, handler, method, params):
        if method == "server/discover":
            return 200, self.complete(
                method,
                {"supportedVersions": list(self.supported), "capabilities": self.capabilities()},
            )
        if method == "completion/complete":
            ref = params.get("ref") if isinstance(params.get("ref"), dict) else {}
            if ref.get("type") != "ref/prompt" or ref.get("name") != "greet":
                raise Refusal(400, -32602, "Unknown reference")
            return 200, self.complete(
                method, {"completion": {"values": ["world"], "total": 1, "hasMore": False}}
            )
        if method == "subscriptions/listen":
            raise Listen(params)
        return super().dispatch(handler, method, params)

    def reply(self, handler, status, rid, result=None, error=None, method=None):
        if status is None:
            return None  # a listen: its stream was the answer
        return super().reply(handler, status, rid, result, error, method)

    def handle(self, handler, msg):
        try:
            return super().handle(handler, msg)
        except Listen as listen:
            self.stream(handler, msg.get("id"), listen.params)
            return None, None

    def stream(self, handler, rid, params):
        asked = params.get("notifications") if isinstance(params.get("notifications"), dict) else {}
        caps = self.capabilities()
        honoured = {}
        for cap, key in (("tools", "toolsListChanged"), ("prompts", "promptsListChanged"),
                         ("resources", "resourcesListChanged")):
            if asked.get(key) is True and caps.get(cap, {}).get("listChanged"):
                honoured[key] = True
        meta = {"io.modelcontextprotocol/subscriptionId": rid}
        ack = {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"notifications": honoured, "_meta": meta},
        }
        handler.close_connection = True
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("X-Accel-Buffering", "no")
        handler.send_header("Connection", "close")
        handler.end_headers()
        try:
            handler.wfile.write(b"data: " + json.dumps(ack).encode() + b"\n\n")
            handler.wfile.flush()
            # Keep-alive comments until the client closes the stream (the
            # cancellation), for at most ten seconds; then the graceful end.
            for _ in range(50):
                time.sleep(0.2)
                handler.wfile.write(b":\n\n")
                handler.wfile.flush()
            done = {"jsonrpc": "2.0", "id": rid,
                    "result": {"resultType": "complete", "_meta": meta}}
            handler.wfile.write(b"data: " + json.dumps(done).encode() + b"\n\n")
            handler.wfile.flush()
        except OSError:
            pass


class Listen(Exception):
    """Raised by dispatch for `subscriptions/listen`: the answer is a stream."""

    def __init__(self, params):
        super().__init__("listen")
        self.params = params


class ListenMethodUnchecked(Listening):
    """Serves `subscriptions/listen` without `Mcp-Method`.

    HTTP "Standard Request Headers": `Mcp-Method` is required for "All
    requests"; "Server Validation": a missing required standard header is
    answered 400 with -32020. `subscriptions/listen` is a request like any.
    """

    def method_header_required(self, method):
        return method != "subscriptions/listen"


class CompletionVersionUnchecked(Listening):
    """Serves `completion/complete` without `MCP-Protocol-Version`, as 2026-07-28.

    HTTP "Protocol Version Header": the header is required on every POST, and
    "A server that does not support such clients MUST reject a request
    without the header per Server Validation" (400, -32020). This server
    supports no client older than 2025-06-18.
    """

    def check_headers(self, handler, msg):
        if msg["method"] == "completion/complete" and self.header(handler, "MCP-Protocol-Version") is None:
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
            hm = self.header(handler, "Mcp-Method")
            if hm != msg["method"]:
                raise base.mismatch("Mcp-Method header does not match body method")
            return meta.get("io.modelcontextprotocol/protocolVersion")
        return super().check_headers(handler, msg)


class TemplatesMetaUnchecked(Server):
    """Serves `resources/templates/list` without the required `_meta` fields.

    BASIC "_meta": `io.modelcontextprotocol/protocolVersion` and
    `io.modelcontextprotocol/clientCapabilities` are required on every
    request; a request missing one is malformed: HTTP 400 with -32602.
    """

    def handle(self, handler, msg):
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        meta = params.get("_meta")
        complete = isinstance(meta, dict) and all(
            key in meta
            for key in ("io.modelcontextprotocol/protocolVersion",
                        "io.modelcontextprotocol/clientCapabilities")
        )
        if msg["method"] == "resources/templates/list" and not complete:
            self.check_headers(handler, msg)
            return self.dispatch(handler, "resources/templates/list", {})
        return super().handle(handler, msg)


class OriginUncheckedOnNotification(Server):
    """Validates `Origin` on requests but accepts a notification POST from any Origin.

    HTTP "Security & Endpoint": "Servers MUST validate the Origin header on
    all incoming connections to prevent DNS rebinding attacks. If the Origin
    header is present and invalid, servers MUST respond with HTTP 403
    Forbidden." A notification POST is an incoming connection too.
    """

    def post(self, handler):
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(min(length, 1 << 20))
        try:
            msg = json.loads(raw)
        except ValueError:
            msg = None
        if isinstance(msg, dict) and "method" in msg and "id" not in msg:
            return handler.send(202)
        stream = handler.rfile
        handler.rfile = io.BytesIO(raw)
        try:
            super().post(handler)
        finally:
            handler.rfile = stream


class OriginPortOnly(Server):
    """Validates `Origin` by its port alone: any host on the server's own port is served.

    HTTP "Security & Endpoint" (as above). A DNS rebinding page is served
    from the attacker's host on the port it then reaches the server on, so a
    port check lets exactly that page in.
    """

    port = None

    def post(self, handler):
        self.port = handler.server.server_address[1]
        super().post(handler)

    def origin_ok(self, origin):
        port = str(self.port)
        m = re.match(r"^https?://[^/:]+:(\d+)$", origin)
        return bool(m) and m.group(1) == port


class OriginUncheckedOnGet(Server):
    """Serves a GET on the endpoint (a stream, as a 2025-11-25 server does)
    from any Origin; POSTs are validated as the base server validates them.

    HTTP "Security & Endpoint": servers MUST validate `Origin` "on all
    incoming connections" and answer an invalid one with 403.
    """

    def other_method(self, handler):
        if handler.command != "GET":
            return super().other_method(handler)
        handler.close_connection = True
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Connection", "close")
        handler.end_headers()
        try:
            handler.wfile.write(b":stream\n\n")
            handler.wfile.flush()
        except OSError:
            pass


class DualEraNoOldClients(DualEra):
    """DualEra that supports no client older than 2025-06-18 (an `initialize`
    asking for 2025-03-26 negotiates 2025-11-25), yet still answers a request
    without `MCP-Protocol-Version` in legacy terms.

    HTTP "Protocol Version Header": "A server that supports clients
    implementing protocol versions earlier than 2025-06-18 ... MAY treat a
    request that omits the header as protocol version 2025-03-26. A server
    that does not support such clients MUST reject a request without the
    header per Server Validation" (400, -32020).
    """

    supported = [MODERN, "2025-11-25", "2025-06-18"]

    def legacy(self, handler, msg, version):
        if msg["method"] == "initialize":
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            asked = params.get("protocolVersion")
            return 200, {
                "protocolVersion": asked if asked in ("2025-11-25", "2025-06-18") else "2025-11-25",
                "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                "serverInfo": base.SERVER_INFO,
            }
        return super().legacy(handler, msg, version)


class UnadvertisedPrompts200(Server):
    """Advertises no `prompts` and answers the prompts methods with JSON-RPC
    -32601 in an HTTP 200.

    SCHEMA `MethodNotFoundError`: a method behind a capability the server did
    not advertise is "method not found"; HTTP "Protocol Version Header": "If
    the server does not implement the requested RPC method, it MUST respond
    with 404 Not Found and a JSON-RPC error with code -32601".
    """

    def dispatch(self, handler, method, params):
        if method == "server/discover":
            status, result = super().dispatch(handler, method, params)
            result["capabilities"].pop("prompts", None)
            return status, result
        if method in ("prompts/list", "prompts/get"):
            raise Refusal(200, -32601, "Method not found")
        return super().dispatch(handler, method, params)


class NameCaseInsensitive(Server):
    """Compares `Mcp-Name` with the body without regard to letter case.

    HTTP "Case Sensitivity": "Header names ... are case-insensitive"; header
    values are not, and "Server Validation": "A header value does not match
    the corresponding request body value" is answered 400 with -32020. An
    `Mcp-Name: Echo` with a body naming `echo` does not match.
    """

    def check_headers(self, handler, msg):
        method = msg["method"]
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        hn = self.header(handler, "Mcp-Name")
        source = params.get(base.NAMED.get(method, ""), None)
        if isinstance(hn, str) and isinstance(source, str) and base.SAFE_VALUE.match(hn):
            if base.decode_sentinel(hn).lower() == source.lower():
                del handler.headers["Mcp-Name"]
                handler.headers["Mcp-Name"] = source
        return super().check_headers(handler, msg)


class SessionOnTools(Server):
    """Validates Mcp-Session-Id on `tools/*` only: an id it never minted is
    answered 404 "Session not found", as a 2025-era session layer in front of
    the tool handlers does; every other method ignores the header.

    HTTP "Earlier Streamable HTTP Revisions": a server that supports only
    2026-07-28 receiving `Mcp-Session-Id` SHOULD ignore it; BASIC
    "Statelessness": there are no protocol sessions, so a server MUST NOT
    require or validate one.
    """

    def before(self, handler, method):
        if method.startswith("tools/") and self.header(handler, "Mcp-Session-Id") is not None:
            raise Refusal(404, -32600, "Session not found")


class ListAfterCall(Server):
    """`tools/list` lists one more tool on a connection once a tool was
    called on it (a tool that exists and ran).

    TOOLS "Capabilities": `tools/list` returns the set currently available to
    the requesting client and "MUST NOT vary per-connection or as a side
    effect of other requests on the connection".
    """

    def dispatch(self, handler, method, params):
        answer = super().dispatch(handler, method, params)
        if method == "tools/call":
            handler.called = True
        return answer

    def tools(self, handler):
        extra = []
        if getattr(handler, "called", False):
            extra = [{
                "name": "after_call",
                "description": "Listed only on a connection that has called a tool.",
                "inputSchema": {"type": "object", "additionalProperties": False},
            }]
        return base.TOOLS + extra


class ReadNeedsList(Server):
    """Refuses `resources/read` on a connection until `resources/list` was
    called on it.

    BASIC "Statelessness": servers MUST NOT rely on prior requests over the
    same connection to establish context; VERSION: a client is free to invoke
    any RPC inline, with no handshake first.
    """

    def before(self, handler, method):
        if method == "resources/list":
            handler.listed = True
        elif method == "resources/read" and not getattr(handler, "listed", False):
            raise Refusal(400, -32600, "Call resources/list on this connection first")


# Tools a paginated variant lists on its second page: not read-only, so a
# checker does not call them.
MORE_TOOLS = [
    {
        "name": f"more_{n}",
        "description": f"Listed on the second page ({n}).",
        "inputSchema": {"type": "object", "additionalProperties": False},
    }
    for n in ("a", "b", "c")
]


class Paginated(Server):
    """Lists its tools in two pages: the base tools, then MORE_TOOLS.

    BASIC "Pagination": the server returns `nextCursor` when more results
    exist; the client sends it back as `cursor`.
    """

    def page_two(self):
        return MORE_TOOLS

    def page_scope(self, page):
        return "public"

    def dispatch(self, handler, method, params):
        if method != "tools/list":
            return super().dispatch(handler, method, params)
        cursor = (params or {}).get("cursor")
        if cursor is None:
            body = self.complete(method, {"tools": self.tools(handler), "nextCursor": "page-2"})
            body["cacheScope"] = self.page_scope(1)
        elif cursor == "page-2":
            body = self.complete(method, {"tools": self.page_two()})
            body["cacheScope"] = self.page_scope(2)
        else:
            raise Refusal(400, -32602, "Invalid cursor")
        return 200, body


class PaginatedCorrect(Paginated):
    """Paginated, with every page `cacheScope: public` and a stable order."""


class ScopePerPage(Paginated):
    """Paginated, page 1 `cacheScope: public`, page 2 `private`.

    CACHE: on a paginated list every page carries its own `ttlMs`, and all
    pages of one list MUST carry the same `cacheScope`.
    """

    def page_scope(self, page):
        return "public" if page == 1 else "private"


class OrderLaterPage(Paginated):
    """Paginated; the second page lists its tools in one order the first
    time it is asked for, and in the reverse order every later time (the
    first page is stable).

    TOOLS "Capabilities": servers SHOULD return tools in the same order
    across requests while the set is unchanged (deterministic order).
    """

    def __init__(self):
        import threading

        self.asked = False
        self.lock = threading.Lock()

    def page_two(self):
        with self.lock:
            later, self.asked = self.asked, True
        return list(reversed(MORE_TOOLS)) if later else MORE_TOOLS

class StillSubscribes(Server):
    """Still implements the removed `resources/subscribe` and
    `resources/unsubscribe`, reading the resource from `Mcp-Name` as it does
    for `resources/read`: a request without the header is refused as a
    header mismatch (400, -32020), one with it gets an empty result.

    CHANGELOG / DEPRECATED: `resources/subscribe` and `resources/unsubscribe`
    are removed in favour of `subscriptions/listen` with
    `resourceSubscriptions`; a 2026-07-28 server implements neither.
    """

    def dispatch(self, handler, method, params):
        if method in ("resources/subscribe", "resources/unsubscribe"):
            if self.header(handler, "Mcp-Name") != params.get("uri"):
                raise base.mismatch("Mcp-Name header is missing or does not match params.uri")
            return 200, self.complete(method, {})
        return super().dispatch(handler, method, params)


class SessionOnGet(Server):
    """Answers GET and DELETE with 405, as a modern-only server should, but
    mints an `Mcp-Session-Id` on those answers (a session layer left on in
    front of the router); POST answers carry none.

    HTTP "Earlier Streamable HTTP Revisions" and BASIC "Statelessness": there
    are no protocol sessions; a server supporting only 2026-07-28 does not
    mint or echo `Mcp-Session-Id`.
    """

    def other_method(self, handler):
        handler.send(405, b"", None, [("Allow", "POST"), ("Mcp-Session-Id", "minted-on-get")])


class InitializeModernBare(Server):
    """Refuses a legacy (header-less) `initialize` naming its versions, as the
    base server does, but answers an `initialize` sent as a 2026-07-28
    request with a bare 404 / -32601 "Method not found" that names none.

    VERSION: a modern-only server "SHOULD name the protocol versions it
    supports in any error it returns to an initialize request".
    """

    def dispatch(self, handler, method, params):
        if method == "initialize":
            raise Refusal(404, -32601, "Method not found")
        return super().dispatch(handler, method, params)


class LastEventIdOnTools(Server):
    """Looks `Last-Event-ID` up on `tools/*` requests, as a 2025-era event
    store in front of the tool handlers does, and refuses an id it does not
    know (400, -32600); every other method ignores the header.

    HTTP "Earlier Streamable HTTP Revisions": streams are not resumable; a
    server that supports only 2026-07-28 SHOULD ignore `Last-Event-ID`.
    """

    def before(self, handler, method):
        if method.startswith("tools/") and self.header(handler, "Last-Event-ID") is not None:
            raise Refusal(400, -32600, "Unknown event id")


VARIANTS = {
    "correct": Server,
    "dual-era": DualEra,
    "dual-era-sse": DualEraSse,
    "dual-era-headerless-modern": DualEraHeaderlessModern,
    "origin-plain": OriginPlain,
    "origin-prefix": OriginPrefix,
    "wrong-content-type": WrongContentType,
    "supported-beyond": SupportedBeyond,
    "no-supported": NoSupported,
    "ttl-float": TtlFloat,
    "ttl-fraction": TtlFraction,
    "case-lower": CaseLower,
    "method-on-discover-only": MethodOnDiscoverOnly,
    "per-connection": PerConnection,
    "discover-first": DiscoverFirst,
    "discover-first-global": DiscoverFirstGlobal,
    "name-unchecked-on-read": NameUncheckedOnRead,
    "name-unchecked-on-prompt": NameUncheckedOnPrompt,
    "initialize-unsupported-version": InitializeUnsupportedVersion,
    "param-sentinel-undecoded": ParamSentinelUndecoded,
    "listening": Listening,
    "listen-method-unchecked": ListenMethodUnchecked,
    "completion-version-unchecked": CompletionVersionUnchecked,
    "templates-meta-unchecked": TemplatesMetaUnchecked,
    "origin-unchecked-on-notification": OriginUncheckedOnNotification,
    "origin-port-only": OriginPortOnly,
    "origin-unchecked-on-get": OriginUncheckedOnGet,
    "dual-era-no-old-clients": DualEraNoOldClients,
    "unadvertised-prompts-200": UnadvertisedPrompts200,
    "name-case-insensitive": NameCaseInsensitive,
    "session-on-tools": SessionOnTools,
    "list-after-call": ListAfterCall,
    "read-needs-list": ReadNeedsList,
    "paginated": PaginatedCorrect,
    "scope-per-page": ScopePerPage,
    "order-later-page": OrderLaterPage,
    "still-subscribes": StillSubscribes,
    "session-on-get": SessionOnGet,
    "initialize-modern-bare": InitializeModernBare,
    "last-event-id-on-tools": LastEventIdOnTools,
}

# Correct servers judged where and as they are served (a trailing slash, a
# query, a rate limiter): their own file and table, `served.py`.
import served  # noqa: E402

VARIANTS.update(served.VARIANTS)

# A correct server some of whose methods need authorization: `scoped.py`.
import scoped  # noqa: E402

VARIANTS.update(scoped.VARIANTS)

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in VARIANTS:
        sys.exit("usage: variants.py {" + ",".join(VARIANTS) + "} [PORT]")
    base.serve(VARIANTS[sys.argv[1]](), sys.argv[2:])
