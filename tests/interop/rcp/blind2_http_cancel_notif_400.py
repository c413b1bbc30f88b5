"""BLIND (HTTP): a `notifications/cancel` notification gets HTTP 400 with an
empty body; every other notification gets 204.

Breaks §4.5 "A message with no `id` is a notification and **MUST NOT** be
answered" with §5.2 "Non-`200` codes are reserved for transport-level failures
the JSON-RPC layer never saw" and §7.14 "Cancelling an unknown or
already-answered `id` is a no-op the server **MUST** ignore". Expected: a finding
on RCP-OUT-003 (or RCP-L0-008).
"""
import io
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
            except ValueError:
                msg = None
            if isinstance(msg, dict) and "id" not in msg and msg.get("method") == "notifications/cancel":
                self.send(400)
                return
            self.rfile = io.BufferedReader(io.BytesIO(body))
            handler.do_POST(self)

    return Handler


panel.make_handler = make_handler
main(Config(name="blind2-http-cancel-notif-400", conformance="L1"))
