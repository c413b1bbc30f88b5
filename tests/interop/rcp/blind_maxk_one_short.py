"""BLIND: advertises `retrieve.maxK: 5` and, for a `k` above it, returns 4 hits
although the corpus (12 documents, no filter, no minScore) yields more.

Breaks §7.7 (Stage-count invariant): "A server **MUST** clamp each value to
`retrieve.maxK` … it **MUST NOT** return more than `k` hits (fewer is allowed
when the corpus or `minScore` yields fewer)" — clamping `k` to `maxK` means
serving `maxK` hits, and here neither the corpus nor `minScore` yields fewer.
Compare blind_maxk_control.py, the same server clamping correctly.
Expected: L1 not granted ("honour `k`/`minScore`", §14.2).
"""
import panel
from blind_hooks import main, wrap_retrieve
from panel import Config

MAX_K = 5
capabilities = panel.capabilities


def small_max_k(cfg):
    caps = capabilities(cfg)
    caps["retrieve"]["maxK"] = MAX_K
    return caps


def clamp_one_short(original, params, cfg):
    k = params.get("k")
    if isinstance(k, int) and not isinstance(k, bool) and k > MAX_K:
        params = dict(params, k=MAX_K - 1)
    return original(params, cfg)


panel.capabilities = small_max_k
wrap_retrieve(clamp_one_short)
main(Config(name="blind-maxk-one-short", conformance="L1"))
