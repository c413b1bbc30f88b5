"""BLIND: error replies omit the `jsonrpc` member (results carry `"2.0"`).

Breaks §4: "All RCP messages are JSON-RPC 2.0 objects. The `jsonrpc` member
**MUST** be `"2.0"`."; §14.1(5) "Return well-formed JSON-RPC 2.0 for every
request". Expected: L0 not granted.
"""
from blind_hooks import after_session, main
from panel import Config


def strip(session, msg, reply):
    if isinstance(reply, dict) and "error" in reply:
        reply.pop("jsonrpc", None)
    return reply


after_session(strip)
main(Config(name="blind2-jsonrpc-missing-on-errors", conformance="L1"))
