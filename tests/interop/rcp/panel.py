"""Shared base of protocheck's RCP/1 interop panel.

Every server of the panel is built here, on the public API of the PyPI SDK
`rcp-protocol==1.0.1` (`rcp.Server`, `rcp.RcpError`, `rcp.Errc`, `rcp.Method`,
`rcp.rrf_fuse`, `rcp.weighted_fuse`, `rcp.encode_vectors`,
`rcp.make_progress_notification`, `rcp.make_log_notification`). The behaviour
follows the published RCP/1 specification (spec/rcp-1.0.md); each server file
only picks a `Config`. Section numbers below are the spec's.

Usage of a server file:

    python3 SERVER.py --http [--port N]   # prints "RCP-PANEL-LISTENING <base URL>" then serves
    python3 SERVER.py --stdio             # NDJSON on stdin/stdout (§5.1)

Over HTTP, port 0 (the default) binds an ephemeral loopback port.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import rcp
from rcp import Errc, Method, RcpError

# ── configuration ─────────────────────────────────────────────────────────────

ALL_OPERATORS = ["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "exists"]
FIELD_TYPES = {"lang": "keyword", "tag": "keyword", "year": "int", "title": "text"}
LOG_LEVELS = ["debug", "info", "notice", "warning", "error"]
DIMENSION = 32
SNAPSHOT = "snap-1"


@dataclass
class Config:
    """What one panel server advertises and how it behaves."""

    name: str
    conformance: str | None = "L2"
    # "process": one initialized flag for the whole process (the SDK's own model);
    # "stateless": every HTTP request is implicitly initialized (§5.2 Sessions);
    # "token": initialize returns `_meta.session`, later requests carry `RCP-Session`;
    # "never": `initialize` always fails with -32600 and nothing is gated;
    # "connection": each HTTP connection is a session of its own, kept alive
    # across requests (HTTP/1.1), as §5.2 allows: "`initialize` state does not
    # persist across connections by default" (over stdio: the process).
    session: str = "process"
    modes: list = field(default_factory=lambda: ["dense", "sparse", "hybrid"])
    fusion: list = field(default_factory=lambda: ["rrf", "weighted"])
    filter_fields: dict = field(default_factory=lambda: dict(FIELD_TYPES))
    operators: list | None = field(default_factory=lambda: list(ALL_OPERATORS))
    reject_empty_in: bool = False
    citations: bool = True
    rerank: bool = False
    graph: bool = False
    embed: bool = False
    streaming: bool = False
    progress_frames: int = 2
    pagination: bool = False
    trailing_empty_page: bool = False
    log: bool = False
    # True: a client opts into logs only with its `log` capability (§17.1);
    # False: the capability or a `_meta.logLevel` handle (§7.1) both opt in.
    log_needs_capability: bool = False
    deterministic: bool = False
    snapshots: bool = False
    unknown_snapshot_code: int = Errc.BACKEND_UNAVAILABLE
    # True: `retrieve` never reads `level` (a flat corpus, no `retrieve.levels`;
    # §7.7.2 calls `unit`, `level` and `tokenBudget` "safely ignorable").
    ignore_level: bool = False
    # BROKEN variants: answer unadvertised option values / skip param validation.
    lenient_options: bool = False
    lenient_params: bool = False
    # BROKEN: progress frames carry the token as a string ("7" for 7).
    progress_token_as_string: bool = False
    # BROKEN: each `nextCursor` skips one hit, so a hit is lost at every page
    # boundary (nothing repeats).
    page_gap: bool = False
    # BROKEN: a streamed `retrieve` gets progress frames even when it carried
    # no progressToken (a token the server made up).
    progress_without_token: bool = False
    # BROKEN: `retrieve` serves any `rerank.method` of the spec's enum, not only
    # the advertised `rerank.methods`.
    lenient_rerank_method: bool = False
    # BROKEN: filters serve every §8 operator, not only the advertised ones.
    lenient_operators: bool = False
    # BROKEN: `gt` behaves as `>=` and `lt` as `<=` (range boundaries wrong).
    inclusive_strict_ranges: bool = False
    # BROKEN: before `initialize` only `retrieve` is gated; `rerank`, `embed`
    # and `graph` are served (§14.1 rule 3 gates every request but info/ping).
    gate_only_retrieve: bool = False
    # BROKEN (stdio): before its reply to the first `ping` it writes one
    # `notifications/log` that no client asked for (the client never opted
    # into logs), so a reader that takes one line per request falls behind.
    unsolicited_log: bool = False


# ── corpus and scoring ────────────────────────────────────────────────────────

CORPUS = [
    ("doc-01", "en", "news", 2019, "Eiffel Tower", "The Eiffel Tower is a wrought iron lattice tower in Paris, France."),
    ("doc-02", "en", "blog", 2021, "Paris travel", "A travel guide to Paris: museums, cafes and the river Seine."),
    ("doc-03", "fr", "news", 2023, "Tour Eiffel", "La tour Eiffel est une tour de fer puddle de Paris."),
    ("doc-04", "en", "wiki", 2015, "Retrieval", "Dense retrieval embeds queries and passages into one vector space."),
    ("doc-05", "en", "wiki", 2018, "BM25", "BM25 is a sparse lexical ranking function used by search engines."),
    ("doc-06", "en", "blog", 2024, "Hybrid search", "Hybrid search fuses dense and sparse rankings with reciprocal rank fusion."),
    ("doc-07", "de", "news", 2020, "Berlin", "Berlin ist die Hauptstadt von Deutschland und hat viele Museen."),
    ("doc-08", "en", "wiki", 2012, "Rerankers", "A cross-encoder reranker rescores candidate passages against the query."),
    ("doc-09", "en", "news", 2022, "Test cricket", "The test match lasted five days and ended in a draw."),
    ("doc-10", "en", "blog", 2016, "Unit testing", "Unit tests check one function; a test suite runs many tests."),
    ("doc-11", "es", "wiki", 2017, "Madrid", "Madrid es la capital de Espana y tiene museos famosos."),
    ("doc-12", "en", "wiki", 2025, "Graph RAG", "Graph retrieval walks entity neighbourhoods and community summaries."),
]
DOCS = [
    {"id": i, "text": text, "meta": {"lang": lang, "tag": tag, "year": year, "title": title}}
    for (i, lang, tag, year, title, text) in CORPUS
]


def words(text: str) -> list:
    return re.findall(r"[a-z0-9]+", text.lower())


def dense_vector(text: str) -> list:
    """A deterministic, normalised hashed character-trigram embedding."""
    vec = [0.0] * DIMENSION
    padded = f"  {text.lower()}  "
    for i in range(len(padded) - 2):
        gram = padded[i:i + 3]
        h = sum((j + 1) * ord(c) for j, c in enumerate(gram))
        vec[h % DIMENSION] += 1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


DOC_VECTORS = {d["id"]: dense_vector(d["text"]) for d in DOCS}


def dense_scores(query: str) -> dict:
    q = dense_vector(query)
    return {d["id"]: round(sum(a * b for a, b in zip(q, DOC_VECTORS[d["id"]])), 6) for d in DOCS}


def sparse_scores(query: str) -> dict:
    """BM25 (k1 1.2, b 0.75) over the corpus."""
    docs = {d["id"]: words(d["text"]) for d in DOCS}
    avg = sum(len(w) for w in docs.values()) / len(docs)
    out = {}
    for did, toks in docs.items():
        score = 0.0
        for term in set(words(query)):
            tf = toks.count(term)
            if not tf:
                continue
            df = sum(1 for t in docs.values() if term in t)
            idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
            score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(toks) / avg))
        out[did] = round(score, 6)
    return out


def ranked(scores: dict) -> list:
    """Descending score, ties by id: one total order, so results are deterministic."""
    return sorted(scores, key=lambda did: (-scores[did], did))


# ── request validation helpers ────────────────────────────────────────────────

def bad(fld: str, message: str):
    raise RcpError(Errc.INVALID_PARAMS, message, {"field": fld})


def unsupported(option: str, value):
    raise RcpError(Errc.OPTION_UNSUPPORTED, f"{option} {value!r} is not advertised", {"option": option})


def query_text(params: dict, cfg: Config, fld: str = "query") -> str:
    """§7.7: `query` is a string, a Content block or a list of Content blocks."""
    if cfg.lenient_params:
        return params[fld].lower()  # BROKEN: KeyError / AttributeError become -32603
    if fld not in params:
        bad(fld, f"'{fld}' is required")
    q = params[fld]
    blocks = q if isinstance(q, list) else [q]
    texts = []
    for b in blocks:
        if isinstance(b, str):
            texts.append(b)
        elif isinstance(b, dict) and isinstance(b.get("type"), str):
            if b["type"] != "text":
                if not cfg.lenient_options:
                    unsupported("modality", b["type"])
                continue
            if not isinstance(b.get("text"), str):
                bad(fld, "a text Content block needs 'text'")
            texts.append(b["text"])
        else:
            bad(fld, f"'{fld}' must be a string or Content")
    if isinstance(q, list) and not q:
        bad(fld, f"'{fld}' must not be empty")
    return " ".join(texts)


def want(params: dict, name: str, kinds, fld=None):
    """The optional param `name`, checked against JSON types `kinds` (§4.6: null is absent)."""
    v = params.get(name)
    if v is None:
        return None
    if isinstance(v, bool) and bool not in kinds:
        bad(fld or name, f"'{name}' has the wrong type")
    if not isinstance(v, kinds):
        bad(fld or name, f"'{name}' has the wrong type")
    return v


# ── filters (§8) ──────────────────────────────────────────────────────────────

def check_filter(node, cfg: Config, path: str = "filter"):
    """Validates a §8 filter tree; returns a predicate over a document's meta."""
    if not isinstance(node, dict):
        bad(path, "a filter node is an object")
    combinators = [k for k in ("and", "or", "not") if k in node]
    if combinators:
        if len(combinators) > 1 or "field" in node:
            bad(path, "a filter node has one combinator or is a leaf")
        kind = combinators[0]
        if kind == "not":
            inner = check_filter(node["not"], cfg, f"{path}.not")
            return lambda m: not inner(m)
        children = node[kind]
        # §8: "an empty `and`/`or` array is `-32602`".
        if not isinstance(children, list) or not children:
            bad(f"{path}.{kind}", f"'{kind}' needs a non-empty array")
        preds = [check_filter(c, cfg, f"{path}.{kind}[{i}]") for i, c in enumerate(children)]
        if kind == "and":
            return lambda m: all(p(m) for p in preds)
        return lambda m: any(p(m) for p in preds)
    fname, op, value = node.get("field"), node.get("op"), node.get("value")
    if not isinstance(fname, str) or not isinstance(op, str):
        bad(path, "a leaf is {field, op, value}")
    if op not in ALL_OPERATORS:
        bad(path, f"unknown operator {op!r}")
    # §8: "Servers MUST reject filters referencing unadvertised fields with -32602".
    if fname not in cfg.filter_fields:
        bad(fname, f"field {fname!r} is not advertised")
    # §8: "MUST reject an operator outside its advertised filter.operators with -32005".
    if cfg.operators is not None and op not in cfg.operators and not cfg.lenient_operators:
        unsupported("op", op)
    ftype = cfg.filter_fields[fname]
    numeric = ftype in ("int", "float")

    def scalar_ok(v):
        if numeric:
            return isinstance(v, (int, float)) and not isinstance(v, bool)
        return isinstance(v, str)

    if op == "exists":
        if not isinstance(value, bool):
            bad(fname, "'exists' takes a boolean")
        return lambda m: (fname in m) == value
    if op in ("in", "nin"):
        if not isinstance(value, list) or not all(scalar_ok(v) for v in value):
            bad(fname, f"'{op}' takes an array of {ftype} values")
        # §8 leaves an empty list undefined; this variant treats it as a malformed value.
        if cfg.reject_empty_in and not value:
            bad(fname, f"'{op}' needs at least one value")
        if op == "in":
            return lambda m: m.get(fname) in value
        return lambda m: m.get(fname) not in value
    if op in ("gt", "gte", "lt", "lte"):
        # §8 table: ordered comparison "Applies to int/float/date".
        if not numeric:
            bad(fname, f"'{op}' does not apply to a {ftype} field")
        if not scalar_ok(value):
            bad(fname, f"'{op}' takes a number")
        cmp = {"gt": lambda a: a > value, "gte": lambda a: a >= value,
               "lt": lambda a: a < value, "lte": lambda a: a <= value}[op]
        if cfg.inclusive_strict_ranges and op in ("gt", "lt"):
            # BROKEN: §8 table "`gt`/`gte`/`lt`/`lte` … Ordered comparison"; `gt` is strict.
            cmp = {"gt": lambda a: a >= value, "lt": lambda a: a <= value}[op]
        return lambda m: fname in m and cmp(m[fname])
    if op == "contains":
        if ftype != "text" or not isinstance(value, str):
            bad(fname, "'contains' applies to a text field with a string")
        return lambda m: value in str(m.get(fname, ""))
    if not scalar_ok(value):
        bad(fname, f"'{op}' on a {ftype} field takes a {ftype} value")
    if op == "eq":
        return lambda m: m.get(fname) == value
    return lambda m: m.get(fname) != value


