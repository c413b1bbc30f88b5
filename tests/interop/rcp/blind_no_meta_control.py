"""CONTROL (correct): the panel's default server, but its hits carry no `meta`
(§7.7 Hit: `"meta"?: object` is optional). Filters are applied as §8 says. The
correct twin of blind_no_meta_filter_ignored.py. Expected: L1, or "not
verified" where filter results cannot be observed.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def no_meta(original, params, cfg):
    result = original(params, cfg)
    for hit in result.get("hits", []):
        hit.pop("meta", None)
    return result


wrap_retrieve(no_meta)
main(Config(name="blind-no-meta-control", conformance="L1"))
