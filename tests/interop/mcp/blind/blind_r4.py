"""Blind one-fault servers for MCP 2026-07-28, round 4: `python3 blind_r4.py NAME [PORT]`.

Written from the specification (the published 2026-07-28 pages, the digest and
the rule list) without reading protocheck. Each class breaks ONE requirement of
blind26.Rich (or of a correct subclass defined here: `Listen` serves
`subscriptions/listen`, `Sse` answers as SSE with event ids, `Icons` carries
`data:` icons, `Seven` lists seven resources), in a shape a real server author
could have written: a fault on one method, one page, one moment, one value
class or one framing. The first paragraph of each docstring names the fault,
the second quotes the sentence it breaks. `RULE` names the rule; the `control-*`
variants have no fault and show that each base is clean.

`TOKEN_VARIANTS` (MCP-SEC-007) only show their fault when the client sends an
`Authorization` header; run.py sends none, so they are runnable by name but
not in `VARIANTS`.
"""

import itertools
import json
import os
import re
import sys
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "spec"))

import base  # noqa: E402
from base import SERVER_INFO, Refusal, mismatch  # noqa: E402
import blind26  # noqa: E402
from blind26 import NOTE, Rich  # noqa: E402

SAFE = re.compile(r"^[\x20-\x7e\t]*$")


def state(handler):
    """Per-connection state (one Handler instance per TCP connection)."""
    st = handler.__dict__.get("_r4")
    if st is None:
        st = handler._r4 = {"seen": set(), "cursors": {}, "first_version": None}
    return st


def sse_event(doc, event_id=None):
    head = f"id: {event_id}\n" if event_id is not None else ""
    return (head + "event: message\ndata: " + json.dumps(doc) + "\n\n").encode()


def accepts_sse(handler):
    return "text/event-stream" in (handler.headers.get("Accept") or "")


class Checked(Rich):
    """Rich with its Mcp-Param-{Name} check split into hooks (same behaviour as base.Server)."""

    def param_skipped(self, value):
        # "Parameter value is null / not in arguments: Server MUST NOT expect the header"
        return value is None

    def param_chars_ok(self, hv, schema):
        return bool(SAFE.match(hv))

    def param_same(self, value, decoded, schema):
        if isinstance(value, bool):
            return decoded == ("true" if value else "false")
        if isinstance(value, int):
            try:
                return float(decoded) == value
            except ValueError:
                return False
        return decoded == value

    def annotated(self, tool):
        for prop, schema in tool["inputSchema"].get("properties", {}).items():
            if schema.get("x-mcp-header") is not None:
                yield prop, schema

    def check_params(self, handler, params):
        tool = next((t for t in self.tools(handler) if t["name"] == params.get("name")), None)
        if tool is None:
            return
        args = params.get("arguments") or {}
        if not isinstance(args, dict):
            return
        for prop, schema in self.annotated(tool):
            name = schema["x-mcp-header"]
            value = args.get(prop)
            hv = self.header(handler, "Mcp-Param-" + name)
            if self.param_skipped(value):
                continue
            if hv is None:
                raise mismatch(f"Mcp-Param-{name} header is missing")
            if not self.param_chars_ok(hv, schema):
                raise mismatch(f"Mcp-Param-{name} header has invalid characters")
            if not self.param_same(value, self.decode_param(hv), schema):
                raise mismatch(f"Mcp-Param-{name} header does not match the body")


# --- correct bases -------------------------------------------------------------


