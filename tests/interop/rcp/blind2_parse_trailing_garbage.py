"""BLIND: a frame holding one JSON object followed by garbage
(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{}} xyz`) is served on the
object (the reader decodes the first value and ignores the rest); a frame that
does not start with valid JSON still gets -32700.

Breaks §12: "`-32700` `ParseError` — Invalid JSON." (the frame as a whole is not
JSON); §5.1 "each message is exactly one JSON object"; §14.1(5). Expected: L0
not granted.
"""
import io
import json
import sys

import panel
from blind_hooks import stdio_main
from panel import Config

decoder = json.JSONDecoder()


def first_value(text: str) -> str:
    """The text of the first JSON value in `text`, or `text` when there is none."""
    try:
        _, end = decoder.raw_decode(text.lstrip())
        return text.lstrip()[:end]
    except ValueError:
        return text


base = panel.make_handler


def make_handler(cfg, sessions):
    handler = base(cfg, sessions)

    class Handler(handler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = first_value(self.rfile.read(length).decode("utf-8", "replace")).encode()
            self.headers.replace_header("Content-Length", str(len(body)))
            self.rfile = io.BufferedReader(io.BytesIO(body))
            handler.do_POST(self)

    return Handler


def serve(cfg):
    from blind_hooks import serve_lines
    serve_lines(cfg, (first_value(line) for line in sys.stdin))


panel.make_handler = make_handler
stdio_main(Config(name="blind2-parse-trailing-garbage", conformance="L1"), serve)
