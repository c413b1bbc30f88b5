"""BLIND: answers an unknown `notifications/*` message (no `id`) with a -32004
error whose id is null, instead of ignoring it. The three notifications RCP/1
defines, and no-id frames for other methods, are still silently dropped.

Breaks §4.5 (Notifications): "peers **MUST** silently ignore any
`notifications/*` method they do not recognise (it has no `id`, so there is
nothing to answer)"; §14.1 rule 6: "Ignore any notification it does not
understand". Expected: L0 not granted.
"""
from blind_hooks import before_session, error, main
from panel import Config

KNOWN = ("notifications/progress", "notifications/cancel", "notifications/log")


def answer(session, msg):
    if isinstance(msg, dict) and "id" not in msg and isinstance(msg.get("method"), str) \
            and msg["method"].startswith("notifications/") and msg["method"] not in KNOWN:
        return error(None, -32004, f"unknown method {msg['method']!r}"), []
    return None


before_session(answer)
main(Config(name="blind-notif-unknown-answered", conformance="L1"))
