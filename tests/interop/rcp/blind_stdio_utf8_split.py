"""BLIND (stdio): frames are buffered until `\n`, but each read() is decoded on
its own, strictly: a frame whose bytes arrive split inside a multi-byte UTF-8
character ("é", "東", an emoji) gets -32700 instead of its answer. Over HTTP it
is the correct panel server.

Breaks §5.1 (stdio): "A reader … **MUST NOT** assume messages arrive one per
`read()`; buffer until `\n`." and "Messages are UTF-8"; §4.6: "Servers **MUST**
accept the full Unicode range in `query`/`text` and **MUST NOT** assume ASCII."
Expected: a stdio framing finding (a MUST outside the levels) or L0 not granted.
"""
from blind_hooks import PARSE_ERROR_LINE, raw_segments, serve_lines, stdio_main
from panel import Config


def lines():
    for segments in raw_segments():
        try:
            yield "".join(seg.decode("utf-8") for seg in segments)
        except UnicodeDecodeError:
            yield PARSE_ERROR_LINE


cfg = Config(name="blind-stdio-utf8-split", conformance="L1")
stdio_main(cfg, lambda c: serve_lines(c, lines()))
