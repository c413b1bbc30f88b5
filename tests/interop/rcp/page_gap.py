"""BROKEN: paginates, but each `nextCursor` starts the next page one hit too
late, so one hit is lost at every page boundary and none repeats. §10: "To
fetch the next page, the client repeats the request with `cursor` set to that
value": the pages together are the request's result."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-page-gap", pagination=True, page_gap=True))
