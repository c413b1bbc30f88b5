"""BLIND: `shutdown` answers `"result": null` instead of `{}` (after
`initialize` only; before it, `{}`).

Breaks §7.12: "**Params** `{}` · **Result** `{}`."; §4.2/§14.1(5) well-formed
replies. Expected: L0 not granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def null(session, msg, reply):
    if is_request(msg) and msg.get("method") == "shutdown" and session.server._initialized \
            and isinstance(reply, dict) and "result" in reply:
        reply["result"] = None
    return reply


after_session(null)
main(Config(name="blind2-shutdown-result-null", conformance="L1"))
