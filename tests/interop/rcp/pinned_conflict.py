"""Answers a pinned, unknown indexVersion with -32016 Conflict (spec §12 "pinned
indexVersion gone"); §7.7.1 says -32010 for the same case."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-pinned-conflict", snapshots=True,
            unknown_snapshot_code=-32016))
