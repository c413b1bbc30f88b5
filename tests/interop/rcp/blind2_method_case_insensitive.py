"""BLIND: method names are matched case-insensitively: `Retrieve` and `PING`
are served as `retrieve` and `ping` instead of -32004.

Breaks §12: "`-32004` `UnknownMethod` — the method is not defined by RCP *at
all*."; §4.1 "`method` **MUST** be a method name from §7"; §14.1(4) "undefined
methods with `-32004`". Expected: L0 not granted.
"""
from blind_hooks import before_session, main
from panel import Config


def fold(session, msg):
    if isinstance(msg, dict) and isinstance(msg.get("method"), str) \
            and not msg["method"].startswith("notifications/"):
        msg["method"] = msg["method"].lower()
    return None


before_session(fold)
main(Config(name="blind2-method-case-insensitive", conformance="L1"))
