"""BLIND: `ping` echoes its `nonce` before `initialize`, but after a
successful `initialize` it answers `{}` and drops the nonce.

Breaks §14.1 rule 1: "answer `info` and `ping` at any time (including before
`initialize`), echoing any `ping` `nonce`"; §7.15. Expected: L0 not granted.
"""
from blind_hooks import after_session, is_request, main
from panel import Config


def drop_nonce(session, msg, reply):
    if is_request(msg) and msg.get("method") == "ping" and session.server._initialized \
            and isinstance(reply, dict) and isinstance(reply.get("result"), dict):
        reply["result"].pop("nonce", None)
    return reply


after_session(drop_nonce)
main(Config(name="blind-ping-nonce-after-init", conformance="L1"))
