"""BLIND: numeric ids above 2^31 − 1 are echoed as strings ("4294967296");
smaller numbers are echoed unchanged.

Breaks §4.7: "Servers **MUST** echo the request `id` unchanged (same JSON type and
value) in the response."; §4.6 integers "**MUST** fit in a signed 53-bit range"
and "**MUST NOT** emit them as strings"; §14.1(5). Expected: L0 not granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def stringify(session, msg, reply):
    if is_request(msg) and isinstance(msg["id"], int) and not isinstance(msg["id"], bool) \
            and abs(msg["id"]) > 2**31 - 1 and isinstance(reply, dict):
        reply["id"] = str(msg["id"])
    return reply


after_session(stringify)
main(Config(name="blind2-id-large-as-string", conformance="L1"))
