"""BLIND: hits carry a `trust` object instead of a `citation`, with `level:
"high"` (not one of trusted/community/untrusted) and `score: 87`.

Breaks §7.7 **Hit** `"trust"?: { "level": "trusted"|"community"|"untrusted",
"score"?: 0.0, … }` and §4.6 "A `trust.score` … is normalised to `[0,1]`"; §6
`citations` "Hits carry `citation`/`trust` fields"; §14.2. Expected: L1 not
granted (or a schema-shape finding).
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def trust(original, params, cfg):
    result = original(params, cfg)
    for h in result["hits"]:
        h.pop("citation", None)
        h["trust"] = {"level": "high", "score": 87}
    return result


wrap_retrieve(trust)
main(Config(name="blind2-trust-bad-level", conformance="L1"))
