//! The capability methods of the reference server (spec §7.3–§7.11): params
//! validated as the spec asks, answered from the [`Index`].

use super::RcpReferenceConfig;
use super::engine::{
    Doc, Fusion, Index, MULTI_DIM, Mode, Scored, rerank_score, token_matrix, tokens, wire_score,
};
use super::filter;
use crate::suite::rcp::{harness, l0, l1, l2, outside};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};

/// A JSON-RPC error: code, message, `error.data`.
pub(super) type RpcError = (i64, String, Value);

pub(super) fn bad_param(field: &str, message: impl Into<String>) -> RpcError {
    (-32602, message.into(), json!({"field": field}))
}

fn unsupported(option: &str, message: impl Into<String>) -> RpcError {
    (-32005, message.into(), json!({"option": option}))
}

/// `retrieve.maxK`: larger `k` values are clamped, not refused (spec §7.7).
pub(super) const MAX_K: u64 = 50;

/// The advertised `retrieve.maxK` (the `max-k` variant changes it).
pub(super) fn max_k(config: &RcpReferenceConfig) -> u64 {
    config.variants.max_k.unwrap_or(MAX_K)
}
/// `rerank.maxCandidates`, and the ceiling of `candidateK`.
pub(super) const MAX_CANDIDATES: u64 = 100;
/// Most inputs one embedding or rerank call takes (`embed.batchLimit` in spirit).
const MAX_INPUTS: usize = 64;
/// Longest text accepted in a query, passage or document.
const MAX_TEXT_BYTES: usize = 16 * 1024;
/// Most documents `index/add` keeps beyond the built-in corpus: a public demo
/// server must not grow without bound.
pub(super) const MAX_ADDED_DOCS: usize = 1000;
/// `rerank` methods this server offers.
pub(super) const RERANK_METHODS: [&str; 1] = ["cross-encoder"];
pub(super) const TRANSFORM_METHODS: [&str; 3] = ["rewrite", "multi-query", "hyde"];
pub(super) const GRAPH_OPS: [&str; 3] = ["local", "neighbors", "communities"];
/// Severities of `notifications/log` (spec §17.1), lowest first.
pub(super) const LOG_LEVELS: [&str; 5] = ["debug", "info", "notice", "warning", "error"];

/// Notifications a request produces before its reply, when the client opted in
/// (spec §7.1: never one it did not ask for).
#[derive(Debug, Default)]
pub(super) struct Side {
    /// `_meta.progressToken`, when progress may be sent (spec §9).
    pub progress: Option<Value>,
    /// The lowest severity the client asked for, when logs may be sent (§17.1).
    pub log: Option<usize>,
    pub frames: Vec<Value>,
    /// The fault of RCP-L2-006.
    pub overshoot: bool,
    /// The fault of RCP-L2-009.
    pub bad_level: bool,
}

impl Side {
    fn progress(&mut self, progress: f64, stage: &str, message: String) {
        // The fault of RCP-L2-006 reports progress past the end.
        let progress = if self.overshoot {
            progress + 0.5
        } else {
            progress
        };
        if let Some(token) = &self.progress {
            self.frames.push(json!({
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": progress, "stage": stage, "message": message},
            }));
        }
    }

    fn log(&mut self, level: usize, message: String, data: Value) {
        if self.log.is_some_and(|min| level >= min) {
            self.frames.push(json!({
                "jsonrpc": "2.0",
                "method": "notifications/log",
                "params": {
                    "level": if self.bad_level { "verbose" } else { LOG_LEVELS[level.min(4)] },
                    "message": message, "logger": "protocheck-reference", "data": data,
                },
            }));
        }
    }
}

/// `k`-like fields: an integer ≥ 1, booleans and strings refused (spec §3).
pub(super) fn positive_int(
    params: &Map<String, Value>,
    field: &str,
) -> Result<Option<u64>, RpcError> {
    let Some(value) = params.get(field).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    match value.as_u64() {
        Some(n) if n >= 1 => Ok(Some(n)),
        _ => Err(bad_param(
            field,
            format!("`{field}` must be an integer ≥ 1"),
        )),
    }
}

fn boolean(params: &Map<String, Value>, field: &str, default: bool) -> Result<bool, RpcError> {
    match params.get(field) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(bad_param(field, format!("`{field}` must be a boolean"))),
    }
}

/// The text of a query or passage: a string, a text Content block, or a list
/// of text blocks (spec §4.8; this server is text-only, so other block types
/// are an unsupported modality, -32005).
pub(super) fn text_of(value: &Value, field: &str) -> Result<String, RpcError> {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Object(block) => match block.get("type").and_then(Value::as_str) {
            Some("text") => block
                .get("text")
                .and_then(Value::as_str)
                .ok_or_else(|| bad_param(field, "a text block needs `text`"))?
                .to_owned(),
            Some(other) => {
                return Err(unsupported(
                    "modality",
                    format!("`{other}` blocks are not accepted: this server is text-only"),
                ));
            }
            None => return Err(bad_param(field, "a Content block needs `type`")),
        },
        Value::Array(blocks) if !blocks.is_empty() => blocks
            .iter()
            .map(|b| match b {
                Value::Object(_) => text_of(b, field),
                _ => Err(bad_param(field, "a list must hold Content blocks")),
            })
            .collect::<Result<Vec<_>, _>>()?
            .join(" "),
        _ => {
            return Err(bad_param(
                field,
                format!("`{field}` must be a string, a Content block or a list of them"),
            ));
        }
    };
    if text.len() > MAX_TEXT_BYTES {
        return Err(bad_param(
            field,
            format!("`{field}` exceeds {MAX_TEXT_BYTES} bytes"),
        ));
    }
    Ok(text)
}

