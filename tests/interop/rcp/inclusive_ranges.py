"""BROKEN: advertises every §8 operator, but its `gt` behaves as `>=` and its
`lt` as `<=`, so a range keeps the documents at its boundary. §8: `gt`, `gte`,
`lt`, `lte` are "ordered comparison" on `int`/`float`/`date`; `gt` and `gte`
are two operators, so `gt` is strict."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-inclusive-ranges", inclusive_strict_ranges=True, pagination=True))
