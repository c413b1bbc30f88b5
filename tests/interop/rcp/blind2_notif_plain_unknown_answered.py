"""BLIND: a notification for an unknown method outside `notifications/*`
(`foo/bar`, `x-acme/ping`) is answered -32004 with `id: null`; unknown
`notifications/*` are ignored correctly.

Breaks §4.5: "A message with no `id` is a notification and **MUST NOT** be
answered."; §14.1(6) "Ignore any notification it does not understand".
Expected: L0 not granted.
"""
from blind_hooks import before_session, error, main
from panel import Config
from rcp._types import CAP_FOR_METHOD

KNOWN = set(CAP_FOR_METHOD) | {"initialize", "info", "ping", "shutdown"}


def answer(session, msg):
    if isinstance(msg, dict) and "id" not in msg and isinstance(msg.get("method"), str) \
            and not msg["method"].startswith("notifications/") and msg["method"] not in KNOWN:
        return error(None, -32004, f"unknown method {msg['method']!r}"), []
    return None


before_session(answer)
main(Config(name="blind2-notif-plain-unknown-answered", conformance="L1"))
