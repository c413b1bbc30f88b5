"""BLIND: `ping` echoes an integer nonce unchanged but a fractional one as an
integer (`1.5` -> `1`).

Breaks §7.15 (`ping`): "**Params** `{ "nonce"?: string | number }` · **Result**
`{ "nonce"?: same }`. The server **MUST** echo any `nonce` it received."; §14.1(1).
Expected: L0 not granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def truncate(session, msg, reply):
    if is_request(msg) and msg.get("method") == "ping" and isinstance(reply, dict) \
            and isinstance(reply.get("result", {}).get("nonce"), float):
        reply["result"]["nonce"] = int(reply["result"]["nonce"])
    return reply


after_session(truncate)
main(Config(name="blind2-ping-nonce-float", conformance="L1"))
