"""BLIND: a fractional numeric id (`2.5`) is echoed truncated (`2`).

Breaks §4.7: "Servers **MUST** echo the request `id` unchanged (same JSON type and
value) in the response."; §4.1 "`id` **MUST** be a string or number"; §14.1(5).
Expected: L0 not granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def truncate(session, msg, reply):
    if is_request(msg) and isinstance(msg["id"], float) and isinstance(reply, dict):
        reply["id"] = int(msg["id"])
    return reply


after_session(truncate)
main(Config(name="blind2-id-fraction-truncated", conformance="L1"))
