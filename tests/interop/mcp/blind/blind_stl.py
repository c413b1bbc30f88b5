"""Blind session-id variants for MCP 2026-07-28: `python3 blind_stl.py NAME [PORT]`.

Written from the specification digest (STL, "Earlier Streamable HTTP
Revisions") and the rule list alone, without reading protocheck. Each class
breaks ONE requirement of blind26.Rich about `Mcp-Session-Id` (MCP-STL-001:
never mint or echo; MCP-STL-002: ignore a client-supplied one, never require
or validate it), in a shape the variants of blind26.py did not use.
"""

import itertools
import json
import os
import re
import sys
import threading
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "spec"))

import base  # noqa: E402
from base import Refusal  # noqa: E402
from blind26 import Rich  # noqa: E402

UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def sid_of(handler):
    return handler.headers.get("Mcp-Session-Id")


# --- STL-001 -----------------------------------------------------------------


class SessionMintedEveryFourth(Rich):
    """Mints a fresh `Mcp-Session-Id` on every fourth successful (200) answer, server-wide.

    STL: "No protocol sessions. A modern-only server ... SHOULD ignore it and
    not mint or echo session IDs (so: no `Mcp-Session-Id` response header)";
    the rule: a 2026-07-28 server never mints an `Mcp-Session-Id` on any response.
    """

    RULE = "MCP-STL-001"

    def __init__(self):
        self._count = itertools.count(1)
        self._lock = threading.Lock()

    def send_message(self, handler, status, doc, method):
        extra = []
        if status == 200:
            with self._lock:
                n = next(self._count)
            if n % 4 == 0:
                extra = [("Mcp-Session-Id", uuid.uuid4().hex)]
        handler.send(status, json.dumps(doc).encode(), self.result_type(method), extra)


class SessionMintedOnTemplates(Rich):
    """Mints an `Mcp-Session-Id` only on `resources/templates/list` answers.

    STL: "not mint or echo session IDs (so: no `Mcp-Session-Id` response
    header ...)"; a server never mints an `Mcp-Session-Id` on any response.
    """

    RULE = "MCP-STL-001"

    def send_message(self, handler, status, doc, method):
        extra = [("Mcp-Session-Id", "tmpl-" + uuid.uuid4().hex[:12])] if method == "resources/templates/list" else []
        handler.send(status, json.dumps(doc).encode(), self.result_type(method), extra)


class SessionMintedOnSseLists(Rich):
    """Answers `prompts/list` and `resources/list` as SSE (when accepted) with a minted `Mcp-Session-Id`.

    STL: "No protocol sessions ... not mint or echo session IDs (so: no
    `Mcp-Session-Id` response header ...)" -- on any response, event streams included.
    """

    RULE = "MCP-STL-001"

    def send_message(self, handler, status, doc, method):
        if method in ("prompts/list", "resources/list") and "text/event-stream" in (handler.headers.get("Accept") or ""):
            body = b"event: message\ndata: " + json.dumps(doc).encode() + b"\n\n"
            extra = [("X-Accel-Buffering", "no"), ("Mcp-Session-Id", str(uuid.uuid4()))]
            return handler.send(status, body, "text/event-stream", extra)
        return super().send_message(handler, status, doc, method)


class SessionEchoedWhenUuid(Rich):
    """Echoes a client's `Mcp-Session-Id` back, but only when it looks like a UUID.

    STL: a modern-only server receiving `Mcp-Session-Id` SHOULD ignore it and
    "not mint or echo session IDs"; it never echoes one a client sent.
    """

    RULE = "MCP-STL-001"

    def send_message(self, handler, status, doc, method):
        sid = sid_of(handler)
        extra = [("Mcp-Session-Id", sid)] if sid and UUID.match(sid) else []
        handler.send(status, json.dumps(doc).encode(), self.result_type(method), extra)


