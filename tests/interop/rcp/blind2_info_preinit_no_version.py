"""BLIND: `info` before `initialize` has no `protocolVersion` (the server has
not negotiated one yet); after `initialize` the field is there.

Breaks §7.2 (`info`): "Same shape as `initialize.result`, no state change.
Callable any time." (the schema's InitializeResult requires `protocolVersion`).
Expected: L0 not granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def drop(session, msg, reply):
    if is_request(msg) and msg.get("method") == "info" and not session.server._initialized \
            and isinstance(reply, dict) and "result" in reply:
        reply["result"].pop("protocolVersion", None)
    return reply


after_session(drop)
main(Config(name="blind2-info-preinit-no-version", conformance="L1"))
