"""Blind one-fault servers for MCP 2025-11-25: `python3 blind25.py NAME [PORT]`.

Written from the 2025-11-25 specification text alone, without reading
protocheck's probes. `Rich25` is a correct server (spec25/server.py with
one-item pages, two resource templates, a third resource and a prompt with a
required argument on a later page), so that a fault can sit in a rarer member
of a family, on a later page or at a later moment. Every other class breaks
ONE requirement of `Rich25`, and its docstring quotes the sentence it breaks.
`RULE` names the rule; BLIND.md records protocheck's verdict.
"""

import json
import os
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "spec25"))

import server  # noqa: E402
from server import LEVELS, RpcError, Server, error_doc  # noqa: E402

TEMPLATES = server.TEMPLATES + [{"uriTemplate": "memo://tags/{tag}", "name": "tag", "mimeType": "text/plain"}]
RESOURCES = server.RESOURCES + [{"uri": "memo://motto", "name": "motto", "mimeType": "text/plain"}]
PROMPTS = server.PROMPTS + [
    {"name": "farewell", "description": "Says goodbye.", "arguments": [{"name": "who", "required": True}]}
]
ORIGINAL_CLASSIFY = server.classify


class Rich25(Server):
    """A correct 2025-11-25 server: every list one item per page (PAGINATION)."""

    RULE = None
    page_size = 1

    def tools(self):
        return server.TOOLS

    def resources(self):
        return RESOURCES

    def templates(self):
        return TEMPLATES

    def prompts(self):
        return PROMPTS

    def dispatch(self, call, method, params):
        lists = {
            "tools/list": ("tools", self.tools),
            "resources/list": ("resources", self.resources),
            "resources/templates/list": ("resourceTemplates", self.templates),
            "prompts/list": ("prompts", self.prompts),
        }
        if method in lists and self.has(method.split("/")[0]):
            key, items = lists[method]
            return self.page(key, items(), params)
        return super().dispatch(call, method, params)

    def read(self, params):
        uri = params.get("uri")
        if uri == "memo://motto":
            return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": self.motto()}]}
        if isinstance(uri, str) and uri.startswith("memo://tags/") and uri[12:].isalnum():
            return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "tag " + uri[12:]}]}
        return super().read(params)

    def motto(self):
        return "be kind"

    def prompt(self, params):
        if params.get("name") == "farewell":
            args = params.get("arguments", {})
            if not isinstance(args, dict) or not isinstance(args.get("who"), str):
                # PROMPTS "Error Handling": missing required arguments: -32602.
                raise RpcError(-32602, "Invalid params: missing required argument 'who'")
            return {"messages": [{"role": "user", "content": {"type": "text", "text": "Say goodbye to " + args["who"]}}]}
        return super().prompt(params)


def extra_tool(tool):
    return server.TOOLS + [tool]


# --- pagination and tools -----------------------------------------------------


class TemplateCursorOneShot(Rich25):
    """A `resources/templates/list` cursor works once; repeated, it gets -32602.

    PAGINATION: servers SHOULD provide stable cursors; a cursor the server
    issued yields a valid page, the same page when repeated.
    """

    RULE = "MCP25-TOL-007"

    def __init__(self):
        super().__init__()
        self.used = set()
        self.used_lock = threading.Lock()

    def decode_cursor(self, key, cursor, count):
        offset = super().decode_cursor(key, cursor, count)
        if key == "resourceTemplates":
            with self.used_lock:
                if cursor in self.used:
                    raise RpcError(-32602, "Invalid params: cursor already used")
                self.used.add(cursor)
        return offset


class PromptsCursorLenient(Rich25):
    """An invalid cursor on `prompts/list` is answered with the first page.

    PAGINATION "Error Handling": invalid cursors SHOULD result in -32602, on
    every paginated list.
    """

    RULE = "MCP25-TOL-008"

    def decode_cursor(self, key, cursor, count):
        try:
            return super().decode_cursor(key, cursor, count)
        except RpcError:
            if key == "prompts":
                return 0
            raise


class ToolNameNotStringLastPage(Rich25):
    """The last page of `tools/list` holds a tool whose `name` is the number 5.

    TOOLS "Tool": each `Tool` has a string `name`.
    """

    RULE = "MCP25-TOL-002"

    def tools(self):
        return extra_tool({"name": 5, "description": "A numbered tool.", "inputSchema": {"type": "object"}})


class BadNameBeyondManyPages(Rich25):
    """140 tools in pages of 20; tool 131 is named `bulk tool 131` (spaces).

    TOOLS "Tool names": 1–128 characters of ASCII letters, digits, `_`, `-`, `.`.
    """

    RULE = "MCP25-TOL-006"
    page_size = 20

    def tools(self):
        bulk = [
            {
                "name": f"bulk_{i}" if i != 131 else "bulk tool 131",
                "description": "One of many.",
                "inputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": True},
            }
            for i in range(1, 137)
        ]
        return server.TOOLS + bulk


