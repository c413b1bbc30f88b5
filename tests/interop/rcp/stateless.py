"""A stateless HTTP server (spec §5.2 Sessions): every request is implicitly
initialized; initialize and info answer idempotently."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-stateless", session="stateless", pagination=True))
