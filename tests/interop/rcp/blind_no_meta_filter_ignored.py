"""BLIND: hits carry no `meta`, and `filter` is validated (unadvertised fields,
wrong types, empty combinators and unadvertised operators are refused as §8
says) but then ignored: every hit is served whatever the filter.

Breaks §8 (Metadata filtering): "When `filter` is advertised, `retrieve.filter`
accepts a small boolean tree" — the tree must select the hits; §14.2: "support
`filter`". Without `meta` a client cannot see which hits match, which is what
this server relies on. Compare blind_no_meta_control.py (no `meta`, filter
applied). Expected: L1 not granted, or "not verified" with that reason.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def unfiltered_no_meta(original, params, cfg):
    if params.get("filter") is not None:
        original(params, cfg)  # validated, then dropped
        params = {key: v for key, v in params.items() if key != "filter"}
    result = original(params, cfg)
    for hit in result.get("hits", []):
        hit.pop("meta", None)
    return result


wrap_retrieve(unfiltered_no_meta)
main(Config(name="blind-no-meta-filter-ignored", conformance="L1"))
