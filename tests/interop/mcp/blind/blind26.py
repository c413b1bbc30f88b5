"""Blind one-fault servers for MCP 2026-07-28: `python3 blind26.py NAME [PORT]`.

Written from the specification text alone (the 2026-07-28 pages and the rule
list), without reading protocheck's probes. `Rich` is a correct server that
serves more of the protocol than base.Server (paginated lists, a resource
template, completions, an integer and a boolean `x-mcp-header` argument), so
that a fault can sit in a rarer member of a family, on a later page, or at a
later moment. Every other class breaks ONE requirement of `Rich` (or of
base.Server), and its docstring quotes the sentence it breaks. `RULE` names
the rule the fault falls under; BLIND.md records protocheck's verdict.
"""

import base64
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "spec"))

import base  # noqa: E402
from base import SERVER_INFO, Refusal, Server, mismatch  # noqa: E402

TOOLS = [
    base.TOOLS[0],
    base.TOOLS[1],
    {
        "name": "shard",
        "description": "Names the shard that holds a numbered record.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "id": {"type": "integer", "x-mcp-header": "Record"},
                "fresh": {"type": "boolean", "x-mcp-header": "Fresh"},
            },
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "sum",
        "description": "Adds two numbers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {"sum": {"type": "number"}},
            "required": ["sum"],
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "clock",
        "description": "A fixed time of day.",
        "inputSchema": {"type": "object", "additionalProperties": False},
        "annotations": {"readOnlyHint": True},
    },
]
RESOURCES = [
    {"uri": "memo://greeting", "name": "greeting", "mimeType": "text/plain"},
    {"uri": "memo://farewell", "name": "farewell", "mimeType": "text/plain"},
    {"uri": "memo://motto", "name": "motto", "mimeType": "text/plain"},
]
TEXTS = {"memo://greeting": "hello", "memo://farewell": "goodbye", "memo://motto": "be kind"}
TEMPLATES = [
    {"uriTemplate": "memo://notes/{id}", "name": "note", "mimeType": "text/plain"},
    {"uriTemplate": "memo://tags/{tag}", "name": "tag", "mimeType": "text/plain"},
]
NOTE = re.compile(r"^memo://(notes|tags)/([A-Za-z0-9]{1,12})$")
PROMPTS = [
    base.PROMPTS[0],
    {"name": "farewell", "description": "Asks for a farewell.", "arguments": [{"name": "who", "required": True}]},
    {"name": "motto", "description": "Asks for a motto."},
]
NAMES = ["Alice", "Bob", "Carol", "Dave"]
PAGE = {"tools": 2, "resources": 2, "resourceTemplates": 1, "prompts": 2}
LIST_KEY = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
    "prompts/list": "prompts",
}


class Rich(Server):
    """A correct 2026-07-28 server with paginated lists, templates and completions.

    PAGINATION: "Servers SHOULD... provide stable cursors"; an invalid cursor
    gets -32602. Every page is a complete result of a cacheable method, so each
    carries `ttlMs` and `cacheScope` (CACHE).
    """

    RULE = None

    def capabilities(self):
        return {"tools": {}, "resources": {}, "prompts": {}, "completions": {}}

    def tools(self, handler):
        return TOOLS

    def items(self, key, handler):
        return {
            "tools": self.tools(handler),
            "resources": RESOURCES,
            "resourceTemplates": TEMPLATES,
            "prompts": PROMPTS,
        }[key]

    def page_size(self, key):
        return PAGE[key]

    def cursor(self, key, offset):
        return base64.urlsafe_b64encode(json.dumps({"k": key, "o": offset}).encode()).decode()

    def offset(self, key, cursor, count):
        if cursor is None:
            return 0
        try:
            doc = json.loads(base64.urlsafe_b64decode(str(cursor).encode("ascii")))
            off = doc["o"]
            if doc["k"] != key or not isinstance(off, int) or not 0 < off < count:
                raise ValueError
        except Exception:
            raise Refusal(400, -32602, "Invalid params: unknown cursor") from None
        return off

    def page(self, handler, method, params):
        key = LIST_KEY[method]
        items = self.items(key, handler)
        start = self.offset(key, params.get("cursor"), len(items))
        size = self.page_size(key)
        body = {key: items[start : start + size]}
        if start + size < len(items):
            body["nextCursor"] = self.cursor(key, start + size)
        return self.finish(method, self.complete(method, body), start // size)

    def finish(self, method, result, page_number):
        """The last word on a list page (page_number 0 is the first)."""
        return result

    def read(self, handler, uri):
        if uri in TEXTS:
            return [{"uri": uri, "mimeType": "text/plain", "text": TEXTS[uri]}]
        m = NOTE.match(uri) if isinstance(uri, str) else None
        if m:
            return [{"uri": uri, "mimeType": "text/plain", "text": f"{m.group(1)} {m.group(2)}"}]
        raise Refusal(400, -32602, "Resource not found", {"uri": str(uri)[:200]})

    def completion(self, params):
        ref = params.get("ref")
        arg = params.get("argument")
        if not isinstance(ref, dict) or not isinstance(arg, dict) or not isinstance(arg.get("value"), str):
            raise Refusal(400, -32602, "Invalid params: ref and argument are required")
        value = arg["value"]
        kind = ref.get("type")
        if kind == "ref/prompt" and ref.get("name") in {p["name"] for p in PROMPTS}:
            values = [n for n in NAMES if n.lower().startswith(value.lower())] if arg.get("name") == "who" else []
        elif kind == "ref/resource" and ref.get("uri") in {t["uriTemplate"] for t in TEMPLATES}:
            values = [n for n in ("1", "2", "7", "12") if n.startswith(value)]
        else:
            raise Refusal(400, -32602, "Invalid params: unknown reference")
        return {"completion": {"values": values, "total": len(values), "hasMore": False}}

    def prompt(self, params):
        name = params.get("name")
        args = params.get("arguments") or {}
        if not isinstance(args, dict):
            raise Refusal(400, -32602, "Invalid params: arguments must be an object")
        if name == "greet":
            text = "Say hello to " + str(args.get("who", "world"))
        elif name == "farewell":
            if not isinstance(args.get("who"), str):
                raise Refusal(400, -32602, "Invalid params: missing required argument 'who'")
            text = "Say goodbye to " + args["who"]
        elif name == "motto":
            text = "Offer a motto."
        else:
            raise Refusal(400, -32602, "Unknown prompt")
        return {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]}

    def call(self, handler, params):
        name = params.get("name")
        args = params.get("arguments") or {}
        if not isinstance(args, dict):
            raise Refusal(400, -32602, "Invalid params: arguments must be an object")
        if name == "echo":
            return {"content": [{"type": "text", "text": str(args.get("text", ""))}]}
        if name == "weather":
            return {"content": [{"type": "text", "text": f"sunny in {args.get('region', 'nowhere')}"}]}
        if name == "shard":
            return {"content": [{"type": "text", "text": f"shard {args.get('id', 0)} fresh={args.get('fresh')}"}]}
        if name == "sum":
            a, b = args.get("a"), args.get("b")
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)):
                return {"content": [{"type": "text", "text": "a and b must be numbers"}], "isError": True}
            structured = {"sum": a + b}
            return {"content": [{"type": "text", "text": json.dumps(structured)}], "structuredContent": structured}
        if name == "clock":
            return {"content": [{"type": "text", "text": "12:00"}]}
        raise Refusal(400, -32602, "Unknown tool")

    def other_method(self, handler):
        # HTTP "Security & Endpoint": Origin is validated on all incoming
        # connections, GET and DELETE included.
        origin = self.header(handler, "Origin")
        if origin is not None and not self.origin_ok(origin):
            return self.refuse_origin(handler)
        return self.non_post(handler)

    def non_post(self, handler):
        return super().other_method(handler)

    def dispatch(self, handler, method, params):
        if method == "server/discover":
            return 200, self.complete(
                method, {"supportedVersions": list(self.supported), "capabilities": self.capabilities()}
            )
        if method in LIST_KEY:
            return 200, self.page(handler, method, params)
        if method == "tools/call":
            return 200, self.complete(method, self.call(handler, params))
        if method == "resources/read":
            return 200, self.complete(method, {"contents": self.read(handler, params.get("uri"))})
        if method == "prompts/get":
            return 200, self.complete(method, self.prompt(params))
        if method == "completion/complete" and "completions" in self.capabilities():
            return 200, self.complete(method, self.completion(params))
        return super().dispatch(handler, "(unknown)" if method != "initialize" else method, params)


