//! The shapes of RCP/1 results and notifications, written from the spec (§4.8
//! Content, §6 capabilities, §7 methods, §9 progress, §17.1 log) and the
//! normative schema's definitions they mirror (`InitializeResult`, `Hit`,
//! `RetrieveResult`, …). Each check returns the problems in words, with the
//! JSON path of each, so a finding can name exactly what is wrong.
//!
//! Additional members are always allowed (spec §4.6: unknown fields are
//! ignored), so only the members the spec defines are judged.
//!
//! This file holds the vocabulary of the checks (problems, types) and the
//! per-method entry points; `hits`, `server` and `results` hold the shapes
//! those results are made of.

use serde_json::{Map, Value};

mod hits;
mod results;
mod server;

pub(crate) use hits::{citation, hit, trust};
use results::{clue, community, edge, matrix, node, sparse_vector, vector};
use server::{engine, server_description};

/// Most problems reported for one value: enough to act on, bounded for a
/// target that returns thousands of malformed hits.
const MAX_PROBLEMS: usize = 20;

/// Collects problems, each with its path.
#[derive(Debug, Default)]
pub(crate) struct Problems(Vec<String>);

impl Problems {
    fn add(&mut self, path: &str, what: impl std::fmt::Display) {
        if self.0.len() < MAX_PROBLEMS {
            self.0.push(format!("`{path}` {what}"));
        }
    }

    pub fn into_vec(self) -> Vec<String> {
        self.0
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A JSON integer: a number without a fractional part (schema `integer`).
pub(crate) fn is_integer(v: &Value) -> bool {
    v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0)
}

fn integer_at_least(v: &Value, min: i64) -> bool {
    is_integer(v) && v.as_f64().is_some_and(|f| f >= min as f64)
}

/// The typed members of an object: each present member must satisfy its test.
fn members(p: &mut Problems, path: &str, obj: &Map<String, Value>, spec: &[(&str, Ty)]) {
    for (name, ty) in spec {
        if let Some(v) = obj.get(*name) {
            ty.check(p, &format!("{path}.{name}"), v);
        }
    }
}

fn required(p: &mut Problems, path: &str, obj: &Map<String, Value>, names: &[&str]) {
    for name in names {
        if !obj.contains_key(*name) {
            p.add(&format!("{path}.{name}"), "is required but missing");
        }
    }
}

/// A value's expected type, as the schema states it.
#[derive(Clone, Copy)]
enum Ty {
    Str,
    Num,
    Bool,
    Obj,
    Int,
    IntMin(i64),
    /// A number in [0, 1].
    Unit,
    StrOrNum,
    StrOrInt,
    Enum(&'static [&'static str]),
    ArrayOf(&'static Ty),
    Custom(fn(&mut Problems, &str, &Value)),
}

impl Ty {
    fn check(self, p: &mut Problems, path: &str, v: &Value) {
        let ok = match self {
            Self::Str => v.is_string(),
            Self::Num => v.is_number(),
            Self::Bool => v.is_boolean(),
            Self::Obj => v.is_object(),
            Self::Int => is_integer(v),
            Self::IntMin(min) => integer_at_least(v, min),
            Self::Unit => v.as_f64().is_some_and(|f| (0.0..=1.0).contains(&f)),
            Self::StrOrNum => v.is_string() || v.is_number(),
            Self::StrOrInt => v.is_string() || is_integer(v),
            Self::Enum(values) => v.as_str().is_some_and(|s| values.contains(&s)),
            Self::ArrayOf(item) => {
                let Some(items) = v.as_array() else {
                    p.add(path, format!("must be an array, not {}", kind(v)));
                    return;
                };
                for (i, x) in items.iter().enumerate() {
                    item.check(p, &format!("{path}[{i}]"), x);
                }
                true
            }
            Self::Custom(f) => {
                f(p, path, v);
                true
            }
        };
        if !ok {
            let want = match self {
                Self::Str => "a string".to_owned(),
                Self::Num => "a number".to_owned(),
                Self::Bool => "a boolean".to_owned(),
                Self::Obj => "an object".to_owned(),
                Self::Int => "an integer".to_owned(),
                Self::IntMin(min) => format!("an integer ≥ {min}"),
                Self::Unit => "a number in [0, 1]".to_owned(),
                Self::StrOrNum => "a string or a number".to_owned(),
                Self::StrOrInt => "a string or an integer".to_owned(),
                Self::Enum(values) => format!("one of \"{}\"", values.join("\", \"")),
                Self::ArrayOf(_) | Self::Custom(_) => String::new(),
            };
            p.add(path, format!("must be {want}, not {}", shown(v)));
        }
    }
}

fn shown(v: &Value) -> String {
    match v {
        Value::Array(_) | Value::Object(_) => kind(v).to_owned(),
        other => {
            let text = other.to_string();
            if text.len() > 40 {
                kind(v).to_owned()
            } else {
                format!("{text} ({})", kind(v))
            }
        }
    }
}

fn object<'a>(p: &mut Problems, path: &str, v: &'a Value) -> Option<&'a Map<String, Value>> {
    let obj = v.as_object();
    if obj.is_none() {
        p.add(path, format!("must be an object, not {}", kind(v)));
    }
    obj
}

