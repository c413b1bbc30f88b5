"""BLIND: `retrieve` ignores unknown top-level params, but rejects with -32602
an unknown key inside one of its option objects (`fusion`, `rerank`, `mmr`,
`recency`).

Breaks §4.6 (Data types): "**Unknown fields** in any object **MUST** be ignored
by the receiver, never rejected (forward compatibility)." Expected: L0 not
granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config, bad

KNOWN = {"fusion": {"method", "weights", "rrfK", "alpha"},
         "rerank": {"method", "model", "topN"},
         "mmr": {"lambda"},
         "recency": {"field", "halfLifeDays"}}


def strict_keys(original, params, cfg):
    for name, keys in KNOWN.items():
        obj = params.get(name)
        if isinstance(obj, dict):
            for key in obj:
                if key not in keys:
                    bad(f"{name}.{key}", f"unknown field {name}.{key}")
    return original(params, cfg)


wrap_retrieve(strict_keys)
main(Config(name="blind-unknown-field-option-object", rerank=True))
