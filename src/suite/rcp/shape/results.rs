//! The members of the other methods' results: embedding vectors (dense,
//! sparse, multi-vector), the communities, nodes and edges of `graph`, and
//! the clues of memory recall.

use super::{INTEGERS, NUMBERS, Problems, STRINGS, Ty, members, object, required};
use serde_json::Value;

pub(super) fn sparse_vector(p: &mut Problems, path: &str, v: &Value) {
    let Some(obj) = object(p, path, v) else {
        return;
    };
    required(p, path, obj, &["indices", "values"]);
    members(p, path, obj, &[("indices", INTEGERS), ("values", NUMBERS)]);
}

pub(super) fn vector(p: &mut Problems, path: &str, v: &Value) {
    if !v.is_string() {
        NUMBERS.check(p, path, v);
    }
}

pub(super) fn matrix(p: &mut Problems, path: &str, v: &Value) {
    Ty::ArrayOf(&NUMBERS).check(p, path, v);
}

pub(super) fn community(p: &mut Problems, path: &str, v: &Value) {
    let Some(obj) = object(p, path, v) else {
        return;
    };
    required(p, path, obj, &["id"]);
    members(
        p,
        path,
        obj,
        &[
            ("id", Ty::StrOrNum),
            ("summary", Ty::Str),
            ("score", Ty::Num),
            ("level", Ty::IntMin(0)),
        ],
    );
}

pub(super) fn node(p: &mut Problems, path: &str, v: &Value) {
    let Some(obj) = object(p, path, v) else {
        return;
    };
    required(p, path, obj, &["id"]);
    members(p, path, obj, &[("id", Ty::StrOrNum), ("score", Ty::Num)]);
}

pub(super) fn edge(p: &mut Problems, path: &str, v: &Value) {
    let Some(obj) = object(p, path, v) else {
        return;
    };
    required(p, path, obj, &["src", "dst"]);
    members(
        p,
        path,
        obj,
        &[
            ("src", Ty::StrOrNum),
            ("dst", Ty::StrOrNum),
            ("weight", Ty::Num),
        ],
    );
}

pub(super) fn clue(p: &mut Problems, path: &str, v: &Value) {
    let Some(obj) = object(p, path, v) else {
        return;
    };
    members(
        p,
        path,
        obj,
        &[
            ("query", Ty::Str),
            ("seedIds", STRINGS),
            ("weight", Ty::Num),
        ],
    );
}
