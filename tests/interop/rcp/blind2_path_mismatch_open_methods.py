"""BLIND (HTTP): the path/body method check applies only to gated methods: a body
`ping`, `info` or `shutdown` posted to another path (`POST /rcp/retrieve`) is
served; a body `retrieve` posted to `/rcp/ping` gets -32600.

Breaks §5.2: "The method in the URL path **MUST** match the `method` in the body;
on mismatch the server **MUST** return `-32600`." Expected: a finding on
RCP-OUT-001 (a MUST outside the levels).
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
                method = json.loads(body).get("method")
            except (ValueError, AttributeError):
                method = None
            if method in ("ping", "info", "shutdown") and self.path.startswith("/rcp/"):
                self.path = f"/rcp/{method}"
            self.rfile = io.BufferedReader(io.BytesIO(body))
            handler.do_POST(self)

    return Handler


panel.make_handler = make_handler
main(Config(name="blind2-path-mismatch-open-methods", conformance="L1"))
