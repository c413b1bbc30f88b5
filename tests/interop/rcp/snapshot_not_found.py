"""Snapshots advertised; a pinned `indexVersion` it never issued is answered with
-32015 NotFound: §12 "A referenced entity does not exist". -32010 (§7.7.1) and
-32016 (§12, "no longer available") are about a snapshot that existed and is
gone."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-snapshot-not-found", snapshots=True,
            unknown_snapshot_code=-32015))
