"""BLIND: `index/delete` answers `deleted` = the number of ids requested, whether
or not they were present (a repeat of the same delete answers the same count).

Breaks §7.11: "`deleted` counts only the documents actually removed by this call,
so a repeat of the same request returns `0`." Expected: a finding on
RCP-OUT-008.
"""
from blind_hooks import add_features, main
from panel import Config


def count_requested(original, params, cfg):
    result = original(params, cfg)
    result["deleted"] = len(params["ids"])
    return result


add_features(sparse=True, multi=True, transform=True, index=True,
             handlers={"index/delete": count_requested})
main(Config(name="blind2-index-delete-counts-requested", conformance="L2", rerank=True, embed=True,
            graph=True, streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
