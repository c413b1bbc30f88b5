"""BLIND: `query/transform` with `method: "multi-query"` ignores `n` and always
returns five queries; `decompose` honours `n`.

Breaks §7.8 **Params** `{ "query", "method", "n"?: 3 }` — "`multi-query`/`decompose`
return several queries" (at most `n`); §14.3. Expected: L2 not granted.
"""
from blind_hooks import add_features, main
from panel import Config


def five(original, params, cfg):
    if params.get("method") == "multi-query":
        return original(dict(params, n=5), cfg)
    return original(params, cfg)


add_features(sparse=True, multi=True, transform=True, index=True, handlers={"query/transform": five})
main(Config(name="blind2-transform-multiquery-over-n", conformance="L2", rerank=True, embed=True,
            graph=True, streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
