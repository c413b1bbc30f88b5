"""BLIND: `retrieve` is advertised as `null` (with `filter` and `citations`
present) while the method is still served; no other retrieval capability.

Breaks §14.1(2): "Advertise at least one retrieval capability (`embed`,
`rerank`, `retrieve`, or `graph`)" with §6 "A capability object's *presence*
means the method/feature is offered; its *value* carries metadata (which **MAY**
be `{}`)" and "Each capability's value is an object". Expected: L0 not granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def nullify(session, msg, reply):
    if is_request(msg) and msg.get("method") in ("initialize", "info") and isinstance(reply, dict) \
            and "result" in reply:
        reply["result"]["capabilities"]["retrieve"] = None
    return reply


after_session(nullify)
main(Config(name="blind2-caps-retrieve-null", conformance="L1"))