# ── per-request context: notifications the current request may emit ─────────

_local = threading.local()


class Session:
    """One RCP session: an SDK server plus what the client said at initialize."""

    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.client_caps: dict = {}
        self.log_level = None
        self.server = build_server(cfg, self)

    def handle(self, msg):
        """Dispatches one parsed message (object or batch); returns (reply or None, notifications)."""
        _local.notes = []
        _local.session = self
        if isinstance(msg, dict) and msg.get("method") == Method.INITIALIZE and "id" in msg:
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            reply = self.server.handle(msg)
            if isinstance(reply, dict) and "result" in reply:
                caps = params.get("capabilities")
                self.client_caps = caps if isinstance(caps, dict) else {}
                meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
                self.log_level = meta.get("logLevel")
            return reply, []
        if isinstance(msg, list):
            if not msg:
                return {"jsonrpc": "2.0", "id": None,
                        "error": {"code": Errc.INVALID_REQUEST, "message": "empty batch"}}, []
            out = [r for r in (self.handle(m)[0] for m in msg) if r is not None]
            return (out or None), []
        if self.cfg.gate_only_retrieve and isinstance(msg, dict) and "id" in msg \
                and msg.get("method") in (Method.RERANK, Method.EMBED, Method.GRAPH) \
                and not self.server._initialized:
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            return self.server._dispatch(msg["id"], msg["method"], params), list(_local.notes)
        return self.server.handle(msg), list(_local.notes)


