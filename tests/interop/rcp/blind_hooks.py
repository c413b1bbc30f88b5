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
import re
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


# ── more RCP methods, for the second audit's servers (blind2_*.py) ──────────
# Correct handlers for the methods panel.py does not serve; a server opts in
# with `add_features(...)`. Servers that do not call it are unchanged.

VOCABULARY = 30522
TRANSFORM_METHODS = ["rewrite", "hyde", "multi-query", "decompose", "step-back"]


def _strings(params, fld):
    items = params.get(fld)
    if not isinstance(items, list) or not items:
        panel.bad(fld, f"'{fld}' is a required non-empty array")
    out = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
            out.append(item["text"])
        elif isinstance(item, dict) and isinstance(item.get("type"), str):
            panel.unsupported("modality", item["type"])
        else:
            panel.bad(f"{fld}[{i}]", "an input is a string or a Content block")
    return out


def _kind(params):
    kind = panel.want(params, "kind", (str,))
    if kind is not None and kind not in ("query", "document"):
        panel.bad("kind", "'kind' is query or document")


def term_id(word: str) -> int:
    return sum((j + 1) * ord(c) for j, c in enumerate(word)) % VOCABULARY


def sparse_handler(params, cfg):
    """§7.4: one `{indices, values}` per text, indices within the vocabulary."""
    texts = _strings(params, "texts")
    _kind(params)
    out = []
    for t in texts:
        weights = {}
        for w in panel.words(t):
            weights[term_id(w)] = weights.get(term_id(w), 0.0) + 1.0
        idx = sorted(weights)
        out.append({"indices": idx, "values": [round(weights[i], 6) for i in idx]})
    return {"sparse": out}


def multi_handler(params, cfg):
    """§7.5: one matrix per input, one row per token, rows of `dimension`."""
    fld = "inputs" if "inputs" in params else "texts"
    texts = _strings(params, fld)
    _kind(params)
    encoding = panel.want(params, "encoding", (str,)) or "json"
    if encoding != "json":
        panel.unsupported("encoding", encoding)
    matrices = [[panel.dense_vector(w) for w in (panel.words(t) or [t])] for t in texts]
    return {"matrices": matrices, "dimension": panel.DIMENSION}


def transform_handler(params, cfg):
    """§7.8: `multi-query`/`decompose` return several queries; `hyde` a
    hypothetical document."""
    q = panel.query_text(params, cfg)
    method = params.get("method")
    if not isinstance(method, str):
        panel.bad("method", "'method' is required")
    if method not in TRANSFORM_METHODS:
        panel.unsupported("method", method)
    n = panel.want(params, "n", (int,)) or 3
    if method == "hyde":
        return {"queries": [q], "hypothetical": f"A passage that answers: {q}."}
    if method == "multi-query":
        variants = [q, f"what is {q}", f"{q} explained", f"{q} overview", f"about {q}"]
        return {"queries": variants[:n]}
    if method == "decompose":
        parts = [p for p in re.split(r"\band\b|,", q) if p.strip()] or [q]
        parts = [p.strip() for p in parts]
        if len(parts) < 2:
            parts = [q, f"background of {q}"]
        return {"queries": parts[:n]}
    if method == "step-back":
        return {"queries": [f"general principles behind {q}"]}
    return {"queries": [q.strip()]}


class Index:
    """An in-memory `index` (§7.10, §7.11): upsert by id, idempotent delete."""

    def __init__(self):
        self.docs = {}
        self.minted = 0

    def add(self, params, cfg):
        docs = params.get("documents")
        if not isinstance(docs, list) or not docs:
            panel.bad("documents", "'documents' is a required non-empty array")
        ids = []
        for i, d in enumerate(docs):
            if not isinstance(d, dict) or not isinstance(d.get("text"), str):
                panel.bad(f"documents[{i}].text", "a document needs 'text'")
            did = d.get("id")
            if did is None:
                self.minted += 1
                did = f"minted-{self.minted}"
            elif not isinstance(did, str):
                panel.bad(f"documents[{i}].id", "'id' is a string")
            self.docs[did] = {"text": d["text"], "meta": d.get("meta") or {}}
            ids.append(did)
        return {"ids": ids}

    def delete(self, params, cfg):
        ids = params.get("ids")
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            panel.bad("ids", "'ids' is a required array of strings")
        removed = 0
        for did in ids:
            if self.docs.pop(did, None) is not None:
                removed += 1
        return {"deleted": removed}


def add_features(sparse=False, multi=False, transform=False, index=False, handlers=None):
    """Adds correctly behaving methods (and their capabilities) to every session.
    `handlers` maps a method to `wrapper(original, params, cfg)` for a fault."""
    base = panel.build_server
    handlers = handlers or {}
    store = Index()

    def build(cfg, session):
        s = base(cfg, session)
        table = {}
        if sparse:
            s.advertise("sparseEmbed", {"identity": "panel-hash-sparse", "vocabulary": VOCABULARY})
            table["embed/sparse"] = sparse_handler
        if multi:
            s.advertise("multiVector", {"dimension": panel.DIMENSION, "identity": "panel-trigram-multi",
                                        "similarity": "cosine", "modalities": ["text"]})
            table["embed/multi"] = multi_handler
        if transform:
            s.advertise("transform", {"methods": list(TRANSFORM_METHODS)})
            table["query/transform"] = transform_handler
        if index:
            s.advertise("index", {"writable": True})
            table["index/add"] = store.add
            table["index/delete"] = store.delete
        for method, fn in table.items():
            wrapper = handlers.get(method)
            if wrapper is None:
                s.on(method, lambda p, fn=fn: fn(p, cfg))
            else:
                s.on(method, lambda p, fn=fn, w=wrapper: w(fn, p, cfg))
        return s

    panel.build_server = build
    return store
