"""BLIND: a `ping` notification (no `id`) is answered `{"id": null, "result":
{}}`, as if it were a request; `info` and every other notification stay silent.

Breaks §4.5: "A message with no `id` is a notification and **MUST NOT** be
answered."; §14.1(6). Expected: L0 not granted.
"""
from blind_hooks import before_session, main
from panel import Config


def answer(session, msg):
    if isinstance(msg, dict) and "id" not in msg and msg.get("method") == "ping":
        return {"jsonrpc": "2.0", "id": None, "result": {}}, []
    return None


before_session(answer)
main(Config(name="blind2-notif-ping-answered", conformance="L1"))
