//! The pipeline stages of §14.3 a client can call one by one: `rerank`
//! (§7.6), `embed/multi` (§7.5), `embed/sparse` (§7.4), `query/transform`
//! (§7.8) and `graph` (§7.9). Each rule judges what makes the stage usable;
//! the full result shapes are judged outside the levels (RCP-OUT-005).

use super::*;
use crate::suite::rcp::conversation::Sent;

pub const RERANK: Rule = item(
    "RCP-L2-001",
    "`rerank` takes `{query, passages}` and returns aligned `scores`, highest for the relevant passage",
    SpecLevel::Should,
    "RCP/1 §14.3, §7.6",
)
.help(
    "When `rerank` is advertised, protocheck sends it the query and three passages: an unrelated \
     sentence, the passage the query's words came from (a built-in pair when the run found none), \
     and another unrelated sentence; once with no `method`, once with each method \
     `rerank.methods` lists, once as text Content blocks, and once with `topN: 1`. Each must return `scores` with three \
     numbers, the middle one highest, and any `order` a best-first permutation of 0, 1, 2 (with \
     `topN: 1`, just `[1]`).",
    "The server returns `results`, `hits` or `ranking` instead of `scores`, returns scores sorted \
     rather than aligned with `passages`, or fewer scores than passages. A reranker that echoes \
     the input order fails too, since the relevant passage sits in the middle.",
    "Answer `rerank` with `{\"scores\": [s0, s1, s2]}`, where `scores[i]` is the relevance of \
     `passages[i]` and higher is more relevant; add `order`, the passage indices best first, to \
     spare the client the sort.",
);
pub const MULTI_VECTOR: Rule = item(
    "RCP-L2-002",
    "`embed/multi` returns one matrix per input, rows of the advertised dimension",
    SpecLevel::Should,
    "RCP/1 §14.3, §7.5",
)
.help(
    "When `multiVector` is advertised, protocheck sends `embed/multi` with two text inputs, once \
     with `kind: \"document\"` and once with `kind: \"query\"`, and, when \
     `multiVector.modalities` lists `image`, one image Content block (and, when \
     `multiVector.encodings` lists `f32-base64`, two inputs in that encoding); each answer must hold `matrices` with one non-empty matrix per \
     input, whose rows are arrays of numbers as long as the dimension (the result's `dimension`, else \
     `multiVector.dimension`), and a `dimension` that agrees with the advertised one.",
    "The server returns one pooled vector per input instead of a matrix, names the field \
     `embeddings` or `vectors`, advertises a `dimension` other than the model's (often after a \
     projection layer), or returns an empty matrix for a short input.",
    "Return `{\"matrices\": [[[…], …], …]}`, one matrix of token vectors per input in input \
     order, every row of the dimension advertised in `multiVector.dimension`, and state that same \
     `dimension` in the result.",
);
pub const SPARSE_EMBED: Rule = item(
    "RCP-L2-003",
    "`embed/sparse` returns one sparse vector per text, with aligned indices and values",
    SpecLevel::Should,
    "RCP/1 §14.3, §7.4",
)
.help(
    "When `sparseEmbed` is advertised, protocheck sends `embed/sparse` with two texts, once with \
     `kind: \"document\"` and once with `kind: \"query\"`, and expects each time `sparse` with two vectors, each with non-empty `indices` \
     (distinct integers ≥ 0, below `sparseEmbed.vocabulary` when advertised) and `values` \
     (numbers) of the same length.",
    "The server returns a token → weight map instead of `{indices, values}`, sends indices as \
     strings (the token text), repeats an index for a repeated token, or returns indices beyond \
     the vocabulary size it advertises.",
    "For each text, combine the weights of each token id (sum or max for repeats) and return \
     `{\"indices\": […], \"values\": […]}`, paired by position, one object per text in order, \
     under `sparse`.",
);
pub const TRANSFORM: Rule = item(
    "RCP-L2-004",
    "`query/transform` answers each advertised method with its queries",
    SpecLevel::Should,
    "RCP/1 §14.3, §7.8",
)
.help(
    "For each method RCP defines that `transform.methods` lists, protocheck sends \
     `query/transform` with the run's query and that method (`n` = 3 for `multi-query` and \
     `decompose`). Each must return `queries`, a non-empty array of non-empty strings: no more \
     than 3 for `multi-query` and `decompose`, and with a non-empty `hypothetical` for `hyde`.",
    "The server returns a single `query` string or objects rather than strings, returns an empty \
     list when its model declines, ignores `n` for `multi-query`, or omits `hypothetical` for \
     `hyde`. An advertised method that ends in an error fails as well.",
    "Return `{\"queries\": [\"…\"]}` for every advertised method, honour `n`, add \
     `\"hypothetical\": \"…\"` for `hyde`, and list in `transform.methods` only the methods that \
     work.",
);
pub const GRAPH: Rule = item(
    "RCP-L2-005",
    "`graph` answers each advertised op with that op's result",
    SpecLevel::Should,
    "RCP/1 §14.3, §7.9",
)
.help(
    "For each op RCP defines that `graph.ops` lists, protocheck sends `graph`: `communities` \
     alone, `neighbors` with `seedIds` holding a hit id seen earlier (if any), the others with \
     the query and `k` = 3; then `neighbors` and `local` again with `hops: 2`, `communities` and \
     `global` again with `level: 0`. It checks each op's own result: `local` hits; `global` `summary` and \
     `communities`; `drift` hits and `followups`; `communities`; `neighbors` `nodes` and `edges`.",
    "Every op returns the same generic shape (often `hits` for all), `global` returns a summary \
     without the `communities` it drew on, `neighbors` expects other seed parameters, or an \
     advertised op is not implemented and ends in an error.",
    "Give each op its own result as §7.9 defines it, and advertise in `graph.ops` only the ops \
     that work; the hits of `local` and `drift` need an `id` and a numeric `score` each.",
);

