"""BLIND: the empty string id `""` is echoed as `null`; other strings unchanged.

Breaks §4.7: "Servers **MUST** echo the request `id` unchanged (same JSON type and
value) in the response."; §14.1(5). Expected: L0 not granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def nullify(session, msg, reply):
    if is_request(msg) and msg["id"] == "" and isinstance(reply, dict):
        reply["id"] = None
    return reply


after_session(nullify)
main(Config(name="blind2-id-empty-string-null", conformance="L1"))
