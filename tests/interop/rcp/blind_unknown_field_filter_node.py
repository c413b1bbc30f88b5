"""BLIND: rejects with -32602 a filter node (a leaf or a combinator) that
carries a key besides `field`/`op`/`value` or its combinator. Field *names*
are still validated as §8 requires; it is the extra object key that is refused.

Breaks §4.6 (Data types): "**Unknown fields** in any object **MUST** be ignored
by the receiver, never rejected (forward compatibility). This does not apply to
`filter` *field names*, which are validated against the advertised set (§8)."
Expected: L0 not granted (§14.1 rule 7).
"""
from blind_hooks import main, wrap_check_filter
from panel import Config, bad


def strict_keys(original, node, cfg, path):
    if isinstance(node, dict):
        allowed = {"field", "op", "value"} if "field" in node else {"and", "or", "not"}
        for key in node:
            if key not in allowed:
                bad(path, f"unknown key {key!r} in a filter node")
    return original(node, cfg, path)


wrap_check_filter(strict_keys)
main(Config(name="blind-unknown-field-filter-node", conformance="L1"))
