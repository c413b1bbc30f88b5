"""BLIND: `_meta.conformance` ("L1") is in the `initialize` result but `info`
(before and after `initialize`) carries no `_meta`.

Breaks §14: "A server **MUST** state its level in `info`/`initialize` via
`_meta.conformance` (`"L0"`, `"L1"`, or `"L2"`)". Expected: L0 not granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def drop(session, msg, reply):
    if is_request(msg) and msg.get("method") == "info" and isinstance(reply, dict) and "result" in reply:
        reply["result"].pop("_meta", None)
    return reply


after_session(drop)
main(Config(name="blind2-conformance-info-missing", conformance="L1"))