class Listen(Rich):
    """Rich plus `subscriptions/listen` (list-changed notifications for tools, prompts, resources).

    SUBS: the first message is `notifications/subscriptions/acknowledged` with
    the honoured subset and the subscription id; the stream stays open (keep-alive
    comments) and the server ends it gracefully after LISTEN_SECONDS with a
    complete result carrying the subscription id. The lists never change.
    """

    LISTEN_SECONDS = 12
    KINDS = ("toolsListChanged", "promptsListChanged", "resourcesListChanged")

    def capabilities(self):
        return {
            "tools": {"listChanged": True},
            "resources": {"listChanged": True},
            "prompts": {"listChanged": True},
            "completions": {},
        }

    def honoured(self, handler, wanted):
        return {k: True for k in self.KINDS if wanted.get(k) is True}

    def dispatch(self, handler, method, params):
        if method == "subscriptions/listen":
            wanted = params.get("notifications")
            if not isinstance(wanted, dict):
                raise Refusal(400, -32602, "Invalid params: notifications filter is required")
            return 200, {"__listen__": self.honoured(handler, wanted)}
        return super().dispatch(handler, method, params)

    def send_message(self, handler, status, doc, method):
        result = doc.get("result")
        if method == "subscriptions/listen" and isinstance(result, dict) and "__listen__" in result:
            return self.stream_listen(handler, doc["id"], result["__listen__"])
        return super().send_message(handler, status, doc, method)

    def stream_listen(self, handler, rid, honoured):
        def chunk(data):
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            handler.wfile.flush()

        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("X-Accel-Buffering", "no")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        sub = {"io.modelcontextprotocol/subscriptionId": rid}
        ack = {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": sub, "notifications": honoured},
        }
        try:
            chunk(sse_event(ack))
            end = time.time() + self.LISTEN_SECONDS
            while time.time() < end:
                time.sleep(1)
                chunk(b":\n\n")
            final = {
                "jsonrpc": "2.0",
                "id": rid,
                "result": {"resultType": "complete", "_meta": dict(sub, **{"io.modelcontextprotocol/serverInfo": SERVER_INFO})},
            }
            chunk(sse_event(final))
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        except OSError:
            # HTTP "Cancellation": closing the stream cancels the request.
            handler.close_connection = True


class Sse(Rich):
    """Rich that answers every successful request as an SSE stream (when the client accepts one).

    HTTP "Sending Messages": the server MAY answer a request with
    `text/event-stream`; each stream carries only the final response (which
    ends it) and `X-Accel-Buffering: no`. Events carry `id:` lines from one
    server-wide counter (a legacy artefact, harmless: a `Last-Event-ID` is ignored).
    """

    def __init__(self):
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.log = []  # (event id, event bytes), the last 50

    def next_id(self):
        with self._lock:
            return next(self._ids)

    def record(self, eid, data):
        with self._lock:
            self.log.append((eid, data))
            del self.log[:-50]

    def prefix(self, handler):
        """Events sent before this request's own response (none: streams are not resumable)."""
        return b""

    def sse_body(self, handler, doc, method):
        eid = self.next_id()
        data = sse_event(doc, eid)
        body = self.prefix(handler) + data
        self.record(eid, data)
        return body

    def send_message(self, handler, status, doc, method):
        if status == 200 and accepts_sse(handler):
            body = self.sse_body(handler, doc, method)
            return handler.send(status, body, "text/event-stream", [("X-Accel-Buffering", "no"), ("Cache-Control", "no-cache")])
        return super().send_message(handler, status, doc, method)


# A 1x1 transparent PNG.
PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def with_icon(item, src=PNG):
    return dict(item, icons=[{"src": src, "mimeType": "image/png", "sizes": ["48x48"]}])


class Icons(Rich):
    """Rich whose tools, prompts, resources, templates and serverInfo carry `data:` PNG icons.

    BASIC "icons": the icon URI is "either a HTTPS or `data:` URI"; a local
    http:// server has no HTTPS origin, so `data:` is the safe choice everywhere.
    """

    def icon_src(self, kind, name):
        return PNG

    def items(self, key, handler):
        items = super().items(key, handler)
        kind = {"tools": "tool", "resources": "resource", "resourceTemplates": "template", "prompts": "prompt"}[key]
        return [with_icon(i, self.icon_src(kind, i["name"])) for i in items]

    def server_info(self, method):
        return with_icon(SERVER_INFO, self.icon_src("server", method))

    def complete(self, method, body):
        out = super().complete(method, body)
        out["_meta"] = {"io.modelcontextprotocol/serverInfo": self.server_info(method)}
        return out


SEVEN = [{"uri": f"memo://item/{n}", "name": f"item{n}", "mimeType": "text/plain"} for n in range(1, 8)]


class Seven(Rich):
    """Rich with seven plain resources (`memo://item/1` .. `memo://item/7`, four pages of two)."""

    def items(self, key, handler):
        if key == "resources":
            return SEVEN
        return super().items(key, handler)

    def read(self, handler, uri):
        if any(r["uri"] == uri for r in SEVEN):
            return [{"uri": uri, "mimeType": "text/plain", "text": "item " + uri.rsplit("/", 1)[1]}]
        return super().read(handler, uri)


# --- HDR-006: header names case-insensitive, values case-sensitive ------------------


