"""BLIND: `rerank` without `passages` (or with `passages` not an array) answers
`{"scores": []}` instead of -32602; `retrieve` validates as before.

Breaks §12: "`-32602` `InvalidParams` — the request is malformed *independently of
capabilities*: a missing required field, a wrong JSON type"; schema RerankParams
requires `passages`; §14.1(5). Expected: L0 not granted.
"""
import panel
from blind_hooks import main
from panel import Config

original = panel.rerank_handler


def lenient(params, cfg):
    if not isinstance(params.get("passages"), list):
        return {"scores": [], "order": []}
    return original(params, cfg)


panel.rerank_handler = lenient
main(Config(name="blind2-params-rerank-no-passages", conformance="L2", rerank=True))