def emit(frame: str):
    if getattr(_local, "notes", None) is not None:
        _local.notes.append(frame)


def current() -> Session:
    return _local.session


# ── handlers ──────────────────────────────────────────────────────────────────

def maybe_log(params: dict, cfg: Config, message: str, data=None):
    """§17.1 / §7.1: logs go only to a client that opted in."""
    if not cfg.log:
        return
    s = current()
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    level = meta.get("logLevel") or s.log_level
    opted = "log" in s.client_caps or (not cfg.log_needs_capability and level is not None)
    if not opted:
        return
    floor = level if level in LOG_LEVELS else "debug"
    for lvl, msg in (("debug", f"{message}: scoring"), ("info", message)):
        if LOG_LEVELS.index(lvl) >= LOG_LEVELS.index(floor):
            emit(rcp.make_log_notification(lvl, msg, data))


def maybe_progress(params: dict, cfg: Config, stages):
    """§9: progress only for a request that carried `_meta.progressToken`."""
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    token = meta.get("progressToken")
    if token is None and cfg.progress_without_token:
        token = "server-made-token"  # BROKEN: §9 "MUST NOT emit progress for a request that carried none"
    if not cfg.streaming or token is None or isinstance(token, bool):
        return
    if not isinstance(token, (str, int)):
        bad("_meta.progressToken", "a progress token is a string or an integer")
    if cfg.progress_token_as_string:
        token = str(token)  # BROKEN: §9 "MUST echo it verbatim"
    for i, stage in enumerate(stages[:cfg.progress_frames]):
        emit(rcp.make_progress_notification(token, round((i + 1) / (len(stages) + 1), 3), stage))


