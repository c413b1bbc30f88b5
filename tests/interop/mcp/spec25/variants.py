"""The 2025-11-25 panel's hand-written servers: `python3 variants.py NAME [PORT]`
over Streamable HTTP, `python3 variants.py NAME stdio` over stdio.

Each variant changes one behaviour of the correct server in server.py: either
a reading of the 2025-11-25 text a careful author may take (the server is
correct and a checker must not fail it), or a fault a checker must catch. The
expected verdict of each, with the specification sentence behind it, is in
tests/interop/EXPECTED.md, section "## MCP 2025-11-25".
"""

import json
import secrets
import sys
import threading
import time

import server
from server import RpcError, Server, classify, error_doc, readable_id


# --- correct readings --------------------------------------------------------

class Stateless(Server):
    """No sessions: no Mcp-Session-Id, GET and DELETE answered 405.

    TRANSPORTS "Session Management": a server using the Streamable HTTP
    transport MAY assign a session ID; "Listening for Messages": the server
    MUST either return text/event-stream or 405 Method Not Allowed to a GET.
    """

    sessions = False
    get_stream = False


class JsonOnly(Server):
    """Answers every request with application/json, never with an SSE stream."""

    sse_requests = set()


class SseAll(Server):
    """Answers every request with an SSE stream (priming event, then the response)."""

    def use_sse(self, method):
        return True


class SsePoll(SseAll):
    """Like sse-all, but closes each POST stream's connection right after the
    priming event (which carries `retry`); the client polls the stream with
    GET and Last-Event-ID and gets the rest, response included.

    TRANSPORTS "Sending Messages to the Server": the server MAY close the
    connection without terminating the SSE stream, e.g. after sending an
    event ID; it SHOULD send a retry field first; the client SHOULD then
    poll the stream by reconnecting.
    """

    def close_early(self, method):
        return True


class VersionError(Server):
    """Refuses an unsupported protocolVersion with an error naming the supported ones.

    LIFECYCLE "Error Handling" shows exactly this answer to an unsupported
    version (code -32602, data.supported and data.requested).
    """

    def negotiate(self, requested):
        if requested in self.versions:
            return requested
        raise RpcError(-32602, "Unsupported protocol version",
                       {"supported": list(self.versions), "requested": requested[:40]})


class ListsVersions(Server):
    """Speaks 2025-11-25 and older only, and says so as the 2026-07-28
    versioning page asks: a request for a version it does not support (in
    the MCP-Protocol-Version header or `_meta`), `server/discover` included,
    gets 400 and -32022 with the versions it supports; `server/discover` for
    a version it supports lists them in `supportedVersions`. Played by Go
    SDK servers such as kubernetes-mcp-server 0.0.67 over HTTP.

    VERSIONING (2026-07-28) "Protocol Version Negotiation": if the server
    does not implement the requested version, it MUST respond with an
    UnsupportedProtocolVersionError listing the versions it does support;
    the client SHOULD select a mutually supported version from the
    `supported` list and retry. TRANSPORTS (2025-11-25) "Protocol Version
    Header": an invalid or unsupported MCP-Protocol-Version gets 400.
    """

    def before_session(self, msg, version):
        meta = msg.get("params", {}).get("_meta") if isinstance(msg.get("params"), dict) else None
        asked = meta.get("io.modelcontextprotocol/protocolVersion") if isinstance(meta, dict) else None
        for requested in (version, asked):
            if requested is not None and requested not in self.versions:
                return 400, error_doc(readable_id(msg), -32022, "Unsupported protocol version",
                                      {"supported": list(self.versions),
                                       "requested": str(requested)[:40]})
        if msg.get("method") == "server/discover" and "id" in msg:
            return 200, {"jsonrpc": "2.0", "id": msg["id"], "result": {
                "supportedVersions": list(self.versions),
                "capabilities": self.capabilities(), "serverInfo": server.INFO}}
        return None


class Minimal(Server):
    """Declares tools only: no resources, prompts, completions or logging."""

    def capabilities(self):
        return {"tools": {}}


