"""BLIND: a `retrieve` notification (no `id`) sent after `initialize` is
answered with its result and `id: null`; before `initialize`, and for every
other method, notifications stay unanswered.

Breaks §4.5: "A message with no `id` is a notification and **MUST NOT** be
answered."; §14.1(6). Expected: L0 not granted.
"""
from blind_hooks import before_session, main
from panel import Config


def answer(session, msg):
    if isinstance(msg, dict) and "id" not in msg and msg.get("method") == "retrieve" \
            and session.server._initialized:
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        return session.server._dispatch(None, "retrieve", params), []
    return None


before_session(answer)
main(Config(name="blind2-notif-gated-answered-after-init", conformance="L1"))
