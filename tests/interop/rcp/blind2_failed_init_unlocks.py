"""BLIND: an `initialize` refused with -32002 still unlocks the gated methods
(`retrieve` is served afterwards); a later `initialize` is still accepted once.

Breaks §13: "an `initialize` that fails version negotiation (`-32002`) leaves the
session **uninitialized**, and the server **MUST** continue to reject gated
methods with `-32001`." Expected: L0 not granted.
"""
from blind_hooks import OPEN, after_session, before_session, is_request, main
from panel import Config


def note_failure(session, msg, reply):
    if is_request(msg) and msg.get("method") == "initialize" and isinstance(reply, dict) \
            and reply.get("error", {}).get("code") == -32002:
        session.failed_once = True
    return reply


def serve_anyway(session, msg):
    if getattr(session, "failed_once", False) and is_request(msg) \
            and msg.get("method") not in OPEN and not session.server._initialized:
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        return session.server._dispatch(msg["id"], msg.get("method"), params), []
    return None


after_session(note_failure)
before_session(serve_anyway)
main(Config(name="blind2-failed-init-unlocks", conformance="L1"))
