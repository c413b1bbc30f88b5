"""BLIND: -32001 errors have no `message` (only `code`).

Breaks §12: "Every failure is a JSON-RPC error object: `{ "code": int, "message":
string, "data"?: any }`"; §14.1(5). Expected: L0 not granted.
"""
from blind_hooks import after_session, main
from panel import Config


def strip(session, msg, reply):
    if isinstance(reply, dict) and reply.get("error", {}).get("code") == -32001:
        reply["error"].pop("message", None)
    return reply


after_session(strip)
main(Config(name="blind2-error-message-missing-notinit", conformance="L1"))
