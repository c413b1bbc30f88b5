"""BLIND: a `not` filter node is validated, then ignored: it keeps every hit.

Breaks §8 (Metadata filtering): "Boolean combinators `and`/`or`/`not` nest
arbitrarily" — `not` negates its clause. Expected: L1 not granted ("support
`filter`", §14.2).
"""
from blind_hooks import main, wrap_check_filter
from panel import Config


def ignore_not(original, node, cfg, path):
    if isinstance(node, dict) and set(node) & {"and", "or", "not"} == {"not"} and "field" not in node:
        original(node["not"], cfg, f"{path}.not")  # still validated
        return lambda meta: True
    return original(node, cfg, path)


wrap_check_filter(ignore_not)
main(Config(name="blind-filter-not-ignored", conformance="L1"))
