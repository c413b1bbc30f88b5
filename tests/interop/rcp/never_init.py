"""Never completes a handshake: initialize always answers -32600 and no method is
gated. It must not be certified at any level."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-never-init", session="never", pagination=True))
