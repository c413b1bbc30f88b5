"""BLIND (stdio): a line that is not JSON is dropped without a reply (no
-32700 with `id: null`); the server goes on with the next line. Over HTTP it
is the correct panel server.

Breaks §12: "`-32700` `ParseError` Invalid JSON."; §4.7: "a `null` id denotes a
response to an unparseable request, per JSON-RPC"; §14.1 rule 5: "Return
well-formed JSON-RPC 2.0 for every request". Expected: a stdio parse-error
finding, or L0 not granted.
"""
from blind_hooks import raw_segments, serve_lines, stdio_main
from panel import Config


def lines():
    for segments in raw_segments():
        yield b"".join(segments).decode("utf-8", "replace")


stdio_main(Config(name="blind-stdio-non-json-silent", conformance="L1"), lambda c: serve_lines(c, lines(), lambda: False))
