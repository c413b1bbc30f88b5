"""BLIND: `retrieve` ignores its `filter` when `mode` is `sparse`; dense and
hybrid retrieval filter correctly. One combination of options is wrong.

Breaks §8 (Metadata filtering): "When `filter` is advertised, `retrieve.filter`
accepts a small boolean tree" — in every mode the server advertises; §14.2
"support `filter`". Expected: L1 not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def sparse_unfiltered(original, params, cfg):
    if params.get("mode") == "sparse" and params.get("filter") is not None:
        original(params, cfg)  # still validated
        params = {key: v for key, v in params.items() if key != "filter"}
    return original(params, cfg)


wrap_retrieve(sparse_unfiltered)
main(Config(name="blind-filter-sparse-mode", conformance="L1"))