/// A list of texts (`passages`, `inputs`, `texts`), bounded.
fn texts(params: &Map<String, Value>, field: &str) -> Result<Vec<String>, RpcError> {
    let Some(list) = params.get(field).and_then(Value::as_array) else {
        return Err(bad_param(field, format!("`{field}` must be an array")));
    };
    if list.len() > MAX_INPUTS {
        return Err(bad_param(
            field,
            format!("at most {MAX_INPUTS} entries per call"),
        ));
    }
    list.iter().map(|v| text_of(v, field)).collect()
}

/// `inputs`, or its legacy synonym `texts` (spec §7.3).
fn inputs(params: &Map<String, Value>) -> Result<Vec<String>, RpcError> {
    if params.get("inputs").is_some_and(|v| !v.is_null()) {
        texts(params, "inputs")
    } else if params.get("texts").is_some_and(|v| !v.is_null()) {
        texts(params, "texts")
    } else {
        Err(bad_param("inputs", "`inputs` is required"))
    }
}

fn kind(params: &Map<String, Value>) -> Result<(), RpcError> {
    match params.get("kind") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(k)) if k == "query" || k == "document" => Ok(()),
        Some(_) => Err(bad_param("kind", "`kind` is \"query\" or \"document\"")),
    }
}

/// A position in one ranked result list, bound to the request it came from
/// so a cursor cannot be replayed against another query (spec §10: opaque).
fn cursor_for(offset: usize, fingerprint: u64) -> String {
    format!("p1.{offset:x}.{fingerprint:016x}")
}

fn parse_cursor(cursor: &str, fingerprint: u64) -> Result<usize, RpcError> {
    let mut parts = cursor.split('.');
    let (Some("p1"), Some(offset), Some(print), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad_param("cursor", "not a cursor this server issued"));
    };
    let offset = usize::from_str_radix(offset, 16)
        .map_err(|_| bad_param("cursor", "not a cursor this server issued"))?;
    if u64::from_str_radix(print, 16).ok() != Some(fingerprint) {
        // The request or the snapshot changed since the cursor was issued.
        return Err((
            -32015,
            "the cursor belongs to another request or an older snapshot".to_owned(),
            json!({"field": "cursor"}),
        ));
    }
    Ok(offset)
}

/// Identifies a request apart from its page: the params without `cursor` and
/// `_meta`, and the snapshot served.
fn fingerprint(params: &Map<String, Value>, version: &str) -> u64 {
    let mut rest = params.clone();
    rest.remove("cursor");
    rest.remove("_meta");
    let text = format!("{}|{version}", Value::Object(rest));
    super::engine::fnv1a(text.as_bytes())
}

/// The Hit of a document (spec §7.7), with its citation and trust (§6
/// `citations`, §15.2: added documents are never labelled trusted).
fn hit(
    config: &RcpReferenceConfig,
    doc: &Doc,
    scored: &Scored,
    score: f64,
    include_text: bool,
    include_vector: bool,
) -> Value {
    let mut hit = json!({
        "id": doc.id,
        "score": wire_score(score),
        "meta": doc.meta,
        "scores": scored.stages.iter().map(|(k, v)| (k.to_string(), json!(wire_score(*v)))).collect::<Map<_, _>>(),
    });
    if config.variants.no_hit_meta
        && let Some(obj) = hit.as_object_mut()
    {
        obj.remove("meta");
    }
    if include_text {
        hit["text"] = json!(doc.text);
    }
    if include_vector {
        hit["vector"] = json!(doc.dense());
    }
    if config.has(&l1::CITATIONS) {
        return hit;
    }
    let end = doc.text.chars().count();
    hit["citation"] = if doc.builtin {
        json!({"source": "protocheck reference corpus", "uri": format!("urn:protocheck:reference:{}", doc.id),
               "title": doc.title, "start": 0, "end": end})
    } else {
        json!({"source": "index/add", "uri": format!("urn:protocheck:index:{}", doc.id), "start": 0, "end": end})
    };
    hit["trust"] = if doc.builtin {
        json!({"level": "trusted", "score": 1.0})
    } else {
        json!({"level": "untrusted", "score": 0.0})
    };
    hit
}

/// Seeded `retrieve` calls so far; moves the scores under the fault of
/// RCP-L2-010 only.
static SEEDED_CALLS: AtomicU64 = AtomicU64::new(1);

