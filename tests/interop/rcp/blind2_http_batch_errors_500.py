"""BLIND (HTTP): a batch reply that holds at least one error entry is sent with
HTTP 500 (the JSON array is still there); single replies get 200.

Breaks §5.2: "A well-formed JSON-RPC response — *including* one carrying a
JSON-RPC `error` — **MUST** be returned with HTTP `200`." Expected: a finding on
RCP-OUT-004.
"""
import json

import panel
from blind_hooks import main
from panel import Config

base = panel.make_handler


def make_handler(cfg, sessions):
    handler = base(cfg, sessions)

    class Handler(handler):
        def send(self, status, body=b"", ctype="application/json"):
            if status == 200 and ctype == "application/json" and body:
                try:
                    reply = json.loads(body)
                except ValueError:
                    reply = None
                if isinstance(reply, list) and any(isinstance(r, dict) and "error" in r for r in reply):
                    status = 500
            handler.send(self, status, body, ctype)

    return Handler


panel.make_handler = make_handler
main(Config(name="blind2-http-batch-errors-500", conformance="L1"))