class DuplicateToolLastPage(Rich25):
    """The last page of `tools/list` repeats the tool name `echo`.

    TOOLS "Tool names": tool names are unique within a server.
    """

    RULE = "MCP25-TOL-005"

    def tools(self):
        return extra_tool(dict(server.TOOLS[0], description="The echo tool, again."))


class InputSchemaBadTypeLastPage(Rich25):
    """A tool on the last page has a property of `"type": "strng"` in its `inputSchema`.

    TOOLS "Tool": `inputSchema` is valid in its declared dialect or in JSON
    Schema 2020-12 (`type` must name a JSON type).
    """

    RULE = "MCP25-TOL-003"

    def tools(self):
        return extra_tool({
            "name": "label",
            "description": "A label.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "strng"}}},
        })


class BadMetaKeyLastPage(Rich25):
    """A tool on the last page carries `_meta` with the key `9lives.example/flag` (a label starting with a digit).

    BASIC "_meta": a prefix's labels start with a letter.
    """

    RULE = "MCP25-RPC-012"

    def tools(self):
        return extra_tool({
            "name": "flag",
            "description": "A flag.",
            "inputSchema": {"type": "object"},
            "_meta": {"9lives.example/flag": True},
        })


class TypeErrorIsProtocolError(Rich25):
    """A wrong argument type is answered with -32602 (a missing required one is still `isError`).

    TOOLS "Error Handling": input validation errors (a missing required
    property, a wrong type) are tool execution errors, not protocol errors.
    """

    RULE = "MCP25-TOL-011"

    def call_tool(self, call, params):
        args = params.get("arguments", {})
        tool = next((t for t in self.tools() if t["name"] == params.get("name")), None)
        if tool is not None and isinstance(args, dict):
            problem = server.check_args(tool["inputSchema"], args)
            if problem and "missing" not in problem:
                raise RpcError(-32602, "Invalid params: " + problem)
        return super().call_tool(call, params)


class StructuredStringEverySecondCall(Rich25):
    """Every second `add` call returns `structuredContent: {"sum": "<text>"}` (a string).

    TOOLS "Output Schema": servers MUST provide structured results that conform
    to the tool's `outputSchema`, in every successful result.
    """

    RULE = "MCP25-TOL-012"
    count = 0

    def structured(self, total):
        type(self).count += 1
        if type(self).count % 2 == 0:
            return {"sum": str(total)}
        return {"sum": total}


class StructuredTextProse(Rich25):
    """The text block beside `structuredContent` is prose (`The sum is 3`), not the serialised JSON.

    TOOLS "Structured Content": a tool that returns structured content SHOULD
    also return the serialized JSON in a TextContent block.
    """

    RULE = "MCP25-TOL-013"

    def call_tool(self, call, params):
        result = super().call_tool(call, params)
        if isinstance(result, dict) and "structuredContent" in result:
            result["content"] = [{"type": "text", "text": f"The sum is {result['structuredContent']['sum']}"}]
        return result


class IsErrorString(Rich25):
    """The `unavailable` tool answers `isError: "true"` (a string).

    SCHEMA `CallToolResult`: `isError` is a boolean.
    """

    RULE = "MCP25-TOL-010"

    def call_tool(self, call, params):
        result = super().call_tool(call, params)
        if isinstance(result, dict) and result.get("isError") is True and params.get("name") == "unavailable":
            result["isError"] = "true"
        return result


# --- resources, prompts, completion, logging ---------------------------------------


class TemplateWithoutName(Rich25):
    """The second resource template (on page 2) has no `name`.

    SCHEMA `ResourceTemplate`: `uriTemplate` and `name` are required strings.
    """

    RULE = "MCP25-RES-004"

    def templates(self):
        return [TEMPLATES[0], {"uriTemplate": "memo://tags/{tag}", "mimeType": "text/plain"}]


class NoteTextAndBlob(Rich25):
    """Reads of template-resolved notes carry both `text` and `blob`.

    SCHEMA `ResourceContents`: each item is `TextResourceContents` or
    `BlobResourceContents`: exactly one of `text` and `blob`.
    """

    RULE = "MCP25-RES-005"

    def read(self, params):
        result = super().read(params)
        uri = params.get("uri")
        if isinstance(uri, str) and uri.startswith("memo://notes/"):
            result["contents"][0]["blob"] = "bm90ZQ=="
        return result


class BadBlobThirdResource(Rich25):
    """A third listed resource, on the last page, reads as a `blob` that is not base64.

    RESOURCES "Binary Content": `blob` holds base64-encoded data.
    """

    RULE = "MCP25-RES-006"

    def resources(self):
        return RESOURCES + [{"uri": "memo://badge", "name": "badge", "mimeType": "image/png"}]

    def read(self, params):
        if params.get("uri") == "memo://badge":
            return {"contents": [{"uri": "memo://badge", "mimeType": "image/png", "blob": "not*base64!"}]}
        return super().read(params)


