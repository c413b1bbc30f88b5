"""BLIND: `info` after `initialize` reports the session's set, until the session
has served a `retrieve`; from then on `info` no longer lists `citations`.

Breaks §13.2: "The capability set returned by a successful `initialize` is
**fixed for the lifetime of that session**. A server **MUST NOT** add, remove, or
narrow a capability afterwards" and "`info` … **MUST** report the same capability
set as the session's `initialize` once one has succeeded." Expected: L0 not granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def drop(session, msg, reply):
    if is_request(msg) and msg.get("method") == "retrieve" and isinstance(reply, dict) and "result" in reply:
        session.retrieved = True
    if is_request(msg) and msg.get("method") == "info" and getattr(session, "retrieved", False) \
            and isinstance(reply, dict) and "result" in reply:
        reply["result"]["capabilities"] = {k: v for k, v in reply["result"]["capabilities"].items()
                                           if k != "citations"}
    return reply


after_session(drop)
main(Config(name="blind2-info-drops-after-retrieve", conformance="L1"))