/// The modalities RCP/1 defines (§4.8), in spec order.
pub(crate) const MODALITIES: &[&str] = &["text", "image", "audio", "code", "multimodal"];
/// The retrieval units RCP/1 defines (§6.1), in spec order.
pub(crate) const UNITS: &[&str] = &[
    "chunk",
    "passage",
    "document",
    "node",
    "triplet",
    "path",
    "subgraph",
    "community",
    "tree-node",
    "page",
];
const STRINGS: Ty = Ty::ArrayOf(&Ty::Str);
const NUMBERS: Ty = Ty::ArrayOf(&Ty::Num);
const INTEGERS: Ty = Ty::ArrayOf(&Ty::Int);
const MODALITY_LIST: Ty = Ty::ArrayOf(&Ty::Enum(MODALITIES));

const HITS: Ty = Ty::ArrayOf(&Ty::Custom(hit));

/// The problems of `result` as the result of `method` (spec §7); `None` when
/// RCP defines no result shape for `method` (vendor methods).
pub(crate) fn result_problems(method: &str, result: &Value) -> Option<Vec<String>> {
    let mut p = Problems::default();
    let Some(obj) = result.as_object() else {
        p.add("result", format!("must be an object, not {}", kind(result)));
        return Some(p.into_vec());
    };
    let r = "result";
    match method {
        "initialize" | "info" => server_description(&mut p, obj),
        "ping" => members(&mut p, r, obj, &[("nonce", Ty::StrOrNum)]),
        "shutdown" => {}
        "embed" => {
            required(&mut p, r, obj, &["vectors"]);
            members(
                &mut p,
                r,
                obj,
                &[
                    ("vectors", Ty::ArrayOf(&Ty::Custom(vector))),
                    ("encoding", Ty::Enum(&["json", "f32-base64"])),
                    ("dimension", Ty::IntMin(1)),
                ],
            );
            if obj.get("encoding").and_then(Value::as_str) == Some("f32-base64") {
                required(&mut p, r, obj, &["dimension"]);
            }
        }
        "embed/sparse" => {
            required(&mut p, r, obj, &["sparse"]);
            members(
                &mut p,
                r,
                obj,
                &[("sparse", Ty::ArrayOf(&Ty::Custom(sparse_vector)))],
            );
        }
        "embed/multi" => {
            required(&mut p, r, obj, &["matrices"]);
            members(
                &mut p,
                r,
                obj,
                &[
                    ("matrices", Ty::ArrayOf(&Ty::Custom(matrix))),
                    ("dimension", Ty::IntMin(1)),
                ],
            );
        }
        "rerank" => {
            required(&mut p, r, obj, &["scores"]);
            members(&mut p, r, obj, &[("scores", NUMBERS), ("order", INTEGERS)]);
        }
        "retrieve" => {
            required(&mut p, r, obj, &["hits"]);
            members(
                &mut p,
                r,
                obj,
                &[
                    ("hits", HITS),
                    ("nextCursor", Ty::Str),
                    ("indexVersion", Ty::Str),
                    ("usage", Ty::Obj),
                    ("rewrittenQuery", Ty::Str),
                ],
            );
        }
        "query/transform" => {
            required(&mut p, r, obj, &["queries"]);
            members(
                &mut p,
                r,
                obj,
                &[("queries", STRINGS), ("hypothetical", Ty::Str)],
            );
        }
        "graph" => {
            if !["hits", "communities", "nodes"]
                .iter()
                .any(|k| obj.contains_key(*k))
            {
                p.add(
                    r,
                    "has none of `hits`, `communities` or `nodes`; every graph op returns one (§7.9)",
                );
            }
            members(
                &mut p,
                r,
                obj,
                &[
                    ("hits", HITS),
                    ("followups", STRINGS),
                    ("summary", Ty::Str),
                    ("communities", Ty::ArrayOf(&Ty::Custom(community))),
                    ("nodes", Ty::ArrayOf(&Ty::Custom(node))),
                    ("edges", Ty::ArrayOf(&Ty::Custom(edge))),
                    ("nextCursor", Ty::Str),
                    ("usage", Ty::Obj),
                    ("_meta", Ty::Obj),
                ],
            );
        }
        "index/add" => {
            required(&mut p, r, obj, &["ids"]);
            members(&mut p, r, obj, &[("ids", STRINGS), ("chunks", Ty::Int)]);
        }
        "index/delete" => {
            required(&mut p, r, obj, &["deleted"]);
            members(&mut p, r, obj, &[("deleted", Ty::IntMin(0))]);
        }
        "catalog/list" => {
            required(&mut p, r, obj, &["engines"]);
            members(
                &mut p,
                r,
                obj,
                &[("engines", Ty::ArrayOf(&Ty::Custom(engine)))],
            );
        }
        "feedback" => {
            required(&mut p, r, obj, &["accepted"]);
            members(&mut p, r, obj, &[("accepted", Ty::IntMin(0))]);
        }
        "memory/build" => {
            required(&mut p, r, obj, &["memoryId"]);
            members(
                &mut p,
                r,
                obj,
                &[("memoryId", Ty::Str), ("tokens", Ty::IntMin(0))],
            );
        }
        "memory/recall" => {
            required(&mut p, r, obj, &["clues"]);
            members(
                &mut p,
                r,
                obj,
                &[("clues", Ty::ArrayOf(&Ty::Custom(clue))), ("hits", HITS)],
            );
        }
        _ => return None,
    }
    Some(p.into_vec())
}