class Chatty(Server):
    """Logs every request it serves at level `debug` until the client sets a level.

    LIFECYCLE "Initialization": the server SHOULD NOT send requests other than
    pings and logging before receiving the initialized notification;
    LOGGING: the server sends notifications/message, filtered by the level a
    client sets with logging/setLevel.
    """

    def before(self, call, method):
        if call.session.log_level is None:
            call.session.log_level = "debug"
        call.log("debug", {"method": method[:60]})


class DeleteRefused(Server):
    """Keeps sessions but answers DELETE 405: clients may not end them.

    TRANSPORTS "Session Management": "The server MAY respond to this request
    with HTTP 405 Method Not Allowed".
    """

    delete_allowed = False


class SessionOptional(Server):
    """Issues session ids but serves a request without one statelessly."""

    require_session = False


class UnknownToolMethodNotFound(Server):
    """Answers a call of an unknown tool with -32601 instead of -32602."""

    def unknown_tool(self, name):
        raise RpcError(-32601, "Unknown tool: " + str(name)[:100])


class Paged(Server):
    """Every list one item per page, with opaque cursors."""

    page_size = 1


PONDER = {
    "name": "ponder",
    "description": "Thinks for 30 s before it answers; stops when cancelled.",
    "inputSchema": {"type": "object", "properties": {}},
    "annotations": {"readOnlyHint": True},
}


class Deliberate(Server):
    """Has one more read-only tool, `ponder`, whose work takes 30 s: it
    reports progress each second when given a token, and stops without
    answering when cancelled.

    TOOLS: how long a tool works is the server's business; no sentence bounds
    it. LIFECYCLE "Timeouts": a sender SHOULD set a timeout on every request
    and, when no response came within it, SHOULD issue a cancellation
    notification and stop waiting. CANCELLATION "Behavior Requirements": the
    receiver SHOULD stop processing a cancelled request and not send a
    response for it.
    """

    def tools(self):
        return server.TOOLS + [PONDER]

    def call_tool(self, call, params):
        if params.get("name") != "ponder":
            return super().call_tool(call, params)
        for second in range(1, 31):
            if call.cancelled.wait(1.0):
                return None
            if call.token is not None:
                self.progress(call, second, 30)
        return {"content": [{"type": "text", "text": "pondered for 30 s"}]}


DIGEST = {
    "name": "digest",
    "description": "Counts the words of `text`; runs only as a task.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
    "execution": {"taskSupport": "required"},
    "annotations": {"readOnlyHint": True},
}


def stamp():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class TaskRequired(Server):
    """Declares task-augmented `tools/call` and lists first a read-only tool,
    `digest`, that runs only as a task; every other tool is as on the correct
    server.

    TASKS "Tool-Level Negotiation": if the server's capabilities include
    tasks.requests.tools.call and a tool's execution.taskSupport is
    "required", clients MUST invoke the tool as a task, and servers MUST
    return -32601 (Method not found) if a client does not. "Creating Tasks":
    a task-augmented request is answered at once with a CreateTaskResult; the
    tool result comes through tasks/result. "Task Status Lifecycle": a task
    begins `working`. "Protocol Errors": an invalid or nonexistent taskId in
    tasks/get or tasks/result is -32602.
    """

    def __init__(self):
        super().__init__()
        self.tasks = {}  # task id -> task dict (with "_result" once done)
        self.done = threading.Condition()

    def capabilities(self):
        caps = super().capabilities()
        caps["tasks"] = {"requests": {"tools": {"call": {}}}}
        return caps

    def tools(self):
        return [DIGEST] + server.TOOLS

    def call_tool(self, call, params):
        if params.get("name") != "digest":
            return super().call_tool(call, params)
        task = params.get("task")
        if not isinstance(task, dict):
            raise RpcError(-32601, "Method not found: digest runs only as a task")
        args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        text = args.get("text")
        if isinstance(text, str):
            result = {"content": [{"type": "text", "text": f"{len(text.split())} words"}]}
        else:
            result = {"content": [{"type": "text", "text": "`text` (a string) is required"}],
                      "isError": True}
        tid = secrets.token_hex(16)
        now = stamp()
        record = {"taskId": tid, "status": "working", "createdAt": now, "lastUpdatedAt": now,
                  "ttl": 60000, "pollInterval": 100}
        with self.done:
            self.tasks[tid] = record
        created = {k: v for k, v in record.items()}
        threading.Thread(target=self.finish, args=(tid, result), daemon=True).start()
        return {"task": created}

    def finish(self, tid, result):
        with self.done:
            record = self.tasks[tid]
            record["status"] = "completed"
            record["lastUpdatedAt"] = stamp()
            record["_result"] = result
            self.done.notify_all()

    def dispatch(self, call, method, params):
        if method not in ("tasks/get", "tasks/result"):
            return super().dispatch(call, method, params)
        tid = params.get("taskId")
        with self.done:
            record = self.tasks.get(tid) if isinstance(tid, str) else None
            if record is None:
                raise RpcError(-32602, "Invalid params: no such task")
            if method == "tasks/get":
                return {k: v for k, v in record.items() if not k.startswith("_")}
            # tasks/result blocks until the task is in a terminal status.
            while "_result" not in record:
                self.done.wait()
            result = dict(record["_result"])
        result["_meta"] = {"io.modelcontextprotocol/related-task": {"taskId": tid}}
        return result


