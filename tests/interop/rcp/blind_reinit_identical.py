"""BLIND: refuses a second `initialize` with -32600 when its params differ from
the successful one, but answers it again (same result) when they are identical,
as if it were a retransmission.

Breaks §13 (Session Lifecycle): "After a *successful* `initialize`, a second
`initialize` **MUST** be rejected with `-32600`" — whatever its params.
Expected: L0 not granted.
"""
from blind_hooks import after_session, before_session, is_request, main
from panel import Config

first = {}


def replay(session, msg):
    if is_request(msg) and msg.get("method") == "initialize" and session.server._initialized \
            and "params" in first and msg.get("params") == first["params"]:
        return {"jsonrpc": "2.0", "id": msg["id"], "result": first["result"]}, []
    return None


def remember(session, msg, reply):
    if is_request(msg) and msg.get("method") == "initialize" and isinstance(reply, dict) \
            and "result" in reply and "params" not in first:
        first["params"] = msg.get("params")
        first["result"] = reply["result"]
    return reply


before_session(replay)
after_session(remember)
main(Config(name="blind-reinit-identical", conformance="L1"))
