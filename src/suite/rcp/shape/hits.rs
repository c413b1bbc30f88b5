//! The shape of a Hit (spec §7.7) and what it carries: Content blocks (§4.8),
//! per-stage scores, its citation, trust and provenance (§15.2), its chunk,
//! and the peer server that produced it.

use super::{MODALITIES, NUMBERS, Problems, STRINGS, Ty, UNITS, members, object, required};
use serde_json::Value;

/// Spec §4.8: a tagged Content block.
fn content(p: &mut Problems, path: &str, v: &Value) {
    let Some(obj) = object(p, path, v) else {
        return;
    };
    required(p, path, obj, &["type"]);
    members(
        p,
        path,
        obj,
        &[
            ("type", Ty::Enum(&["text", "image", "audio", "blob"])),
            ("text", Ty::Str),
            ("mimeType", Ty::Str),
            ("data", Ty::Str),
            ("uri", Ty::Str),
        ],
    );
    if obj.contains_key("data") && obj.contains_key("uri") {
        p.add(
            path,
            "carries both `data` and `uri`; a block has one or the other",
        );
    }
    match obj.get("type").and_then(Value::as_str) {
        Some("text") => required(p, path, obj, &["text"]),
        Some(_) => {
            required(p, path, obj, &["mimeType"]);
            if !obj.contains_key("data") && !obj.contains_key("uri") {
                p.add(path, "is a non-text block without `data` or `uri`");
            }
        }
        None => {}
    }
}

/// Spec §7.7: a Hit.
pub(crate) fn hit(p: &mut Problems, path: &str, v: &Value) {
    let Some(obj) = object(p, path, v) else {
        return;
    };
    required(p, path, obj, &["id", "score"]);
    members(
        p,
        path,
        obj,
        &[
            ("id", Ty::StrOrNum),
            ("score", Ty::Num),
            ("confidence", Ty::Unit),
            ("text", Ty::Str),
            ("content", Ty::ArrayOf(&Ty::Custom(content))),
            ("modality", Ty::Enum(MODALITIES)),
            ("unit", Ty::Enum(UNITS)),
            ("level", Ty::IntMin(0)),
            ("meta", Ty::Obj),
            ("vector", NUMBERS),
            ("scores", Ty::Custom(number_map)),
            ("citation", Ty::Custom(citation)),
            ("provenance", Ty::Custom(provenance)),
            ("trust", Ty::Custom(trust)),
            ("chunk", Ty::Custom(chunk)),
        ],
    );
}

fn number_map(p: &mut Problems, path: &str, v: &Value) {
    let Some(obj) = object(p, path, v) else {
        return;
    };
    for (k, x) in obj {
        Ty::Num.check(p, &format!("{path}.{k}"), x);
    }
}

/// Spec §7.7: `Hit.citation`.
pub(crate) fn citation(p: &mut Problems, path: &str, v: &Value) {
    let Some(obj) = object(p, path, v) else {
        return;
    };
    members(
        p,
        path,
        obj,
        &[
            ("source", Ty::Str),
            ("uri", Ty::Str),
            ("title", Ty::Str),
            ("start", Ty::Int),
            ("end", Ty::Int),
            ("page", Ty::Int),
        ],
    );
}

/// Spec §7.7, §15.2: `Hit.trust`.
pub(crate) fn trust(p: &mut Problems, path: &str, v: &Value) {
    let Some(obj) = object(p, path, v) else {
        return;
    };
    required(p, path, obj, &["level"]);
    members(
        p,
        path,
        obj,
        &[
            ("level", Ty::Enum(&["trusted", "community", "untrusted"])),
            ("score", Ty::Unit),
            ("injectionSuspected", Ty::Bool),
            ("sanitized", Ty::Bool),
        ],
    );
}

fn provenance(p: &mut Problems, path: &str, v: &Value) {
    let Some(obj) = object(p, path, v) else {
        return;
    };
    members(
        p,
        path,
        obj,
        &[
            ("path", STRINGS),
            ("nodes", STRINGS),
            ("edges", Ty::ArrayOf(&Ty::Custom(string_edge))),
            ("leaves", STRINGS),
        ],
    );
}

fn string_edge(p: &mut Problems, path: &str, v: &Value) {
    let Some(obj) = object(p, path, v) else {
        return;
    };
    required(p, path, obj, &["src", "dst"]);
    members(p, path, obj, &[("src", Ty::Str), ("dst", Ty::Str)]);
}

fn chunk(p: &mut Problems, path: &str, v: &Value) {
    let Some(obj) = object(p, path, v) else {
        return;
    };
    members(
        p,
        path,
        obj,
        &[("docId", Ty::Str), ("index", Ty::Int), ("context", Ty::Str)],
    );
}

pub(super) fn peer(p: &mut Problems, path: &str, v: &Value) {
    let Some(obj) = object(p, path, v) else {
        return;
    };
    required(p, path, obj, &["name"]);
    members(p, path, obj, &[("name", Ty::Str), ("version", Ty::Str)]);
}
