"""BLIND: `strict: "false"` (a string) is read as `strict: false`: an
unadvertised `mode` is then served with a note instead of being refused.

Breaks §4.6 "**Booleans** are `true`/`false`, never `0`/`1` or `"true"`." with §7.7
"**`strict` defaults to `true`** when absent" and "the server **MUST** return
`-32005`": a string is not `false` (a wrong JSON type is -32602, §12).
Expected: L0 not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def truthy(original, params, cfg):
    if params.get("strict") in ("false", 0, "0"):
        params = dict(params, strict=False)
    return original(params, cfg)


wrap_retrieve(truthy)
main(Config(name="blind2-option-strict-false-string", conformance="L1"))
