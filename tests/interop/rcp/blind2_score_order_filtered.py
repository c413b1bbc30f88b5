"""BLIND: when a `filter` is set, the matching hits come back in corpus order
(by id), not best first; unfiltered results are in descending score order.

Breaks §4.6 "`Hit.score` … only guaranteed **monotonic** (higher = more relevant)
*within a single response*" and §7.7 "Runs the server's retrieval pipeline and
returns ranked hits"; §14.2 "populate `Hit.score` consistently". Expected: L1 not
granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def corpus_order(original, params, cfg):
    result = original(params, cfg)
    if params.get("filter") is not None:
        result["hits"].sort(key=lambda h: h["id"])
    return result


wrap_retrieve(corpus_order)
main(Config(name="blind2-score-order-filtered", conformance="L1"))