class TaskIdUnchecked(TaskRequired):
    """Like task-required, but `tasks/get` and `tasks/result` without a
    `taskId` fail inside the server: -32603 (an unchecked lookup).

    TASKS "Protocol Errors": receivers MUST return -32602 (Invalid params)
    for an invalid or nonexistent taskId in tasks/get, tasks/result and
    tasks/cancel.
    """

    def dispatch(self, call, method, params):
        if method in ("tasks/get", "tasks/result") and "taskId" not in params:
            raise RpcError(-32603, "Internal error: 'taskId'")
        return super().dispatch(call, method, params)


class UpdatesOnSubscribe(Server):
    """Announces `notifications/resources/updated` for a resource as soon as
    a client subscribes to it, on the subscribe's own stream before the
    answer: its resources change all the time (a clock), so a subscriber is
    told at once that what it may hold is stale.

    RESOURCES "Subscriptions": clients can subscribe to specific resources
    and receive notifications when they change; the update notification
    carries the resource's `uri`. TRANSPORTS "Sending Messages to the
    Server": before the response, the server MAY send notifications, which
    SHOULD relate to the originating request. LIFECYCLE "Operation": both
    parties use only negotiated capabilities; `resources.subscribe` is
    declared and the client subscribed.
    """

    def use_sse(self, method):
        return method in ("tools/call", "resources/subscribe")

    def dispatch(self, call, method, params):
        result = super().dispatch(call, method, params)
        if method == "resources/subscribe":
            call.emit({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                       "params": {"uri": params["uri"]}})
        return result


class UpdatesSubResource(Server):
    """Treats each resource as a folder of parts: when a client subscribes
    to a resource, it announces `notifications/resources/updated` for one
    part of it (the subscribed URI, then `/part-1`) on the subscribe's own
    stream before the answer.

    SCHEMA `ResourceUpdatedNotification.params.uri`: "The URI of the
    resource that has been updated. This might be a sub-resource of the one
    that the client actually subscribed to." RESOURCES "Subscriptions":
    clients can subscribe to specific resources and receive notifications
    when they change. TRANSPORTS "Sending Messages to the Server": before the
    response, the server MAY send notifications relating to the request.
    """

    def use_sse(self, method):
        return method in ("tools/call", "resources/subscribe")

    def dispatch(self, call, method, params):
        result = super().dispatch(call, method, params)
        if method == "resources/subscribe":
            call.emit({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                       "params": {"uri": params["uri"] + "/part-1"}})
        return result


# --- faults ------------------------------------------------------------------

class OriginOpen(Server):
    """Never looks at Origin (TRANSPORTS "Security Warning": MUST validate, 403)."""

    check_origin = False


class OriginPrefix(Server):
    """Checks Origin by string prefix: any Origin starting with http://localhost
    or http://127.0.0.1 is served (so is http://localhost.attacker.example),
    the rest get 403 (TRANSPORTS "Security Warning": MUST validate, 403).
    """

    def origin_ok(self, origin):
        return origin.startswith(("http://localhost", "http://127.0.0.1"))


