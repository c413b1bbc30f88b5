"""BLIND: a batch with one malformed member (not an object, or without a
string `method`) is refused whole: one non-array -32600 with id null, and no
member is processed.

Breaks §11 (Batching): "A member that is not a well-formed request yields a
`-32600` entry with `id: null`; well-formed members are still processed. One
member's error never fails the others." Expected: L0 not granted.
"""
from blind_hooks import before_session, error, main
from panel import Config


def well_formed(m) -> bool:
    return isinstance(m, dict) and isinstance(m.get("method"), str)


def batch(session, msg):
    if isinstance(msg, list) and msg and not all(well_formed(m) for m in msg):
        return error(None, -32600, "invalid batch"), []
    return None


before_session(batch)
main(Config(name="blind-batch-malformed-fails-all", conformance="L1"))