/// A passage no query of a conformance probe is about.
const UNRELATED: &str = "Zebra quilts volcano harmonica marmalade.";
/// The transform methods and graph ops RCP/1 defines.
const TRANSFORM_METHODS: [&str; 5] = ["rewrite", "hyde", "multi-query", "decompose", "step-back"];
const GRAPH_OPS: [&str; 5] = ["local", "global", "drift", "communities", "neighbors"];
/// `n` of the multi-query and decompose probes.
const MULTI_QUERY_N: u64 = 3;

/// What is wrong with a `rerank` result for the three probe passages, the
/// relevant one in the middle. With `top_n`, an `order` may hold no more than
/// that many indices (§7.6: `topN` truncates); `scores` stay aligned with
/// `passages` either way.
fn rerank_problems(result: &Value, top_n: Option<usize>) -> Vec<String> {
    let mut problems = Vec::new();
    let scores = match numbers(result.get("scores")) {
        None => {
            problems.push(format!(
                "answered without a `scores` array of numbers (got {}); the spec's result is `{{scores, order?}}`, \
                 not the `results`/`hits`/`ranking` the public harness reads (digest Q1)",
                show(result)
            ));
            return problems;
        }
        Some(scores) if scores.len() != 3 => {
            problems.push(format!(
                "`scores` has {} entries for 3 passages; `scores[i]` belongs to `passages[i]`",
                scores.len()
            ));
            return problems;
        }
        Some(scores) => scores,
    };
    if !(scores[1] > scores[0] && scores[1] > scores[2]) {
        problems.push(format!(
            "the passage the query was taken from scored {} against {} and {} for unrelated ones; higher is more \
             relevant",
            scores[1], scores[0], scores[2]
        ));
    }
    let Some(order) = result.get("order") else {
        return problems;
    };
    let indices: Option<Vec<usize>> = order.as_array().and_then(|o| {
        o.iter()
            .map(|i| i.as_u64().and_then(|i| usize::try_from(i).ok()))
            .collect()
    });
    let expected = top_n.unwrap_or(3).min(3);
    match indices {
        Some(o)
            if o.len() == expected && {
                let mut sorted = o.clone();
                sorted.sort_unstable();
                sorted.dedup();
                sorted.len() == o.len() && o.iter().all(|i| *i < 3)
            } =>
        {
            let worst_kept = o.iter().map(|i| scores[*i]).fold(f64::INFINITY, f64::min);
            let better_left_out = (0..3).any(|i| !o.contains(&i) && scores[i] > worst_kept);
            if o.windows(2).any(|w| scores[w[0]] < scores[w[1]]) || better_left_out {
                problems.push(format!(
                    "`order` {} is not best-first by `scores` {}",
                    show(order),
                    show(&json!(scores))
                ));
            }
        }
        _ => problems.push(match top_n {
            Some(n) => format!(
                "`order` {} is not the best {n} of the 3 passage indices, best first",
                show(order)
            ),
            None => format!(
                "`order` {} is not a permutation of the 3 passage indices",
                show(order)
            ),
        }),
    }
    problems
}

