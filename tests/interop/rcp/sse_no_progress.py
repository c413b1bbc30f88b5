"""Streams over SSE with zero progress frames and one final frame (spec §5.2:
"zero or more notifications/progress frames followed by exactly one final frame")."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-sse-no-progress", streaming=True, progress_frames=0))
