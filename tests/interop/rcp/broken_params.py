"""BROKEN: does not validate required fields or types: retrieve without query, or
with query 123, fails inside the handler with -32603 instead of -32602
(spec §14.1(5))."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-broken-params", pagination=True, lenient_params=True))
