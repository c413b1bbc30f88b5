"""BROKEN: advertises `filter.operators: ["eq", "ne"]` but serves every §8
operator. §8: a server "MUST reject an operator outside its advertised
`filter.operators` with `-32005`"; §12 names a `filter` operator among the
-32005 cases."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-operators-unchecked", operators=["eq", "ne"], lenient_operators=True))
