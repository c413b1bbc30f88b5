"""BLIND: `embed/multi` returns rows of the advertised `dimension` (32) for the
first input, and rows one component short (31) for every later input.

Breaks §7.5 **Result** `{ "matrices": [ [[float]] ], "dimension": int }` ("Each
input yields a **matrix** of token- … level embeddings") with §6 `multiVector`
`dimension:int`; §14.3. Expected: L2 not granted.
"""
from blind_hooks import add_features, main
from panel import Config


def short(original, params, cfg):
    result = original(params, cfg)
    result["matrices"] = [m if i == 0 else [row[:-1] for row in m]
                          for i, m in enumerate(result["matrices"])]
    return result


add_features(sparse=True, multi=True, transform=True, index=True, handlers={"embed/multi": short})
main(Config(name="blind2-multi-short-rows-later", conformance="L2", rerank=True, embed=True,
            graph=True, streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