class MissingMemoEmpty(Rich25):
    """A missing `memo://` resource reads as an empty `contents` (other schemes get -32002).

    RESOURCES "Error Handling": "Resource not found: -32002".
    """

    RULE = "MCP25-RES-007"

    def read(self, params):
        uri = params.get("uri")
        try:
            return super().read(params)
        except RpcError:
            if isinstance(uri, str) and uri.startswith("memo://"):
                return {"contents": []}
            raise


class RequiredArgDefaultedOnFarewell(Rich25):
    """`farewell` (second page of `prompts/list`) is served without its required `who`.

    PROMPTS "Error Handling": missing required arguments: -32602.
    """

    RULE = "MCP25-PRM-007"

    def prompt(self, params):
        if params.get("name") == "farewell":
            args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
            params = dict(params, arguments=dict({"who": "everyone"}, **args))
        return super().prompt(params)


class SystemRoleOnSummary(Rich25):
    """The `summary` prompt's second message has `role: "system"`.

    SCHEMA `PromptMessage`: `role` is `user` or `assistant`.
    """

    RULE = "MCP25-PRM-003"

    def prompt(self, params):
        result = super().prompt(params)
        if params.get("name") == "summary":
            result["messages"][1]["role"] = "system"
        return result


class AudioWithImageMime(Rich25):
    """A prompt `listen` (on the last page) returns audio content whose `mimeType` is `image/png`.

    PROMPTS "Audio Content": audio content has base64 `data` and a valid audio MIME type.
    """

    RULE = "MCP25-PRM-004"

    def prompts(self):
        return PROMPTS + [{"name": "listen", "description": "Listen to a chime."}]

    def prompt(self, params):
        if params.get("name") == "listen":
            block = {"type": "audio", "data": server.PIXEL, "mimeType": "image/png"}
            return {"messages": [{"role": "user", "content": block}]}
        return super().prompt(params)


class ResourceCompletionInts(Rich25):
    """`ref/resource` completions list the values as numbers (`[1, 2, 7, 12]`).

    COMPLETION: `completion.values` is an array of strings, for either reference kind.
    """

    RULE = "MCP25-CPL-003"

    def complete(self, params):
        result = super().complete(params)
        ref = params.get("ref") or {}
        if ref.get("type") == "ref/resource":
            result["completion"]["values"] = [int(v) for v in result["completion"]["values"]]
        return result


class CompletionOver100(Rich25):
    """A completion for an empty value lists 150 values.

    COMPLETION: "Maximum 100 items per response".
    """

    RULE = "MCP25-CPL-003"

    def complete(self, params):
        result = super().complete(params)
        arg = params.get("argument") or {}
        if arg.get("value") == "":
            values = [f"name{i}" for i in range(150)]
            result["completion"] = {"values": values, "total": 150, "hasMore": False}
        return result


class UnknownPromptCompletionEmpty(Rich25):
    """A completion naming an unknown prompt is answered with no values.

    COMPLETION "Error Handling": invalid prompt name: -32602.
    """

    RULE = "MCP25-CPL-004"

    def complete(self, params):
        try:
            return super().complete(params)
        except RpcError:
            if (params.get("ref") or {}).get("type") == "ref/prompt":
                return {"completion": {"values": [], "total": 0, "hasMore": False}}
            raise


class CompletionUndeclared(Rich25):
    """Serves `completion/complete` without declaring `completions`.

    COMPLETION "Capabilities": servers that support completions MUST declare
    the `completions` capability.
    """

    RULE = "MCP25-CPL-001"

    def capabilities(self):
        caps = super().capabilities()
        caps.pop("completions")
        return caps

    def dispatch(self, call, method, params):
        if method == "completion/complete":
            return self.complete(params)
        return super().dispatch(call, method, params)


class RareLevelsRefused(Rich25):
    """`logging/setLevel` refuses `notice`, `critical`, `alert` and `emergency` with -32602.

    LOGGING: the levels are the eight RFC 5424 severities; a valid level gets an empty result.
    """

    RULE = "MCP25-LOG-002"

    def set_level(self, session, params):
        if params.get("level") in ("notice", "critical", "alert", "emergency"):
            raise RpcError(-32602, "Invalid params: unsupported log level")
        return super().set_level(session, params)


class LevelCaseFolded(Rich25):
    """`logging/setLevel` accepts any letter case (`DEBUG`, `Warning`).

    LOGGING "Error Handling": invalid log level: -32602; the levels are the
    eight lower-case names of the schema's `LoggingLevel` enum.
    """

    RULE = "MCP25-LOG-003"

    def set_level(self, session, params):
        level = params.get("level")
        if isinstance(level, str) and level.lower() in LEVELS:
            params = dict(params, level=level.lower())
        return super().set_level(session, params)


# --- lifecycle, JSON-RPC -------------------------------------------------------------


class OffersOldest(Rich25):
    """Answers an unknown requested version with the oldest version it supports (2025-03-26).

    LIFECYCLE "Version Negotiation": the server responds with another version
    it supports, which SHOULD be the latest.
    """

    RULE = "MCP25-LIF-004"

    def negotiate(self, requested):
        return requested if requested in self.versions else self.versions[-1]