/// `retrieve` (spec §7.7): dense, sparse or hybrid recall, optional rerank,
/// filter, `minScore`, `k` and pagination, with progress and logs when asked.
pub(super) fn retrieve(
    config: &RcpReferenceConfig,
    index: &Index,
    params: &Map<String, Value>,
    side: &mut Side,
) -> Result<Value, RpcError> {
    let malformed_ok = config.has(&l0::MALFORMED_PARAMS);
    let query = match params.get("query") {
        // The fault of RCP-L0-020: a missing query is read as empty.
        None if malformed_ok => String::new(),
        q => text_of(q.unwrap_or(&Value::Null), "query")?,
    };
    let k = if malformed_ok {
        // The fault: coerce whatever arrives into something usable.
        let n = match params.get("k") {
            Some(Value::String(s)) => s.trim().parse::<i64>().unwrap_or(1),
            Some(other) => other.as_i64().unwrap_or(1),
            None => 1,
        };
        n.max(1).unsigned_abs()
    } else {
        positive_int(params, "k")?.ok_or_else(|| bad_param("k", "`k` is required"))?
    };
    let candidate_k = positive_int(params, "candidateK")?;
    positive_int(params, "tokenBudget")?;
    // The fault of RCP-L0-019: unadvertised option values fall back silently,
    // as if every request set `strict:false`.
    let strict = boolean(params, "strict", true)? && !config.has(&l0::UNSUPPORTED_OPTION);
    // Spec §12: a wrong JSON type is -32602 "independently of capabilities",
    // so types are checked before any option is refused with -32005.
    retrieve_types(params)?;
    let include_text = boolean(params, "includeText", true)?;
    let include_vectors = boolean(params, "includeVectors", false)?;
    let min_score = match params.get("minScore") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_f64()
                .ok_or_else(|| bad_param("minScore", "`minScore` must be a number"))?,
        ),
    };
    if params
        .get("seed")
        .is_some_and(|s| !s.is_null() && !s.is_i64() && !s.is_u64())
    {
        return Err(bad_param("seed", "`seed` must be an integer"));
    }
    if let Some(version) = params.get("indexVersion").filter(|v| !v.is_null()) {
        let Some(version) = version.as_str() else {
            return Err(bad_param("indexVersion", "`indexVersion` must be a string"));
        };
        // Spec §7.7.1: serve exactly the pinned snapshot or fail with -32010;
        // §12's table gives -32016 for the same case, which a variant uses.
        if version != index.version() && !config.has(&l2::SNAPSHOTS) {
            return Err((
                if config.variants.snapshot_conflict {
                    -32016
                } else {
                    -32010
                },
                format!(
                    "snapshot `{version}` is not available; this server keeps only the current one"
                ),
                json!({"retryable": false}),
            ));
        }
    }

    let mut notes = Vec::new();
    let mut refuse = |option: &str, message: String| -> Result<(), RpcError> {
        if strict {
            Err(unsupported(option, message))
        } else {
            notes.push(format!("{message}; ignored (strict:false)"));
            Ok(())
        }
    };
    let mode = match params.get("mode") {
        None | Some(Value::Null) => Mode::Hybrid,
        Some(Value::String(m)) => match Mode::parse(m) {
            Some(mode) => mode,
            None => {
                refuse("mode", format!("mode `{m}` is not advertised"))?;
                Mode::Hybrid
            }
        },
        Some(_) => return Err(bad_param("mode", "`mode` must be a string")),
    };
    match params.get("modality") {
        None | Some(Value::Null) => {}
        Some(Value::String(m)) if m == "text" => {}
        Some(Value::String(m)) => refuse("modality", format!("modality `{m}` is not advertised"))?,
        Some(_) => return Err(bad_param("modality", "`modality` must be a string")),
    }
    let fusion = fusion(params, &mut refuse)?;
    for option in ["mmr", "unit", "level", "recency"] {
        if params.get(option).is_some_and(|v| !v.is_null()) {
            refuse(option, format!("`{option}` is not advertised"))?;
        }
    }
    if params
        .get("rewrite")
        .is_some_and(|v| !v.is_null() && *v != Value::Bool(false))
    {
        refuse(
            "rewrite",
            "`rewrite` is not offered inside `retrieve`; use `query/transform`".to_owned(),
        )?;
    }
    let rerank = match params.get("rerank") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => None,
        Some(Value::Object(r)) => {
            match r.get("method") {
                None | Some(Value::Null) => {}
                Some(Value::String(m)) if RERANK_METHODS.contains(&m.as_str()) => {}
                Some(Value::String(m)) => refuse(
                    "rerank.method",
                    format!("rerank method `{m}` is not advertised"),
                )?,
                Some(_) => {
                    return Err(bad_param(
                        "rerank.method",
                        "`rerank.method` must be a string",
                    ));
                }
            }
            let top_n = match r.get("topN").filter(|v| !v.is_null()) {
                None => None,
                Some(v) => match v.as_u64() {
                    Some(n) if n >= 1 => Some(n),
                    _ => {
                        return Err(bad_param(
                            "rerank.topN",
                            "`rerank.topN` must be an integer ≥ 1",
                        ));
                    }
                },
            };
            Some(top_n)
        }
        Some(_) => return Err(bad_param("rerank", "`rerank` is an object or false")),
    };
    // The funnel invariant (spec §7.7): candidateK ≥ rerank.topN ≥ k.
    let top_n = rerank.flatten();
    if top_n.is_some_and(|n| n < k) {
        return Err(bad_param("rerank.topN", "`rerank.topN` must be ≥ `k`"));
    }
    if candidate_k.is_some_and(|c| c < k || top_n.is_some_and(|n| c < n))
        && !config.has(&harness::FUNNEL)
    {
        return Err(bad_param(
            "candidateK",
            "`candidateK` must be ≥ `rerank.topN` ≥ `k`",
        ));
    }
    let filter = match params.get("filter").filter(|v| !v.is_null()) {
        Some(_) if !config.offers("filter") => {
            refuse("filter", "`filter` is not advertised".to_owned())?;
            None
        }
        Some(f) => Some(filter::parse(f, config)?),
        None => None,
    };
    let version = index.version();
    let print = fingerprint(params, &version);
    let offset = match params.get("cursor").filter(|v| !v.is_null()) {
        None => 0,
        Some(_) if !config.offers("pagination") => {
            return Err(unsupported("cursor", "`pagination` is not advertised"));
        }
        Some(Value::String(c)) => parse_cursor(c, print)?,
        Some(_) => return Err(bad_param("cursor", "`cursor` must be a string")),
    };
    // The fault of RCP-L2-008: every cursor leads back to the first page
    // (with the `empty-last-page` variant: empty pages hand out cursors).
    let endless = config.has(&l2::PAGINATION) && config.variants.empty_last_page;
    let offset = if config.has(&l2::PAGINATION) && !endless {
        0
    } else {
        offset
    };

    let max = max_k(config);
    if k > max && config.has(&harness::MAX_K_CLAMPED) {
        return Err(bad_param("k", format!("`k` must be at most {max}")));
    }
    // Clamp, never refuse (spec §7.7).
    let k = usize::try_from(k.min(max)).unwrap_or(1);
    let candidates =
        usize::try_from(candidate_k.unwrap_or(MAX_CANDIDATES).min(MAX_CANDIDATES)).unwrap_or(1);
    match mode {
        Mode::Dense if config.has(&l1::DENSE_MODE) => {
            return Err((-32603, "the dense index failed".to_owned(), Value::Null));
        }
        // Only an explicit `mode: "hybrid"`: hybrid is also the default mode.
        Mode::Hybrid if config.has(&l1::HYBRID_MODE) && params.get("mode").is_some() => {
            return Err((
                -32010,
                "the hybrid pipeline is unavailable".to_owned(),
                json!({"retryable": true}),
            ));
        }
        _ => {}
    }
    side.progress(0.25, "recall", format!("{mode:?} recall"));
    let ignore_filter = config.has(&l1::FILTER_RESTRICTS);
    let mut ranked: Vec<Scored> = index
        .rank(&query, mode, fusion)
        .into_iter()
        .filter(|s| {
            ignore_filter
                || filter
                    .as_ref()
                    .is_none_or(|f| index.doc(s.doc).is_some_and(|d| f.matches(d)))
        })
        .take(candidates)
        .collect();
    if mode == Mode::Sparse && config.has(&l1::SPARSE_MODE) {
        ranked.clear();
    }
    let recalled = ranked.len();
    let mut reranked = 0;
    if let Some(top_n) = rerank {
        side.progress(
            0.6,
            "rerank",
            format!("reranking {} candidates", ranked.len()),
        );
        let top_n = usize::try_from(top_n.unwrap_or(MAX_K).min(MAX_CANDIDATES)).unwrap_or(k);
        ranked.truncate(top_n.max(k));
        for s in &mut ranked {
            if let Some(doc) = index.doc(s.doc) {
                s.score = rerank_score(&query, &doc.text);
                s.stages.insert("rerank", s.score);
            }
        }
        ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
        reranked = ranked.len();
    }
    if let Some(min) = min_score.filter(|_| !config.has(&l1::MIN_SCORE)) {
        ranked.retain(|s| wire_score(s.score) >= min);
    }
    let total = ranked.len();
    let take = if k <= 3 && config.has(&l1::K_HONOURED) {
        k + 1
    } else {
        k
    };
    let mut page: Vec<Value> = ranked
        .iter()
        .skip(offset)
        .take(take)
        .filter_map(|s| {
            let doc = index.doc(s.doc)?;
            Some(hit(config, doc, s, s.score, include_text, include_vectors))
        })
        .collect();
    if config.has(&l1::SCORES_CONSISTENT) {
        page.reverse();
    }
    if config.has(&l2::DETERMINISTIC) && params.get("seed").is_some_and(|s| !s.is_null()) {
        // Every hit moves by the same amount, so the order holds but no two
        // calls agree.
        let shift = SEEDED_CALLS.fetch_add(1, Ordering::Relaxed) as f64 * 0.001;
        for h in &mut page {
            if let Some(score) = h.get("score").and_then(Value::as_f64) {
                h["score"] = json!(wire_score(score + shift));
            }
        }
    }
    side.progress(1.0, "pack", format!("{} hits", page.len()));
    side.log(
        1,
        format!(
            "retrieve: {mode:?} mode, {recalled} candidates, {} hits",
            page.len()
        ),
        json!({"candidates": recalled, "hits": page.len()}),
    );
    let mut usage = json!({"candidates": recalled});
    if rerank.is_some() {
        usage["reranked"] = json!(reranked);
    }
    if !notes.is_empty() {
        usage["notes"] = json!(notes);
    }
    if config.has(&outside::RESULT_SHAPES) {
        usage = json!(usage.to_string());
    }
    if config.has(&harness::UNIQUE_IDS) && page.len() >= 2 {
        page.insert(1, page[0].clone());
        page.truncate(k);
    }
    if config.has(&harness::ID_AND_SCORE) {
        for h in &mut page {
            if let Some(score) = h.get("score").cloned() {
                h["score"] = json!(score.to_string());
            }
        }
    }
    let hits_key = if config.has(&harness::HITS_ARRAY) && params.get("mode").is_none() {
        "results"
    } else {
        "hits"
    };
    let mut result = json!({hits_key: page, "indexVersion": version, "usage": usage});
    // The variant gives every non-empty page a cursor, so the last one leads
    // to an empty page (§10 does not rule that out).
    let more = if config.variants.empty_last_page {
        offset < total || endless
    } else {
        offset + k < total
    };
    if more && config.offers("pagination") {
        result["nextCursor"] = json!(cursor_for(offset + k, print));
    }
    Ok(result)
}

