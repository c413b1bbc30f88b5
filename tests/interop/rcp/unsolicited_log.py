"""BROKEN (stdio): before its reply to the first `ping` it writes a
`notifications/log` no client asked for. §7.1: a server "**MUST NOT** emit a
notification a client did not opt into via the corresponding capability or
per-request handle (`_meta.progressToken`, `_meta.logLevel`, §17.1)". The public
harness reads one line per request, so every reply after that line is read
as the answer to the request after it."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from panel import Config, main  # noqa: E402

main(Config(name="panel-unsolicited-log", pagination=True, deterministic=True,
            unsolicited_log=True))
