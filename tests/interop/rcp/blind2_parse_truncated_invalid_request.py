"""BLIND: a frame that is not valid JSON but starts with `{` (a truncated
object, `{"jsonrpc":"2.0","id":1,`) is answered -32600 with `id: null`; other
unparseable frames (`not json`) get -32700.

Breaks §12: "`-32700` `ParseError` — Invalid JSON."; §4.7 "a `null` id denotes a
response to an unparseable request"; §14.1(5). Expected: L0 not granted.
"""
import json
import sys

import panel
from blind_hooks import stdio_main
from panel import Config


def reply_for(body: str):
    try:
        return None, json.loads(body)
    except ValueError:
        code = -32600 if body.lstrip().startswith("{") else -32700
        return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": "bad frame"}}, None


base = panel.make_handler


def make_handler(cfg, sessions):
    handler = base(cfg, sessions)

    class Handler(handler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            err, _ = reply_for(body.decode("utf-8", "replace"))
            if err is not None:
                self.send(200, panel.dumps(err).encode())
                return
            import io
            self.rfile = io.BufferedReader(io.BytesIO(body))
            handler.do_POST(self)

    return Handler


def serve(cfg):
    sessions = panel.Sessions(cfg)
    for raw in sys.stdin:
        line = raw.strip()
        if not line:
            continue
        err, msg = reply_for(line)
        if err is not None:
            sys.stdout.write(panel.dumps(err) + "\n")
            sys.stdout.flush()
            continue
        reply, notes = sessions.handle(msg)
        for n in notes:
            sys.stdout.write(n + "\n")
        if reply is not None:
            sys.stdout.write(panel.dumps(reply) + "\n")
        sys.stdout.flush()
        if isinstance(msg, dict) and msg.get("method") == "shutdown" and "id" in msg:
            break


panel.make_handler = make_handler
stdio_main(Config(name="blind2-parse-truncated-invalid-request", conformance="L1"), serve)
