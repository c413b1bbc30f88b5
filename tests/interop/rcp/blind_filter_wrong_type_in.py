"""BLIND: `in`/`nin` never check their array's elements against the field's
type (`{"field": "year", "op": "in", "value": ["2019"]}` is accepted and
matches nothing). Scalar values of `eq`, `ne`, `gt`, … are checked correctly.

Breaks §8 (Metadata filtering): "A server **MUST** return `-32602` (with
`error.data.field`) if a value's JSON type is incompatible with the field
type" — for every operator, `in`/`nin` ("array of scalars") included.
Expected: L0 not granted (§14.1 rule 5), or L1 ("support `filter`").
"""
from blind_hooks import main, wrap_check_filter
from panel import Config


def scalar_ok(ftype, v) -> bool:
    if ftype in ("int", "float"):
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    return isinstance(v, str)


def lenient(original, node, cfg, path):
    if isinstance(node, dict) and isinstance(node.get("field"), str) and node.get("op") in ("in", "nin"):
        fname, op, value = node["field"], node["op"], node.get("value")
        ftype = cfg.filter_fields.get(fname)
        if ftype is not None and (cfg.operators is None or op in cfg.operators) \
                and isinstance(value, list) and not all(scalar_ok(ftype, v) for v in value):
            if op == "in":
                return lambda meta: meta.get(fname) in value
            return lambda meta: meta.get(fname) not in value
    return original(node, cfg, path)


wrap_check_filter(lenient)
main(Config(name="blind-filter-wrong-type-in", conformance="L1"))
