"""BLIND: a batch holding exactly one request gets that reply as a bare object,
not an array of one.

Breaks §11: "the server **MUST** reply with an array containing one response
object per *request* in the batch". Expected: L0 not granted.
"""
from blind_hooks import after_session, main
from panel import Config


def unwrap(session, msg, reply):
    if isinstance(msg, list) and isinstance(reply, list) and len(reply) == 1:
        return reply[0]
    return reply


after_session(unwrap)
main(Config(name="blind2-batch-single-unwrapped", conformance="L1"))
