//! `retrieve` (spec §7.7): its options, fusion, the opaque pagination
//! cursors bound to the request that issued them (§10), and the seeded score
//! drift of the RCP-L2-010 fault.

use super::super::RcpReferenceConfig;
use super::super::engine::{Fusion, Index, Mode, Scored, rerank_score, wire_score};
use super::super::filter;
use super::{
    MAX_CANDIDATES, MAX_K, RERANK_METHODS, RpcError, Side, bad_param, boolean, hit, max_k,
    positive_int, text_of, unsupported,
};
use crate::suite::rcp::{harness, l0, l1, l2, outside};
use serde_json::{Map, Value, json};
use std::sync::atomic::{AtomicU64, Ordering};

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
    super::super::engine::fnv1a(text.as_bytes())
}
/// Seeded `retrieve` calls so far; moves the scores under the fault of
/// RCP-L2-010 only.
static SEEDED_CALLS: AtomicU64 = AtomicU64::new(1);

/// `retrieve` (spec §7.7): dense, sparse or hybrid recall, optional rerank,
/// filter, `minScore`, `k` and pagination, with progress and logs when asked.
pub(crate) fn retrieve(
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
        // §12's table gives -32016 for the same case, which a variant uses,
        // and -32015 NotFound for "A referenced entity does not exist",
        // which another variant uses for every version it does not keep.
        if version != index.version() && !config.has(&l2::SNAPSHOTS) {
            return Err((
                if config.variants.snapshot_not_found {
                    -32015
                } else if config.variants.snapshot_conflict {
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
            if r.get("model")
                .is_some_and(|v| !v.is_null() && !v.is_string())
            {
                return Err(bad_param("rerank.model", "`rerank.model` must be a string"));
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
    // The contents of the option objects are typed too (schema
    // `RetrieveParams`: `mmr.lambda` a number in [0, 1], `recency.field` a
    // string, `recency.halfLifeDays` a number): structure is checked before
    // an option is refused or ignored, so a malformed `mmr` is -32602 even
    // where `mmr` is not offered (§12, "independently of capabilities").
    if let Some(lambda) = present("mmr")
        .and_then(|m| m.get("lambda"))
        .filter(|v| !v.is_null())
    {
        match lambda.as_f64() {
            Some(l) if (0.0..=1.0).contains(&l) => {}
            Some(_) => {
                return Err(bad_param(
                    "mmr.lambda",
                    "`mmr.lambda` must be within [0, 1]",
                ));
            }
            None => return Err(bad_param("mmr.lambda", "`mmr.lambda` must be a number")),
        }
    }
    if let Some(recency) = present("recency") {
        if recency
            .get("field")
            .is_some_and(|v| !v.is_null() && !v.is_string())
        {
            return Err(bad_param(
                "recency.field",
                "`recency.field` must be a field name",
            ));
        }
        if recency
            .get("halfLifeDays")
            .is_some_and(|v| !v.is_null() && !v.is_number())
        {
            return Err(bad_param(
                "recency.halfLifeDays",
                "`recency.halfLifeDays` must be a number",
            ));
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
    // Schema `RetrieveParams.fusion`: `method` a string, `alpha` a number in
    // [0, 1], `weights` an object of numbers, whatever the method.
    if f.get("method")
        .is_some_and(|v| !v.is_null() && !v.is_string())
    {
        return Err(bad_param(
            "fusion.method",
            "`fusion.method` must be a string",
        ));
    }
    if f.get("alpha")
        .filter(|v| !v.is_null())
        .is_some_and(|v| v.as_f64().is_none_or(|a| !(0.0..=1.0).contains(&a)))
    {
        return Err(bad_param(
            "fusion.alpha",
            "`fusion.alpha` must be a number in [0, 1]",
        ));
    }
    if f.get("weights").filter(|v| !v.is_null()).is_some_and(|w| {
        w.as_object()
            .is_none_or(|w| w.values().any(|v| !v.is_number()))
    }) {
        return Err(bad_param(
            "fusion.weights",
            "`fusion.weights` must be an object of numbers",
        ));
    }
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