class ListChangedOnCallStream(Rich25):
    """Sends `notifications/tools/list_changed` on every `tools/call` SSE stream (declares `listChanged: false`).

    LIFECYCLE "Operation": both parties MUST only use capabilities that were
    successfully negotiated.
    """

    RULE = "MCP25-LIF-008"

    def before(self, call, method):
        if method == "tools/call":
            call.emit({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})


class SamplingOnCallStream(Rich25):
    """Sends a `sampling/createMessage` request on every `tools/call` SSE stream.

    CLIENT "Sampling": a client that supports sampling declares it; the server
    uses only negotiated capabilities (protocheck declares none).
    """

    RULE = "MCP25-LIF-009"

    def before(self, call, method):
        if method == "tools/call":
            call.emit({
                "jsonrpc": "2.0", "id": "s-1", "method": "sampling/createMessage",
                "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5},
            })


class ProgressRepeatsLast(Rich25):
    """The last progress notification of the `slow` tool repeats the previous value.

    PROGRESS: "The progress value MUST increase with each notification".
    """

    RULE = "MCP25-UTL-005"

    def progress(self, call, step, steps):
        return super().progress(call, step - 1 if step == steps and step > 1 else step, steps)


class NumericStringIdAsNumber(Rich25):
    """Answers a string id made of digits (`"7"`) with the number 7.

    BASIC "Responses": the response id MUST be the same as the request's.
    """

    RULE = "MCP25-RPC-001"

    def handle(self, session, msg, emit, stdio=False):
        answer = super().handle(session, msg, emit, stdio)
        rid = msg.get("id")
        if answer is not None and isinstance(rid, str) and rid.isdigit():
            answer["id"] = int(rid)
        return answer


class _Lenient:
    """`json` with a `loads` that ignores whatever follows the first value."""

    dumps = staticmethod(json.dumps)

    @staticmethod
    def loads(text):
        if isinstance(text, (bytes, bytearray)):
            text = text.decode("utf-8")
        value, _ = json.JSONDecoder().raw_decode(text.lstrip())
        return value


class TrailingDataAccepted(Rich25):
    """Serves a POST body that is a JSON object followed by other text (`{...} trailing`).

    JSON-RPC: text that is not valid JSON is a parse error (-32700); over
    HTTP a 4xx.
    """

    RULE = "MCP25-RPC-004"

    def __init__(self):
        super().__init__()
        server.json = _Lenient


class JsonRpc1Accepted(Rich25):
    """Serves a request whose `jsonrpc` member is `"1.0"`.

    BASIC "Requests": requests MUST carry `jsonrpc: "2.0"`; an invalid
    request is refused with -32600.
    """

    RULE = "MCP25-RPC-005"

    def __init__(self):
        super().__init__()

        def classify(msg):
            if isinstance(msg, dict) and msg.get("jsonrpc") == "1.0":
                msg = dict(msg, jsonrpc="2.0")
            return ORIGINAL_CLASSIFY(msg)

        server.classify = classify


class NullIdServed(Rich25):
    """Serves a request whose `id` is null as a normal request.

    BASIC "Requests": the id MUST NOT be null.
    """

    RULE = "MCP25-RPC-006"

    def __init__(self):
        super().__init__()

        def classify(msg):
            if isinstance(msg, dict) and "method" in msg and "id" in msg and msg["id"] is None:
                return "request"
            return ORIGINAL_CLASSIFY(msg)

        server.classify = classify


class UnknownNotificationAnswered(Rich25):
    """Answers an unknown notification POST with 200 and a JSON-RPC -32601 error.

    BASIC "Notifications": the receiver MUST NOT send a response.
    """

    RULE = "MCP25-RPC-009"

    def refused_message(self, handler, msg):
        if "id" not in msg and msg.get("method") not in ("notifications/initialized", "notifications/cancelled"):
            handler.send_json(200, error_doc(None, -32601, "Unknown notification"))
            return True
        return False


class ErrorCodeString(Rich25):
    """Writes the error code of an unknown-prompt error as the string "-32602".

    JSON-RPC "Error object": `code` MUST be an integer.
    """

    RULE = "MCP25-RPC-003"

    def handle(self, session, msg, emit, stdio=False):
        answer = super().handle(session, msg, emit, stdio)
        if answer is not None and msg.get("method") == "prompts/get" and "error" in answer:
            answer["error"]["code"] = str(answer["error"]["code"])
        return answer


class SetLevelNullResult(Rich25):
    """Answers `logging/setLevel` with `result: null`.

    JSON-RPC / BASIC "Responses": `result` is an object (an empty result is `{}`).
    """

    RULE = "MCP25-RPC-002"

    def handle(self, session, msg, emit, stdio=False):
        answer = super().handle(session, msg, emit, stdio)
        if answer is not None and msg.get("method") == "logging/setLevel" and "result" in answer:
            answer["result"] = None
        return answer


