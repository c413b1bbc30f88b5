"""BLIND: `index/add` returns `ids` sorted alphabetically rather than in the order
of the input `documents` (one id per document, none lost). A full L2 server with
a writable index.

Breaks §7.10: "`ids` **MUST** be returned in the same order as the input
`documents`, one entry per input document, so a client can correlate them
positionally." Expected: a finding on RCP-OUT-007.
"""
from blind_hooks import add_features, main
from panel import Config


def sort_ids(original, params, cfg):
    result = original(params, cfg)
    result["ids"] = sorted(result["ids"])
    return result


add_features(sparse=True, multi=True, transform=True, index=True, handlers={"index/add": sort_ids})
main(Config(name="blind2-index-add-ids-sorted", conformance="L2", rerank=True, embed=True,
            graph=True, streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
