"""BLIND: `index/add` of a document whose explicit `id` already exists is refused
with -32602 (neither an upsert nor the -32016 Conflict the spec allows).

Breaks §7.10: "a document carrying an explicit `id` is an **upsert** — re-adding
the same `id` **MUST** replace the prior document and **MUST NOT** create a
duplicate or fail. … A server that cannot upsert **MUST** reject the duplicate
with `-32016` (`Conflict`)". Expected: a finding on RCP-OUT-007.
"""
from blind_hooks import add_features, main
from panel import Config
from rcp import RcpError

store = None


def refuse(original, params, cfg):
    docs = params.get("documents")
    if isinstance(docs, list):
        for i, d in enumerate(docs):
            if isinstance(d, dict) and d.get("id") in store.docs:
                raise RcpError(-32602, "duplicate id", {"field": f"documents[{i}].id"})
    return original(params, cfg)


store = add_features(sparse=True, multi=True, transform=True, index=True, handlers={"index/add": refuse})
main(Config(name="blind2-index-readd-refused-wrong-code", conformance="L2", rerank=True, embed=True,
            graph=True, streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