class DeletedSessionAlive(Server):
    """Answers DELETE with 200 but keeps serving the session it says it ended."""

    def end_session(self, session):
        pass


class SessionRequestsOnly(Server):
    """Looks a POSTed message up by its Mcp-Session-Id only when it is a
    request: a notification POST is accepted (202) with no session id, an
    unknown one or an ended one.

    TRANSPORTS "Session Management": a server that requires a session id
    SHOULD answer requests without one (other than initialization) with 400;
    once a session is terminated, requests with its id MUST get 404.
    """

    def checks_session(self, kind):
        return kind == "request"


class HeadersOnPostOnly(Server):
    """Checks Origin and MCP-Protocol-Version on POST only: a GET or a DELETE
    with a foreign Origin or an unsupported version is served.

    TRANSPORTS "Security Warning": servers MUST validate the Origin header on
    all incoming connections, a present and invalid one gets 403; "Protocol
    Version Header": an invalid or unsupported version MUST get 400.
    """

    def checks_headers(self, http_method):
        return http_method == "POST"


class LenientJsonrpc(Server):
    """Never looks at the `jsonrpc` member: a request with `"jsonrpc": "1.0"`,
    or none, is served like any other.

    BASIC "Messages": all messages MUST follow the JSON-RPC 2.0
    specification, whose request object's `jsonrpc` MUST be exactly "2.0";
    an invalid request object gets -32600 (Invalid Request).
    """

    strict_jsonrpc = False


class HintNotBoolean(Server):
    """Lists `echo` with `annotations.openWorldHint` the string "no".

    SCHEMA `ToolAnnotations`: `openWorldHint?: boolean` (TOOLS "Listing
    Tools": each tool carries the `Tool` members, `annotations` optional).
    """

    def tools(self):
        return [dict(t, annotations={"readOnlyHint": True, "openWorldHint": "no"})
                if t["name"] == "echo" else t for t in server.TOOLS]


class PriorityOutOfRange(Server):
    """Lists its first resource with `annotations.priority` 5.

    SCHEMA `Annotations.priority`: a number from 0 to 1 (RESOURCES
    "Annotations": priority from 0.0, least important, to 1.0, most).
    """

    def page(self, key, items, params):
        if key == "resources":
            items = [dict(items[0], annotations={"priority": 5})] + list(items[1:])
        return super().page(key, items, params)


class UnclosedTemplate(Server):
    """Lists its resource template as `memo://notes/{id` (a brace never closed).

    RESOURCES "Resource Templates": templates are exposed with URI templates
    (RFC 6570); SCHEMA `ResourceTemplate.uriTemplate`: "A URI template
    (according to RFC 6570)".
    """

    def page(self, key, items, params):
        if key == "resourceTemplates":
            items = [dict(items[0], uriTemplate="memo://notes/{id")] + list(items[1:])
        return super().page(key, items, params)


class ArgumentDescriptionNumber(Server):
    """Lists the `greet` prompt's argument with `description` 7.

    SCHEMA `PromptArgument`: `description?: string` (PROMPTS "Listing
    Prompts").
    """

    def page(self, key, items, params):
        if key == "prompts":
            items = [dict(p, arguments=[dict(a, description=7) for a in p["arguments"]])
                     if p.get("arguments") else p for p in items]
        return super().page(key, items, params)


class CapabilityTrue(Server):
    """Declares `"logging": true` in its capabilities, not an object.

    LIFECYCLE "Initialization": the server MUST respond with its
    capabilities; SCHEMA `ServerCapabilities.logging?: object`.
    """

    def capabilities(self):
        return dict(super().capabilities(), logging=True)


class ArgumentsPresenceOnly(Server):
    """Refuses `prompts/get` of `greet` only when `arguments` is left out;
    `arguments: {}` renders the prompt for "someone".

    PROMPTS "Error Handling": servers SHOULD return standard JSON-RPC errors
    for "Missing required arguments: -32602 (Invalid params)".
    """

    def prompt(self, params):
        if params.get("name") == "greet" and params.get("arguments") == {}:
            return {"messages": [{"role": "user", "content": {"type": "text", "text": "Say hello to someone"}}]}
        return super().prompt(params)


