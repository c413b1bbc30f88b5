"""BLIND: `notifications/log` at warning severity is sent as `level: "warn"`;
each opted-in `retrieve` logs one such frame besides the correct debug/info ones.

Breaks §17.1: "`level` is a syslog-style severity: `"debug"`, `"info"`,
`"notice"`, `"warning"`, `"error"`." (schema LogNotification `level` enum); §14.3
log. Expected: L2 not granted.
"""
import json

import panel
from blind_hooks import main
from panel import Config

original = panel.maybe_log


def also_warn(params, cfg, message, data=None):
    before = len(getattr(panel._local, "notes", []) or [])
    original(params, cfg, message, data)
    if len(panel._local.notes) > before:
        panel.emit(json.dumps({"jsonrpc": "2.0", "method": "notifications/log",
                               "params": {"level": "warn", "message": f"{message}: slow backend"}},
                              separators=(",", ":")))


panel.maybe_log = also_warn
main(Config(name="blind2-log-level-warn", conformance="L2", rerank=True, embed=True,
            graph=True, streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
