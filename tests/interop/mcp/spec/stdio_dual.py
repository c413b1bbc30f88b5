"""A dual-era MCP server over stdio that binds its process to the era of its
first request, written from the specification text alone (Python standard
library only): `python3 stdio_dual.py`.

VERSION "Backward Compatibility with Initialization-Based Versions": "A
dual-era server selects its behavior from how the client opens: ... An
`initialize` request selects legacy semantics, scoped to the stdio process
(stdio) ...", and "A dual-era server MAY serve both eras concurrently on the
same endpoint or process" (MAY: it need not). This server does not: a
process whose first request is `initialize` serves the legacy revisions
only, and a process opened with a 2026-07-28 request serves 2026-07-28 only
and refuses a later `initialize`. A legacy client launches its own process
and opens it with `initialize`, so it is served (compatibility matrix,
"Legacy / Dual-era: Works").

STDIO "Request Metadata": "All request metadata for the stdio transport is
carried inline in the JSON-RPC message body ... There is no header layer."
The requests are served by the correct server of base.py and the dual-era
variant of variants.py, with the version taken from `_meta`.
"""

import json
import sys

from base import MODERN, Refusal, Server
from variants import LEGACY, DualEra


class StdioDualEra(DualEra):
    """DualEra with the era chosen once per process, by its first request."""

    era = None  # "legacy" or "modern", set by the first request

    def check_headers(self, handler, msg):
        # STDIO: no header layer; the version is the one `_meta` declares
        # (base.handle checks that `_meta` carries it).
        params = msg.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if isinstance(meta, dict):
            return meta.get("io.modelcontextprotocol/protocolVersion")
        return None

    def handle(self, handler, msg):
        method = msg["method"]
        if self.era is None:
            self.era = "legacy" if method == "initialize" else "modern"
        if self.era == "legacy":
            return self.legacy(handler, msg, LEGACY[0])
        if method == "initialize":
            # VERSION: a server "SHOULD name the protocol versions it supports
            # in any error it returns to an initialize request" (written for
            # modern-only servers; this process serves 2026-07-28 only).
            raise Refusal(
                None,
                -32601,
                f"This process serves MCP {MODERN} since its first request; start a new "
                f"process and open it with initialize for {', '.join(LEGACY)}",
                {"supported": [MODERN]},
            )
        return Server.handle(self, handler, msg)


def answer(server, line):
    """The line answering one line read, or None (a notification)."""
    try:
        msg = json.loads(line)
    except ValueError:
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or not isinstance(msg.get("method"), str):
        rid = msg.get("id") if isinstance(msg, dict) else None
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32600, "message": "Invalid request"}}
    if "id" not in msg:
        return None  # notifications (notifications/initialized, cancelled) get no answer
    rid = msg["id"]
    try:
        _, result = server.handle(None, msg)
    except Refusal as r:
        error = {"code": r.code, "message": r.message}
        if r.data is not None:
            error["data"] = r.data
        return {"jsonrpc": "2.0", "id": rid, "error": error}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def main():
    server = StdioDualEra()
    for line in sys.stdin:
        if not line.strip():
            continue
        doc = answer(server, line)
        if doc is not None:
            sys.stdout.write(json.dumps(doc) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
