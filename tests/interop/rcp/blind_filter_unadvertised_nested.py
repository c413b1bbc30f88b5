"""BLIND: refuses an unadvertised field in a filter that is a single leaf, but
accepts one inside `and`/`or`/`not` (the clause matches nothing).

Breaks §8 (Metadata filtering): "Servers **MUST** reject filters referencing
unadvertised fields with `-32602`" — wherever in the tree. Expected: L0 not
granted (§14.1 rule 5), or L1 ("support `filter`").
"""
from blind_hooks import main, wrap_check_filter
from panel import ALL_OPERATORS, Config


def lenient(original, node, cfg, path):
    if path != "filter" and isinstance(node, dict) and isinstance(node.get("field"), str) \
            and node.get("op") in ALL_OPERATORS and node["field"] not in cfg.filter_fields:
        return lambda meta: False
    return original(node, cfg, path)


wrap_check_filter(lenient)
main(Config(name="blind-filter-unadvertised-nested", conformance="L1"))
