"""BLIND: `rerank` returns `order` with 1-based indices (the best passage at
index 0 is reported as 1).

Breaks §7.6: "Optional `order` gives the indices sorted best-first"; `scores[i]`
corresponds to `passages[i]` (0-based, as in `passages[i]`). Expected: L2 not
granted.
"""
import panel
from blind_hooks import main
from panel import Config

original = panel.rerank_handler


def one_based(params, cfg):
    result = original(params, cfg)
    result["order"] = [i + 1 for i in result["order"]]
    return result


panel.rerank_handler = one_based
main(Config(name="blind2-rerank-order-one-based", conformance="L2", rerank=True))