/// A 1×1 PNG, base64: the image input of the `embed/multi` probe.
const TINY_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// What is wrong with an `embed/multi` result for `count` inputs.
fn matrix_problems(result: &Value, count: usize, advertised: Option<u64>) -> Vec<String> {
    let mut problems = Vec::new();
    let stated = result.get("dimension").and_then(Value::as_u64);
    if let (Some(a), Some(s)) = (advertised, stated)
        && a != s
    {
        problems.push(format!(
            "the result's `dimension` {s} differs from the advertised {a}"
        ));
    }
    let dimension = stated.or(advertised);
    match result.get("matrices").and_then(Value::as_array) {
        None => problems.push(format!(
            "the result has no `matrices` array ({})",
            show(result)
        )),
        Some(m) if m.len() != count => {
            problems.push(format!("{} matrices came back for {count} inputs", m.len()))
        }
        Some(matrices) => {
            for (i, matrix) in matrices.iter().enumerate() {
                let rows = matrix.as_array().map(Vec::as_slice).unwrap_or_default();
                if rows.is_empty() {
                    problems.push(format!("matrix {i} has no rows"));
                }
                for (r, row) in rows.iter().enumerate() {
                    let Some(row) = numbers(Some(row)) else {
                        problems.push(format!("matrix {i} row {r} is not an array of numbers"));
                        break;
                    };
                    if let Some(d) = dimension
                        && row.len() as u64 != d
                    {
                        problems.push(format!(
                            "matrix {i} row {r} has {} numbers; the dimension is {d}",
                            row.len()
                        ));
                        break;
                    }
                }
            }
        }
    }
    problems
}

/// What an op's result lacks (§7.9), if anything.
fn graph_missing(op: &str, result: &Value) -> Option<String> {
    let array = |key: &str| result.get(key).and_then(Value::as_array);
    match op {
        "local" => match array("hits") {
            None => Some("`hits`".to_owned()),
            Some(_) => hit_essentials(result).err(),
        },
        "drift" => match (array("hits"), array("followups")) {
            (Some(_), Some(_)) => hit_essentials(result).err(),
            _ => Some("`hits` and `followups`".to_owned()),
        },
        "global" => (!result.get("summary").is_some_and(Value::is_string)
            || array("communities").is_none())
        .then(|| "`summary` and `communities`".to_owned()),
        "communities" => array("communities")
            .is_none()
            .then(|| "`communities`".to_owned()),
        _ => (array("nodes").is_none() || array("edges").is_none())
            .then(|| "`nodes` and `edges`".to_owned()),
    }
}