# --- HDR ---------------------------------------------------------------------


class MethodHeaderOptionalOnTemplates(Rich):
    """Serves `resources/templates/list` without an `Mcp-Method` header.

    HTTP "Standard Request Headers": Mcp-Method is required on "All requests";
    "Servers MUST reject requests where ... A required standard header is missing".
    """

    RULE = "MCP-HDR-001"

    def method_header_required(self, method):
        return method != "resources/templates/list"


class MethodHeaderOptionalOnCompletion(Rich):
    """Serves `completion/complete` without an `Mcp-Method` header.

    HTTP "Standard Request Headers": Mcp-Method is required on "All requests".
    """

    RULE = "MCP-HDR-001"

    def method_header_required(self, method):
        return method != "completion/complete"


class NameHeaderOptionalOnRead(Rich):
    """Serves `resources/read` without `Mcp-Name` (a present one is still compared).

    HTTP "Standard Request Headers": Mcp-Name is required for "`tools/call`,
    `resources/read`, `prompts/get` requests"; a missing required header is
    rejected with 400 and -32020.
    """

    RULE = "MCP-HDR-002"

    def header(self, handler, name):
        value = super().header(handler, name)
        if value is None and name == "Mcp-Name" and getattr(handler, "_method", None) == "resources/read":
            return getattr(handler, "_uri", None)
        return value

    def check_headers(self, handler, msg):
        handler._method = msg["method"]
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        handler._uri = params.get("uri")
        return super().check_headers(handler, msg)


class NameCaseFolded(Rich):
    """Compares `Mcp-Name` with the body case-insensitively.

    HTTP "Case Sensitivity": header values "are case-sensitive"; a value that
    differs from the body MUST be rejected (400, -32020).
    """

    RULE = "MCP-HDR-003"

    def header(self, handler, name):
        value = super().header(handler, name)
        if name == "Mcp-Name" and value is not None:
            params = getattr(handler, "_params", {})
            for key in ("name", "uri"):
                body = params.get(key)
                if isinstance(body, str) and body.lower() == value.lower():
                    return body
        return value

    def check_headers(self, handler, msg):
        handler._params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        return super().check_headers(handler, msg)


class NameMismatchOnPromptGet(Rich):
    """Requires `Mcp-Name` on `prompts/get` but never compares its value.

    HTTP "Server Validation": servers MUST reject a request whose header value
    does not match the body; this holds for `prompts/get` (`params.name`).
    """

    RULE = "MCP-HDR-003"

    def check_headers(self, handler, msg):
        if msg["method"] == "prompts/get" and self.header(handler, "Mcp-Name") is not None:
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            handler._fake_name = params.get("name")
            try:
                return super().check_headers(handler, msg)
            finally:
                handler._fake_name = None
        return super().check_headers(handler, msg)

    def header(self, handler, name):
        fake = getattr(handler, "_fake_name", None)
        if name == "Mcp-Name" and fake is not None:
            return fake
        return super().header(handler, name)


class VersionHeaderOptionalOnLists(Rich):
    """Serves list requests that lack `MCP-Protocol-Version` as the `_meta` version.

    HTTP "Protocol Version Header": "A server that does not support such
    clients MUST reject a request without the header per Server Validation."
    This server supports only 2026-07-28.
    """

    RULE = "MCP-HDR-004"

    def missing_version(self, handler, msg):
        if msg["method"] in LIST_KEY:
            meta = (msg.get("params") or {}).get("_meta") or {}
            return meta.get("io.modelcontextprotocol/protocolVersion")
        return super().missing_version(handler, msg)

    def check_headers(self, handler, msg):
        if super().header(handler, "MCP-Protocol-Version") is None and msg["method"] in LIST_KEY:
            handler._assumed = self.missing_version(handler, msg)
        else:
            handler._assumed = None
        return super().check_headers(handler, msg)

    def header(self, handler, name):
        value = super().header(handler, name)
        if value is None and name == "MCP-Protocol-Version":
            return getattr(handler, "_assumed", None)
        return value


class VersionMismatchOnCalls(Rich):
    """Ignores an `MCP-Protocol-Version` header that differs from `_meta` on `tools/call` and `prompts/get`.

    HTTP "Protocol Version Header": a header that does not match
    `_meta["io.modelcontextprotocol/protocolVersion"]` MUST be rejected
    (400, -32020), on every POST.
    """

    RULE = "MCP-HDR-005"

    def handle(self, handler, msg):
        if msg["method"] in ("tools/call", "prompts/get"):
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
            handler._meta_version = meta.get("io.modelcontextprotocol/protocolVersion")
        else:
            handler._meta_version = None
        return super().handle(handler, msg)

    def header(self, handler, name):
        value = super().header(handler, name)
        forced = getattr(handler, "_meta_version", None)
        if name == "MCP-Protocol-Version" and value is not None and forced is not None:
            return forced
        return value


class ParamHeaderCaseSensitive(Rich):
    """Finds `Mcp-Param-{Name}` headers only when spelled exactly as declared.

    HTTP "Case Sensitivity": "Clients and servers MUST use case-insensitive
    comparisons for header names", `Mcp-Param-{Name}` included.
    """

    RULE = "MCP-HDR-006"

    def header(self, handler, name):
        if name.startswith("Mcp-Param-"):
            for key, value in handler.headers.items():
                if key == name:
                    return value
            return None
        return super().header(handler, name)


class NameSentinelUndecodedOnRead(Rich):
    """Decodes a Base64 sentinel `Mcp-Name` on tools/call and prompts/get, not on resources/read.

    HTTP "Value Encoding": servers MUST decode Base64 sentinel values of
    `Mcp-Name` before comparing them with the body.
    """

    RULE = "MCP-HDR-007"

    def check_headers(self, handler, msg):
        if msg["method"] == "resources/read":
            hn = self.header(handler, "Mcp-Name")
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            if hn is not None and hn != params.get("uri"):
                raise mismatch("Mcp-Name header does not match the body")
        return super().check_headers(handler, msg)


class IntegerParamUnchecked(Rich):
    """Validates `Mcp-Param-{Name}` for string arguments only: integer and boolean ones are never checked.

    HTTP "Schema Extension": when the argument has a non-null value the server
    MUST validate the header (missing or different: 400, -32020); this applies
    to string, integer and boolean properties.
    """

    RULE = "MCP-HDR-008"

    def check_params(self, handler, params):
        if params.get("name") == "shard":
            return
        return super().check_params(handler, params)


class NullParamExpected(Rich):
    """Demands `Mcp-Param-{Name}` even when the argument is present with value null.

    HTTP "Schema Extension": "If the value is null or absent, the client MUST
    omit the header and the server MUST NOT expect it."
    """

    RULE = "MCP-HDR-008"

    def check_params(self, handler, params):
        args = params.get("arguments") or {}
        tool = next((t for t in self.tools(handler) if t["name"] == params.get("name")), None)
        if tool is not None and isinstance(args, dict):
            for prop, schema in tool["inputSchema"].get("properties", {}).items():
                name = schema.get("x-mcp-header")
                if name and prop in args and args[prop] is None and self.header(handler, "Mcp-Param-" + name) is None:
                    raise mismatch(f"Mcp-Param-{name} header is missing")
        return super().check_params(handler, params)


class ParamNonAsciiAccepted(Rich):
    """Accepts non-ASCII octets in `Mcp-Param-{Name}` (read as UTF-8), refusing only control characters.

    HTTP "Schema Extension": "Servers MUST reject requests with a recognized
    Mcp-Param-{Name} header that contains invalid characters"; non-ASCII is
    not safe in a plain header value and travels Base64-encoded.
    """

    RULE = "MCP-HDR-009"

    def header(self, handler, name):
        value = super().header(handler, name)
        if value is not None and name.startswith("Mcp-Param-") and not re.search(r"[\x00-\x08\x0a-\x1f\x7f]", value):
            try:
                return value.encode("latin-1").decode("utf-8")
            except (UnicodeEncodeError, UnicodeDecodeError):
                return value
        return value

    def check_params(self, handler, params):
        saved = base.SAFE_VALUE
        base.SAFE_VALUE = re.compile(r"^[^\x00-\x08\x0a-\x1f\x7f]*$")
        try:
            return super().check_params(handler, params)
        finally:
            base.SAFE_VALUE = saved


