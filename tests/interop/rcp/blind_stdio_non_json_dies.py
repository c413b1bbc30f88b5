"""BLIND (stdio): a line that is not JSON ends the process (exit status 65)
instead of getting a -32700 reply with `id: null`. Over HTTP it is the correct
panel server.

Breaks §14.1 rule 5: "Return well-formed JSON-RPC 2.0 for every request; …
validate params and return `-32602` on malformed input instead of crashing";
§4.7: "a `null` id denotes a response to an unparseable request, per JSON-RPC";
§12: "`-32700` `ParseError` Invalid JSON." Expected: a stdio parse-error
finding, or L0 not granted.
"""
import os

from blind_hooks import raw_segments, serve_lines, stdio_main
from panel import Config


def die():
    os._exit(65)


def lines():
    for segments in raw_segments():
        yield b"".join(segments).decode("utf-8", "replace")


stdio_main(Config(name="blind-stdio-non-json-dies", conformance="L1"), lambda c: serve_lines(c, lines(), die))