/// What is wrong with an `embed/multi` result in `f32-base64`: each matrix a
/// base64 string of whole rows, or an array of base64 rows, `dimension`
/// little-endian f32s each (§7.3.1); both layouts are accepted, as §7.5 does
/// not say which.
fn blob_matrix_problems(result: &Value, count: usize, advertised: Option<u64>) -> Vec<String> {
    use base64::Engine as _;
    let mut problems = Vec::new();
    let Some(d) = result
        .get("dimension")
        .and_then(Value::as_u64)
        .or(advertised)
    else {
        return vec!["no `dimension` to read the blobs by, in the result or advertised".to_owned()];
    };
    let decode = |v: &Value| {
        v.as_str()
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
            .map(|bytes| bytes.len() as u64)
    };
    match result.get("matrices").and_then(Value::as_array) {
        Some(m) if m.len() == count => {
            for (i, matrix) in m.iter().enumerate() {
                let ok = match matrix {
                    Value::Array(rows) => {
                        !rows.is_empty() && rows.iter().all(|r| decode(r) == Some(d * 4))
                    }
                    blob => decode(blob).is_some_and(|n| n > 0 && n % (d * 4) == 0),
                };
                if !ok {
                    problems.push(format!(
                        "matrix {i} is not base64 of whole rows of {d} f32 values: {}",
                        show(matrix)
                    ));
                }
            }
        }
        other => problems.push(format!(
            "`matrices` is {} for {count} inputs",
            show(other.map(|m| json!(m)).as_ref().unwrap_or(&Value::Null))
        )),
    }
    problems
}

fn numbers(v: Option<&Value>) -> Option<Vec<f64>> {
    v?.as_array()?.iter().map(Value::as_f64).collect()
}

