"""A small MCP 2025-11-25 server written from the specification text alone
(Python standard library only): `python3 server.py [PORT]` serves Streamable
HTTP on 127.0.0.1 (endpoint /mcp, prints `PORT n`), `python3 server.py stdio`
speaks newline-delimited JSON-RPC on stdin/stdout.

`Server` is a correct server; `variants.py` changes one behaviour at a time.
Section names cited below are those of the 2025-11-25 pages: TRANSPORTS =
basic/transports, LIFECYCLE = basic/lifecycle, BASIC = basic/index, TOOLS =
server/tools, RESOURCES = server/resources, PROMPTS = server/prompts,
COMPLETION, LOGGING, PAGINATION = server/utilities/*, PROGRESS, CANCELLATION =
basic/utilities/*.
"""

import base64
import json
import os
import queue
import re
import secrets
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PATH = "/mcp"
INFO = {"name": "protocheck-interop-spec25", "version": "1.0.0"}
MAX_BODY = 1 << 20
LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
# A 1x1 PNG, for a binary resource.
PIXEL = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)).decode()

TOOLS = [
    {
        "name": "echo",
        "description": "Returns its text.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "add",
        "description": "Adds two numbers; the sum is also structured content.",
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
        "name": "unavailable",
        "description": "Always reports that its backend is down (a tool execution error).",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "slow",
        "description": "Counts to `steps` (default 10), one step per 200 ms, reporting progress.",
        "inputSchema": {
            "type": "object",
            "properties": {"steps": {"type": "integer", "minimum": 1, "maximum": 50}},
        },
        "annotations": {"readOnlyHint": True},
    },
]
RESOURCES = [
    {"uri": "memo://greeting", "name": "greeting", "mimeType": "text/plain"},
    {"uri": "memo://pixel", "name": "pixel", "mimeType": "image/png"},
]
TEMPLATES = [{"uriTemplate": "memo://notes/{id}", "name": "note", "mimeType": "text/plain"}]
PROMPTS = [
    {"name": "greet", "description": "Greets someone.", "arguments": [{"name": "who", "required": True}]},
    {"name": "summary", "description": "Summarises the greeting resource."},
]
NAMES = ["Alice", "Bob", "Carol", "Dave"]
NOTE = re.compile(r"^memo://notes/([0-9]{1,6})$")


class RpcError(Exception):
    """A JSON-RPC error answer (BASIC "Error Responses": integer code, message)."""

    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def error_doc(rid, code, message, data=None):
    err = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": err}


class Session:
    """What one client negotiated; over HTTP without sessions, one shared instance."""

    def __init__(self, sid=None):
        self.sid = sid
        self.version = None
        self.initialized = False
        self.log_level = None
        self.subscriptions = set()
        self.inflight = {}  # json.dumps(request id) -> threading.Event
        self.listeners = []  # queues of open GET streams
        self.ended = threading.Event()
        self.lock = threading.Lock()


