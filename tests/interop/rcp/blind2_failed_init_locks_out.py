"""BLIND: after an `initialize` refused with -32002, gated calls still get -32001
(correct), but a repeated `initialize` is refused with -32600 as if the session
were already initialized, so the client can never complete a handshake.

Breaks §13: "A client **MAY** retry `initialize` with a different
`protocolVersion`; a server **MUST** accept a repeated `initialize` before any
successful one." Expected: L0 not granted.
"""
from blind_hooks import before_session, error, is_request, main
from panel import Config


def lock(session, msg):
    if is_request(msg) and msg.get("method") == "initialize":
        if getattr(session, "tried", False) and not session.server._initialized:
            return error(msg["id"], -32600, "initialize was already attempted"), []
        session.tried = True
    return None


before_session(lock)
main(Config(name="blind2-failed-init-locks-out", conformance="L1"))
