"""BLIND: accepts an empty `and` (keeps every hit) or `or` (keeps none) instead
of rejecting it.

Breaks §8 (Metadata filtering): "an empty `and`/`or` array is `-32602`".
Expected: L0 not granted (§14.1 rule 5, malformed params), or L1 ("support
`filter`", §14.2).
"""
from blind_hooks import main, wrap_check_filter
from panel import Config


def lenient(original, node, cfg, path):
    if isinstance(node, dict) and "field" not in node:
        for kind in ("and", "or"):
            if node.get(kind) == [] and len(node) == 1:
                return (lambda meta: True) if kind == "and" else (lambda meta: False)
    return original(node, cfg, path)


wrap_check_filter(lenient)
main(Config(name="blind-filter-empty-combinator", conformance="L1"))
