"""BLIND (stdio): a frame that stops arriving for 50 ms before its `\n` is
treated as complete: the first part is answered -32700, and so is the rest
when it comes. Frames written at once are served correctly. Over HTTP it is
the correct panel server.

Breaks §5.1 (stdio): "**Framing** is newline-delimited JSON (NDJSON): each
message is exactly one JSON object … terminated by a single `\n`." and "A reader
… **MUST NOT** assume messages arrive one per `read()`; buffer until `\n`."
Expected: a stdio framing finding (a MUST outside the levels) or L0 not granted.
"""
from blind_hooks import raw_segments, serve_lines, stdio_main
from panel import Config


def lines():
    for segments in raw_segments(pause=0.05):
        yield b"".join(segments).decode("utf-8", "replace")


stdio_main(Config(name="blind-stdio-slow-line", conformance="L1"), lambda c: serve_lines(c, lines()))
