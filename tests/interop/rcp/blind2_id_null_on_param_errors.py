"""BLIND: replies carrying -32602 (malformed params) have `id: null`; every other
reply, errors included, echoes the id.

Breaks §4.7: "Servers **MUST** echo the request `id` unchanged (same JSON type and
value) in the response. … (a `null` id denotes a response to an unparseable
request, per JSON-RPC)"; §14.1(5). Expected: L0 not granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def nullify(session, msg, reply):
    if is_request(msg) and isinstance(reply, dict) and reply.get("error", {}).get("code") == -32602:
        reply["id"] = None
    return reply


after_session(nullify)
main(Config(name="blind2-id-null-on-param-errors", conformance="L1"))
