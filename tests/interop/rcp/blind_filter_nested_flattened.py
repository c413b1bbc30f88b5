"""BLIND: an `and`/`or` nested inside an `and`/`or` is flattened into its
parent: `{"and": [A, {"or": [B, C]}]}` is evaluated as `A and B and C`. A
single level of combinators, and `not`, work.

Breaks §8 (Metadata filtering): "Boolean combinators `and`/`or`/`not` nest
arbitrarily". Expected: L1 not granted ("support `filter`", §14.2).
"""
from blind_hooks import main, wrap_check_filter
from panel import Config


def combinator(node):
    if isinstance(node, dict) and "field" not in node:
        kinds = [k for k in ("and", "or") if k in node]
        if len(kinds) == 1 and "not" not in node and isinstance(node[kinds[0]], list):
            return kinds[0]
    return None


def flatten(kind, children):
    out = []
    for child in children:
        if combinator(child) is not None and child[combinator(child)]:
            out.extend(flatten(kind, child[combinator(child)]))
        else:
            out.append(child)
    return out


def flattened(original, node, cfg, path):
    kind = combinator(node)
    if kind is not None and node[kind]:
        original(node, cfg, path)  # validate the tree as written
        return original({kind: flatten(kind, node[kind])}, cfg, path)
    return original(node, cfg, path)


wrap_check_filter(flattened)
main(Config(name="blind-filter-nested-flattened", conformance="L1"))
