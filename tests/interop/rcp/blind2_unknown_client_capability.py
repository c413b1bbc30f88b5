"""BLIND: `initialize` refuses with -32602 a client `capabilities` object holding
a key other than `streaming` and `log` (e.g. `x-acme`, `sampling`).

Breaks §7.1: "Unknown client capability keys are ignored (§6.2)."; §14.1(7)
"Tolerate unknown object fields, unknown capability keys, and `_meta`".
Expected: L0 not granted.
"""
from blind_hooks import before_session, error, is_request, main
from panel import Config


def refuse(session, msg):
    if is_request(msg) and msg.get("method") == "initialize" and isinstance(msg.get("params"), dict):
        caps = msg["params"].get("capabilities")
        if isinstance(caps, dict) and set(caps) - {"streaming", "log"}:
            return error(msg["id"], -32602, "unknown client capability", {"field": "capabilities"}), []
    return None


before_session(refuse)
main(Config(name="blind2-unknown-client-capability", conformance="L1"))
