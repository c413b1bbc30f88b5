"""BLIND: `rerank` with `topN` truncates `scores` too, returning the best `topN`
scores best-first, so `scores[i]` no longer belongs to `passages[i]`; without
`topN` the reply is correct.

Breaks §7.6: "`scores[i]` corresponds to `passages[i]`; higher is more relevant.
Optional `order` gives the indices sorted best-first (convenient when `topN`
truncates)." Expected: L2 not granted.
"""
import panel
from blind_hooks import main
from panel import Config

original = panel.rerank_handler


def truncate(params, cfg):
    result = original(params, cfg)
    if isinstance(params.get("topN"), int):
        result["scores"] = [result["scores"][i] for i in result["order"]]
    return result


panel.rerank_handler = truncate
main(Config(name="blind2-rerank-topn-truncates-scores", conformance="L2", rerank=True))
