"""Logs only to a client that advertised the log capability at initialize
(spec §17.1: "SHOULD emit logs only when the client advertised the log capability")."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-log-opt-in", log=True, log_needs_capability=True))