/// The JSON types of the `retrieve` options this server refuses or ignores
/// (schema `RetrieveParams`).
fn retrieve_types(params: &Map<String, Value>) -> Result<(), RpcError> {
    let present = |f: &str| params.get(f).filter(|v| !v.is_null());
    for field in ["mmr", "recency", "filter"] {
        if present(field).is_some_and(|v| !v.is_object()) {
            return Err(bad_param(field, format!("`{field}` must be an object")));
        }
    }
    for field in ["unit", "sessionId", "cursor"] {
        if present(field).is_some_and(|v| !v.is_string()) {
            return Err(bad_param(field, format!("`{field}` must be a string")));
        }
    }
    if present("level").is_some_and(|v| !v.is_u64()) {
        return Err(bad_param("level", "`level` must be an integer ≥ 0"));
    }
    if present("rewrite").is_some_and(|v| !v.is_string() && *v != Value::Bool(false)) {
        return Err(bad_param("rewrite", "`rewrite` is a method name or false"));
    }
    Ok(())
}

fn fusion(
    params: &Map<String, Value>,
    refuse: &mut impl FnMut(&str, String) -> Result<(), RpcError>,
) -> Result<Fusion, RpcError> {
    let Some(f) = params.get("fusion").filter(|v| !v.is_null()) else {
        return Ok(Fusion::Rrf { k: 60.0 });
    };
    let Some(f) = f.as_object() else {
        return Err(bad_param("fusion", "`fusion` must be an object"));
    };
    let rrf_k = match f.get("rrfK").filter(|v| !v.is_null()) {
        None => 60.0,
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => n as f64,
            _ => {
                return Err(bad_param(
                    "fusion.rrfK",
                    "`fusion.rrfK` must be an integer ≥ 1",
                ));
            }
        },
    };
    match f.get("method").and_then(Value::as_str) {
        None | Some("rrf") => Ok(Fusion::Rrf { k: rrf_k }),
        Some("weighted") => {
            let weight = |name: &str| -> Result<f64, RpcError> {
                match f.get("weights").and_then(|w| w.get(name)) {
                    None | Some(Value::Null) => Ok(0.5),
                    Some(v) => v.as_f64().filter(|w| w.is_finite()).ok_or_else(|| {
                        bad_param(&format!("fusion.weights.{name}"), "weights are numbers")
                    }),
                }
            };
            Ok(Fusion::Weighted {
                dense: weight("dense")?,
                sparse: weight("sparse")?,
            })
        }
        Some(other) => {
            refuse(
                "fusion.method",
                format!("fusion `{other}` is not advertised"),
            )?;
            Ok(Fusion::Rrf { k: rrf_k })
        }
    }
}