class VersionHeaderNameExact(Rich):
    """Finds `MCP-Protocol-Version` only under two exact spellings (`MCP-Protocol-Version`, `Mcp-Protocol-Version`).

    A client sending `mcp-protocol-version` (as every HTTP/2 client does) or
    `MCP-PROTOCOL-VERSION` gets 400/-32020 "MCP-Protocol-Version header is missing".

    HTTP "Case Sensitivity": "Clients and servers **MUST** use case-insensitive
    comparisons for header names."
    """

    RULE = "MCP-HDR-006"

    def header(self, handler, name):
        if name.lower() == "mcp-protocol-version":
            for k, v in handler.headers.items():
                if k in ("MCP-Protocol-Version", "Mcp-Protocol-Version"):
                    return v
            return None
        return super().header(handler, name)


class NameHeaderExactOnRead(Rich):
    """On `resources/read` only, looks up `Mcp-Name` by its exact spelling; `mcp-name:` counts as missing (400/-32020).

    HTTP "Case Sensitivity": "Header names ... are case-insensitive. Clients and
    servers **MUST** use case-insensitive comparisons for header names."
    """

    RULE = "MCP-HDR-006"

    def check_headers(self, handler, msg):
        handler._r4_method = msg["method"]
        return super().check_headers(handler, msg)

    def header(self, handler, name):
        if name == "Mcp-Name" and getattr(handler, "_r4_method", None) == "resources/read":
            return next((v for k, v in handler.headers.items() if k == "Mcp-Name"), None)
        return super().header(handler, name)


class ParamValueCaseFolded(Checked):
    """Compares string `Mcp-Param-{Name}` values case-insensitively: `Mcp-Param-Region: US-WEST1` passes for body `us-west1`.

    HTTP "Case Sensitivity": "Header _values_ (such as method names) are
    case-sensitive"; "Server MUST validate header matches body".
    """

    RULE = "MCP-HDR-006"

    def param_same(self, value, decoded, schema):
        if isinstance(value, str):
            return decoded.lower() == value.lower()
        return super().param_same(value, decoded, schema)


# --- HDR-008: Mcp-Param-{Name} validated against the body ----------------------------


class BooleanParamTruthy(Checked):
    """Reads boolean `Mcp-Param-{Name}` headers loosely (`1`/`yes`/`on`/`TRUE` are true, anything else false).

    So for `shard` (readOnlyHint) `Mcp-Param-Fresh: 1` or `yes` passes for body
    `true`, and any non-true word passes for body `false`.

    HTTP "Value Encoding": "`boolean`: Convert to lowercase `"true"` or
    `"false"`"; "Server Behavior for Custom Headers": "Any server that processes
    the message body **MUST** validate that encoded header values ... match the
    corresponding values in the request body."
    """

    RULE = "MCP-HDR-008"

    def param_same(self, value, decoded, schema):
        if isinstance(value, bool):
            return (decoded.strip().lower() in ("true", "1", "yes", "on")) == value
        return super().param_same(value, decoded, schema)


class FalsyParamNotExpected(Checked):
    """Skips the `Mcp-Param-{Name}` check when the argument is falsy (`false`, `0`, `""`) rather than absent or null.

    A `shard` call with `"fresh": false` or `"id": 0` and no (or a wrong)
    `Mcp-Param-Fresh`/`Mcp-Param-Record` header is executed.

    HTTP "Server Behavior for Custom Headers": "Client omits header but value is
    in body | Non-conforming client | Server MUST reject the request"; only a
    `null` or absent value lets the server not expect the header.
    """

    RULE = "MCP-HDR-008"

    def param_skipped(self, value):
        return not value


class SecondParamUnchecked(Checked):
    """Validates only the first `x-mcp-header` argument of a tool; `shard`'s second (`fresh`, `Mcp-Param-Fresh`) is never checked.

    HTTP "Server Behavior for Custom Headers": "Parameter value provided |
    Client MUST include the header | Server MUST validate header matches body".
    """

    RULE = "MCP-HDR-008"

    def annotated(self, tool):
        return itertools.islice(super().annotated(tool), 1)


# --- HDR-009: invalid characters in Mcp-Param-{Name} --------------------------------


