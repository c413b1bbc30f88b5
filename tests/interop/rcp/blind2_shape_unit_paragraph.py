"""BLIND: `retrieve` with `unit: "passage"` (advertised) returns hits whose
`unit` is `"paragraph"`, a value outside the schema's enum; other units are echoed
correctly.

Breaks §7.7 **Hit** `"unit"?: "chunk"|"passage"|"document"|…` (schema Hit `unit`
enum) and §7.7.2 "each `Hit` echoes its own `unit`"; decision 1 (every result is
checked against its schema shape). Expected: a schema-shape finding (RCP-OUT-005).
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def paragraph(original, params, cfg):
    result = original(params, cfg)
    if params.get("unit") == "passage":
        for h in result["hits"]:
            h["unit"] = "paragraph"
    return result


wrap_retrieve(paragraph)
main(Config(name="blind2-shape-unit-paragraph", conformance="L1"))