def make_hit(did: str, score: float, cfg: Config, include_text=True, include_vector=False, unit="chunk"):
    doc = next(d for d in DOCS if d["id"] == did)
    hit = {"id": did, "score": score, "meta": dict(doc["meta"]), "unit": unit, "modality": "text"}
    if include_text:
        hit["text"] = doc["text"]
    if include_vector:
        hit["vector"] = DOC_VECTORS[did]
    if cfg.citations:
        hit["citation"] = {"source": "panel-corpus", "uri": f"https://example.invalid/{did}",
                           "title": doc["meta"]["title"]}
    return hit


def check_option_objects(params: dict):
    """Schema RetrieveParams: the types and bounds inside `fusion`, `rerank` and
    `recency` (`mmr` is checked where it is read); §12 `-32602` "a wrong JSON
    type, a value out of range"."""
    def number(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    def integer(v):
        return isinstance(v, int) and not isinstance(v, bool)

    checks = {
        "fusion": {"method": lambda v: isinstance(v, str), "rrfK": integer,
                   "alpha": lambda v: number(v) and 0 <= v <= 1,
                   "weights": lambda v: isinstance(v, dict) and all(number(w) for w in v.values())},
        "rerank": {"method": lambda v: isinstance(v, str), "model": lambda v: isinstance(v, str),
                   "topN": lambda v: integer(v) and v >= 1},
        "recency": {"field": lambda v: isinstance(v, str), "halfLifeDays": number},
    }
    for name, fields in checks.items():
        obj = params.get(name)
        if isinstance(obj, dict):
            for key, ok in fields.items():
                if obj.get(key) is not None and not ok(obj[key]):
                    bad(f"{name}.{key}", f"'{name}.{key}' has the wrong type or is out of range")


def retrieve(params: dict, cfg: Config) -> dict:
    q = query_text(params, cfg)
    if not cfg.lenient_params:
        check_option_objects(params)
    notes = []
    strict = want(params, "strict", (bool,))
    strict = True if strict is None else strict  # §7.7: "`strict` defaults to `true`"

    def option(name, value, allowed):
        """§7.7: an unsupported option is -32005 unless `strict:false` (then noted)."""
        if value is None or value in allowed or cfg.lenient_options:
            return value
        if strict:
            unsupported(name, value)
        notes.append(f"{name} {value!r} is not supported; ignored")
        return None

    # The schema's RetrieveParams requires `query` and `k`; §12 -32602 "Missing/malformed params".
    k = params.get("k")
    if k is None and not cfg.lenient_params:
        bad("k", "'k' is required")
    k = min(k or 10, 50)  # §7.7: clamp to maxK
    mode = option("mode", want(params, "mode", (str,)), cfg.modes) or default_mode(cfg)
    option("modality", want(params, "modality", (str,)), ["text"])
    unit = option("unit", want(params, "unit", (str,)), ["chunk", "passage"]) or "chunk"
    if not cfg.ignore_level:
        level = want(params, "level", (int,))
        option("level", level, [0])
    fusion = want(params, "fusion", (dict,)) or {}
    fusion_method = option("fusion.method", fusion.get("method"), cfg.fusion) or "rrf"
    rr = params.get("rerank")
    if rr is not None and rr is not False:
        if not isinstance(rr, dict):
            bad("rerank", "'rerank' is an object or false")
        methods = ["cross-encoder"] if cfg.rerank else []
        if cfg.lenient_rerank_method:
            methods = ["cross-encoder", "colbert", "llm"]  # BROKEN: §12 -32005 for rerank.method
        option("rerank.method", rr.get("method"), methods)
        if not cfg.rerank:
            option("rerank", "builtin", [])
    mmr = want(params, "mmr", (dict,))
    if mmr is not None:
        lam = mmr.get("lambda")
        if not isinstance(lam, (int, float)) or isinstance(lam, bool) or not 0 <= lam <= 1:
            bad("mmr.lambda", "'mmr.lambda' is a number in [0,1]")
    rewrite = params.get("rewrite")
    if rewrite is not None and rewrite is not False:
        if not isinstance(rewrite, str):
            bad("rewrite", "'rewrite' is a transform method or false")
        option("rewrite", rewrite, [])
    if want(params, "recency", (dict,)) is not None:
        option("recency", "recency", [])
    want(params, "sessionId", (str,))
    include_text = want(params, "includeText", (bool,))
    include_vectors = want(params, "includeVectors", (bool,)) or False
    want(params, "seed", (int,))
    min_score = want(params, "minScore", (int, float))
    budget = params.get("tokenBudget")
    pinned = want(params, "indexVersion", (str,))
    if pinned is not None and pinned != SNAPSHOT:
        # §7.7.1: "MUST either serve that snapshot or fail with -32010";
        # §12 lists "pinned indexVersion gone" under -32016 Conflict.
        raise RcpError(cfg.unknown_snapshot_code, f"index version {pinned!r} is not available",
                       {"field": "indexVersion"})
    predicate = None
    if params.get("filter") is not None:
        predicate = check_filter(params["filter"], cfg)
    offset = 0
    cursor = params.get("cursor")
    if cursor is not None:
        if not cfg.pagination:
            option("cursor", "cursor", [])
        elif not isinstance(cursor, str) or not re.fullmatch(r"o[0-9]{1,4}", cursor):
            raise RcpError(Errc.NOT_FOUND, "unknown or expired cursor", {"field": "cursor"})
        else:
            offset = int(cursor[1:])

    maybe_progress(params, cfg, ["recall", "fuse", "rerank"])
    maybe_log(params, cfg, f"retrieve {mode}")

    if mode == "dense":
        scores = dense_scores(q)
    elif mode == "sparse":
        scores = sparse_scores(q)
    else:
        dense, sparse = dense_scores(q), sparse_scores(q)
        lists = {"dense": [{"id": d, "score": dense[d]} for d in ranked(dense)],
                 "sparse": [{"id": d, "score": sparse[d]} for d in ranked(sparse)]}
        fuse = rcp.weighted_fuse if fusion_method == "weighted" else rcp.rrf_fuse
        scores = {h["id"]: round(h["meta"]["fusedScore"], 6) for h in fuse(lists)}
    order = ranked(scores)
    if predicate is not None:
        order = [d for d in order if predicate(next(x for x in DOCS if x["id"] == d)["meta"])]
    if min_score is not None:
        order = [d for d in order if scores[d] >= min_score]
    page = order[offset:offset + k]
    used = None
    if isinstance(budget, int):
        packed, used = [], 0
        for d in page:
            cost = len(words(next(x for x in DOCS if x["id"] == d)["text"]))
            if packed and used + cost > budget:
                break
            packed.append(d)
            used += cost
        page = packed
    # §7.7.2: "each `Hit` echoes its own `unit`".
    result = {"hits": [make_hit(d, scores[d], cfg, include_text is not False, include_vectors, unit)
                       for d in page],
              "usage": {"candidates": len(order), "latencyMs": 0}}
    if used is not None:
        result["usage"]["tokens"] = used  # §7.7.2: "SHOULD report the packed total"
    if notes:
        result["usage"]["notes"] = notes
    if cfg.snapshots:
        result["indexVersion"] = SNAPSHOT
    if cfg.pagination:
        more = offset + len(page) < len(order)
        # The variant hands out a cursor whenever its page was non-empty, so the
        # last cursor leads to an empty page (§10 only says a missing cursor ends).
        if more or (cfg.trailing_empty_page and page):
            # BROKEN variant: the next page starts one hit too late.
            gap = 1 if cfg.page_gap else 0
            result["nextCursor"] = f"o{offset + len(page) + gap}"
    return result


def default_mode(cfg: Config) -> str:
    return "hybrid" if "hybrid" in cfg.modes else cfg.modes[0]


def rerank_handler(params: dict, cfg: Config) -> dict:
    """§7.6: `{query, passages}` → `{scores, order}`, scores aligned with passages."""
    q = query_text(params, cfg)
    passages = params.get("passages")
    if not isinstance(passages, list):
        bad("passages", "'passages' is a required array")
    method = want(params, "method", (str,))
    want(params, "model", (str,))  # schema RerankParams: `model` is a string
    if method is not None and method != "cross-encoder" and not cfg.lenient_options:
        unsupported("method", method)  # §7.6: "`method` MUST be in `rerank.methods`"
    texts = []
    for i, p in enumerate(passages):
        if isinstance(p, str):
            texts.append(p)
        elif isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str):
            texts.append(p["text"])
        else:
            bad(f"passages[{i}]", "a passage is a string or a text Content block")
    qv = dense_vector(q)
    qwords = set(words(q))
    scores = [round(sum(a * b for a, b in zip(qv, dense_vector(t))) + len(qwords & set(words(t))), 6)
              for t in texts]
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    top_n = params.get("topN")
    if isinstance(top_n, int):
        order = order[:top_n]
    maybe_log(params, cfg, "rerank")
    return {"scores": scores, "order": order}


