"""BLIND: -32005 errors carry their code as a string (`"code": "-32005"`); every
other error code is an integer.

Breaks §12: "Every failure is a JSON-RPC error object: `{ "code": int, "message":
string, "data"?: any }`"; §14.1(5). Expected: L0 not granted.
"""
from blind_hooks import after_session, main
from panel import Config


def stringify(session, msg, reply):
    if isinstance(reply, dict) and reply.get("error", {}).get("code") == -32005:
        reply["error"]["code"] = "-32005"
    return reply


after_session(stringify)
main(Config(name="blind2-error-code-string-option", conformance="L1"))
