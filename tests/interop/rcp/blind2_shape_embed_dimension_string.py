"""BLIND: the `embed` result carries `dimension` as a string (`"32"`); vectors are
correct.

Breaks §4.6 "**Integers** (`k`, `dimension`, …) are JSON numbers … Implementations
**MUST NOT** emit them as strings"; §7.3.1 result `"dimension": 1024`; schema
EmbedResult. Expected: a schema-shape finding (RCP-OUT-005) or L2 not granted.
"""
import panel
from blind_hooks import main
from panel import Config

original = panel.embed_handler


def stringify(params, cfg):
    result = original(params, cfg)
    result["dimension"] = str(result["dimension"])
    return result


panel.embed_handler = stringify
main(Config(name="blind2-shape-embed-dimension-string", conformance="L2", embed=True))
