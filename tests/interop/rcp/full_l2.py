"""A full L2 server: dense/sparse/hybrid retrieve with filter, citations, scores,
k and minScore; rerank, embed, graph (local, global), SSE progress, pagination,
logs, determinism and snapshots. One initialized flag per process (HTTP) or per
stdin (stdio)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-full-l2", rerank=True, embed=True, graph=True, streaming=True,
            pagination=True, log=True, deterministic=True, snapshots=True))
