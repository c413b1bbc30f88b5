"""BLIND: `ping` and `info` refuse with -32602 a `_meta` holding a key other than
`progressToken` and `logLevel`; gated methods ignore unknown `_meta` keys.

Breaks §4.4: "Peers **MUST** ignore `_meta` keys they do not understand.";
§14.1(7). Expected: L0 not granted.
"""
from blind_hooks import before_session, error, is_request, main
from panel import Config


def refuse(session, msg):
    if is_request(msg) and msg.get("method") in ("ping", "info") and isinstance(msg.get("params"), dict):
        meta = msg["params"].get("_meta")
        if isinstance(meta, dict) and set(meta) - {"progressToken", "logLevel"}:
            return error(msg["id"], -32602, "unknown _meta key", {"field": "_meta"}), []
    return None


before_session(refuse)
main(Config(name="blind2-unknown-meta-open-methods", conformance="L1"))
