"""BLIND: a negative numeric id is echoed as its absolute value (`-7` → `7`).

Breaks §4.7: "Servers **MUST** echo the request `id` unchanged (same JSON type and
value) in the response."; §14.1(5). Expected: L0 not granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def absolute(session, msg, reply):
    if is_request(msg) and isinstance(msg["id"], (int, float)) and not isinstance(msg["id"], bool) \
            and msg["id"] < 0 and isinstance(reply, dict):
        reply["id"] = abs(msg["id"])
    return reply


after_session(absolute)
main(Config(name="blind2-id-negative-abs", conformance="L1"))
