"""BLIND: when a `filter` is set, `retrieve` returns `k + 1` hits (when that many
match); unfiltered results honour `k`.

Breaks §7.7: "it **MUST NOT** return more than `k` hits (fewer is allowed when the
corpus or `minScore` yields fewer)"; §14.2 "honour `k`/`minScore`". Expected: L1
not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def one_more(original, params, cfg):
    k = params.get("k")
    if params.get("filter") is not None and isinstance(k, int) and not isinstance(k, bool) and 1 <= k < 50:
        return original(dict(params, k=k + 1), cfg)
    return original(params, cfg)


wrap_retrieve(one_more)
main(Config(name="blind2-k-plus-one-filtered", conformance="L1"))
