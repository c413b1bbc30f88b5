"""A stateful HTTP server: initialize returns _meta.session and later requests
must carry it in the RCP-Session header (spec §5.2 Sessions)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-session-token", session="token", pagination=True))
