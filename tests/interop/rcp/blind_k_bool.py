"""BLIND: `retrieve` accepts `k: true` as 1 (a Python bool is an int).

Breaks §4.6 (Data types): "**Booleans** are `true`/`false`, never `0`/`1`" and
"**Integers** (`k`, …) are JSON numbers"; §12 "`-32602` … a wrong JSON type";
schema `k: {"type": "integer"}`. Expected: L0 not granted (§14.1 rule 5).
"""
from blind_hooks import main, wrap_retrieve, wrap_validate_params
from panel import Config


def as_int_check(original, method, params):
    if method == "retrieve" and isinstance(params, dict) and isinstance(params.get("k"), bool):
        params = dict(params, k=int(params["k"]))
    return original(method, params)


def as_int(original, params, cfg):
    if isinstance(params.get("k"), bool):
        params = dict(params, k=int(params["k"]))
    return original(params, cfg)


wrap_validate_params(as_int_check)
wrap_retrieve(as_int)
main(Config(name="blind-k-bool", conformance="L1"))