/// `rerank` (spec §7.6): `scores` aligned with `passages`, `order` best first.
pub(super) fn rerank(
    config: &RcpReferenceConfig,
    params: &Map<String, Value>,
) -> Result<Value, RpcError> {
    if config.has(&harness::RERANK) {
        return rerank_harness_shape(params);
    }
    let query = text_of(params.get("query").unwrap_or(&Value::Null), "query")?;
    let passages = texts(params, "passages")?;
    match params.get("method") {
        None | Some(Value::Null) => {}
        Some(Value::String(m)) if RERANK_METHODS.contains(&m.as_str()) => {}
        // The fault of RCP-L0-019: fall back without a word (spec §7.7).
        Some(Value::String(_)) if config.has(&l0::UNSUPPORTED_OPTION) => {}
        Some(Value::String(m)) => {
            return Err(unsupported(
                "method",
                format!("rerank method `{m}` is not advertised"),
            ));
        }
        Some(_) => return Err(bad_param("method", "`method` must be a string")),
    }
    if params
        .get("model")
        .is_some_and(|m| !m.is_null() && !m.is_string())
    {
        return Err(bad_param("model", "`model` must be a string"));
    }
    let top_n = positive_int(params, "topN")?;
    let sign = if config.has(&l2::RERANK) { -1.0 } else { 1.0 };
    let scores: Vec<f64> = passages
        .iter()
        .map(|p| wire_score(sign * rerank_score(&query, p)))
        .collect();
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b)));
    if let Some(n) = top_n {
        order.truncate(usize::try_from(n).unwrap_or(usize::MAX));
    }
    Ok(json!({"scores": scores, "order": order}))
}

