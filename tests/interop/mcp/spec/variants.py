"""The panel's hand-written servers: `python3 variants.py NAME [PORT]`.

Each variant changes one behaviour of the correct server in base.py. The
expected verdict of each, with the specification sentence behind it, is in
tests/interop/EXPECTED.md.
"""

import json
import sys

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
