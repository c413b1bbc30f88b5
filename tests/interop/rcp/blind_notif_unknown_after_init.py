"""BLIND: ignores unknown `notifications/*` before `initialize`, but after a
successful `initialize` answers them with a -32004 error (id null). One moment
of the session is wrong.

Breaks §4.5 (Notifications): "peers **MUST** silently ignore any
`notifications/*` method they do not recognise (it has no `id`, so there is
nothing to answer)" — at any point of the session. Expected: L0 not granted.
"""
from blind_hooks import before_session, error, main
from panel import Config

KNOWN = ("notifications/progress", "notifications/cancel", "notifications/log")


def answer(session, msg):
    if isinstance(msg, dict) and "id" not in msg and isinstance(msg.get("method"), str) \
            and msg["method"].startswith("notifications/") and msg["method"] not in KNOWN \
            and session.server._initialized:
        return error(None, -32004, f"unknown method {msg['method']!r}"), []
    return None


before_session(answer)
main(Config(name="blind-notif-unknown-after-init", conformance="L1"))