class SessionEchoedPrefixedLowercase(Rich):
    """Echoes a client's id as `mcp-session-id: srv-<id>` (lower-case name, prefixed value).

    STL: "not mint or echo session IDs (so: no `Mcp-Session-Id` response
    header ...)"; header names compare case-insensitively (HTTP "Case Sensitivity").
    """

    RULE = "MCP-STL-001"

    def send_message(self, handler, status, doc, method):
        sid = sid_of(handler)
        extra = [("mcp-session-id", "srv-" + sid)] if sid else []
        handler.send(status, json.dumps(doc).encode(), self.result_type(method), extra)


# --- STL-002 -----------------------------------------------------------------


class SessionFormatValidated(Rich):
    """Refuses any request whose `Mcp-Session-Id` is not a UUID (400, -32600 "Malformed session id").

    HTTP "Earlier Streamable HTTP revisions" / STL: a client-supplied
    `Mcp-Session-Id` SHOULD be ignored -- "behaviour identical with or without
    it, including with a bogus value"; the server MUST NOT validate it.
    """

    RULE = "MCP-STL-002"

    def before(self, handler, method):
        sid = sid_of(handler)
        if sid is not None and not UUID.match(sid):
            raise Refusal(400, -32600, "Malformed session id")


class SessionLengthValidated(Rich):
    """Refuses a request whose `Mcp-Session-Id` is longer than 24 characters (400, -32600).

    STL: "behaviour identical with or without it, including with a bogus
    value"; the server MUST NOT validate a client-supplied `Mcp-Session-Id`.
    """

    RULE = "MCP-STL-002"

    def before(self, handler, method):
        sid = sid_of(handler)
        if sid is not None and len(sid) > 24:
            raise Refusal(400, -32600, "Session id too long")


class SessionRequiredOnCall(Rich):
    """Refuses a `tools/call` that carries no `Mcp-Session-Id` (400, -32600 "Missing session").

    STL: "No protocol sessions"; 1.1: a modern request has "no
    `Mcp-Session-Id`"; the server MUST NOT require it, on any request.
    """

    RULE = "MCP-STL-002"

    def before(self, handler, method):
        if method == "tools/call" and not sid_of(handler):
            raise Refusal(400, -32600, "Missing session")


class SessionUnknownOnCompletion(Rich):
    """Answers `completion/complete` carrying any `Mcp-Session-Id` with 404 and -32001 "Session not found".

    STL: a server receiving `Mcp-Session-Id` SHOULD ignore it ("behaviour
    identical with or without it, including with a bogus value"); it MUST NOT validate it.
    """

    RULE = "MCP-STL-002"

    def before(self, handler, method):
        if method == "completion/complete" and sid_of(handler):
            raise Refusal(404, -32001, "Session not found")


class SessionDropsMetaOnTemplates(Rich):
    """With an `Mcp-Session-Id` present, `resources/templates/list` answers without its result `_meta`.

    STL: "behaviour identical with or without it, including with a bogus
    value": a client-supplied `Mcp-Session-Id` SHOULD be ignored.
    """

    RULE = "MCP-STL-002"

    def send_message(self, handler, status, doc, method):
        if method == "resources/templates/list" and sid_of(handler) and isinstance(doc.get("result"), dict):
            doc = dict(doc, result={k: v for k, v in doc["result"].items() if k != "_meta"})
        handler.send(status, json.dumps(doc).encode(), self.result_type(method))


VARIANTS = {
    "stl001-mint-every4th": SessionMintedEveryFourth,
    "stl001-mint-templates": SessionMintedOnTemplates,
    "stl001-mint-sse-lists": SessionMintedOnSseLists,
    "stl001-echo-uuid": SessionEchoedWhenUuid,
    "stl001-echo-prefixed-lc": SessionEchoedPrefixedLowercase,
    "stl002-uuid-format": SessionFormatValidated,
    "stl002-too-long": SessionLengthValidated,
    "stl002-required-call": SessionRequiredOnCall,
    "stl002-completion-404": SessionUnknownOnCompletion,
    "stl002-templates-nometa": SessionDropsMetaOnTemplates,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in VARIANTS:
        sys.exit("usage: blind_stl.py {" + ",".join(VARIANTS) + "} [PORT]")
    base.serve(VARIANTS[sys.argv[1]](), sys.argv[2:])
