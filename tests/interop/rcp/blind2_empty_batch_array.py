"""BLIND: an empty batch `[]` gets an array holding the -32600 error
(`[{"jsonrpc":"2.0","id":null,"error":{…}}]`) instead of a single object.

Breaks §11: "An **empty array** is an invalid request: the server **MUST** reply
with a single (non-array) `-32600` error, `id: null`." Expected: L0 not granted.
"""
from blind_hooks import after_session, main
from panel import Config


def wrap(session, msg, reply):
    if msg == [] and isinstance(reply, dict):
        return [reply]
    return reply


after_session(wrap)
main(Config(name="blind2-empty-batch-array", conformance="L1"))
