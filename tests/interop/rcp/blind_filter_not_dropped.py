"""BLIND: a `not` filter node applies its inner clause without the negation
(`{"not": X}` keeps exactly what X keeps).

Breaks §8 (Metadata filtering): "Boolean combinators `and`/`or`/`not` nest
arbitrarily" — `not` negates its clause. Expected: L1 not granted ("support
`filter`", §14.2).
"""
from blind_hooks import main, wrap_check_filter
from panel import Config


def drop_not(original, node, cfg, path):
    if isinstance(node, dict) and set(node) & {"and", "or", "not"} == {"not"} and "field" not in node:
        return original(node["not"], cfg, f"{path}.not")
    return original(node, cfg, path)


wrap_check_filter(drop_not)
main(Config(name="blind-filter-not-dropped", conformance="L1"))
