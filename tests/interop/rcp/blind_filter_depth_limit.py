"""BLIND: rejects with -32602 a filter whose combinators nest more than two
deep (`{"and": [{"or": [{"not": …}]}]}`); two levels, as in §8's example, work.

Breaks §8 (Metadata filtering): "Boolean combinators `and`/`or`/`not` nest
arbitrarily". Expected: L1 not granted ("support `filter`", §14.2).
"""
from blind_hooks import main, wrap_check_filter
from panel import Config, bad

MAX_DEPTH = 2


def depth(node) -> int:
    if not isinstance(node, dict) or "field" in node:
        return 0
    inner = []
    for kind in ("and", "or"):
        if isinstance(node.get(kind), list):
            inner += node[kind]
    if "not" in node:
        inner.append(node["not"])
    return 1 + max((depth(c) for c in inner), default=0)


def limited(original, node, cfg, path):
    if path == "filter" and depth(node) > MAX_DEPTH:
        bad(path, f"filters nest at most {MAX_DEPTH} combinators deep")
    return original(node, cfg, path)


wrap_check_filter(limited)
main(Config(name="blind-filter-depth-limit", conformance="L1"))
