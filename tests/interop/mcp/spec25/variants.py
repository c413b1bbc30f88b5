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