impl L2Run<'_, '_> {
    pub(super) async fn rerank(&mut self) -> Result<(), EngineError> {
        let rule = &RERANK;
        if !self.gate(rule, "rerank").await? {
            return Ok(());
        }
        // The relevant passage sits in the middle, so an answer that merely
        // echoes input order cannot pass.
        let (query, relevant) = match (self.facts.query.clone(), self.passage()) {
            (Some(q), Some(p)) => (q, p),
            _ => (
                "reciprocal rank fusion".to_owned(),
                "Reciprocal rank fusion combines several rankings by summing reciprocal ranks."
                    .to_owned(),
            ),
        };
        let passages = json!([UNRELATED, relevant, "Quartz lanterns drift over tundra."]);
        // Every advertised method, then `topN` with the default method.
        let methods = self
            .init
            .advertised_list("rerank", "methods")
            .unwrap_or_default();
        let mut variants: Vec<(String, Value, Option<usize>)> = vec![(
            "with no `method`".to_owned(),
            json!({"query": query, "passages": passages}),
            None,
        )];
        for method in &methods {
            variants.push((
                format!("with `method: \"{method}\"`"),
                json!({"query": query, "passages": passages, "method": method}),
                None,
            ));
        }
        // §7.6: a passage is a string or a Content block; text blocks are
        // text whatever modalities the server lists.
        let blocks: Vec<Value> = passages
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| json!({"type": "text", "text": p}))
            .collect();
        variants.push((
            "with the passages as text Content blocks".to_owned(),
            json!({"query": query, "passages": blocks}),
            None,
        ));
        variants.push((
            "with `topN: 1`".to_owned(),
            json!({"query": query, "passages": passages, "topN": 1}),
            Some(1),
        ));
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let mut labels = Vec::new();
        for (label, params, top_n) in variants {
            let sent = self.conv.request(rule, "rerank", params).await?;
            check.saw(&sent);
            let found = match result_of(&sent) {
                None => vec![format!("(3 passages) {}", outcome_words(&sent))],
                Some(result) => rerank_problems(result, top_n),
            };
            problems.extend(found.into_iter().map(|p| format!("`rerank` {label}: {p}")));
            labels.push(label);
        }
        let finding = check.verdict(
            &problems,
            format!(
                "`rerank` scored the relevant passage highest, `scores` aligned with `passages`, {}",
                labels.join(", ")
            ),
            "`rerank` takes `{query, passages, method?, topN?}` and returns `scores` aligned with `passages`, higher \
             is more relevant, for every method in `rerank.methods`, and `order` (when present) best first, no \
             longer than `topN` (§7.6)",
        );
        self.conv.emit(finding).await
    }

    pub(super) async fn multi_vector(&mut self) -> Result<(), EngineError> {
        let rule = &MULTI_VECTOR;
        if !self.gate(rule, "multiVector").await? {
            return Ok(());
        }
        let advertised = self
            .init
            .capability("multiVector")
            .and_then(|m| m.get("dimension"))
            .and_then(Value::as_u64);
        let mut check = Check::new(rule);
        let texts = json!([self.query(), "late interaction keeps one vector per token"]);
        // Both kinds on text, then an image page when the server lists the
        // `image` modality (the visual-document case of §14.3).
        let mut variants = vec![
            (
                "two text inputs with `kind: \"document\"`",
                texts.clone(),
                "document",
                2,
            ),
            ("two text inputs with `kind: \"query\"`", texts, "query", 2),
        ];
        let modalities = self
            .init
            .advertised_list("multiVector", "modalities")
            .unwrap_or_default();
        if modalities.iter().any(|m| m == "image") {
            variants.push((
                "one image Content block (a 1×1 PNG) with `kind: \"document\"`",
                json!([{"type": "image", "mimeType": "image/png", "data": TINY_PNG}]),
                "document",
                1,
            ));
        }
        let mut requests: Vec<(&str, Value, usize, bool)> = variants
            .into_iter()
            .map(|(label, inputs, kind, count)| {
                (label, json!({"inputs": inputs, "kind": kind}), count, false)
            })
            .collect();
        // §7.3.1's binary encoding, when the server lists it for `multiVector`.
        let encodings = self
            .init
            .advertised_list("multiVector", "encodings")
            .unwrap_or_default();
        if encodings.iter().any(|e| e == "f32-base64") {
            requests.push((
                "two text inputs with `encoding: \"f32-base64\"`",
                json!({"inputs": [self.query(), "late interaction"], "encoding": "f32-base64"}),
                2,
                true,
            ));
        }
        let mut problems = Vec::new();
        let mut labels = Vec::new();
        for (label, params, count, base64) in requests {
            let sent = self.conv.request(rule, "embed/multi", params).await?;
            check.saw(&sent);
            let found = match result_of(&sent) {
                None => vec![outcome_words(&sent)],
                Some(result) if base64 => blob_matrix_problems(result, count, advertised),
                Some(result) => matrix_problems(result, count, advertised),
            };
            problems.extend(
                found
                    .into_iter()
                    .map(|p| format!("`embed/multi` with {label}: {p}")),
            );
            labels.push(label);
        }
        let finding = check.verdict(
            &problems,
            format!(
                "`embed/multi` returned one matrix per input, rows of dimension {}, with {}",
                advertised.map_or("(not stated)".to_owned(), |d| d.to_string()),
                labels.join("; ")
            ),
            "each input yields a matrix of token vectors of the advertised `dimension`, for either `kind`, image \
             inputs included when `multiVector.modalities` lists `image` (§7.5, §6, §14.3)",
        );
        self.conv.emit(finding).await
    }

    pub(super) async fn sparse_embed(&mut self) -> Result<(), EngineError> {
        let rule = &SPARSE_EMBED;
        if !self.gate(rule, "sparseEmbed").await? {
            return Ok(());
        }
        let vocabulary = self
            .init
            .capability("sparseEmbed")
            .and_then(|m| m.get("vocabulary"))
            .and_then(Value::as_u64);
        let mut check = Check::new(rule);
        let texts = json!([self.query(), "sparse lexical retrieval weights terms"]);
        let mut problems = Vec::new();
        for kind in ["document", "query"] {
            let sent = self
                .conv
                .request(rule, "embed/sparse", json!({"texts": texts, "kind": kind}))
                .await?;
            check.saw(&sent);
            let found = sparse_problems(&sent, vocabulary);
            problems.extend(
                found
                    .into_iter()
                    .map(|p| format!("`embed/sparse` with `kind: \"{kind}\"`: {p}")),
            );
        }
        let finding = check.verdict(
            &problems,
            "`embed/sparse` returned one sparse vector per text, indices and values aligned, with `kind: \
             \"document\"` and with `kind: \"query\"`",
            "each text yields `{indices, values}` over the model vocabulary, one weight per index, for either `kind` \
             (§7.4)",
        );
        self.conv.emit(finding).await
    }
}