/// The fault of RCP-REF-27: the public harness's shape (`documents` →
/// `results: [{index, score}]`, digest Q1) instead of the spec's.
fn rerank_harness_shape(params: &Map<String, Value>) -> Result<Value, RpcError> {
    if let Some(m) = params.get("method").and_then(Value::as_str)
        && !RERANK_METHODS.contains(&m)
    {
        return Err(unsupported(
            "method",
            format!("rerank method `{m}` is not advertised"),
        ));
    }
    let query = text_of(params.get("query").unwrap_or(&Value::Null), "query")?;
    let documents = texts(params, "documents")?;
    let mut results: Vec<(usize, f64)> = documents
        .iter()
        .enumerate()
        .map(|(i, d)| (i, wire_score(rerank_score(&query, d))))
        .collect();
    results.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let results: Vec<Value> = results
        .into_iter()
        .map(|(index, score)| json!({"index": index, "score": score}))
        .collect();
    Ok(json!({"results": results}))
}

/// `embed/sparse` (spec §7.4).
pub(super) fn embed_sparse(
    config: &RcpReferenceConfig,
    index: &Index,
    params: &Map<String, Value>,
) -> Result<Value, RpcError> {
    let inputs = if params.get("texts").is_some_and(|v| !v.is_null()) {
        texts(params, "texts")?
    } else {
        inputs(params).map_err(|_| bad_param("texts", "`texts` is required"))?
    };
    kind(params)?;
    let sparse: Vec<Value> = inputs
        .iter()
        .map(|t| {
            let (indices, mut values) = index.sparse_embedding(t);
            if config.has(&l2::SPARSE_EMBED) {
                values.pop();
            }
            json!({"indices": indices, "values": values})
        })
        .collect();
    Ok(json!({"sparse": sparse}))
}

/// `embed/multi` (spec §7.5): one matrix per input, one row per token.
pub(super) fn embed_multi(
    config: &RcpReferenceConfig,
    params: &Map<String, Value>,
) -> Result<Value, RpcError> {
    let lenient = config.has(&l0::UNSUPPORTED_OPTION);
    match params.get("encoding") {
        None | Some(Value::Null) => {}
        Some(Value::String(e)) if e == "json" => {}
        // The fault of RCP-L0-019: answer in JSON whatever was asked.
        Some(Value::String(_)) if lenient => {}
        // Spec §7.3.1: json is the only encoding without an advertised list.
        Some(Value::String(e)) => {
            return Err(unsupported(
                "encoding",
                format!("encoding `{e}` is not advertised"),
            ));
        }
        Some(_) => return Err(bad_param("encoding", "`encoding` must be a string")),
    }
    let inputs = if lenient {
        // The fault of RCP-L0-019: non-text blocks are embedded as empty text.
        let mut relaxed = params.clone();
        if let Some(Value::Array(items)) = relaxed.get_mut("inputs") {
            for item in items.iter_mut() {
                if item.get("type").is_some_and(|t| t != "text") {
                    *item = json!("");
                }
            }
        }
        inputs(&relaxed)?
    } else {
        inputs(params)?
    };
    kind(params)?;
    let mut matrices: Vec<Vec<Vec<f32>>> = inputs.iter().map(|t| token_matrix(t)).collect();
    if config.has(&l2::MULTI_VECTOR) {
        for row in matrices.iter_mut().flatten() {
            row.pop();
        }
    }
    Ok(json!({"matrices": matrices, "dimension": MULTI_DIM}))
}

/// `query/transform` (spec §7.8).
pub(super) fn transform(
    config: &RcpReferenceConfig,
    index: &Index,
    params: &Map<String, Value>,
) -> Result<Value, RpcError> {
    let query = text_of(params.get("query").unwrap_or(&Value::Null), "query")?;
    let method = match params.get("method") {
        Some(Value::String(m)) => m.as_str(),
        _ => return Err(bad_param("method", "`method` is required")),
    };
    // The fault of RCP-L0-019: an unadvertised method falls back to rewrite.
    let method = if !TRANSFORM_METHODS.contains(&method) && config.has(&l0::UNSUPPORTED_OPTION) {
        "rewrite"
    } else {
        method
    };
    if !TRANSFORM_METHODS.contains(&method) {
        return Err(unsupported(
            "method",
            format!("transform `{method}` is not advertised"),
        ));
    }
    let n = usize::try_from(positive_int(params, "n")?.unwrap_or(3).min(10)).unwrap_or(3);
    let words = tokens(&query);
    let rewritten = if words.is_empty() {
        query.trim().to_owned()
    } else {
        words.join(" ")
    };
    Ok(match method {
        "rewrite" => json!({"queries": [rewritten]}),
        "multi-query" => {
            // The rewritten query, then variants narrowed by the titles of the
            // passages it matches lexically: distinct and deterministic.
            let mut queries = vec![rewritten.clone()];
            for s in index.sparse(&query) {
                if queries.len() >= n {
                    break;
                }
                if let Some(doc) = index.doc(s.doc) {
                    let q = format!("{rewritten} {}", doc.title.to_lowercase());
                    if !queries.contains(&q) {
                        queries.push(q);
                    }
                }
            }
            json!({"queries": queries})
        }
        _ if config.has(&l2::TRANSFORM) => json!({"queries": [rewritten]}),
        _ => {
            let best = index
                .hybrid(&query, Fusion::Rrf { k: 60.0 })
                .first()
                .and_then(|s| index.doc(s.doc))
                .map(|d| d.text.clone())
                .unwrap_or_default();
            json!({"queries": [rewritten], "hypothetical": format!("An answer to \"{}\": {best}", query.trim())})
        }
    })
}

