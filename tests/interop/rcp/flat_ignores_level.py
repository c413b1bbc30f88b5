"""A flat corpus (no `retrieve.levels`) whose `retrieve` never reads `level`,
whatever its value: §7.7.2 calls `unit`, `level` and `tokenBudget` "all gated
by `retrieve` capability metadata (§6.1) and safely ignorable", and §6.1 says
an absent `levels` "means flat"."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-flat-ignores-level", ignore_level=True, pagination=True))
