"""BLIND: `info` before `initialize` reports only `retrieve` (its `filter`,
`citations` and other keys are left out); after `initialize` it reports the full
set. Everything else is the control server.

Breaks §13.2 (Capability stability): "Before any successful `initialize`, `info`
reports the server's default (maximum) capability set." Expected: L0 not granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def narrow(session, msg, reply):
    if is_request(msg) and msg.get("method") == "info" and not session.server._initialized \
            and isinstance(reply, dict) and "result" in reply:
        caps = reply["result"]["capabilities"]
        reply["result"]["capabilities"] = {"retrieve": caps["retrieve"]}
    return reply


after_session(narrow)
main(Config(name="blind2-info-preinit-narrow", conformance="L1"))
