"""BLIND: routes a method by the part before its `/`: an undefined method in
one of RCP's own namespaces (`retrieve/x`, `embed/foo`, `index/list`,
`memory/forget`, `graph/x`, `catalog/x`, `query/x`) gets -32003 (as if it were
an unadvertised capability method) instead of -32004. Undefined methods
elsewhere (`does/not/exist`, `foo`) get -32004.

Breaks §12 (Choosing between overlapping codes): "`-32004` `UnknownMethod` —
the method is not defined by RCP *at all*." and "A server **MUST** prefer
`-32004` when both apply"; §14.1 rule 4: "undefined methods with `-32004`".
Expected: L0 not granted.
"""
from rcp._types import CAP_FOR_METHOD

from blind_hooks import OPEN, before_session, error, is_request, main
from panel import Config

NAMESPACES = {m.split("/")[0] for m in CAP_FOR_METHOD} | {"embed", "index", "memory", "query"}


def by_prefix(session, msg):
    if is_request(msg) and isinstance(msg.get("method"), str) and session.server._initialized:
        m = msg["method"]
        if m not in CAP_FOR_METHOD and m not in OPEN and "/" in m \
                and m.split("/")[0] in NAMESPACES and not m.startswith("notifications/"):
            return error(msg["id"], -32003, f"capability for {m!r} not supported"), []
    return None


before_session(by_prefix)
main(Config(name="blind-unknown-method-namespace", conformance="L1"))
