"""BLIND: `ping` echoes a string nonce made of digits (`"42"`) as a number
(`42`); other strings and numbers are echoed unchanged.

Breaks §7.15 (`ping`): "**Result** `{ "nonce"?: same }`. The server **MUST** echo
any `nonce` it received."; §14.1(1) "echoing any `ping` `nonce`". Expected: L0 not
granted.
"""
import re

from blind_hooks import after_session, is_request, main
from panel import Config


def renumber(session, msg, reply):
    if is_request(msg) and msg.get("method") == "ping" and isinstance(reply, dict):
        n = reply.get("result", {}).get("nonce")
        if isinstance(n, str) and re.fullmatch(r"[0-9]{1,15}", n):
            reply["result"]["nonce"] = int(n)
    return reply


after_session(renumber)
main(Config(name="blind2-ping-nonce-digits", conformance="L1"))
