"""BLIND: `retrieve` accepts `fusion` given as a string ("rrf") and reads it
as the fusion method, instead of rejecting a value that is not an object.

Breaks §12: "`-32602` `InvalidParams` — … a wrong JSON type"; §7.7 Params:
`"fusion"?: { "method": "rrf"|"weighted"|"convex", … }` (schema: `"type":
"object"`); §14.1 rule 5. Expected: L0 not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def lenient(original, params, cfg):
    if isinstance(params.get("fusion"), str):
        params = dict(params, fusion={"method": params["fusion"]})
    return original(params, cfg)


wrap_retrieve(lenient)
main(Config(name="blind-fusion-not-object", conformance="L1"))