/// `graph` (spec §7.9) over a graph of the documents, linked by shared tags.
pub(super) fn graph(
    config: &RcpReferenceConfig,
    index: &Index,
    params: &Map<String, Value>,
) -> Result<Value, RpcError> {
    let op = match params.get("op") {
        Some(Value::String(op)) => op.as_str(),
        // The fault of RCP-L0-020: a missing op is read as `local`.
        None if config.has(&l0::MALFORMED_PARAMS) => "local",
        _ => return Err(bad_param("op", "`op` is required")),
    };
    // The fault of RCP-L0-019: an unadvertised op falls back to `local`.
    let op = if !GRAPH_OPS.contains(&op) && config.has(&l0::UNSUPPORTED_OPTION) {
        "local"
    } else {
        op
    };
    if params
        .get("seedIds")
        .is_some_and(|v| !v.is_null() && !v.is_array())
    {
        return Err(bad_param("seedIds", "`seedIds` must be an array of ids"));
    }
    if params
        .get("level")
        .is_some_and(|v| !v.is_null() && !v.is_u64())
    {
        return Err(bad_param("level", "`level` must be an integer ≥ 0"));
    }
    if params
        .get("sessionId")
        .is_some_and(|v| !v.is_null() && !v.is_string())
    {
        return Err(bad_param("sessionId", "`sessionId` must be a string"));
    }
    if !GRAPH_OPS.contains(&op) {
        return Err(unsupported(
            "op",
            format!("graph op `{op}` is not advertised"),
        ));
    }
    let k = usize::try_from(positive_int(params, "k")?.unwrap_or(10).min(MAX_K)).unwrap_or(10);
    let hops = positive_int(params, "hops")?.unwrap_or(1);
    if hops > 3 {
        return Err(bad_param("hops", "`hops` is at most 3"));
    }
    let query = match params.get("query").filter(|v| !v.is_null()) {
        Some(q) => Some(text_of(q, "query")?),
        None => None,
    };
    let docs = index.docs();
    let weight = |a: &Doc, b: &Doc| {
        let (ta, tb) = (a.tags(), b.tags());
        let union = ta.union(&tb).count();
        if union == 0 {
            0.0
        } else {
            ta.intersection(&tb).count() as f64 / union as f64
        }
    };
    match op {
        "communities" if config.has(&l2::GRAPH) => {
            Err((-32603, "the community index failed".to_owned(), Value::Null))
        }
        "communities" => {
            let mut groups: BTreeMap<String, Vec<&str>> = BTreeMap::new();
            for d in docs {
                if let Some(tag) = d.tags().into_iter().next() {
                    groups.entry(tag.to_owned()).or_default().push(&d.title);
                }
            }
            let communities: Vec<Value> = groups
                .into_iter()
                .map(|(tag, titles)| {
                    json!({"id": format!("tag:{tag}"), "level": 0,
                           "summary": format!("{} passages on {tag}: {}", titles.len(), titles.join(", "))})
                })
                .collect();
            Ok(json!({"communities": communities}))
        }
        "neighbors" => {
            let seeds: Vec<usize> = match params.get("seedIds").filter(|v| !v.is_null()) {
                Some(Value::Array(ids)) => ids
                    .iter()
                    .take(MAX_INPUTS)
                    .filter_map(|id| id.as_str().and_then(|id| index.position(id)))
                    .collect(),
                Some(_) => return Err(bad_param("seedIds", "`seedIds` must be an array of ids")),
                None => match &query {
                    Some(q) => index
                        .hybrid(q, Fusion::Rrf { k: 60.0 })
                        .iter()
                        .take(1)
                        .map(|s| s.doc)
                        .collect(),
                    None => return Err(bad_param("seedIds", "`seedIds` or `query` is required")),
                },
            };
            let mut seen: BTreeMap<usize, u64> = seeds.iter().map(|s| (*s, 0)).collect();
            let mut queue: VecDeque<usize> = seeds.iter().copied().collect();
            let mut edges = Vec::new();
            while let Some(at) = queue.pop_front() {
                let depth = seen.get(&at).copied().unwrap_or(0);
                if depth >= hops || edges.len() >= 4 * MAX_K as usize {
                    continue;
                }
                for (j, other) in docs.iter().enumerate() {
                    let w = weight(&docs[at], other);
                    if j == at || w == 0.0 {
                        continue;
                    }
                    edges.push(
                        json!({"src": docs[at].id, "dst": other.id, "weight": wire_score(w)}),
                    );
                    if let std::collections::btree_map::Entry::Vacant(e) = seen.entry(j) {
                        e.insert(depth + 1);
                        queue.push_back(j);
                    }
                }
            }
            let mut nodes: Vec<(f64, usize)> = seen
                .into_iter()
                .map(|(i, d)| (1.0 / (d as f64 + 1.0), i))
                .collect();
            nodes.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let nodes: Vec<Value> = nodes
                .into_iter()
                .take(k.max(seeds.len()))
                .map(|(score, i)| json!({"id": docs[i].id, "score": wire_score(score)}))
                .collect();
            Ok(json!({"nodes": nodes, "edges": edges}))
        }
        _ => {
            // local: the best passages for the query, and the passages linked to them.
            let Some(q) = query else {
                return Err(bad_param("query", "`query` is required for op `local`"));
            };
            let ranked = index.hybrid(&q, Fusion::Rrf { k: 60.0 });
            let seeds: Vec<usize> = ranked.iter().take(3).map(|s| s.doc).collect();
            let mut hits = Vec::new();
            let mut included = BTreeSet::new();
            for s in &ranked {
                if hits.len() >= k {
                    break;
                }
                let Some(doc) = index.doc(s.doc) else {
                    continue;
                };
                let anchor = seeds
                    .iter()
                    .find(|seed| **seed == s.doc || weight(&docs[**seed], doc) > 0.0);
                let Some(anchor) = anchor else { continue };
                if !included.insert(s.doc) {
                    continue;
                }
                let mut h = hit(config, doc, s, s.score, true, false);
                let mut edges = Vec::new();
                if *anchor != s.doc {
                    edges.push(json!({"src": docs[*anchor].id, "dst": doc.id}));
                }
                h["provenance"] = json!({"nodes": [docs[*anchor].id, doc.id], "edges": edges});
                hits.push(h);
            }
            Ok(json!({"hits": hits}))
        }
    }
}