class Latin1Motto(Rich25):
    """The `motto` resource (last page) reads as `café`, its body encoded in Latin-1.

    BASIC: JSON-RPC messages MUST be UTF-8 encoded.
    """

    RULE = "MCP25-RPC-011"
    json_type = "application/json"

    def motto(self):
        return "café"

    def __init__(self):
        super().__init__()

        class Latin1:
            @staticmethod
            def dumps(doc, **kw):
                return _Latin1Str(json.dumps(doc, ensure_ascii=False, **kw))

            loads = staticmethod(json.loads)

        server.json = Latin1


class _Latin1Str(str):
    def encode(self, encoding="utf-8", errors="strict"):
        return str.encode(self, "latin-1", "replace")


# --- HTTP transport ---------------------------------------------------------------


class ResponsePostAnswered200(Rich25):
    """Answers a POSTed JSON-RPC response with 200 (empty body).

    TRANSPORTS: if the input is a JSON-RPC response or notification the server
    accepts, it MUST return 202 Accepted with no body.
    """

    RULE = "MCP25-HTP-002"

    def refused_message(self, handler, msg):
        if "method" not in msg:
            handler.send(200)
            return True
        return False


class OldVersionHeaderAccepted(Rich25):
    """Accepts `MCP-Protocol-Version: 2024-11-05`, a revision it does not support.

    TRANSPORTS "Protocol Version Header": an invalid or unsupported version
    header gets 400 Bad Request.
    """

    RULE = "MCP25-HTP-017"

    def version_header_ok(self, value):
        return value == "2024-11-05" or super().version_header_ok(value)


class OriginUncheckedOnGet(Rich25):
    """Validates `Origin` on POST and DELETE but not on GET.

    TRANSPORTS "Security Warning": servers MUST validate the Origin header on
    all incoming connections; present and invalid: 403.
    """

    RULE = "MCP25-HTP-018"

    def refused_at_door(self, handler):
        if handler.command == "GET" and "Origin" in handler.headers:
            del handler.headers["Origin"]
        return super().refused_at_door(handler)


class GetAliveAfterDelete(Rich25):
    """After DELETE, POSTs naming the session get 404 but GET still opens a stream.

    TRANSPORTS "Session Management": once a session is terminated, the server
    MUST respond to requests containing that session id with 404.
    """

    RULE = "MCP25-HTP-015"

    def __init__(self):
        super().__init__()
        self.dead = set()

    def end_session(self, session):
        self.dead.add(session.sid)

    def refused_at_door(self, handler):
        sid = handler.headers.get("Mcp-Session-Id")
        if sid in self.dead and handler.command in ("POST", "DELETE"):
            handler.drain()
            handler.send_json(404, error_doc(None, -32001, "Session not found"))
            return True
        return super().refused_at_door(handler)


_TLS = threading.local()


class GetWithoutSession(Rich25):
    """A GET without `Mcp-Session-Id` opens a stream (POSTs without it get 400).

    TRANSPORTS "Session Management": a server that requires a session id
    SHOULD answer requests without it (other than initialization) with 400.
    """

    RULE = "MCP25-HTP-014"

    @property
    def require_session(self):
        return getattr(_TLS, "command", None) != "GET"

    def refused_at_door(self, handler):
        _TLS.command = handler.command
        return super().refused_at_door(handler)


class UnknownSessionDeleteOk(Rich25):
    """A DELETE naming a session id never issued is answered 200.

    TRANSPORTS "Session Management": a request naming a session id that is not
    valid gets 404 Not Found.
    """

    RULE = "MCP25-HTP-016"

    def refused_at_door(self, handler):
        sid = handler.headers.get("Mcp-Session-Id")
        if handler.command == "DELETE" and sid is not None:
            with self.lock:
                known = sid in self.table
            if not known:
                handler.send(200)
                return True
        return super().refused_at_door(handler)


class PrimingFirstStreamOnly(Rich25):
    """Only the process's first SSE stream starts with the priming event (id, empty data).

    TRANSPORTS "Sending Messages to the Server": the server SHOULD immediately
    send an SSE event consisting of an event ID and an empty data field.
    """

    RULE = "MCP25-HTP-004"
    primed = 0

    def sse_event(self, eid, doc):
        if doc is None:
            type(self).primed += 1
            if type(self).primed > 1:
                return ""
        return super().sse_event(eid, doc)


