//! The capability methods of the reference server (spec §7.3–§7.11): params
//! validated as the spec asks, answered from the [`Index`].
//!
//! This file holds what the methods share (param readers, limits, the Hit,
//! progress and logs) and the small methods: `rerank`, the embeddings and
//! `query/transform`. `retrieve`, `graph` and the index methods each have a
//! submodule.

use super::RcpReferenceConfig;
use super::engine::{
    Doc, Fusion, Index, MULTI_DIM, Scored, rerank_score, token_matrix, tokens, wire_score,
};
use crate::suite::rcp::{harness, l0, l1, l2};
use serde_json::{Map, Value, json};

mod graph;
mod index;
mod retrieve;

pub(super) use graph::graph;
pub(super) use index::{index_add, index_delete};
pub(super) use retrieve::retrieve;

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
        // The fault of RCP-L0-019: well-formed non-text blocks are embedded
        // as empty text (a malformed block is still -32602: §4.8's shape
        // holds whatever the modalities).
        let mut relaxed = params.clone();
        if let Some(Value::Array(items)) = relaxed.get_mut("inputs") {
            for item in items.iter_mut() {
                if item.get("type").is_some_and(|t| t != "text") {
                    non_text_block_shape(item)?;
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

/// §4.8's shape of a non-text Content block: `type` one of `image`,
/// `audio`, `blob`; `mimeType` required; `data` or `uri`, never both.
fn non_text_block_shape(block: &Value) -> Result<(), RpcError> {
    let kind = block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !["image", "audio", "blob"].contains(&kind) {
        return Err(bad_param(
            "inputs",
            "a Content block's `type` is text, image, audio or blob",
        ));
    }
    if !block.get("mimeType").is_some_and(Value::is_string) {
        return Err(bad_param(
            "inputs",
            "a non-text Content block needs `mimeType`",
        ));
    }
    let data = block.get("data").is_some_and(|v| !v.is_null());
    let uri = block.get("uri").is_some_and(|v| !v.is_null());
    if data == uri {
        return Err(bad_param(
            "inputs",
            "a Content block holds `data` or `uri`, not both",
        ));
    }
    Ok(())
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
