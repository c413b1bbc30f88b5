"""BLIND: the first page carries a `nextCursor`, but a page fetched with a
`cursor` always answers `nextCursor: ""` even when hits remain, so a client stops
after two pages and loses the rest. A full L2 server.

Breaks §10: "list-style results … **MAY** include an opaque `nextCursor`. … A
missing/empty `nextCursor` means no more results." (an empty cursor while
results remain loses them); §14.3 pagination. Expected: L2 not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def stop(original, params, cfg):
    result = original(params, cfg)
    if params.get("cursor") is not None and "nextCursor" in result:
        result["nextCursor"] = ""
    return result


wrap_retrieve(stop)
main(Config(name="blind2-page-stops-after-second", conformance="L2", rerank=True, embed=True,
            graph=True, streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
