"""BROKEN: before `initialize` it refuses `retrieve` with -32001 but serves
`rerank`, `embed` and `graph`. §14.1 rule 3: an L0 server MUST "Reject
pre-`initialize` requests (other than `info`/`ping`) with `-32001`"."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-gate-only-retrieve", rerank=True, embed=True, graph=True,
            gate_only_retrieve=True))
