"""BLIND: after `initialize`, the rarer unadvertised methods `index/delete`,
`memory/recall`, `catalog/list` and `feedback` get -32004 UnknownMethod, as if
RCP did not define them; `embed`, `rerank`, `graph`, `index/add` … get -32003.

Breaks §7: "Every `optional` method is callable only when the server advertised
its gating capability at `initialize` (§6); calling an un-advertised one yields
`-32003` (`CapabilityMissing`)"; §14.1(4). Expected: L0 not granted.
"""
from blind_hooks import before_session, error, is_request, main
from panel import Config

RARE = ("index/delete", "memory/recall", "catalog/list", "feedback")


def unknown(session, msg):
    if is_request(msg) and msg.get("method") in RARE and session.server._initialized:
        return error(msg["id"], -32004, f"unknown method {msg['method']!r}"), []
    return None


before_session(unknown)
main(Config(name="blind2-cap-missing-rare-unknown", conformance="L1"))
