"""BLIND: gates requests before `initialize` with -32001 when they come alone,
but serves gated methods (`retrieve`, …) that arrive inside a batch before
`initialize`.

Breaks §11 (Batching): "Batching composes with capability gating and
cancellation exactly as for singleton requests."; §13: "A server **MUST**
reject any request before a successful `initialize` with `-32001`, **except**
`info`, `ping`, and `shutdown`". Expected: L0 not granted.
"""
from blind_hooks import OPEN, before_session, is_request, main
from panel import Config


def batch(session, msg):
    if isinstance(msg, list) and msg and not session.server._initialized:
        out = []
        for m in msg:
            if is_request(m) and isinstance(m.get("method"), str) and m["method"] not in OPEN:
                params = m.get("params") if isinstance(m.get("params"), dict) else {}
                out.append(session.server._dispatch(m["id"], m["method"], params))
            else:
                reply = session.handle(m)[0]
                if reply is not None:
                    out.append(reply)
        return (out or None), []
    return None


before_session(batch)
main(Config(name="blind-batch-ungated", conformance="L1"))