class UnknownNotification200(Server):
    """Answers a POSTed notification it has no handler for (anything but
    `notifications/initialized` and `notifications/cancelled`) with 200 and
    an empty body; the two it knows get 202.

    TRANSPORTS "Sending Messages to the Server": "If the input is a JSON-RPC
    response or notification: If the server accepts the input, the server
    MUST return HTTP status code 202 Accepted with no body. If the server
    cannot accept the input, it MUST return an HTTP error status code".
    """

    def accepted_status(self, msg):
        known = ("notifications/initialized", "notifications/cancelled")
        return 202 if msg.get("method") in known or "method" not in msg else 200


class CompletionArgumentOptional(Server):
    """Completes a `completion/complete` sent without `argument` as if it
    named the reference's first argument with an empty value.

    COMPLETION "Error Handling": servers SHOULD return standard JSON-RPC
    errors for "Missing required arguments: -32602 (Invalid params)"; SCHEMA
    `CompleteRequest.params` requires `ref` and `argument`.
    """

    def complete(self, params):
        if "argument" not in params:
            ref = params.get("ref") or {}
            name = "id" if ref.get("type") == "ref/resource" else "who"
            params = dict(params, argument={"name": name, "value": ""})
        return super().complete(params)


class PrefixRouted(Server):
    """Routes `tools/...` by its prefix: a `tools/` method it does not know is
    served as `tools/list`; methods outside the namespaces get -32601.

    BASIC "Messages": messages MUST follow JSON-RPC 2.0, whose §5.1 answers a
    method that does not exist with -32601 (Method not found).
    """

    def dispatch(self, call, method, params):
        known = ("tools/list", "tools/call")
        if method.startswith("tools/") and method not in known:
            method = "tools/list"
        return super().dispatch(call, method, params)


class LaterIdsSpaced(Server):
    """Gives the first session a token as its id, and every later one an id
    with a space in it (`session 2`, `session 3`, ...).

    TRANSPORTS "Session Management": "The session ID ... MUST only contain
    visible ASCII characters (ranging from 0x21 to 0x7E)."
    """

    def __init__(self):
        super().__init__()
        self.issued = 0

    def new_session_id(self):
        with self.lock:
            self.issued += 1
            n = self.issued
        return super().new_session_id() if n == 1 else f"session {n}-{secrets.token_hex(8)}"


class OffersUnsupported(Server):
    """Supports 2025-11-25 alone, yet offers 2025-03-26 for a version it
    does not know (asked for 2025-03-26, it answers 2025-11-25).

    LIFECYCLE "Version Negotiation": "If the server supports the requested
    protocol version, it MUST respond with the same version. Otherwise, the
    server MUST respond with another protocol version it supports."
    """

    versions = ["2025-11-25"]

    def negotiate(self, requested):
        if requested in self.versions:
            return requested
        return "2025-11-25" if requested == "2025-03-26" else "2025-03-26"


class TemplatesUndeclared(Server):
    """Declares no `resources` capability and lists no resource, yet answers
    `resources/templates/list` with its template (and reads notes).

    RESOURCES "Capabilities": "Servers that support resources MUST declare
    the resources capability"; resource templates are resources the server
    exposes through URI templates.
    """

    def capabilities(self):
        caps = dict(super().capabilities())
        caps.pop("resources", None)
        return caps

    def dispatch(self, call, method, params):
        if method == "resources/templates/list":
            return self.page("resourceTemplates", server.TEMPLATES, params)
        if method == "resources/list":
            return {"resources": []}
        return super().dispatch(call, method, params)


class ListsBeforeInitialize(Server):
    """On stdio, serves `resources/list` before `initialize` (every other
    request but `ping` is still refused until the handshake).

    LIFECYCLE "Initialization": "The initialization phase MUST be the first
    interaction between client and server"; the client SHOULD NOT send
    requests other than pings before the server has responded to initialize.
    """

    def handle(self, session, msg, emit, stdio=False):
        if stdio and not session.version and msg.get("method") == "resources/list":
            return {"jsonrpc": "2.0", "id": msg["id"], "result": {"resources": server.RESOURCES}}
        return super().handle(session, msg, emit, stdio)


