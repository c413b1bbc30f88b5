//! `index/add` and `index/delete` (spec §7.10, §7.11): the documents added
//! beyond the built-in corpus, bounded so a demo server cannot grow without
//! limit.

use super::super::RcpReferenceConfig;
use super::super::engine::{Doc, Index};
use super::{MAX_ADDED_DOCS, MAX_INPUTS, MAX_TEXT_BYTES, RpcError, bad_param, unsupported};
use crate::suite::rcp::{harness, outside};
use serde_json::{Map, Value, json};

/// `index/add` (spec §7.10): positional ids, upsert by id.
pub(crate) fn index_add(
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
pub(crate) fn index_delete(
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
