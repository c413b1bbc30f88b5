"""BROKEN: streams progress, but echoes an integer progress token as a string
(7 becomes "7"). §9: the token is a "string or integer" and the server "MUST
echo it verbatim in every notifications/progress frame"."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-progress-token-stringified", streaming=True,
            progress_token_as_string=True))
