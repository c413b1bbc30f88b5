"""BLIND (HTTP): a reply carrying -32004 (UnknownMethod) is sent with HTTP 404
(the JSON-RPC body is still there); every other reply gets 200.

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
                if isinstance(reply, dict) and reply.get("error", {}).get("code") == -32004:
                    status = 404
            handler.send(self, status, body, ctype)

    return Handler


panel.make_handler = make_handler
main(Config(name="blind2-http-unknown-method-404", conformance="L1"))
