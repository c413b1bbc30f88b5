"""BLIND: `info` after `initialize` reports `protocolVersion` as a string (`"1"`);
`initialize` and `info` before it report the integer.

Breaks §7.2 "Same shape as `initialize.result`" (schema InitializeResult
`protocolVersion` integer, minimum 1); §4.6 integers "**MUST NOT** emit them as
strings". Expected: L0 not granted (or a schema-shape finding).
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def stringify(session, msg, reply):
    if is_request(msg) and msg.get("method") == "info" and session.server._initialized \
            and isinstance(reply, dict) and "result" in reply:
        reply["result"]["protocolVersion"] = str(reply["result"]["protocolVersion"])
    return reply


after_session(stringify)
main(Config(name="blind2-shape-info-version-string", conformance="L1"))
