"""BLIND: advertises `retrieve.snapshots`; results echo `indexVersion` except when
the request pinned one (then the field is left out). Unknown pins get -32010.
A full L2 server.

Breaks §7.7.1: "A server that supports snapshots echoes the served snapshot in the
result"; §7.7 Result `"indexVersion"?: "opaque", // the snapshot actually
served`; §14.3. Expected: L2 not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def drop(original, params, cfg):
    result = original(params, cfg)
    if params.get("indexVersion") is not None:
        result.pop("indexVersion", None)
    return result


wrap_retrieve(drop)
main(Config(name="blind2-snapshot-pinned-not-echoed", conformance="L2", rerank=True, embed=True,
            graph=True, streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