class ParamDelAccepted(Checked):
    """Its character check allows 0x20-0x7F, one past `~`: a DEL (0x7F) in `Mcp-Param-Region` is accepted.

    HTTP "Server Behavior for Custom Headers": "Servers **MUST** reject requests
    with a recognized `Mcp-Param-{Name}` header that contains invalid
    characters"; "Value Encoding": header values "must consist of visible ASCII
    characters (0x21-0x7E), space (0x20), and horizontal tab (0x09)".
    """

    RULE = "MCP-HDR-009"

    def param_chars_ok(self, hv, schema):
        return bool(re.match(r"^[\x20-\x7f\t]*$", hv))


class IntegerParamCharsUnchecked(Checked):
    """Skips the character check for integer `x-mcp-header` arguments and just parses the number.

    Python's float() strips control characters such as VT (0x0B), FF (0x0C),
    0x1C-0x1F and NBSP, so `Mcp-Param-Record: 42\\x0b` is accepted for `"id": 42`.

    HTTP "Server Behavior for Custom Headers": "Servers **MUST** reject requests
    with a recognized `Mcp-Param-{Name}` header that contains invalid characters."
    """

    RULE = "MCP-HDR-009"

    def param_chars_ok(self, hv, schema):
        if schema.get("type") == "integer":
            return True
        return super().param_chars_ok(hv, schema)


class ParamStrippedBeforeCheck(Checked):
    """Strips every `Mcp-Param-{Name}` value with str.strip() before checking it, not just SP/HTAB.

    Leading or trailing VT, FF, 0x1C-0x1F or NBSP vanish, so
    `Mcp-Param-Region: us-west1\\x0c` is accepted for `"region": "us-west1"`.

    HTTP "Server Behavior for Custom Headers": "Servers **MUST** reject requests
    with a recognized `Mcp-Param-{Name}` header that contains invalid characters."
    """

    RULE = "MCP-HDR-009"

    def header(self, handler, name):
        value = super().header(handler, name)
        if value is not None and name.startswith("Mcp-Param-"):
            return value.strip()
        return value


# --- STL-003: a cold request succeeds ---------------------------------------------


class Remember(Rich):
    """Records, per connection, the methods already served (helper for the STL variants)."""

    def handle(self, handler, msg):
        out = super().handle(handler, msg)
        state(handler)["seen"].add(msg["method"])
        return out


class CallNeedsDiscover(Remember):
    """Refuses a `tools/call` (400, -32600 "Handshake required") unless `server/discover` was served earlier on the same connection.

    DISC "When to Call": "Calling `server/discover` is optional for clients — a
    client may invoke any RPC inline"; BASIC "Statelessness": "all the
    information needed to process a request is contained in the request itself".
    """

    RULE = "MCP-STL-003"

    def before(self, handler, method):
        if method == "tools/call" and "server/discover" not in state(handler)["seen"]:
            raise Refusal(400, -32600, "Handshake required: call server/discover first")


class TemplateReadNeedsList(Remember):
    """Reads a templated URI (`memo://notes/7`) only after `resources/templates/list` on the same connection; cold, it is "Resource not found".

    BASIC "Statelessness": "A server processes each request independently; no
    state should be inferred from previous requests"; DISC: "a client may
    invoke any RPC inline" (a cold request of any method succeeds).
    """

    RULE = "MCP-STL-003"

    def read(self, handler, uri):
        if uri not in blind26.TEXTS and "resources/templates/list" not in state(handler)["seen"]:
            raise Refusal(400, -32602, "Resource not found", {"uri": str(uri)[:200]})
        return super().read(handler, uri)


# --- STL-004: no reliance on prior requests on the connection ------------------------


class VersionPinnedPerConnection(Rich):
    """Pins the protocol version of the first request on a connection; a later request with another version gets 400/-32020.

    After a first request carrying an unsupported version (answered correctly
    with -32022), every valid 2026-07-28 request on that connection is refused.

    BASIC "Statelessness": "Servers **MUST NOT** rely on prior requests over the
    same connection to establish context (e.g., capabilities, protocol version,
    client identity)."
    """

    RULE = "MCP-STL-004"

    def handle(self, handler, msg):
        params = msg.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        version = meta.get("io.modelcontextprotocol/protocolVersion") if isinstance(meta, dict) else None
        st = state(handler)
        if isinstance(version, str):
            if st["first_version"] is None:
                st["first_version"] = version
            elif version != st["first_version"]:
                raise mismatch(f"protocol version {version!r} differs from {st['first_version']!r} negotiated on this connection")
        return super().handle(handler, msg)