class MethodFamilyCompared(Rich):
    """Compares `Mcp-Method` with the body only up to the family (`resources/...`).

    HTTP "Server Validation": a header value that differs from the body's
    `method` MUST be rejected with 400 and -32020 before dispatch; this server
    dispatches `resources/templates/list` sent with `Mcp-Method: resources/list`.
    """

    RULE = "MCP-HDR-010"

    def header(self, handler, name):
        value = super().header(handler, name)
        body = getattr(handler, "_body_method", None)
        if name == "Mcp-Method" and value is not None and body is not None:
            if value.split("/")[0] == body.split("/")[0]:
                return body
        return value

    def check_headers(self, handler, msg):
        handler._body_method = msg["method"]
        return super().check_headers(handler, msg)


# --- STL ---------------------------------------------------------------------


class SessionEchoed(Rich):
    """Echoes a client's `Mcp-Session-Id` back on the response.

    BASIC "Statelessness": a server "never mints or echoes" a session id;
    HTTP "Earlier Streamable HTTP revisions": servers SHOULD ignore
    `Mcp-Session-Id`.
    """

    RULE = "MCP-STL-001"

    def send_message(self, handler, status, doc, method):
        sid = handler.headers.get("Mcp-Session-Id")
        extra = [("Mcp-Session-Id", sid)] if sid else []
        handler.send(status, json.dumps(doc).encode(), self.result_type(method), extra)


class SessionMintedOnErrors(Rich):
    """Mints an `Mcp-Session-Id` on 404 (method not found) answers only.

    There are no protocol sessions: a server never mints an `Mcp-Session-Id`
    on any response.
    """

    RULE = "MCP-STL-001"

    def send_message(self, handler, status, doc, method):
        extra = [("Mcp-Session-Id", "4f1c2a9e7b")] if status == 404 else []
        handler.send(status, json.dumps(doc).encode(), self.result_type(method), extra)


class SessionValidatedOnPrompts(Rich):
    """Answers a `prompts/get` or `resources/read` carrying an unknown `Mcp-Session-Id` with 404.

    HTTP: a client-supplied `Mcp-Session-Id` SHOULD be ignored; the server
    MUST NOT require or validate it, on any request.
    """

    RULE = "MCP-STL-002"

    def before(self, handler, method):
        if method in ("prompts/get", "resources/read") and handler.headers.get("Mcp-Session-Id"):
            raise Refusal(404, -32600, "Session not found")


class GetNeedsList(Rich):
    """Refuses `prompts/get` on a connection that has not listed prompts first.

    BASIC "Statelessness": "Servers MUST NOT rely on prior requests"; any
    request, of any method, may come first on a new connection.
    """

    RULE = "MCP-STL-003"

    def before(self, handler, method):
        if method == "prompts/list":
            handler._listed = True
        elif method == "prompts/get" and not getattr(handler, "_listed", False):
            raise Refusal(400, -32600, "List prompts first")


class VersionSticky(Rich):
    """Remembers the version of the first request on a connection and serves later ones with it.

    BASIC "Statelessness": servers MUST NOT rely on prior requests over the
    same connection for version; a later request naming an unsupported
    version is served instead of getting -32022.
    """

    RULE = "MCP-STL-004"

    def handle(self, handler, msg):
        if getattr(handler, "_warm", False):
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            meta = params.get("_meta")
            if isinstance(meta, dict) and meta.get("io.modelcontextprotocol/protocolVersion") not in self.supported:
                meta = dict(meta)
                meta["io.modelcontextprotocol/protocolVersion"] = base.MODERN
                handler._pin = True
                msg = dict(msg, params=dict(params, _meta=meta))
        try:
            answer = super().handle(handler, msg)
        finally:
            handler._pin = False
        handler._warm = True
        return answer

    def header(self, handler, name):
        value = super().header(handler, name)
        if name == "MCP-Protocol-Version" and getattr(handler, "_pin", False):
            return base.MODERN
        return value


class GetStreamForSse(Rich):
    """Answers GET with `Accept: text/event-stream` with an empty 200 event stream (405 otherwise).

    HTTP "Earlier Streamable HTTP revisions": a server that supports only
    2026-07-28 SHOULD answer HTTP GET on the MCP endpoint with 405.
    """

    RULE = "MCP-STL-005"

    def non_post(self, handler):
        if handler.command == "GET" and "text/event-stream" in (handler.headers.get("Accept") or ""):
            return handler.send(200, b": open\n\n", "text/event-stream")
        return super().non_post(handler)


class DeleteEndsSession(Rich):
    """Answers DELETE carrying an `Mcp-Session-Id` with 200 (405 without one).

    HTTP: a server that supports only 2026-07-28 SHOULD answer HTTP DELETE on
    the MCP endpoint with 405 Method Not Allowed.
    """

    RULE = "MCP-STL-006"

    def non_post(self, handler):
        if handler.command == "DELETE" and handler.headers.get("Mcp-Session-Id"):
            return handler.send(200)
        return super().non_post(handler)


class LastEventIdRefusedOnCall(Rich):
    """Refuses a `tools/call` that carries `Last-Event-ID` (400, "resumption not supported").

    HTTP: a server that supports only 2026-07-28 SHOULD ignore `Last-Event-ID`:
    a request carrying it is answered as without it.
    """

    RULE = "MCP-STL-007"

    def before(self, handler, method):
        if method == "tools/call" and handler.headers.get("Last-Event-ID") is not None:
            raise Refusal(400, -32600, "Stream resumption is not supported")


class PromptsGrowAfterGet(Rich):
    """`prompts/list` gains a prompt on a connection once `prompts/get` was served on it.

    PROMPTS "Capabilities": the list MUST NOT vary per connection or as a side
    effect of other requests on the connection.
    """

    RULE = "MCP-STL-008"

    def before(self, handler, method):
        if method == "prompts/get":
            handler._got = True

    def items(self, key, handler):
        items = super().items(key, handler)
        if key == "prompts" and getattr(handler, "_got", False):
            return items + [{"name": "recent", "description": "The prompt you just used."}]
        return items


class ResourcesGrowAfterRead(Rich):
    """`resources/list` gains the last resource read on that connection.

    RESOURCES "Capabilities": the list MUST NOT vary per connection or as a
    side effect of other requests on the connection.
    """

    RULE = "MCP-STL-008"

    def before(self, handler, method):
        if method == "resources/read":
            handler._read = True

    def items(self, key, handler):
        items = super().items(key, handler)
        if key == "resources" and getattr(handler, "_read", False):
            return items + [{"uri": "memo://recent", "name": "recent", "mimeType": "text/plain"}]
        return items


# --- RES ---------------------------------------------------------------------


class NoResultTypeOnCompletion(Rich):
    """Omits `resultType` from `completion/complete` results.

    BASIC "Result responses": every result MUST carry `resultType`.
    """

    RULE = "MCP-RES-001"

    def complete(self, method, body):
        result = super().complete(method, body)
        if method == "completion/complete":
            result.pop("resultType")
        return result


class NoResultTypeOnLaterPages(Rich):
    """Omits `resultType` from every list page after the first.

    BASIC "Result responses": every result MUST carry `resultType`.
    """

    RULE = "MCP-RES-001"

    def finish(self, method, result, page_number):
        if page_number > 0:
            result.pop("resultType")
        return result


class ResultTypeCapitalOnPrompt(Rich):
    """Answers `prompts/get` with `resultType: "Complete"`.

    BASIC "resultType": the value MUST be `complete`, `input_required` or a
    value of an advertised extension; a client MUST treat any unrecognised
    value as invalid.
    """

    RULE = "MCP-RES-002"

    def complete(self, method, body):
        result = super().complete(method, body)
        if method == "prompts/get":
            result["resultType"] = "Complete"
        return result


class InputRequiredOnTemplates(Rich):
    """Marks `resources/templates/list` results `resultType: "input_required"` (kept complete otherwise).

    MRTR: `input_required` is allowed only on `tools/call`, `resources/read`
    and `prompts/get`, and "MUST NOT be sent for any other request".
    """

    RULE = "MCP-RES-002"

    def complete(self, method, body):
        result = super().complete(method, body)
        if method == "resources/templates/list":
            result["resultType"] = "input_required"
        return result


