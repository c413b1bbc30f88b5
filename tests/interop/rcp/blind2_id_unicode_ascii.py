"""BLIND: a string id with characters outside ASCII is echoed with them
replaced by `?` (`"réq-✓"` → `"r?q-?"`); ASCII ids are echoed unchanged.

Breaks §4.7: "Servers **MUST** echo the request `id` unchanged (same JSON type and
value) in the response."; §4.6 "Strings are UTF-8"; §14.1(5). Expected: L0 not
granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def ascii_only(session, msg, reply):
    if is_request(msg) and isinstance(msg["id"], str) and isinstance(reply, dict):
        reply["id"] = msg["id"].encode("ascii", "replace").decode("ascii")
    return reply


after_session(ascii_only)
main(Config(name="blind2-id-unicode-ascii", conformance="L1"))
