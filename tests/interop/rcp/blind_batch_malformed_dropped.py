"""BLIND: in a batch, a member that is not a well-formed request (not an
object, or an object without a string `method`) gets no entry at all; the
well-formed members are answered as usual.

Breaks §11 (Batching): "A member that is not a well-formed request yields a
`-32600` entry with `id: null`; well-formed members are still processed."
Expected: L0 not granted (well-formed JSON-RPC, §14.1 rule 5).
"""
from blind_hooks import before_session, main
from panel import Config


def well_formed(m) -> bool:
    return isinstance(m, dict) and isinstance(m.get("method"), str)


def batch(session, msg):
    if isinstance(msg, list) and msg:
        out = [r for r in (session.handle(m)[0] for m in msg if well_formed(m)) if r is not None]
        return (out or None), []
    return None


before_session(batch)
main(Config(name="blind-batch-malformed-dropped", conformance="L1"))
