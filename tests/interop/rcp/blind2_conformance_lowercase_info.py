"""BLIND: `initialize` declares `_meta.conformance: "L1"`, but `info` after
`initialize` declares `"l1"`.

Breaks §14: "A server **MUST** state its level in `info`/`initialize` via
`_meta.conformance` (`"L0"`, `"L1"`, or `"L2"`)"; §4.6 "**Enums** are lower-case
strings exactly as written in this document … comparison is case-sensitive".
Expected: L0 not granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def lower(session, msg, reply):
    if is_request(msg) and msg.get("method") == "info" and session.server._initialized \
            and isinstance(reply, dict) and "result" in reply:
        reply["result"]["_meta"] = {"conformance": "l1"}
    return reply


after_session(lower)
main(Config(name="blind2-conformance-lowercase-info", conformance="L1"))
