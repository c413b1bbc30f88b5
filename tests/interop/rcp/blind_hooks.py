"""Hooks for the blind-audit servers (blind_*.py): each of them breaks exactly
one RCP/1 requirement of a correct panel server (panel.py) by replacing one
behaviour, without changing panel.py or any other server. They were written
from the specification text alone, without reading protocheck's probes.

The hooks rebind names that panel.py looks up at call time: `Session` (made by
`Sessions`), `retrieve` (called by the SDK handler), `check_filter` (recursive)
and `capabilities`; and the SDK's shared parameter validator.
"""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import panel  # noqa: E402
import rcp._server as sdk_server  # noqa: E402

OPEN = ("initialize", "info", "ping", "shutdown")


def is_request(msg) -> bool:
    return isinstance(msg, dict) and "id" in msg


def before_session(hook):
    """`hook(session, msg)` runs before a session handles one message (each
    batch member too); it returns `(reply, notes)` to answer instead, or None."""
    base = panel.Session

    class Hooked(base):
        def handle(self, msg):
            out = hook(self, msg)
            if out is not None:
                return out
            return base.handle(self, msg)

    panel.Session = Hooked


def after_session(hook):
    """`hook(session, msg, reply)` may rewrite the reply to one message (each
    batch member too) and returns the reply to send."""
    base = panel.Session

    class Hooked(base):
        def handle(self, msg):
            reply, notes = base.handle(self, msg)
            return hook(self, msg, reply), notes

    panel.Session = Hooked


def wrap_retrieve(wrapper):
    """`wrapper(original, params, cfg)` replaces the `retrieve` handler."""
    original = panel.retrieve
    panel.retrieve = lambda params, cfg: wrapper(original, params, cfg)


def wrap_check_filter(wrapper):
    """`wrapper(original, node, cfg, path)` replaces the filter validator at
    every depth of the tree (check_filter is recursive through the module)."""
    original = panel.check_filter
    panel.check_filter = lambda node, cfg, path="filter": wrapper(original, node, cfg, path)


def wrap_validate_params(wrapper):
    """`wrapper(original, method, params)` replaces the SDK's shared check of
    `k`, `topN`, `candidateK`, … and the funnel invariant."""
    original = sdk_server._validate_params
    sdk_server._validate_params = lambda method, params: wrapper(original, method, params)


def error(id_, code: int, message: str, data=None) -> dict:
    err = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": id_, "error": err}


def main(cfg):
    panel.main(cfg)


# ── stdio: panel.serve_stdio's loop over a reader of our choosing ───────────

PARSE_ERROR_LINE = object()  # a frame the reader could not decode


def serve_lines(cfg, lines, on_parse_error=None):
    """panel.serve_stdio, reading frames from `lines` (str, or PARSE_ERROR_LINE).
    `on_parse_error()` replaces the -32700 reply to a line that is not JSON; it
    returns True to answer -32700 after all, False to stay silent."""
    sessions = panel.Sessions(cfg)
    out = sys.stdout
    for raw in lines:
        line = raw.strip() if raw is not PARSE_ERROR_LINE else raw
        if not line:
            continue
        try:
            if line is PARSE_ERROR_LINE:
                raise ValueError("undecodable frame")
            msg = json.loads(line)
        except ValueError:
            if on_parse_error is None or on_parse_error():
                out.write(panel.dumps({"jsonrpc": "2.0", "id": None,
                                       "error": {"code": -32700, "message": "parse error"}}) + "\n")
                out.flush()
            continue
        reply, notes = sessions.handle(msg)
        for n in notes:
            out.write(n + "\n")
        if reply is not None:
            out.write(panel.dumps(reply) + "\n")
        out.flush()
        if isinstance(msg, dict) and msg.get("method") == "shutdown" and "id" in msg:
            break


def raw_segments(pause=None):
    """Yields each line of stdin as the list of byte segments it arrived in
    (one per os.read). With `pause` (seconds), a partial line followed by that
    long a silence is yielded as if it were complete."""
    import select

    fd = sys.stdin.fileno()
    segments = []
    while True:
        if pause is not None and segments:
            ready, _, _ = select.select([fd], [], [], pause)
            if not ready:
                yield segments
                segments = []
                continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        while b"\n" in chunk:
            head, _, chunk = chunk.partition(b"\n")
            if head:
                segments.append(head)
            yield segments
            segments = []
        if chunk:
            segments.append(chunk)
    if segments:
        yield segments


def stdio_main(cfg, serve):
    """Runs `serve(cfg)` for --stdio, panel's HTTP transport otherwise."""
    if "--stdio" in sys.argv:
        serve(cfg)
    else:
        panel.main(cfg)
