"""BLIND: `retrieve` accepts a fractional `k` (2.5) and truncates it, instead
of rejecting a non-integer.

Breaks §12: "Only a value that is structurally invalid (`k` negative, `k`
non-integer) is `-32602`."; §4.6: "**Integers** (`k`, …) are JSON numbers with
no fractional part". Expected: L0 not granted (§14.1 rule 5).
"""
from blind_hooks import main, wrap_retrieve, wrap_validate_params
from panel import Config


def fractional(v):
    return isinstance(v, float) and v >= 1


def truncate_check(original, method, params):
    if method == "retrieve" and isinstance(params, dict) and fractional(params.get("k")):
        params = dict(params, k=int(params["k"]))
    return original(method, params)


def truncate(original, params, cfg):
    if fractional(params.get("k")):
        params = dict(params, k=int(params["k"]))
    return original(params, cfg)


wrap_validate_params(truncate_check)
wrap_retrieve(truncate)
main(Config(name="blind-k-float", conformance="L1"))
