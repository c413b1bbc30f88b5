"""BLIND: answers every `initialize` after a successful one, re-negotiating the
session, instead of refusing it.

Breaks §13 (Session Lifecycle): "After a *successful* `initialize`, a second
`initialize` **MUST** be rejected with `-32600` — re-negotiating mid-session
would silently invalidate every capability the client has already cached."
Gated calls before the first `initialize` still get -32001, so the server is
not stateless (§5.2). Expected: L0 not granted.
"""
from blind_hooks import before_session, is_request, main
from panel import Config


def reinit(session, msg):
    if is_request(msg) and msg.get("method") == "initialize":
        session.server._initialized = False  # forget the handshake: renegotiate
    return None


before_session(reinit)
main(Config(name="blind-reinit-any", conformance="L1"))
