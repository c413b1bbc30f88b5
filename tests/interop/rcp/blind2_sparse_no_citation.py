"""BLIND: `retrieve` in mode `sparse` returns hits with neither `citation` nor
`trust`; dense and hybrid hits carry a `citation`. `citations` is advertised.

Breaks §6 "`citations` | `{}` | Hits carry `citation`/`trust` fields."; §14.2
"support `filter` and `citations`". Expected: L1 not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def drop(original, params, cfg):
    result = original(params, cfg)
    if params.get("mode") == "sparse":
        for h in result["hits"]:
            h.pop("citation", None)
    return result


wrap_retrieve(drop)
main(Config(name="blind2-sparse-no-citation", conformance="L1"))