/// The problems of a server notification's `params` (spec §9, §17.1).
pub(crate) fn notification_problems(method: &str, params: &Value) -> Option<Vec<String>> {
    let mut p = Problems::default();
    let path = "params";
    match method {
        "notifications/progress" => {
            let Some(obj) = object(&mut p, path, params) else {
                return Some(p.into_vec());
            };
            required(&mut p, path, obj, &["progressToken"]);
            members(
                &mut p,
                path,
                obj,
                &[
                    ("progressToken", Ty::StrOrInt),
                    ("progress", Ty::Unit),
                    ("stage", Ty::Str),
                    ("message", Ty::Str),
                    ("partial", Ty::Obj),
                ],
            );
        }
        "notifications/log" => {
            let Some(obj) = object(&mut p, path, params) else {
                return Some(p.into_vec());
            };
            required(&mut p, path, obj, &["level", "message"]);
            members(
                &mut p,
                path,
                obj,
                &[
                    (
                        "level",
                        Ty::Enum(&["debug", "info", "notice", "warning", "error"]),
                    ),
                    ("message", Ty::Str),
                    ("logger", Ty::Str),
                    ("data", Ty::Obj),
                    ("_meta", Ty::Obj),
                ],
            );
        }
        _ => return None,
    }
    Some(p.into_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(method: &str, result: Value) -> Vec<String> {
        result_problems(method, &result).expect("a method RCP defines")
    }

    #[test]
    fn a_valid_retrieve_result_has_no_problems() {
        let ok = json!({"hits": [
            {"id": "a", "score": 0.5, "text": "t", "meta": {}, "scores": {"dense": 0.1},
             "citation": {"source": "s", "uri": "urn:x", "start": 0, "end": 3},
             "trust": {"level": "trusted", "score": 1.0},
             "content": [{"type": "text", "text": "t"}, {"type": "image", "mimeType": "image/png", "uri": "u"}]},
            {"id": 2, "score": -1, "x-vendor": true}
        ], "nextCursor": "c", "usage": {"candidates": 3}});
        assert_eq!(problems("retrieve", ok), Vec::<String>::new());
    }

    #[test]
    fn each_broken_member_is_named_with_its_path() {
        let bad = json!({"hits": [
            {"id": null, "score": "0.5"},
            {"id": "b", "score": 1, "citation": {"start": "0"}, "trust": {"score": 2},
             "chunk": {"index": 1.5}, "content": [{"type": "image", "data": "x", "uri": "y"}]}
        ], "nextCursor": 3});
        let found = problems("retrieve", bad).join("\n");
        for path in [
            "result.hits[0].id",
            "result.hits[0].score",
            "result.hits[1].citation.start",
            "result.hits[1].trust.level",
            "result.hits[1].trust.score",
            "result.hits[1].chunk.index",
            "result.hits[1].content[0]",
            "result.nextCursor",
        ] {
            assert!(found.contains(&format!("`{path}`")), "{path} in:\n{found}");
        }
        assert!(
            problems("retrieve", json!({}))
                .join("")
                .contains("result.hits")
        );
        assert_eq!(problems("retrieve", json!([])).len(), 1);
    }

    #[test]
    fn other_results_are_judged_by_their_method() {
        assert!(problems("rerank", json!({"scores": [0.2, 1], "order": [1, 0]})).is_empty());
        assert_eq!(problems("rerank", json!({"results": []})).len(), 1);
        assert!(
            problems(
                "initialize",
                json!({"protocolVersion": 1, "server": {"name": "n"}, "capabilities": {"retrieve": {"maxK": 5, "modes": ["dense"]}, "citations": true}})
            )
            .is_empty()
        );
        let caps = problems(
            "info",
            json!({"protocolVersion": 0, "server": {}, "capabilities": {"retrieve": {"maxK": "5", "modes": ["vector"]}}}),
        );
        assert_eq!(caps.len(), 4, "{caps:?}");
        assert!(problems("graph", json!({"summary": "s"}))[0].contains("none of"));
        assert!(
            problems(
                "graph",
                json!({"nodes": [{"id": 1}], "edges": [{"src": 1, "dst": "b"}]})
            )
            .is_empty()
        );
        assert!(problems("index/delete", json!({"deleted": -1}))[0].contains("≥ 0"));
        assert!(
            problems(
                "embed/sparse",
                json!({"sparse": [{"indices": [1.5], "values": [1]}]})
            )
            .len()
                == 1
        );
        assert!(
            problems(
                "embed/multi",
                json!({"matrices": [[[0.1, 0.2]]], "dimension": 2})
            )
            .is_empty()
        );
        assert!(result_problems("x-acme/thing", &json!({})).is_none());
    }

    #[test]
    fn notifications_are_judged_too() {
        let ok = json!({"progressToken": "t", "progress": 0.5, "stage": "rerank"});
        assert_eq!(
            notification_problems("notifications/progress", &ok),
            Some(vec![])
        );
        let bad = json!({"progress": 1.5});
        assert_eq!(
            notification_problems("notifications/progress", &bad).map(|p| p.len()),
            Some(2)
        );
        let log = json!({"level": "verbose", "message": 3});
        assert_eq!(
            notification_problems("notifications/log", &log).map(|p| p.len()),
            Some(2)
        );
    }
}