class Call:
    """One request in progress: where its notifications go, whether it was cancelled."""

    def __init__(self, session, rid, params, emit):
        self.session, self.rid, self.params, self.emit = session, rid, params, emit
        self.cancelled = threading.Event()
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        token = meta.get("progressToken")
        self.token = token if isinstance(token, (str, int)) and not isinstance(token, bool) else None

    def log(self, level, data):
        # LOGGING: messages at or above the level the client set.
        floor = self.session.log_level
        if floor is not None and LEVELS.index(level) >= LEVELS.index(floor):
            self.emit({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": level, "logger": "spec25", "data": data}})


class Server:
    """The correct server. Class attributes and hook methods are what variants change."""

    versions = ["2025-11-25", "2025-06-18", "2025-03-26"]
    sessions = True          # TRANSPORTS "Session Management": MAY assign a session id
    get_stream = True        # TRANSPORTS: GET opens an SSE stream, or 405
    sse_requests = {"tools/call"}  # methods answered as SSE when the client accepts it
    page_size = None         # PAGINATION: None = every list in one page
    delete_allowed = True    # TRANSPORTS: the server MAY answer DELETE with 405
    require_session = True   # TRANSPORTS: requests without the session id get 400
    check_origin = True
    strict_jsonrpc = True    # BASIC: a message without `jsonrpc: "2.0"` is invalid (-32600)
    lenient_json = False     # True: the first JSON value of a message is read, the rest ignored
    serves_before_initialize = False  # True: stdio requests before `initialize` are served

    def stdio_delay(self, session, msg):
        """Seconds a stdio request waits, in a thread of its own, before it is served."""
        return 0

    def parse(self, text):
        """The JSON value of a message (ValueError when it is not JSON)."""
        if self.lenient_json:
            return json.JSONDecoder().raw_decode(text.lstrip())[0]
        return json.loads(text)

    def __init__(self):
        self.table = {}  # session id -> Session
        self.shared = Session()
        self.lock = threading.Lock()
        self.events = {}  # stream id -> [session id, [(seq, payload)], finished]
        self.changed = threading.Condition(self.lock)
        self.next_stream = 0

    # --- hooks -------------------------------------------------------------

    def refused_message(self, handler, msg):
        """Answers a well-formed message over HTTP before it is handled; True if it did."""
        return False

    def refused_at_door(self, handler):
        """Answers 404 to a request that is not for the MCP endpoint; True if it did."""
        if handler.path.split("?")[0] != PATH:
            handler.drain()
            handler.send(404)
            return True
        return False

    def negotiate(self, requested):
        # LIFECYCLE "Version Negotiation": the same version if supported,
        # otherwise another supported version, which SHOULD be the latest.
        return requested if requested in self.versions else self.versions[0]

    def capabilities(self):
        return {
            "tools": {"listChanged": False},
            "resources": {"subscribe": True, "listChanged": False},
            "prompts": {"listChanged": False},
            "completions": {},
            "logging": {},
        }

    def new_session_id(self):
        # TRANSPORTS: globally unique, cryptographically secure, visible ASCII.
        return secrets.token_urlsafe(24)

    def end_session(self, session):
        with self.lock:
            self.table.pop(session.sid, None)
        session.ended.set()

    def unknown_session_status(self):
        # TRANSPORTS "Session Management": once a session is terminated, requests
        # naming it MUST get 404 Not Found; an id never issued is treated alike.
        return 404

    def version_header_ok(self, value):
        # TRANSPORTS "Protocol Version Header": invalid or unsupported -> 400.
        return value in self.versions

    def checks_headers(self, http_method):
        """Whether Origin and MCP-Protocol-Version are checked on requests of
        `http_method` (TRANSPORTS: Origin on "all incoming connections", the
        version header on every request after initialization)."""
        return True

    def accepted_status(self, msg):
        """The status of a POSTed notification or response the server accepts
        (TRANSPORTS "Sending Messages to the Server": 202 Accepted, no body)."""
        return 202

    def checks_session(self, kind):
        """Whether a POSTed message of `kind` (request, notification,
        response) is looked up by its Mcp-Session-Id (TRANSPORTS "Session
        Management": every request after initialization names the session)."""
        return True

    def before_session(self, msg, version):
        """An answer (status, document) to a request before its session is
        looked up, given its MCP-Protocol-Version header; None to go on."""
        return None

    def unknown_tool(self, name):
        # TOOLS "Error Handling": unknown tools are protocol errors.
        raise RpcError(-32602, "Unknown tool: " + str(name)[:100])

    def origin_ok(self, origin):
        return bool(re.match(r"^https?://(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$", origin))

    def structured(self, total):
        return {"sum": total}

    def encode(self, doc):
        # TRANSPORTS "stdio": messages MUST NOT contain embedded newlines.
        return json.dumps(doc, separators=(",", ":"))

    def unparsable(self, err, emit):
        """Over stdio, answers a line that is not JSON (JSON-RPC 2.0 section 5.1)."""
        emit(error_doc(None, -32700, "Parse error"))

    def batch(self, session, items, emit):
        # 2025-06-18 removed JSON-RPC batching; a message is a single object.
        return error_doc(None, -32600, "Invalid Request: batches are not supported")

    def before(self, call, method):
        """Called before each request is served (what a variant may log or count)."""

    json_type = "application/json"

    def sse_event(self, eid, doc):
        """One SSE event; `doc` None is the priming event (an id, empty data)."""
        if doc is None:
            return f"id: {eid}\nretry: 1000\ndata: \n\n"
        return f"id: {eid}\ndata: {json.dumps(doc)}\n\n"

    def close_early(self, method):
        """Whether a POST stream is closed right after its priming event.

        TRANSPORTS "Sending Messages to the Server": the server MAY close the
        connection without terminating the SSE stream (e.g. after sending an
        event ID); the client then polls it with GET and Last-Event-ID.
        """
        return False

    def use_sse(self, method):
        # TRANSPORTS "Sending Messages to the Server": a request is answered
        # with text/event-stream or application/json, the server's choice.
        return method in self.sse_requests

    def banner(self):
        """A line written to stdout before serving stdio (none: stdout is MCP only)."""
        return None

    # --- the protocol --------------------------------------------------------

    def has(self, capability):
        return capability in self.capabilities()

    def handle(self, session, msg, emit, stdio=False):
        """Answers a request (a dict to send, or None when cancelled)."""
        rid = msg["id"]
        method = msg["method"]
        params = msg.get("params", {})
        if not isinstance(params, dict):
            return error_doc(rid, -32602, "Invalid params: params must be an object")
        if (stdio and not session.version and method not in ("initialize", "ping")
                and not self.serves_before_initialize):
            # LIFECYCLE: initialization MUST be the first interaction.
            return error_doc(rid, -32600, "Server not initialized")
        call = Call(session, rid, params, emit)
        self.before(call, method)
        key = json.dumps(rid)
        with session.lock:
            session.inflight[key] = call.cancelled
        try:
            result = self.dispatch(call, method, params)
        except RpcError as e:
            result = error_doc(rid, e.code, e.message, e.data)
        else:
            result = None if result is None else {"jsonrpc": "2.0", "id": rid, "result": result}
        finally:
            with session.lock:
                session.inflight.pop(key, None)
        if call.cancelled.is_set():
            # CANCELLATION: receivers SHOULD not send a response for a cancelled request.
            return None
        return result

    def notify(self, session, msg):
        method = msg.get("method")
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if method == "notifications/initialized":
            session.initialized = True
        elif method == "notifications/cancelled":
            rid = params.get("requestId")
            with session.lock:
                flag = session.inflight.get(json.dumps(rid))
            if flag is not None:
                flag.set()
        # Anything else (including unknown notifications) is ignored.

    def dispatch(self, call, method, params):
        if method == "initialize":
            return self.initialize(call.session, params)
        if method == "ping":
            return {}
        family = method.split("/")[0]
        needs = {"tools": "tools", "resources": "resources", "prompts": "prompts",
                 "completion": "completions", "logging": "logging"}.get(family)
        if needs is None or not self.has(needs):
            raise RpcError(-32601, "Method not found")
        handler = {
            "tools/list": lambda: self.page("tools", self.tools(), params),
            "tools/call": lambda: self.call_tool(call, params),
            "resources/list": lambda: self.page("resources", RESOURCES, params),
            "resources/templates/list": lambda: self.page("resourceTemplates", TEMPLATES, params),
            "resources/read": lambda: self.read(params),
            "resources/subscribe": lambda: self.subscribe(call.session, params, True),
            "resources/unsubscribe": lambda: self.subscribe(call.session, params, False),
            "prompts/list": lambda: self.page("prompts", PROMPTS, params),
            "prompts/get": lambda: self.prompt(params),
            "completion/complete": lambda: self.complete(params),
            "logging/setLevel": lambda: self.set_level(call.session, params),
        }.get(method)
        if handler is None:
            raise RpcError(-32601, "Method not found")
        return handler()

    def initialize(self, session, params):
        asked = params.get("protocolVersion")
        if not isinstance(asked, str) or not isinstance(params.get("capabilities"), dict) \
                or not isinstance(params.get("clientInfo"), dict):
            raise RpcError(-32602, "Invalid params: protocolVersion, capabilities and clientInfo are required")
        session.version = self.negotiate(asked)
        return {"protocolVersion": session.version, "capabilities": self.capabilities(), "serverInfo": INFO}

    def tools(self):
        return TOOLS

    def page(self, key, items, params):
        cursor = params.get("cursor")
        start = 0
        if cursor is not None:
            start = self.decode_cursor(key, cursor, len(items))
        size = self.page_size or len(items) or 1
        out = {key: items[start:start + size]}
        if start + size < len(items):
            token = json.dumps({"k": key, "o": start + size}).encode()
            out["nextCursor"] = base64.urlsafe_b64encode(token).decode()
        return out

    def decode_cursor(self, key, cursor, count):
        # PAGINATION "Error Handling": invalid cursors SHOULD result in -32602.
        if not isinstance(cursor, str) or self.page_size is None:
            raise RpcError(-32602, "Invalid params: unknown cursor")
        try:
            doc = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
            offset = doc["o"]
            assert doc["k"] == key and isinstance(offset, int) and 0 < offset <= count
        except Exception:
            raise RpcError(-32602, "Invalid params: unknown cursor") from None
        return offset

    def call_tool(self, call, params):
        name = params.get("name")
        args = params.get("arguments", {})
        tool = next((t for t in self.tools() if t["name"] == name), None)
        if tool is None:
            return self.unknown_tool(name)
        if not isinstance(args, dict):
            raise RpcError(-32602, "Invalid params: arguments must be an object")
        problem = check_args(tool["inputSchema"], args)
        if problem:
            # TOOLS "Error Handling": input validation errors are tool execution errors.
            return {"content": [{"type": "text", "text": problem}], "isError": True}
        call.log("info", "calling tool " + name)
        if name == "echo":
            return {"content": [{"type": "text", "text": args["text"]}]}
        if name == "add":
            total = args["a"] + args["b"]
            if total != total or abs(total) == float("inf"):
                return {"content": [{"type": "text", "text": "the sum is not a finite number"}], "isError": True}
            structured = self.structured(total)
            # TOOLS "Structured Content": also serialized in a text block.
            return {"content": [{"type": "text", "text": json.dumps(structured)}],
                    "structuredContent": structured}
        if name == "unavailable":
            return {"content": [{"type": "text", "text": "The backend is unavailable."}], "isError": True}
        steps = args.get("steps", 10)
        for step in range(1, steps + 1):
            if call.cancelled.wait(0.2):
                return None
            if call.token is not None:
                # PROGRESS: progress increases with each notification.
                self.progress(call, step, steps)
        return {"content": [{"type": "text", "text": f"counted to {steps}"}]}

    def progress(self, call, step, steps):
        call.emit({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": call.token, "progress": step, "total": steps,
                              "message": f"step {step} of {steps}"}})

    def read(self, params):
        uri = params.get("uri")
        if uri == "memo://greeting":
            return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "hello"}]}
        if uri == "memo://pixel":
            return {"contents": [{"uri": uri, "mimeType": "image/png", "blob": PIXEL}]}
        m = NOTE.match(uri) if isinstance(uri, str) else None
        if m:
            return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "note " + m.group(1)}]}
        # RESOURCES "Error Handling": resource not found is -32002.
        raise RpcError(-32002, "Resource not found", {"uri": str(uri)[:200]})

    def subscribe(self, session, params, on):
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RpcError(-32602, "Invalid params: uri is required")
        if on:
            session.subscriptions.add(uri[:200])
        else:
            session.subscriptions.discard(uri[:200])
        return {}

    def prompt(self, params):
        name = params.get("name")
        args = params.get("arguments", {})
        if not isinstance(args, dict):
            raise RpcError(-32602, "Invalid params: arguments must be an object")
        if name == "greet":
            who = args.get("who")
            if not isinstance(who, str):
                # PROMPTS "Error Handling": missing required arguments: -32602.
                raise RpcError(-32602, "Invalid params: missing required argument 'who'")
            return {"messages": [{"role": "user", "content": {"type": "text", "text": "Say hello to " + who}}]}
        if name == "summary":
            embedded = {"type": "resource",
                        "resource": {"uri": "memo://greeting", "mimeType": "text/plain", "text": "hello"}}
            return {"description": "Summarise a memo",
                    "messages": [{"role": "user", "content": {"type": "text", "text": "Summarise this memo."}},
                                 {"role": "user", "content": embedded}]}
        # PROMPTS "Error Handling": invalid prompt name: -32602.
        raise RpcError(-32602, "Invalid params: unknown prompt")

    def complete(self, params):
        ref = params.get("ref")
        arg = params.get("argument")
        if not isinstance(ref, dict) or not isinstance(arg, dict) or not isinstance(arg.get("value"), str):
            raise RpcError(-32602, "Invalid params: ref and argument are required")
        value = arg["value"]
        if ref.get("type") == "ref/prompt" and ref.get("name") == "greet" and arg.get("name") == "who":
            values = [n for n in NAMES if n.lower().startswith(value.lower())]
        elif ref.get("type") == "ref/resource" and ref.get("uri") == "memo://notes/{id}" and arg.get("name") == "id":
            values = [n for n in ("1", "2", "7", "12") if n.startswith(value)]
        elif ref.get("type") == "ref/prompt" and ref.get("name") in ("greet", "summary"):
            values = []
        elif ref.get("type") == "ref/resource" and ref.get("uri") == "memo://notes/{id}":
            values = []
        else:
            # COMPLETION "Error Handling": invalid prompt name: -32602.
            raise RpcError(-32602, "Invalid params: unknown reference")
        return {"completion": {"values": values, "total": len(values), "hasMore": False}}

    def set_level(self, session, params):
        level = params.get("level")
        if level not in LEVELS:
            # LOGGING "Error Handling": invalid log level: -32602.
            raise RpcError(-32602, "Invalid params: unknown log level")
        session.log_level = level
        return {}


