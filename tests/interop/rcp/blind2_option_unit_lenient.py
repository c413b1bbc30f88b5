"""BLIND: `retrieve` with a `unit` outside `retrieve.units` (["chunk",
"passage"]), e.g. `document` or `page`, is served as `chunk` under the default
`strict: true`; unadvertised modes and fusion methods still get -32005.

Breaks §7.7.2: "A server advertises the units it can return in `retrieve.units`
… Requesting an unadvertised unit follows the usual `strict` rule (§7.7)" and §7.7
"the server **MUST** return `-32005` (`OptionUnsupported`) rather than silently
degrade"; §14.1(4). Expected: L0 not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def lenient_unit(original, params, cfg):
    if params.get("unit") not in (None, "chunk", "passage") and params.get("strict") is not False:
        params = dict(params, unit="chunk")
    return original(params, cfg)


wrap_retrieve(lenient_unit)
main(Config(name="blind2-option-unit-lenient", conformance="L1"))
