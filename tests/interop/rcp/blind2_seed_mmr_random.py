"""BLIND: advertises `retrieve.deterministic`; a `retrieve` with `mmr` picks its
`k` hits at random among the best `k + 3` (kept in score order), whatever the
`seed`; without `mmr` results are deterministic. A full L2 server.

Breaks §7.7.1: "A server that honours `seed` **MUST** return identical results for
identical `(query, params, seed, indexVersion)`" ("`seed` … fixes any stochastic
step (ANN exploration, MMR tie-breaking …)"); §14.3. Expected: L2 not granted.
"""
import random

from blind_hooks import main, wrap_retrieve
from panel import Config


def diversify(original, params, cfg):
    k = params.get("k")
    if params.get("mmr") is None or not isinstance(k, int) or isinstance(k, bool) or k < 1:
        return original(params, cfg)
    result = original(dict(params, k=min(k + 3, 50)), cfg)
    hits = result["hits"]
    keep = sorted(random.sample(range(len(hits)), min(k, len(hits))))
    result["hits"] = [hits[i] for i in keep]
    result.pop("nextCursor", None)
    return result


wrap_retrieve(diversify)
main(Config(name="blind2-seed-mmr-random", conformance="L2", rerank=True, embed=True,
            graph=True, streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