class CursorsPerConnection(Rich):
    """Keeps pagination cursors in per-connection memory: a `nextCursor` used on another connection is "unknown cursor" (-32602).

    BASIC "Statelessness": "Servers **MUST NOT** rely on prior requests over the
    same connection to establish context"; "State that needs to span multiple
    requests ... **MUST** be referenced by an explicit identifier the client
    passes on each request"; "Servers **SHOULD NOT** require that a client
    reuse the same connection".
    """

    RULE = "MCP-STL-004"

    def __init__(self):
        self._handler = threading.local()  # one thread per connection (ThreadingHTTPServer)

    def page(self, handler, method, params):
        self._handler.h = handler
        return super().page(handler, method, params)

    def cursor(self, key, offset):
        token = uuid.uuid4().hex
        state(self._handler.h)["cursors"][token] = (key, offset)
        return token

    def offset(self, key, cursor, count):
        if cursor is None:
            return 0
        found = state(self._handler.h)["cursors"].get(cursor)
        if not found or found[0] != key:
            raise Refusal(400, -32602, "Invalid params: unknown cursor")
        return found[1]


class ListenAckNeedsPriorList(Listen, Remember):
    """Honours a list-changed type on `subscriptions/listen` only if that list was fetched earlier on the same connection.

    A cold listen asking for `toolsListChanged` is acknowledged with an empty
    `notifications` filter; after a `tools/list` on the connection it is honoured.

    BASIC "Statelessness": "Servers **MUST NOT** rely on prior requests over the
    same connection to establish context"; "Long-lived requests like
    subscriptions/listen ... state is scoped to the request itself, not to the
    connection underneath."
    """

    RULE = "MCP-STL-004"
    NEEDS = {"toolsListChanged": "tools/list", "promptsListChanged": "prompts/list", "resourcesListChanged": "resources/list"}

    def honoured(self, handler, wanted):
        seen = state(handler)["seen"]
        return {k: True for k, v in super().honoured(handler, wanted).items() if self.NEEDS[k] in seen}


class ListenThenRefused(Listen, Remember):
    """Once a `subscriptions/listen` has run on a connection (and ended gracefully), refuses every other request on it (400, -32600).

    BASIC "Statelessness": "no state should be inferred from previous requests,
    even those on the same connection or stream"; listen's "state is scoped to
    the request itself, not to the connection underneath."
    """

    RULE = "MCP-STL-004"

    def before(self, handler, method):
        if method != "subscriptions/listen" and "subscriptions/listen" in state(handler)["seen"]:
            raise Refusal(400, -32600, "This connection carries a subscription; use another connection")


# --- STL-007: Last-Event-ID ignored -----------------------------------------------


class ReplayAfterLastEventId(Sse):
    """Treats a numeric `Last-Event-ID` as a position in its server-wide event log and replays every later event before the answer.

    The replayed events are the final responses of earlier streams (other ids).

    HTTP "Earlier Streamable HTTP Revisions": "A `Last-Event-ID` header: ignore
    it; streams are not resumable"; "Resumable SSE streams via `Last-Event-ID`
    are not supported."
    """

    RULE = "MCP-STL-007"

    def prefix(self, handler):
        last = handler.headers.get("Last-Event-ID")
        if last is None or not last.strip().isdigit():
            return b""
        n = int(last)
        with self._lock:
            return b"".join(data for eid, data in self.log if eid > n)


class ReplayLastOnAnyId(Sse):
    """On any `Last-Event-ID` (whatever its value) replays the most recent event it sent, then answers.

    HTTP "Earlier Streamable HTTP Revisions": "A `Last-Event-ID` header: ignore
    it; streams are not resumable."
    """

    RULE = "MCP-STL-007"

    def prefix(self, handler):
        if handler.headers.get("Last-Event-ID") is None:
            return b""
        with self._lock:
            return self.log[-1][1] if self.log else b""


# --- CAC ---------------------------------------------------------------------------


class NoTtlOnTemplateRead(Rich):
    """Omits `ttlMs` from `resources/read` results of URIs reached through a template (`memo://notes/7`); static resources keep it.

    CACHE: "Servers MUST include caching hints on results with `resultType:
    "complete"` returned by ... `resources/read`"; "Servers **MUST** provide a
    `ttlMs` value that is `>= 0`."
    """

    RULE = "MCP-CAC-001"

    def dispatch(self, handler, method, params):
        status, result = super().dispatch(handler, method, params)
        if method == "resources/read" and NOTE.match(str(params.get("uri"))):
            result.pop("ttlMs", None)
        return status, result


