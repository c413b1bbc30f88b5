"""BROKEN: streams progress frames (with a token it made up) for a `retrieve`
that carried no `_meta.progressToken`. §9: the server "MUST NOT emit progress
for a request that carried none". Over HTTP the frames travel only in an event
stream the client asked for (§5.2); over stdio on stdout."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-progress-without-token", streaming=True,
            progress_without_token=True))
