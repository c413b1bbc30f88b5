"""BLIND: `retrieve.fusion` advertises ["rrf", "weighted"]; `fusion.method:
"convex"` (in the spec's enum, not advertised) is served as `weighted`.
Methods outside the enum still get -32005.

Breaks §7.7: "If a client requests an unsupported `mode`/`method`, the server
**MUST** return `-32005` (`OptionUnsupported`) rather than silently degrade";
§14.1(4). Expected: L0 not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def convex(original, params, cfg):
    f = params.get("fusion")
    if isinstance(f, dict) and f.get("method") == "convex":
        params = dict(params, fusion=dict(f, method="weighted"))
    return original(params, cfg)


wrap_retrieve(convex)
main(Config(name="blind2-option-fusion-convex", conformance="L1"))
