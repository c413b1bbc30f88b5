"""BLIND: a second `initialize` right after the first is refused with -32600,
but once the session has served any other gated request (a `retrieve`), a
further `initialize` is accepted again and re-negotiates.

Breaks §13: "After a *successful* `initialize`, a second `initialize` **MUST** be
rejected with `-32600`". Expected: L0 not granted.
"""
from blind_hooks import before_session, is_request, main
from panel import Config


def reopen(session, msg):
    if is_request(msg) and msg.get("method") == "initialize" and getattr(session, "worked", False):
        session.server._initialized = False
        session.worked = False
    elif is_request(msg) and msg.get("method") not in ("initialize", "info", "ping", "shutdown") \
            and session.server._initialized:
        session.worked = True
    return None


before_session(reopen)
main(Config(name="blind2-reinit-after-requests", conformance="L1"))