/// What is wrong with the answer to `embed/sparse` for the probe's two texts.
fn sparse_problems(sent: &Sent, vocabulary: Option<u64>) -> Vec<String> {
    let mut problems = Vec::new();
    match result_of(sent).map(|r| r.get("sparse").and_then(Value::as_array)) {
        None => problems.push(format!("(2 texts) {}", outcome_words(sent))),
        Some(None) => problems.push("the result has no `sparse` array".to_owned()),
        Some(Some(list)) if list.len() != 2 => problems.push(format!(
            "{} sparse vectors came back for 2 texts",
            list.len()
        )),
        Some(Some(list)) => {
            for (i, v) in list.iter().enumerate() {
                let indices: Option<Vec<u64>> = v
                    .get("indices")
                    .and_then(Value::as_array)
                    .and_then(|a| a.iter().map(Value::as_u64).collect());
                let values = numbers(v.get("values"));
                let (Some(indices), Some(values)) = (indices, values) else {
                    problems.push(format!(
                        "vector {i} lacks `indices` (integers ≥ 0) or `values` (numbers): {}",
                        show(v)
                    ));
                    continue;
                };
                if indices.len() != values.len() {
                    problems.push(format!(
                        "vector {i} has {} indices and {} values; they pair up",
                        indices.len(),
                        values.len()
                    ));
                }
                if indices.is_empty() {
                    problems.push(format!("vector {i} is empty for a text of several words"));
                }
                let distinct: std::collections::BTreeSet<&u64> = indices.iter().collect();
                if distinct.len() != indices.len() {
                    problems.push(format!("vector {i} repeats an index"));
                }
                if let Some(max) = vocabulary
                    && let Some(bad) = indices.iter().find(|x| **x >= max)
                {
                    problems.push(format!(
                        "vector {i} has index {bad}, outside the advertised vocabulary of {max}"
                    ));
                }
            }
        }
    }
    problems
}

impl L2Run<'_, '_> {
    pub(super) async fn transform(&mut self) -> Result<(), EngineError> {
        let rule = &TRANSFORM;
        if !self.gate(rule, "transform").await? {
            return Ok(());
        }
        let advertised = self
            .init
            .advertised_list("transform", "methods")
            .unwrap_or_default();
        let methods: Vec<&str> = TRANSFORM_METHODS
            .iter()
            .copied()
            .filter(|m| advertised.iter().any(|a| a == m))
            .collect();
        if methods.is_empty() {
            return self
                .conv
                .skip(
                    rule,
                    "not verified: `transform.methods` lists none of the methods RCP/1 defines",
                )
                .await;
        }
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let query = self.query();
        for method in &methods {
            let mut params = json!({"query": query, "method": method});
            let counted = matches!(*method, "multi-query" | "decompose");
            if counted {
                params["n"] = json!(MULTI_QUERY_N);
            }
            let sent = self.conv.request(rule, "query/transform", params).await?;
            check.saw(&sent);
            let Some(result) = result_of(&sent) else {
                problems.push(format!("method \"{method}\" {}", outcome_words(&sent)));
                continue;
            };
            let queries: Option<Vec<&str>> = result
                .get("queries")
                .and_then(Value::as_array)
                .and_then(|q| q.iter().map(Value::as_str).collect());
            match queries {
                None => problems.push(format!(
                    "method \"{method}\" answered without a `queries` array of strings"
                )),
                Some(q) if q.is_empty() || q.iter().any(|s| s.trim().is_empty()) => {
                    problems.push(format!(
                        "method \"{method}\" returned empty queries: {}",
                        show(&json!(q))
                    ))
                }
                Some(q) if counted && q.len() as u64 > MULTI_QUERY_N => problems.push(format!(
                    "method \"{method}\" with n = {MULTI_QUERY_N} returned {} queries",
                    q.len()
                )),
                Some(_) => {}
            }
            let hypothetical = result
                .get("hypothetical")
                .and_then(Value::as_str)
                .is_some_and(|h| !h.trim().is_empty());
            if *method == "hyde" && !hypothetical {
                problems.push("method \"hyde\" returned no `hypothetical` document".to_owned());
            }
        }
        // A method outside `transform.methods` is RCP-L0-019's to judge
        // (§14.1 rule 4), so the two rules never disagree on one probe.
        let finding = check.verdict(
            &problems,
            format!("`query/transform` answered {}", methods.join(", ")),
            "`query/transform` returns `queries` (and `hypothetical` for hyde) for each advertised method (§7.8); \
             a method it does not advertise is judged by RCP-L0-019",
        );
        self.conv.emit(finding).await
    }

