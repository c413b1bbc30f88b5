"""The panel's hand-written servers: `python3 variants.py NAME [PORT]`.

Each variant changes one behaviour of the correct server in base.py. The
expected verdict of each, with the specification sentence behind it, is in
tests/interop/EXPECTED.md.
"""

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


VARIANTS = {
    "correct": Server,
    "dual-era": DualEra,
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
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in VARIANTS:
        sys.exit("usage: variants.py {" + ",".join(VARIANTS) + "} [PORT]")
    base.serve(VARIANTS[sys.argv[1]](), sys.argv[2:])
