"""Paginates with a nextCursor after every non-empty page, so the last cursor
leads to an empty page (spec §10: "A missing/empty nextCursor means no more results")."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-empty-last-page", pagination=True, trailing_empty_page=True))
