"""BLIND: `retrieve` with a numeric `query` (`42`) reads it as the string "42";
other wrong types still get -32602.

Breaks §12: "`-32602` … a wrong JSON type"; §7.7 `"query": "string" | Content |
[Content]`; §14.1(5). Expected: L0 not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def coerce(original, params, cfg):
    q = params.get("query")
    if isinstance(q, (int, float)) and not isinstance(q, bool):
        params = dict(params, query=str(q))
    return original(params, cfg)


wrap_retrieve(coerce)
main(Config(name="blind2-params-query-number", conformance="L1"))
