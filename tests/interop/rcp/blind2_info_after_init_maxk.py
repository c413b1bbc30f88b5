"""BLIND: after `initialize`, `info` reports `retrieve.maxK: 100` where the
`initialize` result said 50 (a nested value changed; same keys).

Breaks §13.2: "`info` **MAY** be called at any time and **MUST** report the same
capability set as the session's `initialize` once one has succeeded." and "A
server **MUST NOT** add, remove, or narrow a capability afterwards".
Expected: L0 not granted.
"""
import copy

from blind_hooks import after_session, is_request, main
from panel import Config


def change(session, msg, reply):
    if is_request(msg) and msg.get("method") == "info" and session.server._initialized \
            and isinstance(reply, dict) and "result" in reply:
        reply["result"]["capabilities"] = copy.deepcopy(reply["result"]["capabilities"])
        reply["result"]["capabilities"]["retrieve"]["maxK"] = 100
    return reply


after_session(change)
main(Config(name="blind2-info-after-init-maxk", conformance="L1"))
