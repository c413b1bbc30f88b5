"""A small MCP 2026-07-28 server over Streamable HTTP, written from the
specification text alone (Python standard library only).

`Server` is a correct, modern-only server. The variants in `variants.py`
change one behaviour each, to be either a correct server that a checker
might misjudge, or a broken one that a checker must catch.

Sections cited below are those of the 2026-07-28 specification:
HTTP = basic/transports/streamable-http, BASIC = basic/index.
"""

import base64
import json
import os
import re
import socket
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODERN = "2026-07-28"
PATH = "/mcp"
SERVER_INFO = {"name": "protocheck-interop-spec", "version": "1.0.0"}

# HTTP "Standard Request Headers": Mcp-Name comes from params.name or params.uri.
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
# CACHE: "Servers MUST include caching hints on results with resultType
# "complete"" of these methods (server/discover extends CacheableResult).
CACHEABLE = {
    "server/discover",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
}

TOOLS = [
    {
        "name": "echo",
        "description": "Returns its text argument.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "weather",
        "description": "A fixed forecast for a region.",
        "inputSchema": {
            "type": "object",
            # HTTP "Schema Extension": the value travels as Mcp-Param-Region.
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True},
    },
]
RESOURCES = [
    {"uri": "memo://greeting", "name": "greeting", "mimeType": "text/plain"},
]
PROMPTS = [
    {
        "name": "greet",
        "description": "Asks for a greeting.",
        "arguments": [{"name": "who", "required": False}],
    },
]


class Refusal(Exception):
    """A JSON-RPC error answered with an HTTP status."""

    def __init__(self, status, code, message, data=None):
        super().__init__(message)
        self.status, self.code, self.message, self.data = status, code, message, data


def mismatch(message):
    # HTTP "Server Validation": "servers MUST return HTTP status 400 Bad
    # Request and MUST include a JSON-RPC error response" with -32020.
    return Refusal(400, -32020, "Header mismatch: " + message)


