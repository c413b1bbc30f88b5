"""Rejects a filter leaf whose in/nin list is empty with -32602 (spec §8 leaves an
empty list undefined). It advertises the set and ordered operators (in, nin,
gt, gte, lt, lte), not eq, ne, exists or contains."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-empty-in-rejected", reject_empty_in=True, pagination=True,
            operators=["in", "nin", "gt", "gte", "lt", "lte"]))
