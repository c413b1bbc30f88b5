"""BLIND: `notifications/progress` frames carry `progress` as a percentage
(`25`, `50`) instead of a fraction; the token is echoed verbatim and the final
response follows. A full L2 server.

Breaks §9: "`progress` is `0.0–1.0`." (schema ProgressNotification `progress`
minimum 0, maximum 1); §14.3 streaming. Expected: L2 not granted.
"""
import rcp

from blind_hooks import main
from panel import Config

original = rcp.make_progress_notification


def percent(token, progress, stage="", partial=None):
    return original(token, progress * 100, stage, partial)


rcp.make_progress_notification = percent
main(Config(name="blind2-progress-percent", conformance="L2", rerank=True, embed=True, graph=True,
            streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
