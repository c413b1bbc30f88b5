"""BLIND: a full L2 server whose `rerank`, `embed` and `graph` reject, with
-32602, a params key their section does not list. `retrieve`, `initialize`,
`info` and `ping` ignore unknown fields as they should.

Breaks §4.6 (Data types): "**Unknown fields** in any object **MUST** be ignored
by the receiver, never rejected (forward compatibility)."; §14.1 rule 7.
Expected: L0 not granted.
"""
from blind_hooks import before_session, error, is_request, main
from panel import Config

KNOWN = {"rerank": {"query", "passages", "method", "model", "topN", "_meta"},
         "embed": {"inputs", "texts", "kind", "encoding", "modality", "_meta"},
         "graph": {"op", "query", "k", "seedIds", "hops", "level", "sessionId", "_meta"}}


def strict_keys(session, msg):
    if is_request(msg) and msg.get("method") in KNOWN and session.server._initialized \
            and isinstance(msg.get("params"), dict):
        for key in msg["params"]:
            if key not in KNOWN[msg["method"]]:
                return error(msg["id"], -32602, f"unknown field {key!r}", {"field": key}), []
    return None


before_session(strict_keys)
main(Config(name="blind-unknown-field-l2", rerank=True, embed=True, graph=True))
