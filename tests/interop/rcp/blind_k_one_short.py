"""BLIND: `retrieve` returns one hit fewer than `k` asks for (k-1 for k >= 2),
although the corpus (12 documents) yields more and no `minScore` or filter
applies.

Breaks §7.7 `retrieve` Params: `"k": 10, // final result count`, with "it
**MUST NOT** return more than `k` hits (fewer is allowed when the corpus or
`minScore` yields fewer)" — fewer only for those reasons; §14.2: "honour `k`/`minScore`".
Expected: L1 not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def one_short(original, params, cfg):
    k = params.get("k")
    if isinstance(k, int) and not isinstance(k, bool) and k >= 2:
        params = dict(params, k=min(k, 50) - 1)
    return original(params, cfg)


wrap_retrieve(one_short)
main(Config(name="blind-k-one-short", conformance="L1"))