class SseRequestOnCall(Rich):
    """Answers `tools/call` (when the client accepts SSE) with a stream that first sends a `roots/list` request.

    HTTP "Receiving Messages": on a response stream the server MUST NOT send
    independent JSON-RPC requests.
    """

    RULE = "MCP-RES-003"

    def send_message(self, handler, status, doc, method):
        if method == "tools/call" and "text/event-stream" in (handler.headers.get("Accept") or ""):
            ask = {"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list", "params": {}}
            body = (
                b"event: message\ndata: " + json.dumps(ask).encode() + b"\n\n"
                b"event: message\ndata: " + json.dumps(doc).encode() + b"\n\n"
            )
            return handler.send(status, body, "text/event-stream", [("X-Accel-Buffering", "no")])
        return super().send_message(handler, status, doc, method)


class NotificationAnsweredWithBody(Rich):
    """Answers an accepted notification POST with 202 and a JSON body.

    HTTP "Sending Messages": "If the server accepts the input, the server MUST
    return HTTP status code 202 Accepted with no body."
    """

    RULE = "MCP-RES-004"

    def post(self, handler):
        origin = self.header(handler, "Origin")
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(min(length, 1 << 20))
        try:
            msg = json.loads(raw)
        except ValueError:
            msg = None
        if (
            (origin is None or self.origin_ok(origin))
            and isinstance(msg, dict)
            and msg.get("jsonrpc") == "2.0"
            and "method" in msg
            and "id" not in msg
        ):
            return handler.send(202, b'{"jsonrpc":"2.0","result":{}}', "application/json")
        rest = handler.rfile
        handler.rfile = _Replay(raw)
        try:
            return super().post(handler)
        finally:
            handler.rfile = rest


class _Replay:
    def __init__(self, data):
        self.data = data

    def read(self, n=-1):
        out, self.data = self.data, b""
        return out


class ErrorsAsHtml(Rich):
    """Sends JSON-RPC error answers with `Content-Type: text/html`.

    HTTP "Sending Messages": a request MUST be answered with
    `application/json` or `text/event-stream`.
    """

    RULE = "MCP-RES-005"

    def send_message(self, handler, status, doc, method):
        ctype = "text/html" if "error" in doc else "application/json"
        handler.send(status, json.dumps(doc).encode(), ctype)


class SseWithoutAccelHeader(Rich):
    """Answers `tools/call` as SSE (when accepted) without `X-Accel-Buffering: no`.

    HTTP "Receiving Messages": a server opening an SSE stream SHOULD send
    `X-Accel-Buffering: no`.
    """

    RULE = "MCP-RES-006"

    def send_message(self, handler, status, doc, method):
        if method == "tools/call" and "text/event-stream" in (handler.headers.get("Accept") or ""):
            body = b"event: message\ndata: " + json.dumps(doc).encode() + b"\n\n"
            return handler.send(status, body, "text/event-stream", [("Cache-Control", "no-cache")])
        return super().send_message(handler, status, doc, method)


class ToolsOrderAlternates(Rich):
    """Returns the tools in reverse order on every second `tools/list` of the process.

    TOOLS "Capabilities": servers SHOULD return tools in the same order across
    requests while the set is unchanged.
    """

    RULE = "MCP-RES-007"
    count = 0

    def items(self, key, handler):
        items = super().items(key, handler)
        if key == "tools":
            type(self).count += 1
            if type(self).count % 2 == 0:
                return list(reversed(items))
        return items


# --- ERR ---------------------------------------------------------------------


class UnsupportedVersion200OnPrompts(Rich):
    """Answers an unsupported version on `prompts/get` with -32022 in an HTTP 200.

    VERSION: a request for an unsupported protocol version MUST get
    UnsupportedProtocolVersionError, HTTP 400, on every method.
    """

    RULE = "MCP-ERR-001"

    def reply(self, handler, status, rid, result=None, error=None, method=None):
        if error is not None and error[0] == -32022 and getattr(handler, "_method", None) == "prompts/get":
            status = 200
        return super().reply(handler, status, rid, result, error, method)

    def check_headers(self, handler, msg):
        handler._method = msg["method"]
        return super().check_headers(handler, msg)


class UnsupportedNoRequestedOnCall(Rich):
    """Answers an unsupported version on `tools/call` with -32022 without `data.requested`.

    SCHEMA `UnsupportedProtocolVersionError`: `data` requires `supported` and
    `requested` (echoing the request), on every method.
    """

    RULE = "MCP-ERR-001"

    def handle(self, handler, msg):
        try:
            return super().handle(handler, msg)
        except Refusal as r:
            if r.code == -32022 and msg["method"] == "tools/call" and isinstance(r.data, dict):
                r.data.pop("requested", None)
            raise


class UnsupportedSupportedString(Rich):
    """Answers an unsupported version with -32022 whose `data.supported` is one string.

    SCHEMA `UnsupportedProtocolVersionError`: `data.supported` is an array of strings.
    """

    RULE = "MCP-ERR-001"

    def unsupported_data(self, requested):
        return {"supported": base.MODERN, "requested": requested}


class UnsubscribeAnswered(Rich):
    """Answers `resources/unsubscribe` with an empty result (`resources/subscribe` gets 404).

    CHANGELOG: `resources/unsubscribe` was removed; a method the server does
    not implement MUST be answered HTTP 404 with -32601.
    """

    RULE = "MCP-ERR-002"

    def dispatch(self, handler, method, params):
        if method == "resources/unsubscribe":
            return 200, self.complete(method, {})
        return super().dispatch(handler, method, params)


class CompletionUnadvertised(Rich):
    """Serves `completion/complete` without advertising `completions`.

    SCHEMA `MethodNotFoundError`: a method behind a server capability the
    server did not advertise gets -32601 (HTTP 404).
    """

    RULE = "MCP-ERR-002"

    def capabilities(self):
        caps = super().capabilities()
        caps.pop("completions")
        return caps

    def dispatch(self, handler, method, params):
        if method == "completion/complete":
            return 200, self.complete(method, self.completion(params))
        return super().dispatch(handler, method, params)


class SetLevelNotFound200(Rich):
    """Answers `logging/setLevel` with -32601 in an HTTP 200.

    HTTP "Protocol Version Header": a method the server does not implement
    MUST get 404 Not Found and -32601.
    """

    RULE = "MCP-ERR-002"

    def reply(self, handler, status, rid, result=None, error=None, method=None):
        if error is not None and getattr(handler, "_method", None) == "logging/setLevel":
            status = 200
        return super().reply(handler, status, rid, result, error, method)

    def check_headers(self, handler, msg):
        handler._method = msg["method"]
        return super().check_headers(handler, msg)


class MissingNoteEmpty(Rich):
    """Reads a missing `memo://` resource (no listed resource or template matches) as an empty `contents`.

    RESOURCES "Error Handling": resource not found is -32602; servers MUST NOT
    answer it with an empty `contents` array.
    """

    RULE = "MCP-ERR-003"

    def read(self, handler, uri):
        if isinstance(uri, str) and uri.startswith("memo://") and uri not in TEXTS and not NOTE.match(uri):
            return []
        return super().read(handler, uri)


class MissingResourceOldCode(Rich):
    """Answers a missing resource whose URI has another scheme with the retired -32002.

    RESOURCES "Error Handling": resource not found MUST be -32602, never the
    retired -32002.
    """

    RULE = "MCP-ERR-003"

    def read(self, handler, uri):
        if not (isinstance(uri, str) and uri.startswith("memo://")):
            raise Refusal(404, -32002, "Resource not found", {"uri": str(uri)[:200]})
        return super().read(handler, uri)


class RetiredCodeOnPrompt(Rich):
    """Answers an unknown prompt with the retired -32042.

    BASIC "Error codes": -32042 is retired and MUST NOT be emitted by a
    2026-07-28 implementation.
    """

    RULE = "MCP-ERR-004"

    def prompt(self, params):
        if params.get("name") not in {p["name"] for p in PROMPTS}:
            raise Refusal(400, -32042, "Prompt requires URL elicitation")
        return super().prompt(params)


class ReservedCodeOnCursor(Rich):
    """Answers an invalid cursor with -32050, a code in the reserved range.

    BASIC "Error codes": implementations MUST NOT emit any code in
    -32020…-32099 other than -32020, -32021, -32022.
    """

    RULE = "MCP-ERR-005"

    def offset(self, key, cursor, count):
        try:
            return super().offset(key, cursor, count)
        except Refusal:
            raise Refusal(400, -32050, "Bad cursor") from None


