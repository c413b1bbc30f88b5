"""BLIND: paginates, but a request carrying `cursor` ignores its `mode` and
`minScore`: later pages are cut from the default (hybrid) ranking with no score
floor.

Breaks §10 (Pagination): "To fetch the next page, the client repeats the
request with `cursor` set to that value" — later pages continue the same
request, options included; §7.7: "The server **MUST** honour options only
within its capabilities". Expected: L2 not granted (`pagination`).
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def first_page_options(original, params, cfg):
    if params.get("cursor") is not None:
        params = {key: v for key, v in params.items() if key not in ("mode", "minScore")}
    return original(params, cfg)


wrap_retrieve(first_page_options)
main(Config(name="blind-mode-first-page-only", pagination=True))