    pub(super) async fn graph(&mut self) -> Result<(), EngineError> {
        let rule = &GRAPH;
        if !self.gate(rule, "graph").await? {
            return Ok(());
        }
        let advertised = self
            .init
            .advertised_list("graph", "ops")
            .unwrap_or_default();
        let ops: Vec<&str> = GRAPH_OPS
            .iter()
            .copied()
            .filter(|o| advertised.iter().any(|a| a == o))
            .collect();
        if ops.is_empty() {
            return self
                .conv
                .skip(
                    rule,
                    "not verified: `graph.ops` lists none of the ops RCP/1 defines",
                )
                .await;
        }
        let seed = self
            .facts
            .retrieved
            .iter()
            .flat_map(|r| r.hits())
            .find_map(|h| h.get("id").and_then(Value::as_str).map(str::to_owned));
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let mut sent_labels = Vec::new();
        let query = self.query();
        for op in ops.iter().copied() {
            let base = match (op, &seed) {
                ("communities", _) => json!({"op": op}),
                ("neighbors", Some(id)) => json!({"op": op, "seedIds": [id]}),
                _ => json!({"op": op, "query": query, "k": 3}),
            };
            // §7.9's `hops` (the walk's depth, for the ops that walk from
            // nodes) and `level` (the community hierarchy, for the ops that
            // read communities), each sent once more on top of the plain call.
            let mut variants = vec![(format!("op \"{op}\""), base.clone())];
            let option = match op {
                "neighbors" | "local" => Some(("hops", 2)),
                "communities" | "global" => Some(("level", 0)),
                _ => None,
            };
            if let Some((name, value)) = option {
                let mut params = base;
                params[name] = json!(value);
                variants.push((format!("op \"{op}\" with `{name}: {value}`"), params));
            }
            for (label, params) in variants {
                let sent = self.conv.request(rule, "graph", params).await?;
                check.saw(&sent);
                match result_of(&sent) {
                    None => problems.push(format!("{label} {}", outcome_words(&sent))),
                    Some(result) => {
                        if let Some(what) = graph_missing(op, result) {
                            problems
                                .push(format!("{label} answered without {what}: {}", show(result)));
                        }
                    }
                }
                sent_labels.push(label);
            }
        }
        // An op outside `graph.ops` is RCP-L0-019's to judge (§14.1 rule 4,
        // §7.9), so the two rules never disagree on one probe.
        let finding = check.verdict(
            &problems,
            format!("`graph` answered {} with their results", sent_labels.join(", ")),
            "each op has its own result (local → hits; global → summary and communities; drift → hits and \
             followups; communities → communities; neighbors → nodes and edges) (§7.9); an op outside \
             `graph.ops` is judged by RCP-L0-019",
        );
        self.conv.emit(finding).await
    }
}
