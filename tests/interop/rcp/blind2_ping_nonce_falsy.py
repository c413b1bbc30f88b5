"""BLIND: `ping` drops a nonce that is falsy (`0`, `""`): `if params.get("nonce")`.
Every other nonce is echoed.

Breaks §7.15 (`ping`): "The server **MUST** echo any `nonce` it received.";
§14.1(1). Expected: L0 not granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def drop(session, msg, reply):
    if is_request(msg) and msg.get("method") == "ping" and isinstance(reply, dict) \
            and "result" in reply and not reply["result"].get("nonce", True):
        reply["result"] = {}
    return reply


after_session(drop)
main(Config(name="blind2-ping-nonce-falsy", conformance="L1"))
