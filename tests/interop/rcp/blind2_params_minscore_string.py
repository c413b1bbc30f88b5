"""BLIND: `retrieve` with `minScore` as a string (`"0.5"`) parses it as a number.

Breaks §12: "`-32602` … a wrong JSON type"; schema RetrieveParams `minScore`
number; §4.6 floats "are JSON numbers"; §14.1(5). Expected: L0 not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def parse(original, params, cfg):
    m = params.get("minScore")
    if isinstance(m, str):
        try:
            params = dict(params, minScore=float(m))
        except ValueError:
            pass
    return original(params, cfg)


wrap_retrieve(parse)
main(Config(name="blind2-params-minscore-string", conformance="L1"))
