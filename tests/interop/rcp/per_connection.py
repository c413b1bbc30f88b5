"""A server that keeps the handshake per HTTP connection (spec §5.2 Sessions:
"HTTP is request-scoped, so `initialize` state does not persist across
connections by default"): each kept-alive connection starts uninitialized, and
a second `initialize` on it gets -32600."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-per-connection", session="connection", pagination=True,
            deterministic=True))
