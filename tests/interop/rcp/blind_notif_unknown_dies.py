"""BLIND: the process exits on an unknown `notifications/*` message (no `id`):
its dispatcher has no entry for it and the error kills the server.

Breaks §4.5 (Notifications): "peers **MUST** silently ignore any
`notifications/*` method they do not recognise"; §14.1 rule 6: "Ignore any
notification it does not understand". Expected: L0 not granted (every later
request goes unanswered).
"""
import os

from blind_hooks import before_session, main
from panel import Config

KNOWN = ("notifications/progress", "notifications/cancel", "notifications/log")


def die(session, msg):
    if isinstance(msg, dict) and "id" not in msg and isinstance(msg.get("method"), str) \
            and msg["method"].startswith("notifications/") and msg["method"] not in KNOWN:
        os._exit(70)
    return None


before_session(die)
main(Config(name="blind-notif-unknown-dies", conformance="L1"))
