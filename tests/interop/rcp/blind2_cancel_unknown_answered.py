"""BLIND: `notifications/cancel` for an id the server is not working on is
answered with -32015 (NotFound) and `id: null`.

Breaks §7.14: "Cancelling an unknown or already-answered `id` is a no-op the
server **MUST** ignore."; §4.5 "**MUST NOT** be answered"; §14.1(6). Expected: L0
not granted.
"""
from blind_hooks import before_session, error, main
from panel import Config


def answer(session, msg):
    if isinstance(msg, dict) and "id" not in msg and msg.get("method") == "notifications/cancel":
        return error(None, -32015, "no such in-flight request"), []
    return None


before_session(answer)
main(Config(name="blind2-cancel-unknown-answered", conformance="L1"))
