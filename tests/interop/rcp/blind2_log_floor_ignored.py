"""BLIND: logs go only to a client that opted in, but the client's minimum
`logLevel` is ignored: a client asking for `warning` still gets `debug` and
`info` logs. A full L2 server.

Breaks §17.1: "A client **MAY** advertise a minimum level in `initialize.params`
(`_meta.logLevel`); servers **SHOULD** honour it". Expected: a SHOULD finding on
RCP-L2-009 (or L2 not granted).
"""
import panel
import rcp
from blind_hooks import main
from panel import Config


def chatty(params, cfg, message, data=None):
    s = panel.current()
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    level = meta.get("logLevel") or s.log_level
    if "log" in s.client_caps or level is not None:
        for lvl in ("debug", "info"):
            panel.emit(rcp.make_log_notification(lvl, f"{message} ({lvl})", data))


panel.maybe_log = chatty
main(Config(name="blind2-log-floor-ignored", conformance="L2", rerank=True, embed=True,
            graph=True, streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
