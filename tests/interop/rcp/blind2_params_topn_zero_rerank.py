"""BLIND: the `rerank` method accepts `topN: 0` (answering an empty `order`);
`k`, `candidateK` and `retrieve`'s `rerank.topN` are still validated.

Breaks §12: "`-32602` … a value out of range"; "Only a value that is structurally
invalid (`k` negative, `k` non-integer) is `-32602`" (schema RerankParams `topN`
integer, minimum 1); §14.1(5). Expected: L0 not granted.
"""
from blind_hooks import main, wrap_validate_params
from panel import Config


def skip_topn(original, method, params):
    if method == "rerank" and isinstance(params, dict) and params.get("topN") == 0:
        return original(method, {k: v for k, v in params.items() if k != "topN"})
    return original(method, params)


wrap_validate_params(skip_topn)
main(Config(name="blind2-params-topn-zero-rerank", conformance="L2", rerank=True))
