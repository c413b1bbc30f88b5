"""BLIND: `retrieve` ignores `minScore` when `mode` is `dense`; sparse and
hybrid retrieval honour it. One combination of options is wrong.

Breaks §14.2 (L1): "honour `k`/`minScore`"; §7.7: "fewer is allowed when
the corpus or `minScore` yields fewer" — a hit under `minScore` is not served.
Expected: L1 not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def dense_no_floor(original, params, cfg):
    if params.get("mode") == "dense" and params.get("minScore") is not None:
        params = {key: v for key, v in params.items() if key != "minScore"}
    return original(params, cfg)


wrap_retrieve(dense_no_floor)
main(Config(name="blind-minscore-dense-mode", conformance="L1"))
