"""BLIND: the funnel check compares `candidateK` with `k` only: a `retrieve`
with `rerank.topN` below `k` (`k: 5, rerank: {topN: 2}`) is served.

Breaks §7.7: "The three result-size knobs form a funnel and **MUST** satisfy
`candidateK ≥ rerank.topN ≥ k`"; §12 -32602; §14.1(5). Expected: L0 not granted.
"""
from blind_hooks import main, wrap_validate_params
from panel import Config


def no_topn(original, method, params):
    if isinstance(params, dict) and isinstance(params.get("rerank"), dict):
        rr = {k: v for k, v in params["rerank"].items() if k != "topN"}
        bad = original(method, dict(params, rerank=rr))
        top = params["rerank"].get("topN")
        if bad is None and top is not None and (isinstance(top, bool) or not isinstance(top, int) or top < 1):
            return original(method, params)
        return bad
    return original(method, params)


wrap_validate_params(no_topn)
main(Config(name="blind2-params-funnel-topn", conformance="L2", rerank=True))
