"""BLIND: paginates, but a request carrying `cursor` ignores its `filter`: the
first page is filtered, later pages are cut from the unfiltered ranking.

Breaks §10 (Pagination): "To fetch the next page, the client repeats the
request with `cursor` set to that value" — a later page is the same request's
result, its filter included; §8: "`retrieve.filter` accepts a small boolean
tree". Expected: L2 not granted (`pagination`), or L1 (`filter`).
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def first_page_filter(original, params, cfg):
    if params.get("cursor") is not None and params.get("filter") is not None:
        params = {key: v for key, v in params.items() if key != "filter"}
    return original(params, cfg)


wrap_retrieve(first_page_filter)
main(Config(name="blind-filter-first-page-only", pagination=True))
