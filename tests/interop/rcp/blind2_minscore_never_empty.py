"""BLIND: `minScore` filters hits, but when it is above every score the best hit
is returned anyway ("never answer empty").

Breaks §7.7 `"minScore"?: 0.0` with "fewer is allowed when the corpus or
`minScore` yields fewer" and §4.6 "`minScore` (§7.7) is interpreted in the
server's own scale"; §14.2 "honour `k`/`minScore`". Expected: L1 not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def at_least_one(original, params, cfg):
    result = original(params, cfg)
    if params.get("minScore") is not None and not result["hits"] and not params.get("cursor"):
        fallback = original({k: v for k, v in params.items() if k != "minScore"}, cfg)
        result["hits"] = fallback["hits"][:1]
    return result


wrap_retrieve(at_least_one)
main(Config(name="blind2-minscore-never-empty", conformance="L1"))
