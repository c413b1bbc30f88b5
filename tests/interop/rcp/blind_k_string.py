"""BLIND: `retrieve` accepts a string `k` holding digits ("3") and reads it as
the integer, instead of rejecting the wrong JSON type.

Breaks §4.6 (Data types): "**Integers** (`k`, `dimension`, `topN`, …) are JSON
numbers with no fractional part"; §12: "`-32602` `InvalidParams` — … a wrong
JSON type"; schema RetrieveParams `k: {"type": "integer", "minimum": 1}`.
Expected: L0 not granted (§14.1 rule 5).
"""
from blind_hooks import main, wrap_retrieve, wrap_validate_params
from panel import Config


def numeric(v):
    return isinstance(v, str) and v.strip().isdigit()


def coerce_check(original, method, params):
    if method == "retrieve" and isinstance(params, dict) and numeric(params.get("k")):
        params = dict(params, k=int(params["k"]))
    return original(method, params)


def coerce(original, params, cfg):
    if numeric(params.get("k")):
        params = dict(params, k=int(params["k"]))
    return original(params, cfg)


wrap_validate_params(coerce_check)
wrap_retrieve(coerce)
main(Config(name="blind-k-string", conformance="L1"))
