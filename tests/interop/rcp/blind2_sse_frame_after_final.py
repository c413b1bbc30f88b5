"""BLIND (HTTP): an SSE `retrieve` stream ends with one more
`notifications/progress` frame (progress 1.0) after the final response frame.

Breaks §5.2: "emit zero or more `notifications/progress` frames followed by
exactly one final frame carrying the JSON-RPC response. … The stream ends after
the final response frame."; §9 progress is sent "before the final response".
Expected: L2 not granted.
"""
import json

import panel
import rcp
from blind_hooks import main
from panel import Config

base = panel.make_handler


def make_handler(cfg, sessions):
    handler = base(cfg, sessions)

    class Handler(handler):
        def send(self, status, body=b"", ctype="application/json"):
            if ctype == "text/event-stream":
                frames = [f for f in body.decode().split("\n\n") if f.startswith("data: ")]
                first = json.loads(frames[0][len("data: "):])
                token = first.get("params", {}).get("progressToken")
                if first.get("method") == "notifications/progress" and token is not None:
                    body += f"data: {rcp.make_progress_notification(token, 1.0, 'done')}\n\n".encode()
            handler.send(self, status, body, ctype)

    return Handler


panel.make_handler = make_handler
main(Config(name="blind2-sse-frame-after-final", conformance="L2", rerank=True, embed=True,
            graph=True, streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
