"""BLIND: `query/transform` answers `method: "step-back"` with `queries: []`;
the other advertised methods are correct.

Breaks §7.8 **Result** `{ "queries": ["…", …], "hypothetical"?: "…" }` for every
advertised method (`transform.methods` lists `step-back`); §14.3. Expected: L2 not
granted.
"""
from blind_hooks import add_features, main
from panel import Config


def empty(original, params, cfg):
    result = original(params, cfg)
    if params.get("method") == "step-back":
        result["queries"] = []
    return result


add_features(sparse=True, multi=True, transform=True, index=True, handlers={"query/transform": empty})
main(Config(name="blind2-transform-stepback-empty", conformance="L2", rerank=True, embed=True,
            graph=True, streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
