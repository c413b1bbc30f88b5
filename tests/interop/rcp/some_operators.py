"""Advertises only the ordered filter operators gt/gte/lt/lte on the int field
year; every hit carries meta.year."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-some-operators", filter_fields={"year": "int"},
            operators=["gt", "gte", "lt", "lte"], deterministic=True))