def check_args(schema, args):
    """The problems of `args` against one of the simple schemas above, or ''."""
    for name in schema.get("required", []):
        if name not in args:
            return f"missing argument {name!r}"
    for name, value in args.items():
        spec = schema.get("properties", {}).get(name)
        if spec is None:
            continue
        kind = spec.get("type")
        if kind == "string" and not isinstance(value, str):
            return f"{name!r} must be a string"
        if kind == "number" and (isinstance(value, bool) or not isinstance(value, (int, float))):
            return f"{name!r} must be a number"
        if kind == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                return f"{name!r} must be an integer"
            if not spec.get("minimum", value) <= value <= spec.get("maximum", value):
                return f"{name!r} is out of range"
    return ""


def classify(msg, strict=True):
    """'request', 'notification', 'response' or None (not a JSON-RPC 2.0 message).

    BASIC "Messages": every message MUST follow JSON-RPC 2.0, whose request
    object carries `jsonrpc` exactly "2.0" (`strict` False skips that check).
    """
    if not isinstance(msg, dict) or (strict and msg.get("jsonrpc") != "2.0"):
        return None
    if "method" in msg:
        if not isinstance(msg["method"], str):
            return None
        if "id" not in msg:
            return "notification"
        rid = msg["id"]
        # BASIC "Requests": the id MUST be a string or integer, MUST NOT be null.
        if isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool)):
            return "request"
        return None
    if "id" in msg and ("result" in msg) != ("error" in msg):
        return "response"
    return None


