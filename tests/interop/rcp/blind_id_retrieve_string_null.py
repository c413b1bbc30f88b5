"""BLIND: on `retrieve` only, a string id is lost: the reply carries `id: null`.
Numeric ids, and string ids on every other method, are echoed unchanged.

Breaks §4.7 (Identifiers): "Servers **MUST** echo the request `id` unchanged
(same JSON type and value) in the response."; §14.1 rule 5. Expected: L0 not
granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def lose(session, msg, reply):
    if is_request(msg) and msg.get("method") == "retrieve" and isinstance(msg["id"], str) \
            and isinstance(reply, dict):
        reply["id"] = None
    return reply


after_session(lose)
main(Config(name="blind-id-retrieve-string-null", conformance="L1"))