class NoScopeOnPromptsPage2(Rich):
    """Omits `cacheScope` from the second page of `prompts/list` (the first page has it).

    CACHE: "Servers MUST include caching hints on results ... returned by ...
    `prompts/list`"; "Interaction with Pagination": "each page is an
    independently cacheable response"; schema `CacheableResult` requires `cacheScope`.
    """

    RULE = "MCP-CAC-002"

    def finish(self, method, result, page_number):
        if method == "prompts/list" and page_number == 1:
            result.pop("cacheScope", None)
        return result


class CapitalScopeOnSeventh(Seven):
    """Answers `resources/read` of the seventh listed resource (`memo://item/7`) with `cacheScope: "Private"`.

    CACHE: "The Cache Scope Field, `cacheScope`, indicates the intended scope
    of the cached response, either `"public"` or `"private"`" (schema enum).
    """

    RULE = "MCP-CAC-003"

    def dispatch(self, handler, method, params):
        status, result = super().dispatch(handler, method, params)
        if method == "resources/read" and params.get("uri") == SEVEN[6]["uri"]:
            result["cacheScope"] = "Private"
        return status, result


class ForeverTtlOnTemplatesPage2(Rich):
    """Marks the last page of `resources/templates/list` `ttlMs: -1` ("never expires").

    CACHE: "Servers **MUST** provide a `ttlMs` value that is `>= 0`"; schema
    `ttlMs` is an integer with `minimum: 0`.
    """

    RULE = "MCP-CAC-004"

    def finish(self, method, result, page_number):
        if method == "resources/templates/list" and page_number == 1:
            result["ttlMs"] = -1
        return result


# --- RES-005: media type, SSE ends with the final response ---------------------------


class SseLingersOnCall(Rich):
    """Answers `tools/call` as SSE (when accepted) and keeps the stream open with keep-alive comments for 15 s after the final response.

    HTTP "Receiving Messages": "The final JSON-RPC _response_ **SHOULD**
    terminate the stream"; overview: an SSE stream "carrying request-related
    notifications followed by the final response" (rule: SSE terminates with
    the final response).
    """

    RULE = "MCP-RES-005"
    LINGER = 15

    def send_message(self, handler, status, doc, method):
        if method != "tools/call" or status != 200 or not accepts_sse(handler):
            return super().send_message(handler, status, doc, method)
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("X-Accel-Buffering", "no")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        try:
            handler.wfile.write(sse_event(doc))
            handler.wfile.flush()
            for _ in range(self.LINGER):
                time.sleep(1)
                handler.wfile.write(b":\n\n")
                handler.wfile.flush()
        except OSError:
            pass


class TextPlainCompletion(Rich):
    """Answers `completion/complete` with `Content-Type: text/plain; charset=utf-8` (the body is the right JSON).

    HTTP "Sending Messages": "If the body is a JSON-RPC _request_, the server
    **MUST** return either `Content-Type: application/json` ... or
    `Content-Type: text/event-stream`".
    """

    RULE = "MCP-RES-005"

    def result_type(self, method):
        if method == "completion/complete":
            return "text/plain; charset=utf-8"
        return super().result_type(method)


class DoneTrailerOnLists(Sse):
    """Ends SSE answers to the four list methods with a trailing `data: [DONE]` event after the final response.

    HTTP "Receiving Messages": "The final JSON-RPC _response_ **SHOULD**
    terminate the stream" (rule: SSE terminates with the final response).
    """

    RULE = "MCP-RES-005"

    def sse_body(self, handler, doc, method):
        body = super().sse_body(handler, doc, method)
        if method in blind26.LIST_KEY:
            body += b"event: done\ndata: [DONE]\n\n"
        return body


# --- DEP-005: Roots / Sampling / Logging not advertised -------------------------------


class LoggingAdvertised(Rich):
    """Advertises `logging: {}` in `server/discover` capabilities (it never sends a log message).

    DEPR: Logging is Deprecated as of 2026-07-28; "new implementations
    **SHOULD NOT** adopt it" (rule: Roots / Sampling / Logging capabilities are
    not advertised).
    """

    RULE = "MCP-DEP-005"

    def capabilities(self):
        return dict(super().capabilities(), logging={})