class CapabilitiesOptionalOnTemplates(Rich):
    """Serves `resources/templates/list` and `completion/complete` without `clientCapabilities` in `_meta`.

    BASIC "_meta": a request missing a required `_meta` key is malformed:
    HTTP 400 with -32602, on every method.
    """

    RULE = "MCP-ERR-006"

    def handle(self, handler, msg):
        if msg["method"] in ("resources/templates/list", "completion/complete"):
            params = msg.get("params")
            if isinstance(params, dict) and isinstance(params.get("_meta"), dict):
                meta = dict(params["_meta"])
                meta.setdefault("io.modelcontextprotocol/clientCapabilities", {})
                msg = dict(msg, params=dict(params, _meta=meta))
        return super().handle(handler, msg)


class LegacyCodeOnUnknownTool(Rich):
    """Answers an unknown tool with -32001, a legacy implementation-defined code.

    BASIC "Error codes": new implementations SHOULD NOT emit codes in the
    legacy -32000…-32019 range.
    """

    RULE = "MCP-ERR-008"

    def call(self, handler, params):
        if params.get("name") not in {t["name"] for t in TOOLS}:
            raise Refusal(400, -32001, "No such tool")
        return super().call(handler, params)


# --- CAC ---------------------------------------------------------------------


class NoTtlOnLaterPages(Rich):
    """Leaves `ttlMs` off every list page after the first.

    CACHE: `ttlMs` MUST be on every complete result of the cacheable methods;
    every page of a paginated list carries its own.
    """

    RULE = "MCP-CAC-001"

    def finish(self, method, result, page_number):
        if page_number > 0:
            result.pop("ttlMs")
        return result


class NoTtlOnRead(Rich):
    """Leaves `ttlMs` off `resources/read` results of template-resolved resources.

    CACHE: `ttlMs` MUST be on every complete `resources/read` result.
    """

    RULE = "MCP-CAC-001"

    def dispatch(self, handler, method, params):
        status, result = super().dispatch(handler, method, params)
        if method == "resources/read" and NOTE.match(str(params.get("uri"))):
            result.pop("ttlMs", None)
        return status, result


class NoScopeOnTemplates(Rich):
    """Leaves `cacheScope` off `resources/templates/list` results.

    CACHE: `cacheScope` MUST be on every complete result of the cacheable methods.
    """

    RULE = "MCP-CAC-002"

    def complete(self, method, body):
        result = super().complete(method, body)
        if method == "resources/templates/list":
            result.pop("cacheScope")
        return result


class ScopeDiffersAcrossPages(Rich):
    """Marks the first page of each list `public` and later pages `private`.

    CACHE: "all pages of one list MUST share the same cacheScope".
    """

    RULE = "MCP-CAC-003"

    def finish(self, method, result, page_number):
        if page_number > 0:
            result["cacheScope"] = "private"
        return result


class ScopeCapitalOnRead(Rich):
    """Answers `resources/read` with `cacheScope: "Public"`.

    CACHE: `cacheScope` MUST be exactly `public` or `private`.
    """

    RULE = "MCP-CAC-003"

    def complete(self, method, body):
        result = super().complete(method, body)
        if method == "resources/read":
            result["cacheScope"] = "Public"
        return result


class TtlStringOnTemplates(Rich):
    """Writes `ttlMs` as the string "30000" on `resources/templates/list`.

    SCHEMA `CacheableResult`: `ttlMs` is an integer, minimum 0.
    """

    RULE = "MCP-CAC-004"

    def complete(self, method, body):
        result = super().complete(method, body)
        if method == "resources/templates/list":
            result["ttlMs"] = "30000"
        return result


class TtlNegativeOnPrompts(Rich):
    """Writes `ttlMs: -1` on `prompts/list`.

    SCHEMA `CacheableResult`: `ttlMs` is an integer, minimum 0.
    """

    RULE = "MCP-CAC-004"

    def complete(self, method, body):
        result = super().complete(method, body)
        if method == "prompts/list":
            result["ttlMs"] = -1
        return result


# --- SCH ---------------------------------------------------------------------


def with_tool(tool):
    return TOOLS + [tool]


class BadHeaderNameOnLastPage(Rich):
    """A sixth tool, on the last page of `tools/list`, declares `x-mcp-header: "Zone Id"` (a space).

    TOOLS "x-mcp-header": the value MUST be a non-empty RFC 9110 token.
    """

    RULE = "MCP-SCH-001"

    def tools(self, handler):
        return with_tool({
            "name": "zone",
            "description": "A zone.",
            "inputSchema": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone Id"}}},
        })


class DuplicateHeaderNested(Rich):
    """A tool declares `Region` and, in a nested object, `REGION` as `x-mcp-header` values.

    TOOLS "x-mcp-header": values MUST be case-insensitively unique within one inputSchema.
    """

    RULE = "MCP-SCH-003"

    def tools(self, handler):
        return with_tool({
            "name": "route",
            "description": "A route.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "to": {
                        "type": "object",
                        "properties": {"region": {"type": "string", "x-mcp-header": "REGION"}},
                    },
                },
            },
        })


class HeaderOnNestedNumber(Rich):
    """A tool puts `x-mcp-header` on a `number` property inside a nested object.

    TOOLS "x-mcp-header": it MUST only annotate `string`, `integer` or `boolean` properties.
    """

    RULE = "MCP-SCH-004"

    def tools(self, handler):
        return with_tool({
            "name": "scale",
            "description": "A scale.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "opts": {"type": "object", "properties": {"factor": {"type": "number", "x-mcp-header": "Factor"}}}
                },
            },
        })


class HeaderInsideAnyOf(Rich):
    """A tool puts `x-mcp-header` on a property reached through `anyOf`.

    TOOLS "x-mcp-header": it MUST sit on a property reachable from the root
    through `properties` keys alone.
    """

    RULE = "MCP-SCH-005"

    def tools(self, handler):
        return with_tool({
            "name": "lookup",
            "description": "A lookup.",
            "inputSchema": {
                "type": "object",
                "anyOf": [
                    {"properties": {"key": {"type": "string", "x-mcp-header": "Key"}}},
                    {"properties": {"code": {"type": "integer"}}},
                ],
            },
        })


class BadOutputSchemaOnLastPage(Rich):
    """A tool on the last page has an `outputSchema` with `"required": "sum"` (a string, not an array).

    BASIC "JSON Schema usage": schemas MUST be valid for their dialect (2020-12
    when none is declared).
    """

    RULE = "MCP-SCH-006"

    def tools(self, handler):
        return with_tool({
            "name": "total",
            "description": "A total.",
            "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}, "required": "sum"},
        })


class PromptNameNotAscii(Rich):
    """A prompt named `grüßen` (non-ASCII).

    PROMPTS: prompt names travel in `Mcp-Name` and should be header-safe ASCII.
    """

    RULE = "MCP-SCH-007"

    def items(self, key, handler):
        items = super().items(key, handler)
        if key == "prompts":
            return items + [{"name": "grüßen", "description": "Greets in German."}]
        return items

    def prompt(self, params):
        if params.get("name") == "grüßen":
            return {"messages": [{"role": "user", "content": {"type": "text", "text": "Sag hallo"}}]}
        return super().prompt(params)


# --- SEC / DEP / DSC ------------------------------------------------------------


class OriginUncheckedOnGet(Rich):
    """Checks `Origin` on POST only: GET and DELETE with a foreign Origin get 405.

    HTTP "Security & Endpoint": servers MUST validate `Origin` on all incoming
    connections; a present, invalid Origin gets 403 Forbidden.
    """

    RULE = "MCP-SEC-001"

    def other_method(self, handler):
        return self.non_post(handler)


class NullOriginAccepted(Rich):
    """Accepts `Origin: null` (an opaque origin from a sandboxed page or file).

    HTTP "Security & Endpoint": a present, invalid Origin MUST get 403.
    """

    RULE = "MCP-SEC-001"

    def origin_ok(self, origin):
        return origin == "null" or super().origin_ok(origin)