def embed_handler(params: dict, cfg: Config) -> dict:
    """§7.3: `inputs` (or the legacy `texts`) → one vector per input."""
    fld = "inputs" if "inputs" in params else "texts"
    inputs = params.get(fld)
    if not isinstance(inputs, list):
        bad("inputs", "'inputs' is a required array")
    kind = want(params, "kind", (str,))
    if kind is not None and kind not in ("query", "document"):
        bad("kind", "'kind' is query or document")
    encoding = want(params, "encoding", (str,)) or "json"
    if encoding != "json" and not cfg.lenient_options:
        unsupported("encoding", encoding)  # §7.3.1: an unadvertised encoding is -32005
    texts = []
    for i, item in enumerate(inputs):
        texts.append(query_text({"q": item}, cfg, "q") if not isinstance(item, str) else item)
    vectors = [dense_vector(t) for t in texts]
    if encoding == "f32-base64":
        payload, _ = rcp.encode_vectors(vectors, "f32-base64")
    else:
        payload = vectors
    return {"vectors": payload, "encoding": encoding, "dimension": DIMENSION}


def graph_handler(params: dict, cfg: Config) -> dict:
    """§7.9: "`op` MUST be in `graph.ops`"; only local and global are offered."""
    op = params.get("op")
    if not isinstance(op, str):
        bad("op", "'op' is required")
    if op not in ("local", "global", "drift", "communities", "neighbors"):
        bad("op", f"unknown graph op {op!r}")
    if op not in ("local", "global") and not cfg.lenient_options:
        unsupported("op", op)
    # Schema GraphParams: the type of every optional field is checked too
    # (§14.1 rule 5: "validate params and return -32602 on malformed input").
    q = want(params, "query", (str,)) or ""
    k = want(params, "k", (int,)) or 5
    seeds = want(params, "seedIds", (list,))
    if seeds is not None and not all(isinstance(x, str) for x in seeds):
        bad("seedIds", "'seedIds' is an array of strings")  # schema GraphParams
    want(params, "hops", (int,))
    want(params, "level", (int,))
    want(params, "sessionId", (str,))
    scores = dense_scores(q)
    top = ranked(scores)[:k]
    if op == "global":
        return {"summary": "Cities, search engines and retrieval methods.",
                "communities": [{"id": "c-places", "summary": "European cities", "score": 0.6},
                                {"id": "c-search", "summary": "Search and ranking", "score": 0.4}]}
    hits = [make_hit(d, scores[d], cfg, unit="node") for d in top]
    if op == "drift":
        return {"hits": hits, "followups": ["what else is nearby?"]}
    return {"hits": hits}


