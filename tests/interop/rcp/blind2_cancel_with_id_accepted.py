"""BLIND: `notifications/cancel` sent as a request (with an `id`) is answered
with a result `{}` instead of an error.

Breaks §7.14: "Cancellation is a **notification** (no `id`, no response)"; §4.1
"`method` **MUST** be a method name from §7" (as a request it is not a valid
Request; §12 -32600 "Not a valid Request object"). A SHOULD-level check (the body
names no code). Expected: a finding on RCP-L0-032.
"""
from blind_hooks import before_session, is_request, main
from panel import Config


def accept(session, msg):
    if is_request(msg) and msg.get("method") == "notifications/cancel":
        return {"jsonrpc": "2.0", "id": msg["id"], "result": {}}, []
    return None


before_session(accept)
main(Config(name="blind2-cancel-with-id-accepted", conformance="L1"))
