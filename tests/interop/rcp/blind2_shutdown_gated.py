"""BLIND: `shutdown` before `initialize` gets -32001, as §14.1(3)'s list names
only `info` and `ping`; after `initialize` it answers `{}`.

Breaks §13: "A server **MUST** reject any request before a successful
`initialize` with `-32001`, **except** `info`, `ping`, and `shutdown`, which are
callable at any time (§7.2, §7.12, §7.15, §14.1)." (§14.1(3) alone exempts only
`info`/`ping`: a reading a server author could take; §13 is explicit.)
Expected: L0 not granted (or a finding that names the two readings).
"""
from blind_hooks import before_session, error, is_request, main
from panel import Config


def gate(session, msg):
    if is_request(msg) and msg.get("method") == "shutdown" and not session.server._initialized:
        return error(msg["id"], -32001, "call 'initialize' first"), []
    return None


before_session(gate)
main(Config(name="blind2-shutdown-gated", conformance="L1"))
