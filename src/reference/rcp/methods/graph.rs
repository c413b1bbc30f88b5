//! `graph` (spec §7.9): local, neighbour and community queries over a graph
//! of the documents, linked by shared tags.

use super::super::RcpReferenceConfig;
use super::super::engine::{Doc, Fusion, Index, wire_score};
use super::{
    GRAPH_OPS, MAX_INPUTS, MAX_K, RpcError, bad_param, hit, positive_int, text_of, unsupported,
};
use crate::suite::rcp::{l0, l2};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// `graph` (spec §7.9) over a graph of the documents, linked by shared tags.
pub(crate) fn graph(
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
    // Schema `GraphParams.seedIds`: an array of strings.
    if params.get("seedIds").is_some_and(|v| {
        !v.is_null()
            && v.as_array()
                .is_none_or(|ids| ids.iter().any(|id| !id.is_string()))
    }) {
        return Err(bad_param(
            "seedIds",
            "`seedIds` must be an array of string ids",
        ));
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