def decode_sentinel(value):
    """HTTP "Value Encoding": `=?base64?…?=` is Base64 of the UTF-8 bytes."""
    if value.startswith("=?base64?") and value.endswith("?=") and len(value) >= 11:
        inner = value[len("=?base64?") : -2]
        try:
            return base64.b64decode(inner, validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            raise mismatch("undecodable Base64 sentinel") from None
    return value


SAFE_VALUE = re.compile(r"^[\x20-\x7e\t]*$")


class Handler(BaseHTTPRequestHandler):
    """One instance per TCP connection (HTTP/1.1 keep-alive)."""

    protocol_version = "HTTP/1.1"
    server_version = "interop-spec/1"
    srv = None  # the Server, set by serve()

    def log_message(self, *args):
        pass

    # Header access goes through one place so a variant can change it.
    def header(self, name):
        return self.srv.header(self, name)

    def do_GET(self):
        self.srv.other_method(self)

    def do_DELETE(self):
        self.srv.other_method(self)

    def do_POST(self):
        self.srv.post(self)

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


class Server:
    """A correct modern-only server; hooks below are what variants change."""

    supported = [MODERN]
    ttl = 30000
    json_type = "application/json"

    # --- hooks -------------------------------------------------------------

    def header(self, handler, name):
        # HTTP "Case Sensitivity": "Clients and servers MUST use
        # case-insensitive comparisons for header names." (http.server's
        # message object compares names case-insensitively.)
        return handler.headers.get(name)

    def origin_ok(self, origin):
        return bool(re.match(r"^http://(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$", origin))

    def refuse_origin(self, handler):
        # HTTP "Security & Endpoint": "If the Origin header is present and
        # invalid, servers MUST respond with HTTP 403 Forbidden. The HTTP
        # response body MAY comprise a JSON-RPC error response that has no id."
        body = {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Origin not allowed"}}
        handler.send(403, json.dumps(body).encode(), "application/json")

    def missing_version(self, handler, msg):
        # HTTP "Protocol Version Header": "A server that does not support such
        # clients MUST reject a request without the header per Server Validation."
        # VERSION: a modern-only server "SHOULD name the protocol versions it
        # supports in any error it returns to an initialize request": a legacy
        # client's initialize lacks this header, so every such error names them.
        refusal = mismatch("MCP-Protocol-Version header is missing; this server speaks MCP " + ", ".join(self.supported))
        refusal.data = {"supported": list(self.supported)}
        raise refusal

    def method_header_required(self, method):
        # HTTP "Standard Request Headers": Mcp-Method is required for "All requests".
        return True

    def name_header_checked(self, method):
        # HTTP "Standard Request Headers": Mcp-Name is required for
        # "`tools/call`, `resources/read`, `prompts/get` requests".
        return True

    def unsupported_data(self, requested):
        return {"supported": list(self.supported), "requested": requested}

    def before(self, handler, method):
        """Called for every valid request before dispatch (per-connection hooks)."""

    def tools(self, handler):
        return TOOLS

    def result_type(self, method):
        return self.json_type

    # --- the protocol --------------------------------------------------------

    def other_method(self, handler):
        # HTTP "Earlier Streamable HTTP revisions": GET and DELETE are not
        # part of this revision; 405 says so.
        handler.send(405, b"", None, [("Allow", "POST")])

    def post(self, handler):
        origin = self.header(handler, "Origin")
        if origin is not None and not self.origin_ok(origin):
            length = int(handler.headers.get("Content-Length") or 0)
            handler.rfile.read(min(length, 1 << 20))
            return self.refuse_origin(handler)
        length = int(handler.headers.get("Content-Length") or 0)
        if length > 1 << 20:
            handler.close_connection = True
            return handler.send(413)
        raw = handler.rfile.read(length)
        try:
            msg = json.loads(raw)
        except ValueError:
            return self.reply(handler, 400, None, error=(-32700, "Parse error", None))
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or "method" not in msg:
            return self.reply(handler, 400, None, error=(-32600, "Invalid request", None))
        if "id" not in msg:
            # HTTP "Sending Messages": an accepted notification gets 202 with
            # no body; header rules for notification POSTs are not defined.
            return handler.send(202)
        rid = msg.get("id")
        try:
            status, result = self.handle(handler, msg)
        except Refusal as r:
            return self.reply(handler, r.status, rid, error=(r.code, r.message, r.data))
        self.reply(handler, status, rid, result=result, method=msg["method"])

    def reply(self, handler, status, rid, result=None, error=None, method=None):
        doc = {"jsonrpc": "2.0"}
        if rid is not None or error is None:
            doc["id"] = rid
        if error is not None:
            code, message, data = error
            doc["error"] = {"code": code, "message": message}
            if data is not None:
                doc["error"]["data"] = data
        else:
            doc["result"] = result
        self.send_message(handler, status, doc, method)

    def send_message(self, handler, status, doc, method):
        """Sends the JSON-RPC answer `doc` as a single JSON object."""
        handler.send(status, json.dumps(doc).encode(), self.result_type(method))

    def check_headers(self, handler, msg):
        method = msg["method"]
        params = msg.get("params")
        if not isinstance(params, dict):
            params = {}
        hv = self.header(handler, "MCP-Protocol-Version")
        if hv is None:
            self.missing_version(handler, msg)
        hm = self.header(handler, "Mcp-Method")
        if hm is None:
            if self.method_header_required(method):
                raise mismatch("Mcp-Method header is missing")
        elif hm != method:
            # Header values are case-sensitive (HTTP "Case Sensitivity").
            raise mismatch(f"Mcp-Method header does not match body method {method!r}")
        if method in NAMED and self.name_header_checked(method):
            source = params.get(NAMED[method])
            hn = self.header(handler, "Mcp-Name")
            if hn is None:
                raise mismatch("Mcp-Name header is missing")
            if not SAFE_VALUE.match(hn) or decode_sentinel(hn) != source:
                raise mismatch("Mcp-Name header does not match the body")
        if method == "tools/call":
            self.check_params(handler, params)
        return hv

    def decode_param(self, value):
        # HTTP "Value Encoding": servers MUST decode before comparing.
        return decode_sentinel(value)

    def check_params(self, handler, params):
        tool = next((t for t in self.tools(handler) if t["name"] == params.get("name")), None)
        if tool is None:
            return
        args = params.get("arguments") or {}
        for prop, schema in tool["inputSchema"].get("properties", {}).items():
            name = schema.get("x-mcp-header")
            if name is None:
                continue
            value = args.get(prop)
            hv = self.header(handler, "Mcp-Param-" + name)
            if value is None:
                continue  # "Server MUST NOT expect the header"
            if hv is None:
                raise mismatch(f"Mcp-Param-{name} header is missing")
            # "Servers MUST reject requests with a recognized Mcp-Param-{Name}
            # header that contains invalid characters."
            if not SAFE_VALUE.match(hv):
                raise mismatch(f"Mcp-Param-{name} header has invalid characters")
            decoded = self.decode_param(hv)
            if isinstance(value, bool):
                same = decoded == ("true" if value else "false")
            elif isinstance(value, int):
                try:
                    same = float(decoded) == value
                except ValueError:
                    same = False
            else:
                same = decoded == value
            if not same:
                raise mismatch(f"Mcp-Param-{name} header does not match the body")

    def handle(self, handler, msg):
        method = msg["method"]
        hv = self.check_headers(handler, msg)
        params = msg.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        # BASIC "_meta": a request missing a required key is malformed:
        # -32602 and, on HTTP, 400.
        if (
            not isinstance(meta, dict)
            or "io.modelcontextprotocol/protocolVersion" not in meta
            or "io.modelcontextprotocol/clientCapabilities" not in meta
        ):
            raise Refusal(400, -32602, "Invalid params: _meta must carry protocolVersion and clientCapabilities")
        version = meta["io.modelcontextprotocol/protocolVersion"]
        if hv != version:
            raise mismatch("MCP-Protocol-Version header does not match _meta protocolVersion")
        if version not in self.supported:
            # VERSION: "it MUST respond with an UnsupportedProtocolVersionError
            # listing the versions it does support"; HTTP: 400 Bad Request.
            raise Refusal(400, -32022, "Unsupported protocol version", self.unsupported_data(version))
        self.before(handler, method)
        return self.dispatch(handler, method, params)

    def complete(self, method, body):
        body = dict(body)
        body["resultType"] = "complete"
        body["_meta"] = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
        if method in CACHEABLE:
            body["ttlMs"] = self.ttl
            body["cacheScope"] = "public"
        return body

    def dispatch(self, handler, method, params):
        if method == "server/discover":
            return 200, self.complete(
                method,
                {
                    "supportedVersions": list(self.supported),
                    "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
                },
            )
        if method == "tools/list":
            return 200, self.complete(method, {"tools": self.tools(handler)})
        if method == "tools/call":
            name = params.get("name")
            args = params.get("arguments") or {}
            if name == "echo":
                text = str(args.get("text", ""))
            elif name == "weather":
                text = f"sunny in {args.get('region', 'nowhere')}"
            else:
                raise Refusal(400, -32602, "Unknown tool")
            return 200, self.complete(method, {"content": [{"type": "text", "text": text}]})
        if method == "resources/list":
            return 200, self.complete(method, {"resources": RESOURCES})
        if method == "resources/templates/list":
            return 200, self.complete(method, {"resourceTemplates": []})
        if method == "resources/read":
            uri = params.get("uri")
            if uri != "memo://greeting":
                # RESOURCES "Error Handling": resource not found is -32602.
                raise Refusal(400, -32602, "Resource not found", {"uri": str(uri)[:200]})
            return 200, self.complete(
                method,
                {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "hello"}]},
            )
        if method == "prompts/list":
            return 200, self.complete(method, {"prompts": PROMPTS})
        if method == "prompts/get":
            if params.get("name") != "greet":
                raise Refusal(400, -32602, "Unknown prompt")
            who = str((params.get("arguments") or {}).get("who", "world"))
            message = {"role": "user", "content": {"type": "text", "text": f"Say hello to {who}"}}
            return 200, self.complete(method, {"messages": [message]})
        # HTTP "Protocol Version Header": "If the server does not implement the
        # requested RPC method, it MUST respond with 404 Not Found and a
        # JSON-RPC error with code -32601". VERSION: a modern-only server
        # "SHOULD name the protocol versions it supports in any error it
        # returns to an initialize request".
        message = "Method not found"
        if method == "initialize":
            message += "; this server speaks MCP " + ", ".join(self.supported)
        raise Refusal(404, -32601, message, {"supported": list(self.supported)} if method == "initialize" else None)


def serve(server, argv):
    """Binds 127.0.0.1 on the port in argv or $PORT (0 = any), prints `PORT n`, serves."""
    port = int(argv[0] if argv else os.environ.get("PORT", "0"))
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
        sys.stdout.flush()
