"""BLIND: `in` and `nin` use only the first value of their array (`in
["news","blog"]` keeps only `news`; `nin` excludes only `news`).

Breaks §8 (Metadata filtering) operator table: "`in`, `nin` | array of scalars |
any | set membership / exclusion" — membership in the whole array.
Expected: L1 not granted ("support `filter`", §14.2).
"""
from blind_hooks import main, wrap_check_filter
from panel import Config


def first_only(original, node, cfg, path):
    if isinstance(node, dict) and node.get("op") in ("in", "nin") and isinstance(node.get("value"), list) \
            and len(node["value"]) > 1:
        original(node, cfg, path)  # validate every value
        return original(dict(node, value=node["value"][:1]), cfg, path)
    return original(node, cfg, path)


wrap_check_filter(first_only)
main(Config(name="blind-filter-in-first-value", conformance="L1"))
