"""BLIND: every hit's `citation` carries `start`/`end` as strings (`"0"`,
`"64"`) besides `source`, `uri`, `title`.

Breaks §7.7 **Hit** `"citation"?: { "source": "…", …, "start"?: int, "end"?: int,
"page"?: int }`; §4.6 "**Integers** (…, byte offsets) … **MUST NOT** emit them as
strings"; §14.2 citations. Expected: L1 not granted (or a schema-shape finding).
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def offsets(original, params, cfg):
    result = original(params, cfg)
    for h in result["hits"]:
        if "citation" in h:
            h["citation"]["start"] = "0"
            h["citation"]["end"] = str(len(h.get("text", "")) or 64)
    return result


wrap_retrieve(offsets)
main(Config(name="blind2-citation-offsets-strings", conformance="L1"))
