"""BLIND (stdio): an empty line is skipped, but a line of spaces or tabs
(`"   \n"`) is answered -32700. Over HTTP it is the control server.

Breaks §5.1: "A reader **MUST** tolerate blank lines between messages (ignore
them)". (Reading "blank" as "empty" only is a reading a server author could take;
a line of white space is blank in common usage.) Expected: a stdio framing
finding (RCP-OUT-002).
"""
import sys

from blind_hooks import serve_lines, stdio_main
from panel import Config


def lines():
    for raw in sys.stdin:
        body = raw.rstrip("\n")
        yield "   not json" if body and not body.strip() else raw


stdio_main(Config(name="blind2-stdio-whitespace-line", conformance="L1"), lambda c: serve_lines(c, lines()))
