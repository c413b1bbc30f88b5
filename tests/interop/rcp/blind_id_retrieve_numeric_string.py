"""BLIND: on `retrieve` only, a string id made of digits ("7") is echoed as a
number (7). Every other id, and every id on other methods, is echoed unchanged.

Breaks §4.7 (Identifiers): "Servers **MUST** echo the request `id` unchanged
(same JSON type and value) in the response."; §14.1 rule 5: "echo the request
`id` unchanged (same type and value)". Expected: L0 not granted.
"""
import re

from blind_hooks import after_session, is_request, main
from panel import Config


def renumber(session, msg, reply):
    if is_request(msg) and msg.get("method") == "retrieve" and isinstance(msg["id"], str) \
            and re.fullmatch(r"-?[0-9]{1,15}", msg["id"]) and isinstance(reply, dict):
        reply["id"] = int(msg["id"])
    return reply


after_session(renumber)
main(Config(name="blind-id-retrieve-numeric-string", conformance="L1"))