# ── the SDK server ────────────────────────────────────────────────────────────

def capabilities(cfg: Config) -> dict:
    caps = {"retrieve": {"maxK": 50, "modes": list(cfg.modes), "defaultMode": default_mode(cfg),
                         "fusion": list(cfg.fusion), "units": ["chunk", "passage"],
                         "modalities": ["text"], "scoreScale": "unbounded",
                         "rerankBuiltin": cfg.rerank, "tokenBudget": True,
                         "deterministic": cfg.deterministic, "snapshots": cfg.snapshots}}
    if cfg.filter_fields:
        caps["filter"] = {"fields": dict(cfg.filter_fields)}
        if cfg.operators is not None:
            caps["filter"]["operators"] = list(cfg.operators)
    if cfg.citations:
        caps["citations"] = {}
    if cfg.rerank:
        caps["rerank"] = {"methods": ["cross-encoder"]}
    if cfg.graph:
        caps["graph"] = {"ops": ["local", "global"]}
    if cfg.embed:
        caps["embed"] = {"dimension": DIMENSION, "identity": "panel-trigram-32", "normalized": True,
                         "modalities": ["text"], "encodings": ["json"]}
    if cfg.streaming:
        caps["streaming"] = {}
    if cfg.pagination:
        caps["pagination"] = {}
    if cfg.log:
        caps["log"] = {"levels": list(LOG_LEVELS)}
    return caps