class HeaderInErrorMessage(Rich):
    """Repeats the request's `User-Agent` and `Authorization` headers in -32601 messages.

    SECURITY: error messages should not repeat request headers or credentials;
    servers must not reflect `Authorization` values into responses.
    """

    RULE = "MCP-SEC-003"

    def reply(self, handler, status, rid, result=None, error=None, method=None):
        if error is not None and error[0] == -32601:
            seen = "; ".join(f"{k}: {handler.headers.get(k)}" for k in ("User-Agent", "Authorization") if handler.headers.get(k))
            error = (error[0], f"{error[1]} (request headers: {seen})", error[2])
        return super().reply(handler, status, rid, result, error, method)


class HttpIconOnTemplate(Rich):
    """The second resource template carries an icon served over `http:`.

    BASIC "Icons": `src` MUST be an `https:` or `data:` URI.
    """

    RULE = "MCP-SEC-004"

    def items(self, key, handler):
        items = super().items(key, handler)
        if key == "resourceTemplates":
            items = [dict(t) for t in items]
            items[1]["icons"] = [{"src": "http://example.com/tag.png", "mimeType": "image/png"}]
        return items


class RemoteRefInSchema(Rich):
    """A tool on the last page has an `inputSchema` property that is a `$ref` to a network URI.

    BASIC "$ref resolution": implementations MUST NOT automatically dereference
    `$ref`s to network URIs.
    """

    RULE = "MCP-SEC-005"

    def tools(self, handler):
        return with_tool({
            "name": "geo",
            "description": "A geo lookup.",
            "inputSchema": {"type": "object", "properties": {"where": {"$ref": "https://example.com/schemas/place.json"}}},
        })


class SubscribeRemovedUnsubscribeKept(Rich):
    """Serves `resources/subscribe` with an empty result.

    CHANGELOG: `resources/subscribe` and `resources/unsubscribe` were removed
    in favour of `subscriptions/listen`; a modern server implements neither.
    """

    RULE = "MCP-DEP-003"

    def dispatch(self, handler, method, params):
        if method == "resources/subscribe":
            return 200, self.complete(method, {})
        return super().dispatch(handler, method, params)


class LoggingAdvertised(Rich):
    """Advertises the deprecated `logging` capability.

    DEPRECATION: Logging is deprecated; a server should not advertise `logging`.
    """

    RULE = "MCP-DEP-005"

    def capabilities(self):
        return dict(super().capabilities(), logging={})


class DiscoverFailsWarm(Rich):
    """Answers `server/discover` with -32603 on a connection that has already served a request.

    DISCOVERY: every server MUST implement `server/discover`, answerable
    before or after any other request.
    """

    RULE = "MCP-DSC-001"

    def before(self, handler, method):
        if method == "server/discover" and getattr(handler, "_served", False):
            raise Refusal(500, -32603, "Discovery is only available on a fresh connection")
        handler._served = True


class SupportedVersionsString(Rich):
    """Writes `supportedVersions` as one string, not an array.

    SCHEMA `DiscoverResult`: `supportedVersions: string[]`.
    """

    RULE = "MCP-DSC-002"

    def dispatch(self, handler, method, params):
        status, result = super().dispatch(handler, method, params)
        if method == "server/discover":
            result["supportedVersions"] = base.MODERN
        return status, result


class ReservedExtensionPrefix(Rich):
    """Advertises the extension `dev.mcp/notes`, whose prefix's second label is `mcp`.

    VERSION "Extension negotiation": a prefix whose second label is
    `modelcontextprotocol` or `mcp` is reserved for MCP.
    """

    RULE = "MCP-DSC-004"

    def capabilities(self):
        return dict(super().capabilities(), extensions={"dev.mcp/notes": {}})


class ExtensionValueNotObject(Rich):
    """Advertises the extension `com.example/notes` with the value `true`.

    SCHEMA `ServerCapabilities.extensions`: each value is an object.
    """

    RULE = "MCP-DSC-004"

    def capabilities(self):
        return dict(super().capabilities(), extensions={"com.example/notes": True})


class NoServerInfoOnCompletion(Rich):
    """Omits `_meta["io.modelcontextprotocol/serverInfo"]` on `completion/complete` and page 2+ results.

    BASIC "_meta": servers SHOULD include serverInfo in every result.
    """

    RULE = "MCP-DSC-005"

    def complete(self, method, body):
        result = super().complete(method, body)
        if method == "completion/complete":
            result.pop("_meta")
        return result

    def finish(self, method, result, page_number):
        if page_number > 0:
            result.pop("_meta", None)
        return result


VARIANTS = {
    "rich": Rich,
    "hdr001-templates": MethodHeaderOptionalOnTemplates,
    "hdr001-completion": MethodHeaderOptionalOnCompletion,
    "hdr002-read": NameHeaderOptionalOnRead,
    "hdr003-casefold": NameCaseFolded,
    "hdr003-prompt": NameMismatchOnPromptGet,
    "hdr004-lists": VersionHeaderOptionalOnLists,
    "hdr005-calls": VersionMismatchOnCalls,
    "hdr006-param-case": ParamHeaderCaseSensitive,
    "hdr007-read": NameSentinelUndecodedOnRead,
    "hdr008-int": IntegerParamUnchecked,
    "hdr008-null": NullParamExpected,
    "hdr009-nonascii": ParamNonAsciiAccepted,
    "hdr010-family": MethodFamilyCompared,
    "stl001-echo": SessionEchoed,
    "stl001-mint404": SessionMintedOnErrors,
    "stl002-prompts": SessionValidatedOnPrompts,
    "stl003-get-needs-list": GetNeedsList,
    "stl004-version-sticky": VersionSticky,
    "stl005-get-sse": GetStreamForSse,
    "stl006-delete-session": DeleteEndsSession,
    "stl007-call": LastEventIdRefusedOnCall,
    "stl008-prompts": PromptsGrowAfterGet,
    "stl008-resources": ResourcesGrowAfterRead,
    "res001-completion": NoResultTypeOnCompletion,
    "res001-pages": NoResultTypeOnLaterPages,
    "res002-prompt": ResultTypeCapitalOnPrompt,
    "res002-templates": InputRequiredOnTemplates,
    "res003-sse-request": SseRequestOnCall,
    "res004-body": NotificationAnsweredWithBody,
    "res005-html-errors": ErrorsAsHtml,
    "res006-no-accel": SseWithoutAccelHeader,
    "res007-alternate": ToolsOrderAlternates,
    "err001-prompt-200": UnsupportedVersion200OnPrompts,
    "err001-call-requested": UnsupportedNoRequestedOnCall,
    "err002-unsubscribe": UnsubscribeAnswered,
    "err002-completion": CompletionUnadvertised,
    "err002-setlevel-200": SetLevelNotFound200,
    "err003-empty": MissingNoteEmpty,
    "err003-old-code": MissingResourceOldCode,
    "err004-prompt": RetiredCodeOnPrompt,
    "err005-cursor": ReservedCodeOnCursor,
    "err006-templates": CapabilitiesOptionalOnTemplates,
    "err008-tool": LegacyCodeOnUnknownTool,
    "cac001-pages": NoTtlOnLaterPages,
    "cac001-read": NoTtlOnRead,
    "cac002-templates": NoScopeOnTemplates,
    "cac003-pages": ScopeDiffersAcrossPages,
    "cac003-read": ScopeCapitalOnRead,
    "cac004-string": TtlStringOnTemplates,
    "cac004-negative": TtlNegativeOnPrompts,
    "sch001-last-page": BadHeaderNameOnLastPage,
    "sch003-nested": DuplicateHeaderNested,
    "sch004-nested-number": HeaderOnNestedNumber,
    "sch005-anyof": HeaderInsideAnyOf,
    "sch006-output": BadOutputSchemaOnLastPage,
    "sch007-prompt": PromptNameNotAscii,
    "sec001-get": OriginUncheckedOnGet,
    "sec001-null": NullOriginAccepted,
    "sec003-echo": HeaderInErrorMessage,
    "sec004-template-icon": HttpIconOnTemplate,
    "sec005-ref": RemoteRefInSchema,
    "dep003-subscribe": SubscribeRemovedUnsubscribeKept,
    "dep005-logging": LoggingAdvertised,
    "dsc001-warm": DiscoverFailsWarm,
    "dsc002-string": SupportedVersionsString,
    "dsc004-reserved": ReservedExtensionPrefix,
    "dsc004-value": ExtensionValueNotObject,
    "dsc005-completion": NoServerInfoOnCompletion,
}