/// `index/add` (spec §7.10): positional ids, upsert by id.
pub(super) fn index_add(
    config: &RcpReferenceConfig,
    index: &mut Index,
    params: &Map<String, Value>,
) -> Result<Value, RpcError> {
    let Some(documents) = params.get("documents").and_then(Value::as_array) else {
        return Err(bad_param("documents", "`documents` must be an array"));
    };
    if documents.len() > MAX_INPUTS {
        return Err(bad_param(
            "documents",
            format!("at most {MAX_INPUTS} documents per call"),
        ));
    }
    for option in ["chunk", "contextual"] {
        if params.get(option).and_then(Value::as_bool) == Some(true) {
            return Err(unsupported(option, format!("`{option}` is not advertised")));
        }
    }
    let mut parsed = Vec::new();
    for (i, d) in documents.iter().enumerate() {
        let field = format!("documents[{i}]");
        let Some(d) = d.as_object() else {
            return Err(bad_param(&field, "a document is an object"));
        };
        let text = match d.get("text") {
            Some(Value::String(t)) if t.len() <= MAX_TEXT_BYTES => t.clone(),
            Some(Value::String(_)) => return Err(bad_param(&field, "the text is too long")),
            _ => return Err(bad_param(&format!("{field}.text"), "`text` is required")),
        };
        let id = match d.get("id") {
            None | Some(Value::Null) => format!("doc-{}-{i}", index.version()),
            Some(Value::String(id)) if !id.is_empty() && id.len() <= 256 => id.clone(),
            Some(_) => {
                return Err(bad_param(
                    &format!("{field}.id"),
                    "`id` is a non-empty string",
                ));
            }
        };
        if index
            .position(&id)
            .and_then(|p| index.doc(p))
            .is_some_and(|d| d.builtin)
        {
            return Err((
                -32016,
                format!("`{id}` is a read-only document of the built-in corpus"),
                json!({"field": format!("{field}.id")}),
            ));
        }
        let meta = match d.get("meta") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err(bad_param(&format!("{field}.meta"), "`meta` is an object")),
        };
        parsed.push(Doc::new(id, String::new(), text, meta));
    }
    if config.has(&harness::INDEX_UPSERT)
        && let Some(d) = parsed.iter().find(|d| index.position(&d.id).is_some())
    {
        return Err(bad_param(
            "documents",
            format!("`{}` is already indexed", d.id),
        ));
    }
    let new = parsed
        .iter()
        .filter(|d| index.position(&d.id).is_none())
        .count();
    if index.added() + new > MAX_ADDED_DOCS {
        return Err((
            -32013,
            format!("this demo server keeps at most {MAX_ADDED_DOCS} added documents"),
            Value::Null,
        ));
    }
    let mut ids: Vec<String> = parsed.iter().map(|d| d.id.clone()).collect();
    for doc in parsed {
        index.upsert(doc);
    }
    if config.has(&outside::INDEX_ADD) {
        ids.pop();
    }
    Ok(json!({"ids": ids}))
}

/// `index/delete` (spec §7.11): the count actually removed, 0 for absent ids.
pub(super) fn index_delete(
    config: &RcpReferenceConfig,
    index: &mut Index,
    params: &Map<String, Value>,
) -> Result<Value, RpcError> {
    let Some(ids) = params.get("ids").and_then(Value::as_array) else {
        return Err(bad_param("ids", "`ids` must be an array"));
    };
    if ids.len() > MAX_ADDED_DOCS {
        return Err(bad_param(
            "ids",
            format!("at most {MAX_ADDED_DOCS} ids per call"),
        ));
    }
    let ids: Vec<&str> = ids
        .iter()
        .map(|id| {
            id.as_str()
                .ok_or_else(|| bad_param("ids", "ids are strings"))
        })
        .collect::<Result<_, _>>()?;
    if let Some(id) = ids.iter().find(|id| {
        index
            .position(id)
            .and_then(|p| index.doc(p))
            .is_some_and(|d| d.builtin)
    }) {
        return Err((
            -32016,
            format!("`{id}` is a read-only document of the built-in corpus"),
            json!({"field": "ids"}),
        ));
    }
    let mut deleted = ids.iter().filter(|id| index.delete(id)).count();
    if config.has(&outside::INDEX_DELETE) {
        deleted = ids.len();
    }
    Ok(json!({"deleted": deleted}))
}
