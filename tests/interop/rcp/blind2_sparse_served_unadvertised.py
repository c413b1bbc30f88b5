"""BLIND: `embed/sparse` is served (a correct result) although `sparseEmbed` is
not advertised; the other unadvertised methods get -32003.

Breaks §7: "Every `optional` method is callable only when the server advertised
its gating capability at `initialize` (§6); calling an un-advertised one yields
`-32003` (`CapabilityMissing`)"; §14.1(4). Expected: L0 not granted.
"""
import blind_hooks
from blind_hooks import before_session, is_request, main
from panel import Config


def serve(session, msg):
    if is_request(msg) and msg.get("method") == "embed/sparse" and session.server._initialized:
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        try:
            result = blind_hooks.sparse_handler(params, session.cfg)
        except Exception as e:  # RcpError
            return blind_hooks.error(msg["id"], getattr(e, "code", -32603), str(e)), []
        return {"jsonrpc": "2.0", "id": msg["id"], "result": result}, []
    return None


before_session(serve)
main(Config(name="blind2-sparse-served-unadvertised", conformance="L1"))
