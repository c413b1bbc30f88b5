"""A server with one initialized flag for the whole process, as the SDK keeps it:
a second run against the same process finds it already initialized."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-process-session", pagination=True, deterministic=True))
