"""BLIND: `embed` with `inputs` a bare string (`"hello"`, not an array) embeds
it as one input instead of answering -32602.

Breaks §12: "`-32602` … a wrong JSON type"; §7.3 **Params** `{ "inputs":
[Content|string] }`; §14.1(5). Expected: L0 not granted.
"""
import panel
from blind_hooks import main
from panel import Config

original = panel.embed_handler


def wrap(params, cfg):
    for fld in ("inputs", "texts"):
        if isinstance(params.get(fld), str):
            params = dict(params, **{fld: [params[fld]]})
    return original(params, cfg)


panel.embed_handler = wrap
main(Config(name="blind2-params-embed-inputs-string", conformance="L2", embed=True))
