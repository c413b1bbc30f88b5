"""BLIND (stdio): after answering `shutdown` the server keeps reading stdin and
answers every later request (it exits only at EOF). Over HTTP it is the control.

Breaks §13.1: "After answering `shutdown` a server **SHOULD** stop reading new
requests and exit; it **MUST NOT** begin processing a request received after the
`shutdown` response was written." Expected: a finding on RCP-L0-023 (stdio).
"""
import sys

import panel
from blind_hooks import stdio_main
from panel import Config


def serve(cfg):
    sessions = panel.Sessions(cfg)
    for raw in sys.stdin:
        line = raw.strip()
        if not line:
            continue
        try:
            msg = panel.json.loads(line)
        except ValueError:
            sys.stdout.write(panel.dumps({"jsonrpc": "2.0", "id": None,
                                          "error": {"code": -32700, "message": "parse error"}}) + "\n")
            sys.stdout.flush()
            continue
        reply, notes = sessions.handle(msg)
        for n in notes:
            sys.stdout.write(n + "\n")
        if reply is not None:
            sys.stdout.write(panel.dumps(reply) + "\n")
        sys.stdout.flush()


stdio_main(Config(name="blind2-shutdown-keeps-serving", conformance="L1"), serve)
