"""BLIND: `retrieve` rejects, with -32602, a params object carrying a key that
§7.7 does not list. `initialize`, `info`, `ping` and the other methods ignore
unknown fields as they should.

Breaks §4.6 (Data types): "**Unknown fields** in any object **MUST** be ignored
by the receiver, never rejected (forward compatibility)."; §14.1 rule 7:
"Tolerate unknown object fields". Expected: L0 not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config, bad

KNOWN = {"query", "k", "mode", "modality", "candidateK", "fusion", "rerank", "mmr", "rewrite",
         "filter", "minScore", "recency", "unit", "level", "tokenBudget", "sessionId",
         "includeText", "includeVectors", "seed", "indexVersion", "strict", "cursor", "_meta"}


def strict_keys(original, params, cfg):
    for key in params:
        if key not in KNOWN:
            bad(key, f"unknown field {key!r}")
    return original(params, cfg)


wrap_retrieve(strict_keys)
main(Config(name="blind-unknown-field-retrieve", conformance="L1"))
