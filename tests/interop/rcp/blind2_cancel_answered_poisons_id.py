"""BLIND: `notifications/cancel` for an id that was already answered is
remembered: the next request that reuses that id (as §4.7 allows once answered)
gets -32006 Cancelled instead of being served.

Breaks §7.14: "Cancelling an unknown or already-answered `id` is a no-op the
server **MUST** ignore."; §4.7 "A client **MAY** reuse an `id` value only after it
has received the response bearing that `id`."; §14.1(6). Expected: L0 not granted.
"""
from blind_hooks import before_session, error, is_request, main
from panel import Config

cancelled = set()


def poison(session, msg):
    if isinstance(msg, dict) and "id" not in msg and msg.get("method") == "notifications/cancel":
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        if isinstance(params.get("id"), (str, int)):
            cancelled.add(repr(params["id"]))
        return None, []
    if is_request(msg) and repr(msg["id"]) in cancelled:
        cancelled.discard(repr(msg["id"]))
        return error(msg["id"], -32006, "cancelled"), []
    return None


before_session(poison)
main(Config(name="blind2-cancel-answered-poisons-id", conformance="L1"))