def readable_id(msg):
    rid = msg.get("id") if isinstance(msg, dict) else None
    return rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None


# --- stdio -------------------------------------------------------------------

def serve_stdio(server):
    session = Session()
    out_lock = threading.Lock()
    workers = []
    if server.banner() is not None:
        print(server.banner(), flush=True)

    def write(doc):
        line = server.encode(doc) + "\n"
        with out_lock:
            sys.stdout.write(line)
            sys.stdout.flush()

    def run(msg, delay=0):
        if delay:
            time.sleep(delay)
        answer = server.handle(session, msg, write, stdio=True)
        if answer is not None:
            write(answer)

    stdin = sys.stdin.buffer
    while True:
        raw = stdin.readline(MAX_BODY + 1)
        if not raw:
            break
        if len(raw) > MAX_BODY:
            while raw and not raw.endswith(b"\n"):
                raw = stdin.readline(MAX_BODY)
            write(error_doc(None, -32600, "Invalid Request: message too large"))
            continue
        if not raw.strip():
            continue
        try:
            msg = server.parse(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as err:
            server.unparsable(err, write)
            continue
        if isinstance(msg, list):
            answer = server.batch(session, msg, write)
            if answer is not None:
                write(answer)
            continue
        kind = classify(msg, server.strict_jsonrpc)
        if kind is None:
            write(error_doc(readable_id(msg), -32600, "Invalid Request"))
        elif kind == "notification":
            server.notify(session, msg)
        elif kind == "request":
            delay = server.stdio_delay(session, msg)
            if msg["method"] == "tools/call" or delay:
                # A tool may run long: keep reading (for cancellations) meanwhile.
                t = threading.Thread(target=run, args=(msg, delay), daemon=True)
                t.start()
                workers.append(t)
            else:
                run(msg)
        # Responses (to requests this server never sends) are ignored.
    # LIFECYCLE "Shutdown": stdin closed; finish what is running and exit.
    for t in workers:
        t.join(timeout=2)


# --- Streamable HTTP -----------------------------------------------------------

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "interop-spec25/1"
    srv = None

    def log_message(self, *args):
        pass

    def send(self, status, body=b"", ctype=None, extra=()):
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def send_json(self, status, doc, extra=()):
        self.send(status, json.dumps(doc).encode(), self.srv.json_type, extra)

    def accepts_sse(self):
        return "text/event-stream" in (self.headers.get("Accept") or "")

    def origin_refused(self):
        # TRANSPORTS "Security Warning": validate Origin; present and invalid -> 403
        # (the body MAY be a JSON-RPC error without an id).
        origin = self.headers.get("Origin")
        if not self.srv.checks_headers(self.command):
            return False
        if self.srv.check_origin and origin is not None and not self.srv.origin_ok(origin):
            self.drain()
            self.send_json(403, {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Forbidden origin"}})
            return True
        return False

    def drain(self):
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
        if 0 < length <= MAX_BODY:
            self.rfile.read(length)
        elif length:
            self.close_connection = True

    def wrong_path(self):
        # The server says what its endpoint is (see served.py).
        return self.srv.refused_at_door(self)

    def session(self):
        """(session, None) or (None, status) for this request's Mcp-Session-Id."""
        srv = self.srv
        if not srv.sessions:
            return srv.shared, None
        sid = self.headers.get("Mcp-Session-Id")
        if sid is None:
            # TRANSPORTS: a server that requires a session id SHOULD answer 400.
            return (None, 400) if srv.require_session else (srv.shared, None)
        with srv.lock:
            found = srv.table.get(sid)
        return (found, None) if found is not None else (None, srv.unknown_session_status())

    def version_refused(self, rid=None):
        # TRANSPORTS "Protocol Version Header": invalid or unsupported -> 400.
        version = self.headers.get("MCP-Protocol-Version")
        if not self.srv.checks_headers(self.command):
            return False
        if version is not None and not self.srv.version_header_ok(version):
            self.send_json(400, error_doc(rid, -32600, "Unsupported MCP-Protocol-Version: " + version[:40]))
            return True
        return False

    def refuse(self, status, rid=None):
        text = "Bad Request: no valid Mcp-Session-Id" if status == 400 else "Session not found"
        self.send_json(status, error_doc(rid, -32600 if status == 400 else -32001, text))

    def do_POST(self):
        if self.wrong_path() or self.origin_refused():
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            self.close_connection = True
            return self.send(413)
        try:
            msg = self.srv.parse(self.rfile.read(length).decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return self.send_json(400, error_doc(None, -32700, "Parse error"))
        srv = self.srv
        if isinstance(msg, list):
            answer = srv.batch(self.session()[0], msg, lambda doc: None)
            if isinstance(answer, list):
                return self.send_json(200, answer)
            return self.send_json(400, answer)
        kind = classify(msg, srv.strict_jsonrpc)
        if kind is None:
            return self.send_json(400, error_doc(readable_id(msg), -32600, "Invalid Request"))
        if srv.refused_message(self, msg):
            return
        extra = []
        if kind == "request" and msg["method"] == "initialize":
            if srv.sessions:
                session = Session(srv.new_session_id())
                with srv.lock:
                    srv.table[session.sid] = session
                extra.append(("Mcp-Session-Id", session.sid))
            else:
                session = srv.shared
        else:
            early = srv.before_session(msg, self.headers.get("MCP-Protocol-Version"))
            if early is not None:
                return self.send_json(*early)
            session, status = self.session()
            if session is None and not srv.checks_session(kind):
                session = srv.shared
            if session is None:
                return self.refuse(status, readable_id(msg))
            if self.version_refused(readable_id(msg)):
                return
        if kind != "request":
            # TRANSPORTS: an accepted notification or response gets 202 with no body.
            if kind == "notification":
                srv.notify(session, msg)
            return self.send(srv.accepted_status(msg))
        if srv.use_sse(msg["method"]) and self.accepts_sse():
            return self.stream_answer(session, msg, extra)
        answer = srv.handle(session, msg, lambda doc: None)
        if answer is None:
            # Cancelled: no response is sent.
            self.close_connection = True
            return
        self.send_json(200, answer, extra)

    # --- SSE ---

    def open_stream(self, session, extra=()):
        """Starts an SSE response; returns its stream id (event ids are `stream-seq`)."""
        srv = self.srv
        with srv.lock:
            srv.next_stream += 1
            stream = srv.next_stream
            srv.events[stream] = [session.sid, [], False]
            while len(srv.events) > 500:
                srv.events.pop(next(iter(srv.events)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        # TRANSPORTS: the server SHOULD immediately send an event with an id and
        # empty data to prime the client to reconnect.
        self.event(stream, None)
        return stream

    def event(self, stream, doc):
        srv = self.srv
        with srv.lock:
            record = srv.events.get(stream)
            seq = len(record[1]) if record else 0
            if record is not None:
                record[1].append((seq, doc))
            srv.changed.notify_all()
        self.write_event(f"{stream}-{seq}", doc)

    def finished(self, stream):
        srv = self.srv
        with srv.lock:
            record = srv.events.get(stream)
            if record is not None:
                record[2] = True
            srv.changed.notify_all()

    def write_event(self, eid, doc):
        try:
            self.wfile.write(self.srv.sse_event(eid, doc).encode())
            self.wfile.flush()
        except OSError:
            pass

    def stream_answer(self, session, msg, extra):
        stream = self.open_stream(session, extra)
        if self.srv.close_early(msg["method"]):
            try:
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        lock = threading.Lock()

        def emit(doc):
            with lock:
                self.event(stream, doc)

        answer = self.srv.handle(session, msg, emit)
        if answer is not None:
            emit(answer)
        # The stream ends with the response (or without one, once cancelled).
        self.finished(stream)

    def do_GET(self):
        if self.wrong_path() or self.origin_refused():
            return
        srv = self.srv
        if not srv.get_stream:
            return self.send(405, b"", None, [("Allow", "POST, DELETE" if srv.sessions else "POST")])
        if not self.accepts_sse():
            return self.send(406)
        session, status = self.session()
        if session is None:
            return self.refuse(status)
        if self.version_refused():
            return
        last = self.headers.get("Last-Event-ID")
        if last is not None:
            return self.resume(session, last)
        stream = self.open_stream(session)
        inbox = queue.Queue()
        with session.lock:
            session.listeners.append(inbox)
        try:
            deadline = time.monotonic() + 15
            while not session.ended.is_set() and time.monotonic() < deadline:
                try:
                    doc = inbox.get(timeout=0.5)
                except queue.Empty:
                    continue
                self.event(stream, doc)
        finally:
            with session.lock:
                session.listeners.remove(inbox)
            self.finished(stream)

    def resume(self, session, last):
        # TRANSPORTS "Resumability and Redelivery": replay only what came after
        # the id on the stream that was disconnected, never another stream's.
        # A stream still running goes on being delivered until it ends.
        srv = self.srv
        m = re.match(r"^([0-9]{1,12})-([0-9]{1,12})$", last)
        with srv.lock:
            record = srv.events.get(int(m.group(1))) if m else None
        if record is None or record[0] != session.sid:
            return self.send_json(404, error_doc(None, -32600, "Unknown event id"))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        seen = int(m.group(2))
        deadline = time.monotonic() + 10
        while True:
            with srv.lock:
                fresh = [(s, d) for s, d in record[1] if s > seen]
                done = record[2]
                if not fresh and not done and time.monotonic() < deadline:
                    srv.changed.wait(0.5)
                    continue
            for seq, doc in fresh:
                seen = seq
                if doc is not None:
                    self.write_event(f"{m.group(1)}-{seq}", doc)
            if (done and not fresh) or time.monotonic() >= deadline:
                break

    def do_DELETE(self):
        if self.wrong_path() or self.origin_refused():
            return
        srv = self.srv
        if not srv.sessions or not srv.delete_allowed:
            return self.send(405, b"", None, [("Allow", "GET, POST" if srv.get_stream else "POST")])
        session, status = self.session()
        if session is None or session is srv.shared:
            return self.refuse(status or 400)
        if self.version_refused():
            return
        srv.end_session(session)
        self.send(200)


def serve_http(server, port):
    handler = type("H", (Handler,), {"srv": server})
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


def main(server, argv):
    """`stdio`, or a port (0 = any; default $PORT or 0)."""
    if argv and argv[0] == "stdio":
        return serve_stdio(server)
    serve_http(server, int(argv[0] if argv else os.environ.get("PORT", "0")))


if __name__ == "__main__":
    main(Server(), sys.argv[1:])
