"""BLIND: before `initialize`, a method RCP defines whose capability the server
does not advertise (`index/add`, `feedback`, `memory/recall`, `embed/sparse`, …)
gets -32003, and an undefined method -32004: the capability check runs before
the initialization check. Advertised methods (`retrieve`) get -32001.

Breaks §13: "A server **MUST** reject any request before a successful
`initialize` with `-32001`, **except** `info`, `ping`, and `shutdown`"; §14.1(3).
Expected: L0 not granted.
"""
from blind_hooks import OPEN, before_session, error, is_request, main
from panel import Config
from rcp._types import CAP_FOR_METHOD


def gate(session, msg):
    if not is_request(msg) or session.server._initialized or msg.get("method") in OPEN:
        return None
    m = msg.get("method")
    if not isinstance(m, str) or m == "notifications/cancel":
        return None
    cap = CAP_FOR_METHOD.get(m)
    if cap is None:
        return error(msg["id"], -32004, f"unknown method {m!r}"), []
    if cap.value not in session.server._caps:
        return error(msg["id"], -32003, f"capability {cap.value!r} not advertised"), []
    return None


before_session(gate)
main(Config(name="blind2-gate-unadvertised-first", conformance="L1"))
