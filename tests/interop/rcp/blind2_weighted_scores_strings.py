"""BLIND: `retrieve` in mode `hybrid` with `fusion.method: "weighted"` returns
hits whose `score` is a string (`"0.5"`); `rrf` fusion and the other modes
return numbers.

Breaks §7.7 **Hit** `"score": float`; §4.6 "**Floats** (`score`, …) are JSON
numbers"; §14.2 "populate `Hit.score` consistently". Expected: L1 not granted (or
L0, as a result shape fault).
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def stringify(original, params, cfg):
    result = original(params, cfg)
    f = params.get("fusion")
    if isinstance(f, dict) and f.get("method") == "weighted" and params.get("mode") in (None, "hybrid"):
        for h in result["hits"]:
            h["score"] = str(h["score"])
    return result


wrap_retrieve(stringify)
main(Config(name="blind2-weighted-scores-strings", conformance="L1"))
