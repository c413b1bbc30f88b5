"""BLIND: `embed/sparse` emits one `indices` entry per token occurrence but one
`values` entry per distinct term, so for a text repeating a word the two arrays
differ in length; texts without repeats are correct.

Breaks §7.4 **Result** `{ "sparse": [ { "indices": [int], "values": [float] } ] }`
("`indices` are vocabulary ids; `values` are the learned weights": paired one to
one); §14.3. Expected: L2 not granted.
"""
import panel
from blind_hooks import add_features, main, term_id
from panel import Config


def per_token(original, params, cfg):
    result = original(params, cfg)
    for entry, text in zip(result["sparse"], params.get("texts") or []):
        if isinstance(text, str):
            entry["indices"] = [term_id(w) for w in panel.words(text)]
    return result


add_features(sparse=True, multi=True, transform=True, index=True, handlers={"embed/sparse": per_token})
main(Config(name="blind2-sparse-repeated-terms", conformance="L2", rerank=True, embed=True,
            graph=True, streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