VARIANTS = {
    "rich25": Rich25,
    "tol007-templates-one-shot": TemplateCursorOneShot,
    "tol008-prompts": PromptsCursorLenient,
    "tol002-last-page": ToolNameNotStringLastPage,
    "tol006-many-pages": BadNameBeyondManyPages,
    "tol005-last-page": DuplicateToolLastPage,
    "tol003-last-page": InputSchemaBadTypeLastPage,
    "rpc012-last-page": BadMetaKeyLastPage,
    "tol011-type": TypeErrorIsProtocolError,
    "tol012-second-call": StructuredStringEverySecondCall,
    "tol013-prose": StructuredTextProse,
    "tol010-iserror-string": IsErrorString,
    "res004-template-name": TemplateWithoutName,
    "res005-note-both": NoteTextAndBlob,
    "res006-third": BadBlobThirdResource,
    "res007-memo-empty": MissingMemoEmpty,
    "prm007-farewell": RequiredArgDefaultedOnFarewell,
    "prm003-system": SystemRoleOnSummary,
    "prm004-audio": AudioWithImageMime,
    "cpl003-resource-ints": ResourceCompletionInts,
    "cpl003-over100": CompletionOver100,
    "cpl004-empty": UnknownPromptCompletionEmpty,
    "cpl001-undeclared": CompletionUndeclared,
    "log002-rare-levels": RareLevelsRefused,
    "log003-casefold": LevelCaseFolded,
    "lif004-oldest": OffersOldest,
    "lif008-list-changed": ListChangedOnCallStream,
    "lif009-sampling": SamplingOnCallStream,
    "utl005-repeat": ProgressRepeatsLast,
    "rpc001-digits": NumericStringIdAsNumber,
    "rpc004-trailing": TrailingDataAccepted,
    "rpc005-jsonrpc1": JsonRpc1Accepted,
    "rpc006-null-id": NullIdServed,
    "rpc009-unknown-notification": UnknownNotificationAnswered,
    "rpc003-code-string": ErrorCodeString,
    "rpc002-null-result": SetLevelNullResult,
    "rpc011-latin1": Latin1Motto,
    "htp002-response-200": ResponsePostAnswered200,
    "htp017-2024": OldVersionHeaderAccepted,
    "htp018-get": OriginUncheckedOnGet,
    "htp015-get-alive": GetAliveAfterDelete,
    "htp014-get": GetWithoutSession,
    "htp016-delete": UnknownSessionDeleteOk,
    "htp004-first-only": PrimingFirstStreamOnly,
}


# --- second batch ----------------------------------------------------------------


class SecondInitializeOlder(Rich25):
    """Answers the first `initialize` of the process with 2025-11-25, every later one with 2025-06-18.

    LIFECYCLE "Version Negotiation": if the server supports the requested
    version, it MUST respond with the same version.
    """

    RULE = "MCP25-LIF-002"
    seen = 0

    def negotiate(self, requested):
        type(self).seen += 1
        if type(self).seen > 1 and requested == "2025-11-25":
            return "2025-06-18"
        return super().negotiate(requested)


class ForeignMetaRefusedOnRead(Rich25):
    """Refuses `resources/read` whose `params._meta` carries a key it does not know (-32602).

    BASIC "_meta": `_meta` is allowed on every request; a request carrying it
    is served as it is without it.
    """

    RULE = "MCP25-RPC-010"

    def read(self, params):
        meta = params.get("_meta")
        if isinstance(meta, dict) and any(k != "progressToken" for k in meta):
            raise RpcError(-32602, "Invalid params: unexpected _meta")
        return super().read(params)


class UnknownFamilyMethodInvalidParams(Rich25):
    """An unknown method in a known family (`tools/delete`, `prompts/render`) gets -32602.

    JSON-RPC: a method that does not exist gets -32601 (Method not found).
    """

    RULE = "MCP25-RPC-007"

    def dispatch(self, call, method, params):
        try:
            return super().dispatch(call, method, params)
        except RpcError as e:
            family = method.split("/")[0]
            if e.code == -32601 and "/" in method and family in ("tools", "resources", "prompts", "completion", "logging"):
                raise RpcError(-32602, "Invalid params: unknown operation") from None
            raise


class ErrorsAsTextPlain(Rich25):
    """Sends JSON-RPC error answers to requests as `text/plain`.

    TRANSPORTS: a POSTed request is answered with `application/json` or `text/event-stream`.
    """

    RULE = "MCP25-HTP-001"

    def handle(self, session, msg, emit, stdio=False):
        answer = super().handle(session, msg, emit, stdio)
        _TLS.error = isinstance(answer, dict) and "error" in answer
        return answer

    @property
    def json_type(self):
        return "text/plain" if getattr(_TLS, "error", False) else "application/json"

    def refused_at_door(self, handler):
        _TLS.error = False
        return super().refused_at_door(handler)


class GetTwoTypesRefused(Rich25):
    """Answers a GET whose `Accept` lists two types (`application/json, text/event-stream`) with 400.

    TRANSPORTS "Listening for Messages": the server MUST either return
    `text/event-stream` or 405 to a GET.
    """

    RULE = "MCP25-HTP-008"

    def refused_at_door(self, handler):
        if handler.command == "GET" and "," in (handler.headers.get("Accept") or ""):
            handler.send(400)
            return True
        return super().refused_at_door(handler)


class SpaceInLaterSessionIds(Rich25):
    """Session ids from the second one on contain a space.

    TRANSPORTS "Session Management": the session id MUST only contain
    visible ASCII characters (0x21 to 0x7E).
    """

    RULE = "MCP25-HTP-012"
    issued = 0

    def new_session_id(self):
        type(self).issued += 1
        sid = super().new_session_id()
        return sid if type(self).issued == 1 else sid[:10] + " " + sid[10:]