# --- second batch ----------------------------------------------------------------


class NotificationAnswered204(Rich):
    """Answers an accepted notification POST with 204 No Content.

    HTTP "Sending Messages": "the server MUST return HTTP status code 202 Accepted with no body".
    """

    RULE = "MCP-RES-004"

    def post(self, handler):
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(min(length, 1 << 20))
        try:
            msg = json.loads(raw)
        except ValueError:
            msg = None
        origin = self.header(handler, "Origin")
        if (origin is None or self.origin_ok(origin)) and isinstance(msg, dict) and "method" in msg and "id" not in msg:
            return handler.send(204)
        rest = handler.rfile
        handler.rfile = _Replay(raw)
        try:
            return super().post(handler)
        finally:
            handler.rfile = rest


class DiscoverWithoutMeta(Rich):
    """Serves `server/discover` with no `params` (no `_meta`) at all.

    BASIC "_meta": a request missing `_meta` or one of its required keys is
    malformed: HTTP 400 with -32602, on every method (server/discover included).
    """

    RULE = "MCP-ERR-006"

    def handle(self, handler, msg):
        if msg["method"] == "server/discover" and not isinstance(msg.get("params"), dict):
            meta = {
                "io.modelcontextprotocol/protocolVersion": self.header(handler, "MCP-Protocol-Version"),
                "io.modelcontextprotocol/clientCapabilities": {},
            }
            msg = dict(msg, params={"_meta": meta})
        return super().handle(handler, msg)


class NoTtlOnDiscover(Rich):
    """Leaves `ttlMs` off `server/discover` results.

    CACHE: `server/discover` is cacheable (`DiscoverResult extends
    CacheableResult`; `ttlMs` is required).
    """

    RULE = "MCP-CAC-001"

    def complete(self, method, body):
        result = super().complete(method, body)
        if method == "server/discover":
            result.pop("ttlMs")
        return result


class JavascriptIconInServerInfo(Rich):
    """`_meta["io.modelcontextprotocol/serverInfo"]` carries an icon `javascript:alert(1)`.

    BASIC "Icons": every `icons[].src` (the server's Implementation included)
    MUST be an `https:` or `data:` URI.
    """

    RULE = "MCP-SEC-004"

    def complete(self, method, body):
        result = super().complete(method, body)
        info = dict(SERVER_INFO, icons=[{"src": "javascript:alert(1)", "mimeType": "image/png"}])
        result["_meta"] = {"io.modelcontextprotocol/serverInfo": info}
        return result


class ExtensionNameHyphenFirst(Rich):
    """Advertises the extension `com.example/-notes` (its name starts with a hyphen).

    BASIC "_meta": the name, unless empty, begins and ends with an alphanumeric character.
    """

    RULE = "MCP-DSC-004"

    def capabilities(self):
        return dict(super().capabilities(), extensions={"com.example/-notes": {}})


class SessionMintedOnSse(Rich):
    """Answers `tools/call` as SSE (when accepted) with a fresh `Mcp-Session-Id` header.

    There are no protocol sessions: a server never mints an `Mcp-Session-Id` on any response.
    """

    RULE = "MCP-STL-001"

    def send_message(self, handler, status, doc, method):
        if method == "tools/call" and "text/event-stream" in (handler.headers.get("Accept") or ""):
            body = b"event: message\ndata: " + json.dumps(doc).encode() + b"\n\n"
            extra = [("X-Accel-Buffering", "no"), ("Mcp-Session-Id", "s-" + str(id(handler)))]
            return handler.send(status, body, "text/event-stream", extra)
        return super().send_message(handler, status, doc, method)


class LegacyEndpointOnGet(Rich):
    """Answers GET with an event stream whose first event is `endpoint` (the 2024-11-05 HTTP+SSE transport).

    DEPRECATION: the HTTP+SSE transport SHOULD NOT be served.
    """

    RULE = "MCP-DEP-004"

    def non_post(self, handler):
        if handler.command == "GET":
            return handler.send(200, b"event: endpoint\ndata: /messages?sid=1\n\n", "text/event-stream")
        return super().non_post(handler)


class InitializeErrorSilentWithHeaders(Rich):
    """An `initialize` sent with modern headers gets 404/-32601 without naming the supported versions.

    VERSION: a modern-only server SHOULD name the protocol versions it
    supports in any error it returns to an `initialize` request.
    """

    RULE = "MCP-DEP-007"

    def dispatch(self, handler, method, params):
        if method == "initialize":
            raise Refusal(404, -32601, "Method not found")
        return super().dispatch(handler, method, params)


class TaskResultTypeUnadvertised(Rich):
    """Answers `tools/call` with `resultType: "task"` without advertising the tasks extension.

    BASIC "resultType": extension values are valid only when the extension is advertised.
    """

    RULE = "MCP-RES-002"

    def complete(self, method, body):
        result = super().complete(method, body)
        if method == "tools/call":
            result["resultType"] = "task"
        return result


class Draft7InvalidSchema(Rich):
    """A tool on the last page declares `$schema` draft-07 and a property of `"type": "strng"`.

    BASIC "JSON Schema usage": schemas MUST be valid for their declared dialect.
    """

    RULE = "MCP-SCH-006"

    def tools(self, handler):
        return with_tool({
            "name": "label",
            "description": "A label.",
            "inputSchema": {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"text": {"type": "strng"}},
            },
        })


class HeaderNameWithDel(Rich):
    """A tool's `x-mcp-header` is `Zone\\x7f` (ends in the DEL control character).

    TOOLS "x-mcp-header": the value MUST NOT contain control characters.
    """

    RULE = "MCP-SCH-002"

    def tools(self, handler):
        return with_tool({
            "name": "zone",
            "description": "A zone.",
            "inputSchema": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone\x7f"}}},
        })


class LongToolNameLastPage(Rich):
    """A tool on the last page has a 129-character name.

    TOOLS "Tool names": tool names SHOULD be 1–128 characters.
    """

    RULE = "MCP-SCH-007"

    def tools(self, handler):
        return with_tool({"name": "t" * 129, "description": "Long.", "inputSchema": {"type": "object"}})

    def call(self, handler, params):
        if params.get("name") == "t" * 129:
            return {"content": [{"type": "text", "text": "long"}]}
        return super().call(handler, params)


VARIANTS.update({
    "err001-supported-string": UnsupportedSupportedString,
    "res004-204": NotificationAnswered204,
    "err006-discover-no-params": DiscoverWithoutMeta,
    "cac001-discover": NoTtlOnDiscover,
    "sec004-serverinfo-icon": JavascriptIconInServerInfo,
    "dsc004-name": ExtensionNameHyphenFirst,
    "stl001-mint-sse": SessionMintedOnSse,
    "dep004-endpoint": LegacyEndpointOnGet,
    "dep007-modern-headers": InitializeErrorSilentWithHeaders,
    "res002-task": TaskResultTypeUnadvertised,
    "sch006-draft7": Draft7InvalidSchema,
    "sch002-del": HeaderNameWithDel,
    "sch007-long-tool": LongToolNameLastPage,
})


class ScopeCapitalOnFourthRead(Rich):
    """A fourth listed resource (`memo://credo`, on page 2) reads with `cacheScope: "Public"`.

    CACHE: `cacheScope` MUST be exactly `public` or `private`, on every
    complete `resources/read` result.
    """

    RULE = "MCP-CAC-003"

    def items(self, key, handler):
        items = super().items(key, handler)
        if key == "resources":
            return items + [{"uri": "memo://credo", "name": "credo", "mimeType": "text/plain"}]
        return items

    def read(self, handler, uri):
        if uri == "memo://credo":
            return [{"uri": uri, "mimeType": "text/plain", "text": "ask first"}]
        return super().read(handler, uri)

    def dispatch(self, handler, method, params):
        status, result = super().dispatch(handler, method, params)
        if method == "resources/read" and params.get("uri") == "memo://credo":
            result["cacheScope"] = "Public"
        return status, result


