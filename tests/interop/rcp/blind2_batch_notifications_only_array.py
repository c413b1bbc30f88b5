"""BLIND: a batch made only of notifications gets an empty array `[]` back
(over HTTP a 200 with body `[]`); batches with requests are correct.

Breaks §11: "If the batch contains **only notifications**, the server processes
them and returns **nothing** (no HTTP body / no stdio line)." Expected: L0 not
granted.
"""
from blind_hooks import before_session, main
from panel import Config
import panel

base = panel.Session.handle


def wrap(session, msg):
    if isinstance(msg, list) and msg and all(isinstance(m, dict) and "id" not in m for m in msg):
        base(session, msg)
        return [], []
    return None


before_session(wrap)
main(Config(name="blind2-batch-notifications-only-array", conformance="L1"))
