"""BLIND (HTTP): a `retrieve` carrying `_meta.progressToken` is answered as an
SSE stream (`text/event-stream`, progress frames then the response) even when
the request's `Accept` does not name `text/event-stream`.

Breaks §5.2: "If the client did not request SSE, the server **MUST** return a
single buffered JSON response." Expected: L2 not granted (RCP-L2-007).
"""
import json

import panel
from blind_hooks import main
from panel import Config

base = panel.make_handler


def make_handler(cfg, sessions):
    handler = base(cfg, sessions)

    class Handler(handler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            try:
                msg = json.loads(body)
                token = msg["params"]["_meta"]["progressToken"]
            except (ValueError, KeyError, TypeError):
                token = None
            if token is not None and "text/event-stream" not in (self.headers.get("Accept") or ""):
                del self.headers["Accept"]
                self.headers["Accept"] = "text/event-stream"
            import io
            self.rfile = io.BufferedReader(io.BytesIO(body))
            handler.do_POST(self)

    return Handler


panel.make_handler = make_handler
main(Config(name="blind2-sse-without-accept", conformance="L2", rerank=True, embed=True,
            graph=True, streaming=True, pagination=True, log=True, deterministic=True, snapshots=True))
