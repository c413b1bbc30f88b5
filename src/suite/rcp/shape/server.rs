//! What a server says about itself: the capabilities RCP defines (§6) with
//! their metadata, the `initialize` and `info` results (§7.1, §7.2), and the
//! engines a catalog lists with their endpoints.

use super::hits::peer;
use super::{MODALITY_LIST, Problems, STRINGS, Ty, UNITS, kind, members, object, required};
use serde_json::{Map, Value};

/// Spec §6: the metadata of the capabilities RCP defines.
fn capabilities(p: &mut Problems, path: &str, v: &Value) {
    let Some(obj) = object(p, path, v) else {
        return;
    };
    let specs: &[(&str, &[(&str, Ty)])] = &[
        (
            "embed",
            &[
                ("dimension", Ty::IntMin(1)),
                ("identity", Ty::Str),
                ("batchLimit", Ty::IntMin(1)),
                ("normalized", Ty::Bool),
                ("modalities", MODALITY_LIST),
            ],
        ),
        (
            "sparseEmbed",
            &[("identity", Ty::Str), ("vocabulary", Ty::IntMin(1))],
        ),
        (
            "multiVector",
            &[
                ("dimension", Ty::IntMin(1)),
                ("identity", Ty::Str),
                ("similarity", Ty::Enum(&["dot", "cosine"])),
                ("modalities", MODALITY_LIST),
            ],
        ),
        (
            "rerank",
            &[
                (
                    "methods",
                    Ty::ArrayOf(&Ty::Enum(&["cross-encoder", "colbert", "llm"])),
                ),
                ("maxCandidates", Ty::IntMin(1)),
                ("models", STRINGS),
            ],
        ),
        (
            "retrieve",
            &[
                ("maxK", Ty::IntMin(1)),
                (
                    "modes",
                    Ty::ArrayOf(&Ty::Enum(&["dense", "sparse", "hybrid"])),
                ),
                ("modalities", MODALITY_LIST),
                (
                    "fusion",
                    Ty::ArrayOf(&Ty::Enum(&["rrf", "weighted", "convex"])),
                ),
                ("mmr", Ty::Bool),
                ("rerankBuiltin", Ty::Bool),
                ("deterministic", Ty::Bool),
                ("snapshots", Ty::Bool),
                ("units", Ty::ArrayOf(&Ty::Enum(UNITS))),
                ("levels", Ty::IntMin(1)),
                ("tokenBudget", Ty::Bool),
                ("confidence", Ty::Bool),
                (
                    "scoreScale",
                    Ty::Enum(&["cosine", "dot", "bm25", "probability", "unbounded"]),
                ),
                ("scoreFloor", Ty::Num),
                ("defaultMode", Ty::Enum(&["dense", "sparse", "hybrid"])),
            ],
        ),
        (
            "transform",
            &[(
                "methods",
                Ty::ArrayOf(&Ty::Enum(&[
                    "rewrite",
                    "hyde",
                    "multi-query",
                    "decompose",
                    "step-back",
                ])),
            )],
        ),
        ("graph", &[("ops", STRINGS)]),
        (
            "index",
            &[
                ("writable", Ty::Bool),
                ("chunking", Ty::Bool),
                ("contextual", Ty::Bool),
            ],
        ),
        (
            "session",
            &[("dedup", Ty::Bool), ("ttlSeconds", Ty::IntMin(0))],
        ),
        ("feedback", &[]),
        (
            "memory",
            &[
                ("scopes", Ty::ArrayOf(&Ty::Enum(&["global", "session"]))),
                ("clues", Ty::Bool),
            ],
        ),
        (
            "filter",
            &[
                ("fields", Ty::Custom(filter_fields)),
                ("operators", STRINGS),
            ],
        ),
        ("streaming", &[]),
        ("pagination", &[]),
        ("log", &[("levels", STRINGS)]),
        ("catalog", &[]),
    ];
    for (name, fields) in specs {
        let Some(meta) = obj.get(*name) else { continue };
        let at = format!("{path}.{name}");
        if let Some(meta) = object(p, &at, meta) {
            members(p, &at, meta, fields);
        }
    }
    if let Some(c) = obj.get("citations")
        && !c.is_boolean()
        && !c.is_object()
    {
        p.add(
            &format!("{path}.citations"),
            format!("must be an object (or a boolean), not {}", kind(c)),
        );
    }
}

fn filter_fields(p: &mut Problems, path: &str, v: &Value) {
    match v {
        Value::Array(_) => STRINGS.check(p, path, v),
        Value::Object(map) => {
            for (k, t) in map {
                Ty::Str.check(p, &format!("{path}.{k}"), t);
            }
        }
        other => p.add(
            path,
            format!("must be an array or an object, not {}", kind(other)),
        ),
    }
}

/// `initialize` and `info` results (spec §7.1, §7.2).
pub(super) fn server_description(p: &mut Problems, obj: &Map<String, Value>) {
    required(
        p,
        "result",
        obj,
        &["protocolVersion", "server", "capabilities"],
    );
    members(
        p,
        "result",
        obj,
        &[
            ("protocolVersion", Ty::IntMin(1)),
            ("server", Ty::Custom(peer)),
            ("capabilities", Ty::Custom(capabilities)),
            ("_meta", Ty::Obj),
        ],
    );
}

pub(super) fn engine(p: &mut Problems, path: &str, v: &Value) {
    let Some(obj) = object(p, path, v) else {
        return;
    };
    required(p, path, obj, &["id", "server", "capabilities"]);
    members(
        p,
        path,
        obj,
        &[
            ("id", Ty::Str),
            ("server", Ty::Custom(peer)),
            ("capabilities", Ty::Custom(capabilities)),
            ("endpoint", Ty::Custom(endpoint)),
        ],
    );
}

fn endpoint(p: &mut Problems, path: &str, v: &Value) {
    let Some(obj) = object(p, path, v) else {
        return;
    };
    required(p, path, obj, &["transport"]);
    members(
        p,
        path,
        obj,
        &[
            ("transport", Ty::Enum(&["stdio", "http"])),
            ("url", Ty::Str),
            ("command", STRINGS),
        ],
    );
}
