"""BLIND: a full L2 server advertising `graph.ops: ["local","global"]` serves the
unadvertised ops `communities` and `neighbors` (with empty results); `drift`
still gets -32005.

Breaks §7.9: "`op` **MUST** be in `graph.ops`."; §12 -32005 "a requested option
… is not in the advertised set"; §14.1(4). Expected: L0 not granted.
"""
from blind_hooks import before_session, is_request, main
from panel import Config


def serve(session, msg):
    if is_request(msg) and msg.get("method") == "graph" and session.server._initialized \
            and isinstance(msg.get("params"), dict):
        op = msg["params"].get("op")
        if op == "communities":
            return {"jsonrpc": "2.0", "id": msg["id"], "result": {"communities": []}}, []
        if op == "neighbors":
            return {"jsonrpc": "2.0", "id": msg["id"], "result": {"nodes": [], "edges": []}}, []
    return None


before_session(serve)
main(Config(name="blind2-option-graph-rare-ops", conformance="L2", graph=True))
