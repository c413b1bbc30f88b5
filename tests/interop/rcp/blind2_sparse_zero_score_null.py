"""BLIND: in mode `sparse`, hits whose BM25 score is 0 (no query term in the
document) carry `score: null`; hits with a positive score are correct.

Breaks §7.7 **Hit** `"score": float` (schema Hit requires a numeric `score`) and
§14.2 "implement `retrieve` with `modes:["dense","sparse","hybrid"]` … populate
`Hit.score` consistently". Expected: L1 not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def null_zero(original, params, cfg):
    result = original(params, cfg)
    if params.get("mode") == "sparse":
        for h in result["hits"]:
            if h["score"] == 0:
                h["score"] = None
    return result


wrap_retrieve(null_zero)
main(Config(name="blind2-sparse-zero-score-null", conformance="L1"))
