"""BLIND (stdio): the server takes each `read()` as one message: when one read
holds several complete lines, only the first is served and the rest are dropped.
A frame split over reads is joined correctly. Over HTTP it is the control server.

Breaks §5.1: "A reader … **MUST NOT** assume messages arrive one per `read()`;
buffer until `\n`." Expected: a stdio framing finding (RCP-OUT-002) or L0 not
granted.
"""
import os
import sys

from blind_hooks import serve_lines, stdio_main
from panel import Config


def lines():
    fd = sys.stdin.fileno()
    pending = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        pending += chunk
        if b"\n" not in pending:
            continue
        first, _, _rest = pending.partition(b"\n")
        pending = b""  # BROKEN: whatever followed the first line in this read is dropped
        yield first.decode("utf-8", "replace")


stdio_main(Config(name="blind2-stdio-one-per-read", conformance="L1"), lambda c: serve_lines(c, lines()))