class LoggingAdvertisedOnLogLevel(Rich):
    """Advertises `logging: {}` only on a `server/discover` whose `_meta` carries `io.modelcontextprotocol/logLevel`.

    DEPR / LOG: Logging is Deprecated ("new implementations **SHOULD NOT**
    adopt it"); the rule: the Logging capability is not advertised.
    """

    RULE = "MCP-DEP-005"

    def dispatch(self, handler, method, params):
        status, result = super().dispatch(handler, method, params)
        meta = params.get("_meta") or {}
        if method == "server/discover" and "io.modelcontextprotocol/logLevel" in meta:
            result["capabilities"] = dict(result["capabilities"], logging={})
        return status, result


class SamplingRootsAdvertised(Rich):
    """Lists `sampling: {}` and `roots: {}` among its server capabilities in `server/discover` (ServerCapabilities is an open set).

    DEPR: Roots and Sampling are Deprecated as of 2026-07-28 ("new
    implementations **SHOULD NOT** adopt it"); the rule: Roots / Sampling /
    Logging capabilities are not advertised.
    """

    RULE = "MCP-DEP-005"

    def capabilities(self):
        return dict(super().capabilities(), sampling={}, roots={})


# --- SEC-003: errors do not echo request headers -----------------------------------


class HeadersDumpedOnMismatch(Rich):
    """Adds every request header (`data.requestHeaders`) to its -32020 HeaderMismatch errors.

    Rule MCP-SEC-003 (best practice): error messages do not echo request
    headers or credentials; an `Authorization` or `Cookie` header would be
    copied as well.
    """

    RULE = "MCP-SEC-003"

    def reply(self, handler, status, rid, result=None, error=None, method=None):
        if error is not None and error[0] == -32020:
            data = dict(error[2] or {}, requestHeaders=dict(handler.headers.items()))
            error = (error[0], error[1], data)
        return super().reply(handler, status, rid, result, error, method)


class HeadersInInvalidParamsMessage(Rich):
    """Appends the request's headers to the message of its -32602 errors ("... [request headers: Host=..., Accept=..., ...]").

    Rule MCP-SEC-003 (best practice): error messages do not echo request
    headers or credentials.
    """

    RULE = "MCP-SEC-003"

    def reply(self, handler, status, rid, result=None, error=None, method=None):
        if error is not None and error[0] == -32602:
            dump = ", ".join(f"{k}={v}" for k, v in handler.headers.items())
            error = (error[0], f"{error[1]} [request headers: {dump}]", error[2])
        return super().reply(handler, status, rid, result, error, method)


# --- SEC-004: icons ------------------------------------------------------------------


class JavascriptIconOnLastPage(Icons):
    """Gives the tool on the last `tools/list` page (`clock`) the icon `javascript:alert(document.domain)`.

    BASIC "icons": "Ensure that the icon URI is either a HTTPS or `data:` URI.
    Clients **MUST** reject icon URIs that use unsafe schemes ... such as
    `javascript:`, `file:`, `ftp:`, `ws:`".
    """

    RULE = "MCP-SEC-004"

    def icon_src(self, kind, name):
        return "javascript:alert(document.domain)" if (kind, name) == ("tool", "clock") else PNG


class FileIconInDiscoverServerInfo(Icons):
    """Only the `server/discover` result's `_meta` serverInfo carries a `file:///usr/share/icons/mcp.png` icon.

    BASIC "icons": "Ensure that the icon URI is either a HTTPS or `data:` URI.
    Clients **MUST** reject icon URIs that use unsafe schemes ... such as ... `file:`".
    """

    RULE = "MCP-SEC-004"

    def icon_src(self, kind, name):
        return "file:///usr/share/icons/mcp.png" if (kind, name) == ("server", "server/discover") else PNG


class CrossOriginIconOnPrompt(Icons):
    """The `farewell` prompt (second prompts/list page) has an icon on another origin: `https://cdn.example.net/icons/farewell.png`.

    BASIC "icons": "Verify that icon URIs are from the same origin as the
    server"; schema `Icon.src`: consumers "SHOULD take steps to ensure URLs
    serving icons are from the same domain". (An origin-level duty worded
    for consumers; see the rule: icons same-origin.)
    """

    RULE = "MCP-SEC-004"

    def icon_src(self, kind, name):
        return "https://cdn.example.net/icons/farewell.png" if (kind, name) == ("prompt", "farewell") else PNG


