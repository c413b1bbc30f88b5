"""BLIND: `retrieve` in mode `dense` with `includeText: false` returns hits
without `id` (the server keys its hits by text and drops both); every other
combination is correct.

Breaks §7.7 **Hit** (`"id": string | number`, schema Hit `"required": ["id",
"score"]`) and §14.2 "implement `retrieve` with `modes:["dense","sparse","hybrid"]`".
Expected: L1 not granted (or L0).
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def drop(original, params, cfg):
    result = original(params, cfg)
    if params.get("mode") == "dense" and params.get("includeText") is False:
        for h in result["hits"]:
            h.pop("id", None)
    return result


wrap_retrieve(drop)
main(Config(name="blind2-dense-no-text-no-id", conformance="L1"))