class SequentialSessionIds(Rich25):
    """Session ids are `session-1`, `session-2`, ... (unique, but predictable).

    TRANSPORTS "Session Management": the session id SHOULD be globally unique
    and cryptographically secure.
    """

    RULE = "MCP25-HTP-013"
    issued = 0

    def new_session_id(self):
        type(self).issued += 1
        return f"session-{type(self).issued}"


class SpaceInLastResourceUri(Rich25):
    """A resource on the last page of `resources/list` has the URI `memo://my notes` (a raw space).

    RESOURCES: each resource is identified by a URI (RFC 3986, which has no space).
    """

    RULE = "MCP25-RES-003"

    def resources(self):
        return RESOURCES + [{"uri": "memo://my notes", "name": "notes", "mimeType": "text/plain"}]

    def read(self, params):
        if params.get("uri") == "memo://my notes":
            return {"contents": [{"uri": "memo://my notes", "mimeType": "text/plain", "text": "notes"}]}
        return super().read(params)


class SizeStringLastPage(Rich25):
    """A resource on the last page has `size: "12"` (a string).

    SCHEMA `Resource`: `size` is a number.
    """

    RULE = "MCP25-RES-002"

    def resources(self):
        return RESOURCES[:-1] + [dict(RESOURCES[-1], size="12")]


class UnsubscribeMissing(Rich25):
    """Declares `resources.subscribe` but answers `resources/unsubscribe` with -32601.

    RESOURCES "Subscriptions": with `subscribe`, clients can subscribe and
    unsubscribe; both succeed with an empty result.
    """

    RULE = "MCP25-RES-008"

    def dispatch(self, call, method, params):
        if method == "resources/unsubscribe":
            raise RpcError(-32601, "Method not found")
        return super().dispatch(call, method, params)


class RequiredAsStringLastPage(Rich25):
    """The prompt on the last page declares its argument `required: "yes"`.

    SCHEMA `PromptArgument`: `required` is a boolean.
    """

    RULE = "MCP25-PRM-002"

    def prompts(self):
        return PROMPTS[:-1] + [dict(PROMPTS[-1], arguments=[{"name": "who", "required": "yes"}])]


class EmbeddedWithoutMime(Rich25):
    """The `summary` prompt's embedded resource has no `mimeType`.

    PROMPTS "Embedded Resources": embedded resources MUST include a valid URI,
    the appropriate MIME type and text or base64 blob content.
    """

    RULE = "MCP25-PRM-005"

    def prompt(self, params):
        result = super().prompt(params)
        if params.get("name") == "summary":
            result["messages"][1]["content"]["resource"].pop("mimeType")
        return result


class UnknownPromptPrefixServed(Rich25):
    """Serves an unknown prompt whose name starts with a known one's (`greet-x` as `greet`).

    PROMPTS "Error Handling": invalid prompt name: -32602.
    """

    RULE = "MCP25-PRM-006"

    def prompt(self, params):
        name = params.get("name")
        if isinstance(name, str):
            for known in ("greet", "summary", "farewell"):
                if name.startswith(known) and name != known:
                    params = dict(params, name=known)
        return super().prompt(params)


class CompletionUndeclaredInvalidParams(Rich25):
    """Without `completions` declared, `completion/complete` gets -32602 instead of -32601.

    COMPLETION: without the capability, the method does not exist: -32601.
    """

    RULE = "MCP25-CPL-002"

    def capabilities(self):
        caps = super().capabilities()
        caps.pop("completions")
        return caps

    def dispatch(self, call, method, params):
        if method == "completion/complete":
            raise RpcError(-32602, "Invalid params: completions are not available")
        return super().dispatch(call, method, params)


