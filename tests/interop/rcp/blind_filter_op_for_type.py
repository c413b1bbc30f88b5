"""BLIND: accepts operators a field's type does not take: `gt`/`gte`/`lt`/`lte`
on a `keyword` or `text` field (compared as strings) and `contains` on a
`keyword` field (substring). Operators outside `filter.operators` and
unadvertised fields are still refused.

Breaks §8 (Metadata filtering): "A server **MUST** return `-32602` (with
`error.data.field`) if … the operator is not allowed for that field"; the
operator table: "`gt`, `gte`, `lt`, `lte` | number or `date` |
`int`/`float`/`date`"; "`contains` | scalar | `text` (substring) or
array-valued field". Expected: L0 not granted (§14.1 rule 5), or L1.
"""
import operator

from blind_hooks import main, wrap_check_filter
from panel import Config

ORDERED = {"gt": operator.gt, "gte": operator.ge, "lt": operator.lt, "lte": operator.le}


def lenient(original, node, cfg, path):
    if isinstance(node, dict) and isinstance(node.get("field"), str):
        fname, op, value = node["field"], node.get("op"), node.get("value")
        ftype = cfg.filter_fields.get(fname)
        advertised = cfg.operators is None or op in cfg.operators
        if ftype in ("keyword", "text") and advertised and isinstance(value, str):
            if op in ORDERED:
                cmp = ORDERED[op]
                return lambda meta: isinstance(meta.get(fname), str) and cmp(meta[fname], value)
            if op == "contains" and ftype == "keyword":
                return lambda meta: value in str(meta.get(fname, ""))
    return original(node, cfg, path)


wrap_check_filter(lenient)
main(Config(name="blind-filter-op-for-type", conformance="L1"))
