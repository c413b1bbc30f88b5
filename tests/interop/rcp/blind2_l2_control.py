"""CONTROL (correct): the panel's full L2 server (rerank, embed, graph,
streaming, pagination, log, determinism, snapshots) plus correct `embed/sparse`,
`embed/multi`, `query/transform` and a writable `index` (blind_hooks.add_features).
Expected: L2 under the spec profile.
"""
from blind_hooks import add_features, main
from panel import Config

add_features(sparse=True, multi=True, transform=True, index=True)
main(Config(name="blind2-l2-control", conformance="L2", rerank=True, embed=True, graph=True,
            streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