class TraceLevelLogs(Rich25):
    """Once a level is set, every request served is logged at level `trace`.

    LOGGING: every `notifications/message` has a level from the eight syslog levels.
    """

    RULE = "MCP25-LOG-004"

    def before(self, call, method):
        if call.session.log_level is not None:
            call.emit({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": "trace", "logger": "spec25", "data": {"method": method[:60]}}})


class ArrayOutputSchemaLastPage(Rich25):
    """A tool on the last page has an `outputSchema` rooted at `"type": "array"`.

    TOOLS "Output Schema": an `outputSchema`, when present, is a JSON Schema
    object with `"type": "object"` at its root.
    """

    RULE = "MCP25-TOL-004"

    def tools(self):
        return extra_tool({
            "name": "primes",
            "description": "Small primes.",
            "inputSchema": {"type": "object"},
            "outputSchema": {"type": "array", "items": {"type": "integer"}},
        })


class PingNotEmpty(Rich25):
    """Answers `ping` with `{"pong": true}`.

    PING: the receiver MUST respond promptly with an empty response.
    """

    RULE = "MCP25-UTL-001"

    def dispatch(self, call, method, params):
        if method == "ping":
            return {"pong": True}
        return super().dispatch(call, method, params)


VARIANTS.update({
    "lif002-second": SecondInitializeOlder,
    "rpc010-read": ForeignMetaRefusedOnRead,
    "rpc007-family": UnknownFamilyMethodInvalidParams,
    "htp001-text-errors": ErrorsAsTextPlain,
    "htp008-two-types": GetTwoTypesRefused,
    "htp012-later": SpaceInLaterSessionIds,
    "htp013-sequential": SequentialSessionIds,
    "res003-last-page": SpaceInLastResourceUri,
    "res002-size-string": SizeStringLastPage,
    "res008-unsubscribe": UnsubscribeMissing,
    "prm002-required-string": RequiredAsStringLastPage,
    "prm005-no-mime": EmbeddedWithoutMime,
    "prm006-prefix": UnknownPromptPrefixServed,
    "cpl002-invalid-params": CompletionUndeclaredInvalidParams,
    "log004-trace": TraceLevelLogs,
    "tol004-array-root": ArrayOutputSchemaLastPage,
    "utl001-not-empty": PingNotEmpty,
})


class AudioWithImageMimeFirst(AudioWithImageMime):
    """AudioWithImageMime with the prompt `listen` listed first (page 1), not last.

    PROMPTS "Audio Content": audio content has base64 `data` and a valid audio MIME type.
    """

    def prompts(self):
        return [{"name": "listen", "description": "Listen to a chime."}] + PROMPTS


class BadBlobFirstResource(BadBlobThirdResource):
    """BadBlobThirdResource with the bad resource listed first (page 1), not last.

    RESOURCES "Binary Content": `blob` holds base64-encoded data.
    """

    def resources(self):
        return [{"uri": "memo://badge", "name": "badge", "mimeType": "image/png"}] + RESOURCES


VARIANTS.update({
    "prm004-audio-first": AudioWithImageMimeFirst,
    "res006-first": BadBlobFirstResource,
})


class ErrorIdAsString(Rich25):
    """Error answers repeat an integer request id as a string (`1` -> `"1"`); results keep it.

    BASIC "Responses": the response (result or error) MUST carry the same id
    as the request, with the same type.
    """

    RULE = "MCP25-RPC-001"

    def handle(self, session, msg, emit, stdio=False):
        answer = super().handle(session, msg, emit, stdio)
        rid = msg.get("id")
        if answer is not None and "error" in answer and isinstance(rid, int) and not isinstance(rid, bool):
            answer["id"] = str(rid)
        return answer


class SetLevelAnswerOnGetStream(Rich25):
    """Also sends the answer to `logging/setLevel` on every open GET stream of the session.

    TRANSPORTS "Listening for Messages": the server MUST NOT send a JSON-RPC
    response on the GET stream unless resuming a stream associated with a
    previous client request.
    """

    RULE = "MCP25-HTP-009"

    def handle(self, session, msg, emit, stdio=False):
        answer = super().handle(session, msg, emit, stdio)
        if answer is not None and msg.get("method") == "logging/setLevel":
            with session.lock:
                for inbox in session.listeners:
                    inbox.put(answer)
        return answer


class EventIdsPerStream(Rich25):
    """SSE event ids restart at `0` on every stream (`0`, `1`, ...).

    TRANSPORTS "Resumability": event IDs MUST be globally unique across all
    streams within that session.
    """

    RULE = "MCP25-HTP-010"

    def sse_event(self, eid, doc):
        return super().sse_event(eid.split("-")[-1], doc)


class PromptsUndeclared(Rich25):
    """Serves prompts without declaring the `prompts` capability.

    PROMPTS "Capabilities": servers that support prompts MUST declare the
    `prompts` capability.
    """

    RULE = "MCP25-PRM-001"

    def capabilities(self):
        caps = super().capabilities()
        caps.pop("prompts")
        return caps

    def has(self, capability):
        return capability == "prompts" or super().has(capability)


class TemplatesWithoutResources(Rich25):
    """Lists resource templates (only) without declaring `resources`.

    RESOURCES "Capabilities": servers that support resources MUST declare the
    `resources` capability; listing templates is supporting resources.
    """

    RULE = "MCP25-RES-001"

    def capabilities(self):
        caps = super().capabilities()
        caps.pop("resources")
        return caps

    def dispatch(self, call, method, params):
        if method == "resources/templates/list":
            return self.page("resourceTemplates", self.templates(), params)
        return super().dispatch(call, method, params)


VARIANTS.update({
    "rpc001-error-ids": ErrorIdAsString,
    "htp009-setlevel-echo": SetLevelAnswerOnGetStream,
    "htp010-per-stream": EventIdsPerStream,
    "prm001-undeclared": PromptsUndeclared,
    "res001-templates-only": TemplatesWithoutResources,
})

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in VARIANTS:
        sys.exit("usage: blind25.py {" + ",".join(VARIANTS) + "} [PORT]")
    server.main(VARIANTS[sys.argv[1]](), sys.argv[2:])
