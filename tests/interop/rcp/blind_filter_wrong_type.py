"""BLIND: filter values are never checked against the field's type: `{"field":
"year", "op": "eq", "value": "2019"}` (a string for an `int` field), a number
for a `keyword` field, or such values inside `in`/`nin`, are accepted and
compared as they are (matching nothing, or everything for `ne`/`nin`).
Unadvertised fields and operators a field type does not take are still
refused.

Breaks §8 (Metadata filtering): "A server **MUST** return `-32602` (with
`error.data.field`) if a value's JSON type is incompatible with the field
type". Expected: L0 not granted (§14.1 rule 5), or L1 ("support `filter`").
"""
from blind_hooks import main, wrap_check_filter
from panel import Config

ORDERED = ("gt", "gte", "lt", "lte")
OPS = ("eq", "ne", "in", "nin") + ORDERED


def scalar_ok(ftype, v) -> bool:
    if ftype in ("int", "float"):
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    return isinstance(v, str)


def mistyped(ftype, op, value) -> bool:
    if op in ("in", "nin"):
        return isinstance(value, list) and not all(scalar_ok(ftype, v) for v in value)
    return not scalar_ok(ftype, value)


def lenient(original, node, cfg, path):
    if isinstance(node, dict) and isinstance(node.get("field"), str) and node.get("op") in OPS:
        fname, op, value = node["field"], node["op"], node.get("value")
        ftype = cfg.filter_fields.get(fname)
        ordered_ok = op not in ORDERED or ftype in ("int", "float")
        if ftype is not None and ordered_ok and (cfg.operators is None or op in cfg.operators) \
                and mistyped(ftype, op, value):
            return evaluate(fname, op, value)
    return original(node, cfg, path)


def evaluate(fname, op, value):
    def pred(meta):
        have = meta.get(fname)
        try:
            if op == "eq":
                return have == value
            if op == "ne":
                return have != value
            if op == "in":
                return have in value
            if op == "nin":
                return have not in value
            if have is None:
                return False
            return {"gt": have > value, "gte": have >= value, "lt": have < value,
                    "lte": have <= value}[op]
        except TypeError:
            return False
    return pred


wrap_check_filter(lenient)
main(Config(name="blind-filter-wrong-type", conformance="L1"))
