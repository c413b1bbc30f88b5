"""BLIND: -32003 replies carry both `error` and `"result": {}`.

Breaks §4.2/§4.3 (a response is either `result` or `error`, per JSON-RPC 2.0;
schema JsonRpcError `"not": {"required": ["result"]}`); §14.1(5) "Return
well-formed JSON-RPC 2.0 for every request". Expected: L0 not granted.
"""
from blind_hooks import after_session, main
from panel import Config


def both(session, msg, reply):
    if isinstance(reply, dict) and reply.get("error", {}).get("code") == -32003:
        reply["result"] = {}
    return reply


after_session(both)
main(Config(name="blind2-error-with-result-capmissing", conformance="L1"))