class CompletesUndeclared(Server):
    """Declares no `completions`, lists no prompt argument and no template,
    yet answers every `completion/complete` with an empty completion.

    COMPLETION "Capabilities": "Servers that support completions MUST declare
    the completions capability".
    """

    def capabilities(self):
        caps = dict(super().capabilities())
        caps.pop("completions", None)
        return caps

    def page(self, key, items, params):
        if key == "prompts":
            items = [p for p in items if not p.get("arguments")]
        if key == "resourceTemplates":
            items = []
        return super().page(key, items, params)

    def dispatch(self, call, method, params):
        if method == "completion/complete":
            return {"completion": {"values": [], "total": 0, "hasMore": False}}
        return super().dispatch(call, method, params)


class IgnoresCancel(Server):
    """Ignores notifications/cancelled: a cancelled call runs on and is answered."""

    def notify(self, session, msg):
        if msg.get("method") != "notifications/cancelled":
            super().notify(session, msg)


class UnknownSession400(Server):
    """Answers every unknown session id, an ended one included, with 400."""

    def unknown_session_status(self):
        return 400


class VersionHeaderIgnored(Server):
    """Never looks at the MCP-Protocol-Version header."""

    def version_header_ok(self, value):
        return True


class EchoVersion(Server):
    """Answers initialize with whatever protocolVersion the client asked for."""

    def negotiate(self, requested):
        return requested


class BadStructured(Server):
    """`add` returns structuredContent whose `sum` is a string, against its outputSchema."""

    def structured(self, total):
        return {"sum": str(total)}


class BatchArray(Server):
    """Processes a JSON array as a JSON-RPC 2.0 batch and answers with an array."""

    def batch(self, session, items, emit):
        session = session or self.shared
        out = []
        for msg in items:
            kind = classify(msg)
            if kind == "request":
                answer = self.handle(session, msg, emit)
                if answer is not None:
                    out.append(answer)
            elif kind == "notification":
                self.notify(session, msg)
            elif kind is None:
                out.append(error_doc(None, -32600, "Invalid Request"))
        return out or None


class WarnLevel(Server):
    """Keeps its log levels under a logging library's names, `warn` where the
    protocol says `warning`, and refuses `warning` as an unknown level."""

    def set_level(self, session, params):
        if params.get("level") == "warning":
            raise RpcError(-32602, "Invalid params: unknown log level (try warn)")
        return super().set_level(session, params)


class LevelAliases(Server):
    """Takes `warn` for `warning` in `logging/setLevel` (a logging library's
    alias) and sets the level, where the eight levels hold no `warn`.

    LOGGING "Error Handling": servers SHOULD return standard JSON-RPC errors
    for common failure cases: "Invalid log level: -32602 (Invalid params)".
    """

    def set_level(self, session, params):
        if params.get("level") == "warn":
            params = dict(params, level="warning")
        return super().set_level(session, params)


class TrailingTolerated(Server):
    """Reads the first JSON value of a message and ignores what follows it,
    so `{"jsonrpc":"2.0","id":1,"method":"ping"} x` is served as a `ping`.

    BASIC "Messages": messages MUST follow JSON-RPC 2.0, whose §5.1 answers
    text that is not valid JSON with -32700 (Parse error): a JSON text with
    trailing data is not valid JSON (RFC 8259 §2: a JSON text is one value,
    with whitespace around it).
    """

    lenient_json = True


class Noise(Server):
    """Writes a human-readable banner to stdout before serving stdio."""

    def banner(self):
        return "spec25 server ready, waiting for JSON-RPC on stdin"


class UpdatesUnasked(Server):
    """Sends `notifications/resources/updated` for `memo://pixel`, which no
    client subscribed to, on the stream of every tool call.

    RESOURCES "Subscriptions": update notifications go to clients that
    subscribed to the resource; LIFECYCLE "Operation": both parties MUST only
    use capabilities that were successfully negotiated. protocheck subscribes
    only to the first listed resource (`memo://greeting`), briefly.
    """

    def dispatch(self, call, method, params):
        if method == "tools/call":
            call.emit({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                       "params": {"uri": "memo://pixel"}})
        return super().dispatch(call, method, params)


