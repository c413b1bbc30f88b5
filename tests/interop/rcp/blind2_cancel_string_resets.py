"""BLIND: `notifications/cancel` whose `params.id` is a string the server is not
working on resets the session to uninitialized (the server "cancels the
session"); a numeric unknown id is a no-op, as it should be. Nothing is answered.

Breaks §7.14: "Cancelling an unknown or already-answered `id` is a no-op the
server **MUST** ignore."; §14.1(6). Expected: L0 not granted.
"""
from blind_hooks import before_session, main
from panel import Config


def reset(session, msg):
    if isinstance(msg, dict) and "id" not in msg and msg.get("method") == "notifications/cancel":
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if isinstance(params.get("id"), str):
            session.server._initialized = False
        return None, []
    return None


before_session(reset)
main(Config(name="blind2-cancel-string-resets", conformance="L1"))