# --- SEC-007 (need a token; not in VARIANTS) -----------------------------------------


class AuthorizationDebugHeader(Rich):
    """Copies a request's `Authorization` header into an `X-Debug-Authorization` response header. NEEDS A TOKEN.

    Only visible when the client sends `Authorization`; run.py sends none.
    Rule MCP-SEC-007: the server does not reflect the Authorization header into responses.
    """

    RULE = "MCP-SEC-007"

    def send_message(self, handler, status, doc, method):
        auth = handler.headers.get("Authorization")
        extra = [("X-Debug-Authorization", auth)] if auth else []
        handler.send(status, json.dumps(doc).encode(), self.result_type(method), extra)


class AuthorizationInCallMeta(Rich):
    """Puts the caller's `Authorization` value in `tools/call` results' `_meta` (`com.example/caller`). NEEDS A TOKEN.

    Rule MCP-SEC-007: the server does not reflect the Authorization header into responses.
    """

    RULE = "MCP-SEC-007"

    def dispatch(self, handler, method, params):
        status, result = super().dispatch(handler, method, params)
        auth = handler.headers.get("Authorization")
        if method == "tools/call" and auth:
            result["_meta"] = dict(result["_meta"], **{"com.example/caller": {"authorization": auth}})
        return status, result


VARIANTS = {
    "control-rich": Rich,
    "control-listen": Listen,
    "control-sse": Sse,
    "control-icons": Icons,
    "control-seven": Seven,
    "control-checked": Checked,
    "hdr006-version-name-exact": VersionHeaderNameExact,
    "hdr006-read-name-exact": NameHeaderExactOnRead,
    "hdr006-param-value-folded": ParamValueCaseFolded,
    "hdr008-bool-truthy": BooleanParamTruthy,
    "hdr008-falsy-not-expected": FalsyParamNotExpected,
    "hdr008-second-unchecked": SecondParamUnchecked,
    "hdr009-del-accepted": ParamDelAccepted,
    "hdr009-integer-chars": IntegerParamCharsUnchecked,
    "hdr009-strip-before-check": ParamStrippedBeforeCheck,
    "stl003-call-needs-discover": CallNeedsDiscover,
    "stl003-template-read-needs-list": TemplateReadNeedsList,
    "stl004-version-pinned": VersionPinnedPerConnection,
    "stl004-cursor-per-connection": CursorsPerConnection,
    "stl004-listen-ack-needs-list": ListenAckNeedsPriorList,
    "stl004-listen-then-refused": ListenThenRefused,
    "stl007-replay-after-id": ReplayAfterLastEventId,
    "stl007-replay-last-any": ReplayLastOnAnyId,
    "cac001-template-read": NoTtlOnTemplateRead,
    "cac002-prompts-page2": NoScopeOnPromptsPage2,
    "cac003-seventh-resource": CapitalScopeOnSeventh,
    "cac004-templates-page2-forever": ForeverTtlOnTemplatesPage2,
    "res005-sse-lingers-call": SseLingersOnCall,
    "res005-text-plain-completion": TextPlainCompletion,
    "res005-done-trailer-lists": DoneTrailerOnLists,
    "dep005-logging": LoggingAdvertised,
    "dep005-logging-on-loglevel": LoggingAdvertisedOnLogLevel,
    "dep005-sampling-roots": SamplingRootsAdvertised,
    "sec003-mismatch-headers": HeadersDumpedOnMismatch,
    "sec003-invalid-params-headers": HeadersInInvalidParamsMessage,
    "sec004-javascript-tool-p3": JavascriptIconOnLastPage,
    "sec004-file-serverinfo": FileIconInDiscoverServerInfo,
    "sec004-cross-origin-prompt": CrossOriginIconOnPrompt,
}

TOKEN_VARIANTS = {
    "sec007-debug-header": AuthorizationDebugHeader,
    "sec007-call-meta": AuthorizationInCallMeta,
}

if __name__ == "__main__":
    known = dict(VARIANTS, **TOKEN_VARIANTS)
    if len(sys.argv) < 2 or sys.argv[1] not in known:
        sys.exit("usage: blind_r4.py {" + ",".join(known) + "} [PORT]")
    base.serve(known[sys.argv[1]](), sys.argv[2:])