class ResultTypeCapitalOnFourthPrompt(Rich):
    """A fourth listed prompt (`credo`, on page 2) answers `prompts/get` with `resultType: "Complete"`.

    BASIC "resultType": the value MUST be `complete`, `input_required` or a
    value of an advertised extension.
    """

    RULE = "MCP-RES-002"

    def items(self, key, handler):
        items = super().items(key, handler)
        if key == "prompts":
            return items + [{"name": "credo", "description": "Asks for a credo."}]
        return items

    def prompt(self, params):
        if params.get("name") == "credo":
            return {"messages": [{"role": "user", "content": {"type": "text", "text": "State a credo."}}]}
        return super().prompt(params)

    def dispatch(self, handler, method, params):
        status, result = super().dispatch(handler, method, params)
        if method == "prompts/get" and params.get("name") == "credo":
            result["resultType"] = "Complete"
        return status, result


VARIANTS.update({
    "cac003-fourth-read": ScopeCapitalOnFourthRead,
    "res002-fourth-prompt": ResultTypeCapitalOnFourthPrompt,
})


class UnsupportedServedOnTemplates(Rich):
    """Serves `resources/templates/list` and `completion/complete` whatever protocol version they name.

    VERSION: a request for an unsupported protocol version MUST get
    UnsupportedProtocolVersionError (-32022, HTTP 400), on every method.
    """

    RULE = "MCP-ERR-001"

    def handle(self, handler, msg):
        if msg["method"] in ("resources/templates/list", "completion/complete"):
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            meta = params.get("_meta")
            hv = super().header(handler, "MCP-Protocol-Version")
            if isinstance(meta, dict) and hv == meta.get("io.modelcontextprotocol/protocolVersion") and hv not in self.supported:
                handler._pin = True
                msg = dict(msg, params=dict(params, _meta=dict(meta, **{"io.modelcontextprotocol/protocolVersion": base.MODERN})))
        try:
            return super().handle(handler, msg)
        finally:
            handler._pin = False

    def header(self, handler, name):
        if name == "MCP-Protocol-Version" and getattr(handler, "_pin", False):
            return base.MODERN
        return super().header(handler, name)


class VersionMismatchOnTemplates(Rich):
    """Ignores an `MCP-Protocol-Version` header that differs from `_meta` on `resources/templates/list`.

    HTTP "Protocol Version Header": a header that does not match `_meta`
    MUST be rejected (400, -32020), on every POST.
    """

    RULE = "MCP-HDR-005"

    def handle(self, handler, msg):
        handler._follow = msg["method"] == "resources/templates/list"
        if handler._follow:
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
            handler._meta_version = meta.get("io.modelcontextprotocol/protocolVersion")
        return super().handle(handler, msg)

    def header(self, handler, name):
        value = super().header(handler, name)
        if name == "MCP-Protocol-Version" and value is not None and getattr(handler, "_follow", False):
            return handler._meta_version
        return value


class EmptyNameAccepted(Rich):
    """Treats an empty `Mcp-Name` header as matching any body name.

    HTTP "Server Validation": a header value that differs from the body MUST
    be rejected (400, -32020); an empty value differs from `echo`.
    """

    RULE = "MCP-HDR-003"

    def header(self, handler, name):
        value = super().header(handler, name)
        if name == "Mcp-Name" and value == "":
            params = getattr(handler, "_params", {})
            return params.get("uri") if "uri" in params else params.get("name")
        return value

    def check_headers(self, handler, msg):
        handler._params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        return super().check_headers(handler, msg)


class HtmlPageOnGet(Rich):
    """Answers GET whose `Accept` lacks `text/event-stream` (a browser's) with a 200 HTML page; 405 otherwise.

    HTTP: a server that supports only 2026-07-28 SHOULD answer HTTP GET on
    the MCP endpoint with 405 Method Not Allowed.
    """

    RULE = "MCP-STL-005"

    def non_post(self, handler):
        if handler.command == "GET" and "text/event-stream" not in (handler.headers.get("Accept") or ""):
            return handler.send(200, b"<html><body>MCP endpoint</body></html>", "text/html")
        return super().non_post(handler)


class TtlTrueOnRead(Rich):
    """Writes `ttlMs: true` on `resources/read` results.

    SCHEMA `CacheableResult`: `ttlMs` is an integer, minimum 0.
    """

    RULE = "MCP-CAC-004"

    def complete(self, method, body):
        result = super().complete(method, body)
        if method == "resources/read":
            result["ttlMs"] = True
        return result


VARIANTS.update({
    "err001-templates": UnsupportedServedOnTemplates,
    "hdr005-templates": VersionMismatchOnTemplates,
    "hdr003-empty": EmptyNameAccepted,
    "stl005-html": HtmlPageOnGet,
    "cac004-bool": TtlTrueOnRead,
})


class HeaderUnderItems(Rich):
    """A tool puts `x-mcp-header` on the `items` schema of an array property.

    TOOLS "x-mcp-header": it MUST sit on a property reachable from the root
    through `properties` keys alone (not through `items`).
    """

    RULE = "MCP-SCH-005"

    def tools(self, handler):
        return with_tool({
            "name": "tags",
            "description": "Tags.",
            "inputSchema": {
                "type": "object",
                "properties": {"tags": {"type": "array", "items": {"type": "string", "x-mcp-header": "Tag"}}},
            },
        })


class HeaderBehindRef(Rich):
    """A tool puts `x-mcp-header` in a `$defs` schema that a property reaches through `$ref`.

    TOOLS "x-mcp-header": not through `$ref` or `$defs`.
    """

    RULE = "MCP-SCH-005"

    def tools(self, handler):
        return with_tool({
            "name": "site",
            "description": "A site.",
            "inputSchema": {
                "type": "object",
                "$defs": {"site": {"type": "string", "x-mcp-header": "Site"}},
                "properties": {"site": {"$ref": "#/$defs/site"}},
            },
        })


VARIANTS.update({
    "sch005-items": HeaderUnderItems,
    "sch005-ref": HeaderBehindRef,
})


class LegacyListedInitializeRefused(Rich):
    """Lists 2025-11-25 in `supportedVersions` but answers every `initialize` with 404/-32601.

    VERSION "Backward compatibility": a server that lists legacy revisions in
    `supportedVersions` supports them, and a legacy client begins with
    `initialize`; one that lists them must then accept it.
    """

    RULE = "MCP-DEP-006"

    def dispatch(self, handler, method, params):
        status, result = super().dispatch(handler, method, params)
        if method == "server/discover":
            result["supportedVersions"] = [base.MODERN, "2025-11-25"]
        return status, result


class SessionEchoedOn202(Rich):
    """Echoes a client's `Mcp-Session-Id` on the 202 answer to a notification POST (only there).

    There are no protocol sessions: a server never echoes an `Mcp-Session-Id`
    a client sent, on any response.
    """

    RULE = "MCP-STL-001"

    def post(self, handler):
        sid = handler.headers.get("Mcp-Session-Id")
        if sid:
            send = handler.send

            def send_with_echo(status, body=b"", ctype=None, extra=()):
                if status == 202:
                    extra = list(extra) + [("Mcp-Session-Id", sid)]
                return send(status, body, ctype, extra)

            handler.send = send_with_echo
            try:
                return super().post(handler)
            finally:
                del handler.send
        return super().post(handler)


def deep_schema(depth):
    node = {"type": "string"}
    for i in range(depth):
        node = {"type": "object", "properties": {f"l{i}": node}}
    return node


class DeepSchemaLastPage(Rich):
    """A tool on the last page has an `inputSchema` nested 400 objects deep.

    BASIC "Composition keyword resource use": implementations SHOULD bound
    schema depth; a schema this deep is what such a bound refuses.
    """

    RULE = "MCP-SEC-006"

    def tools(self, handler):
        return with_tool({"name": "deep", "description": "Deep.", "inputSchema": deep_schema(400)})


class DeepSchema50LastPage(DeepSchemaLastPage):
    """A tool on the last page has an `inputSchema` nested 50 objects deep (100 JSON levels).

    BASIC "Composition keyword resource use": implementations SHOULD bound
    schema depth; a schema this deep is what such a bound refuses.
    """

    def tools(self, handler):
        return with_tool({"name": "deep", "description": "Deep.", "inputSchema": deep_schema(50)})


VARIANTS.update({
    "sec006-deep50": DeepSchema50LastPage,
    "dep006-listed-refused": LegacyListedInitializeRefused,
    "stl001-echo-202": SessionEchoedOn202,
    "sec006-deep": DeepSchemaLastPage,
})

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in VARIANTS:
        sys.exit("usage: blind26.py {" + ",".join(VARIANTS) + "} [PORT]")
    base.serve(VARIANTS[sys.argv[1]](), sys.argv[2:])