def build_server(cfg: Config, session: Session) -> rcp.Server:
    s = rcp.Server()
    s.set_info(cfg.name, "1.0.0")
    if cfg.conformance:
        s.set_conformance(cfg.conformance)
    for key, meta in capabilities(cfg).items():
        s.advertise(key, meta)
    s.on(Method.RETRIEVE, lambda p: retrieve(p, cfg))
    if cfg.rerank:
        s.on(Method.RERANK, lambda p: rerank_handler(p, cfg))
    if cfg.embed:
        s.on(Method.EMBED, lambda p: embed_handler(p, cfg))
    if cfg.graph:
        s.on(Method.GRAPH, lambda p: graph_handler(p, cfg))
    return s


OPEN_METHODS = (Method.INITIALIZE, Method.INFO, Method.PING, Method.SHUTDOWN)


class Sessions:
    """Maps an incoming message (and its `RCP-Session` header) to a session."""

    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.lock = threading.Lock()
        self.process = Session(cfg)
        self.tokens: dict = {}

    def handle(self, msg, token=None, connection=None):
        cfg = self.cfg
        with self.lock:
            if cfg.session == "process" or (cfg.session == "connection" and connection is None):
                return self.process.handle(msg)
            if cfg.session == "connection":
                return connection.handle(msg)
            if cfg.session in ("stateless", "never"):
                return self.handle_implicit(msg)
            session = self.tokens.get(token) if token else None
            if session is not None:
                return session.handle(msg)
            # No (known) token: a fresh, uninitialized session; a successful
            # initialize keeps it under a new token (§5.2 "MAY issue a session token").
            session = Session(cfg)
            reply, notes = session.handle(msg)
            if isinstance(msg, dict) and msg.get("method") == Method.INITIALIZE \
                    and isinstance(reply, dict) and "result" in reply:
                new = uuid.uuid4().hex
                self.tokens[new] = session
                reply["result"].setdefault("_meta", {})["session"] = new
            return reply, notes

    def handle_implicit(self, msg):
        """§5.2: "A stateless HTTP server MAY treat every request as implicitly
        initialized at its advertised capabilities and answer initialize/info
        idempotently". The never-initializing variant refuses every initialize."""
        if isinstance(msg, list):
            if not msg:
                return Session(self.cfg).handle(msg)
            out = [r for r in (self.handle_implicit(m)[0] for m in msg) if r is not None]
            return (out or None), []
        session = Session(self.cfg)
        is_request = isinstance(msg, dict) and "id" in msg
        if is_request and msg.get("method") == Method.INITIALIZE and self.cfg.session == "never":
            return {"jsonrpc": "2.0", "id": msg.get("id"),
                    "error": {"code": Errc.INVALID_REQUEST, "message": "initialize is not accepted"}}, []
        if is_request and msg.get("method") not in OPEN_METHODS:
            session.handle({"jsonrpc": "2.0", "id": 0, "method": Method.INITIALIZE,
                            "params": {"protocolVersion": rcp.PROTOCOL_VERSION}})
        return session.handle(msg)


