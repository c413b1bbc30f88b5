"""BLIND: each `nextCursor` points one hit back, so every later page starts with
the last hit of the page before (nothing is lost, one hit repeats per boundary).
A full L2 server.

Breaks §10: "To fetch the next page, the client repeats the request with
`cursor` set to that value." (the next page, without repeats); §14.3
pagination. Expected: L2 not granted.
"""
from blind_hooks import main, wrap_retrieve
from panel import Config


def back_one(original, params, cfg):
    result = original(params, cfg)
    c = result.get("nextCursor")
    if isinstance(c, str) and c.startswith("o") and int(c[1:]) > 0:
        result["nextCursor"] = f"o{int(c[1:]) - 1}"
    return result


wrap_retrieve(back_one)
main(Config(name="blind2-page-repeat-boundary", conformance="L2", rerank=True, embed=True,
            graph=True, streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