class UpdatesEverySession(Server):
    """Keeps the news of a subscription server-wide: when any session
    subscribes to a resource, every open session is told
    `notifications/resources/updated` for it, on the next stream it opens
    (each answer is an SSE stream).

    SCHEMA `ResourceUpdatedNotification`: "This should only be sent if the
    client previously sent a resources/subscribe request." RESOURCES
    "Subscriptions": clients subscribe to specific resources and receive
    notifications when they change; a client that did not subscribe is not
    told. TRANSPORTS "Session Management": a session is one client's
    logically related interactions, starting with its initialization.
    """

    def __init__(self):
        super().__init__()
        self.outbox = {}  # session id -> notifications not yet delivered

    def use_sse(self, method):
        return True

    def dispatch(self, call, method, params):
        result = super().dispatch(call, method, params)
        if method == "resources/subscribe":
            note = {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                    "params": {"uri": params["uri"]}}
            with self.lock:
                for sid in self.table:
                    self.outbox.setdefault(sid, []).append(note)
        with self.lock:
            pending = self.outbox.pop(call.session.sid, [])
        for note in pending:
            call.emit(note)
        return result


class Multiline(Server):
    """Writes each stdio message pretty-printed over several lines."""

    def encode(self, doc):
        return json.dumps(doc, indent=2)


VARIANTS = {
    "correct": Server,
    "stateless": Stateless,
    "json-only": JsonOnly,
    "sse-all": SseAll,
    "sse-poll": SsePoll,
    "version-error": VersionError,
    "lists-versions": ListsVersions,
    "minimal": Minimal,
    "paged": Paged,
    "deliberate": Deliberate,
    "task-required": TaskRequired,
    "updates-on-subscribe": UpdatesOnSubscribe,
    "updates-sub-resource": UpdatesSubResource,
    "chatty": Chatty,
    "delete-refused": DeleteRefused,
    "session-optional": SessionOptional,
    "unknown-tool-method-not-found": UnknownToolMethodNotFound,
    "origin-open": OriginOpen,
    "origin-prefix": OriginPrefix,
    "deleted-session-alive": DeletedSessionAlive,
    "ignores-cancel": IgnoresCancel,
    "session-requests-only": SessionRequestsOnly,
    "lenient-jsonrpc": LenientJsonrpc,
    "hint-not-boolean": HintNotBoolean,
    "priority-out-of-range": PriorityOutOfRange,
    "unclosed-template": UnclosedTemplate,
    "argument-description-number": ArgumentDescriptionNumber,
    "capability-true": CapabilityTrue,
    "arguments-presence-only": ArgumentsPresenceOnly,
    "unknown-notification-200": UnknownNotification200,
    "task-id-unchecked": TaskIdUnchecked,
    "completion-argument-optional": CompletionArgumentOptional,
    "prefix-routed": PrefixRouted,
    "level-aliases": LevelAliases,
    "later-ids-spaced": LaterIdsSpaced,
    "offers-unsupported": OffersUnsupported,
    "templates-undeclared": TemplatesUndeclared,
    "lists-before-initialize": ListsBeforeInitialize,
    "completes-undeclared": CompletesUndeclared,
    "trailing-tolerated": TrailingTolerated,
    "headers-on-post-only": HeadersOnPostOnly,
    "unknown-session-400": UnknownSession400,
    "version-header-ignored": VersionHeaderIgnored,
    "echo-version": EchoVersion,
    "bad-structured": BadStructured,
    "batch-array": BatchArray,
    "warn-level": WarnLevel,
    "noise": Noise,
    "multiline": Multiline,
    "updates-unasked": UpdatesUnasked,
    "updates-every-session": UpdatesEverySession,
}

# Correct servers judged where and as they are served (a trailing slash, a
# query, a rate limiter): their own file and table, `served.py`.
import served  # noqa: E402

VARIANTS.update(served.VARIANTS)

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in VARIANTS:
        sys.exit("usage: variants.py {" + ",".join(VARIANTS) + "} [PORT | stdio]")
    server.main(VARIANTS[sys.argv[1]](), sys.argv[2:])