def dumps(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), allow_nan=False)


# ── transports ────────────────────────────────────────────────────────────────

def serve_stdio(cfg: Config):
    """§5.1: NDJSON; blank lines ignored; notifications this request earned go
    out before its reply; EOF or an answered `shutdown` ends the process."""
    sessions = Sessions(cfg)
    out = sys.stdout
    logged = False
    for raw in sys.stdin:
        line = raw.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            out.write(dumps({"jsonrpc": "2.0", "id": None,
                             "error": {"code": Errc.PARSE_ERROR, "message": "parse error"}}) + "\n")
            out.flush()
            continue
        reply, notes = sessions.handle(msg)
        if cfg.unsolicited_log and not logged and isinstance(msg, dict) \
                and msg.get("method") == Method.PING and "id" in msg:
            logged = True
            out.write(rcp.make_log_notification("info", "panel server started") + "\n")
        for n in notes:
            out.write(n + "\n")
        if reply is not None:
            out.write(dumps(reply) + "\n")
        out.flush()
        if isinstance(msg, dict) and msg.get("method") == Method.SHUTDOWN and "id" in msg:
            break


def make_handler(cfg: Config, sessions: Sessions):
    class Handler(BaseHTTPRequestHandler):
        # One handler serves one connection; HTTP/1.1 keeps it for later requests.
        protocol_version = "HTTP/1.1" if cfg.session == "connection" else "HTTP/1.0"
        connection_session = None

        def log_message(self, *_args):  # stderr stays quiet
            pass

        def send(self, status: int, body: bytes = b"", ctype="application/json"):
            self.send_response(status)
            if body:
                self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self.send(405)

        def do_POST(self):
            # §5.2: "Each request is `POST <base>/<method>` (default base `/rcp`)".
            if not self.path.startswith("/rcp/") and self.path != "/rcp":
                self.send(404)
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > 1 << 20:
                self.send(413)
                return
            body = self.rfile.read(length)
            try:
                msg = json.loads(body)
            except ValueError:
                self.send(200, dumps({"jsonrpc": "2.0", "id": None, "error": {
                    "code": Errc.PARSE_ERROR, "message": "parse error"}}).encode())
                return
            path_method = self.path[len("/rcp/"):]
            if isinstance(msg, dict) and isinstance(msg.get("method"), str) and "id" in msg \
                    and path_method != msg["method"]:
                # §5.2: "on mismatch the server MUST return -32600".
                self.send(200, dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {
                    "code": Errc.INVALID_REQUEST, "message": "path and body method differ"}}).encode())
                return
            accept = (self.headers.get("Accept") or "").lower()
            _local.sse = "text/event-stream" in accept and cfg.streaming
            try:
                if cfg.session == "connection" and self.connection_session is None:
                    self.connection_session = Session(cfg)
                reply, notes = sessions.handle(msg, self.headers.get("RCP-Session"),
                                               self.connection_session)
            finally:
                sse = _local.sse
                _local.sse = False
            if reply is None:
                self.send(204)
                return
            progress = [n for n in notes if '"notifications/progress"' in n]
            if sse and isinstance(msg, dict) and msg.get("method") == Method.RETRIEVE:
                # §5.2: "zero or more notifications/progress frames followed by
                # exactly one final frame carrying the JSON-RPC response".
                frames = "".join(f"data: {n}\n\n" for n in progress) + f"data: {dumps(reply)}\n\n"
                self.send(200, frames.encode(), "text/event-stream")
                return
            self.send(200, dumps(reply).encode())

    return Handler


def serve_http(cfg: Config, port: int):
    sessions = Sessions(cfg)
    httpd = ThreadingHTTPServer(("127.0.0.1", port), make_handler(cfg, sessions))
    httpd.daemon_threads = True
    print(f"RCP-PANEL-LISTENING http://127.0.0.1:{httpd.server_address[1]}/rcp", flush=True)
    httpd.serve_forever()


def main(cfg: Config):
    ap = argparse.ArgumentParser(description=f"RCP/1 interop panel server: {cfg.name}")
    ap.add_argument("--http", action="store_true", help="serve HTTP on 127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="HTTP port (0: ephemeral)")
    ap.add_argument("--stdio", action="store_true", help="serve NDJSON on stdin/stdout")
    args = ap.parse_args()
    if args.stdio:
        serve_stdio(cfg)
    else:
        serve_http(cfg, args.port)
