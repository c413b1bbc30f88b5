"""BLIND: advertises `retrieve.snapshots`; a pinned `indexVersion` it never issued
is served from the current snapshot, and the result echoes the pinned value.
A full L2 server.

Breaks §7.7.1: "when a client pins a specific `indexVersion`, **MUST** either serve
that snapshot or fail with `-32010` (`BackendUnavailable`) … — never silently
serve a different one." Expected: L2 not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def serve_current(original, params, cfg):
    pinned = params.get("indexVersion")
    if isinstance(pinned, str):
        result = original({k: v for k, v in params.items() if k != "indexVersion"}, cfg)
        result["indexVersion"] = pinned
        return result
    return original(params, cfg)


wrap_retrieve(serve_current)
main(Config(name="blind2-snapshot-unknown-served", conformance="L2", rerank=True, embed=True,
            graph=True, streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
