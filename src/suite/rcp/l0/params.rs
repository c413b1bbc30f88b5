//! The params of every capability method, written down from the published
//! schema (`schema/rcp-1.0.json`, `$defs/*Params`) and the spec's method
//! sections (§7.3–§7.9, §7.17), for RCP-L0-020: which fields are required and
//! which JSON type each field has. The product never reads the schema file;
//! this table is the schema as protocheck judges it.
//!
//! Write methods (`index/add`, `index/delete`, `feedback`, `memory/build`) are
//! left out: a server that does not validate could act on a malformed write
//! (decision 7). `catalog/list` has no params to get wrong.

use super::*;

/// The JSON type a field must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    Str,
    Int,
    Num,
    Bool,
    Obj,
    Arr,
    /// A string out of an enumeration: a number is the wrong type.
    Enum,
    /// `QueryInput`: a string, a Content block, or an array of blocks.
    Query,
    /// An object or the constant `false` (`retrieve.rerank`).
    ObjOrFalse,
    /// A string out of an enumeration or the constant `false` (`retrieve.rewrite`).
    EnumOrFalse,
}

impl Ty {
    /// A value of the wrong JSON type, whatever the field's enumeration.
    pub(crate) fn wrong(self) -> Value {
        match self {
            Self::Str | Self::Enum | Self::Query | Self::EnumOrFalse | Self::ObjOrFalse => {
                json!(123)
            }
            Self::Int => json!("3"),
            Self::Num => json!("0.5"),
            Self::Bool => json!("yes"),
            Self::Obj => json!("protocheck-not-an-object"),
            Self::Arr => json!("protocheck-not-an-array"),
        }
    }

    fn words(self) -> &'static str {
        match self {
            Self::Str => "a string",
            Self::Int => "an integer",
            Self::Num => "a number",
            Self::Bool => "a boolean",
            Self::Obj => "an object",
            Self::Arr => "an array",
            Self::Enum => "one of its enumerated strings",
            Self::Query => "a string, a Content block or an array of them",
            Self::ObjOrFalse => "an object or false",
            Self::EnumOrFalse => "one of its enumerated strings or false",
        }
    }
}

/// What in the advertisement means a server reads a field.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Read {
    /// The capability is advertised (`session`).
    Capability(&'static str),
    /// A capability's boolean flag is `true` (`retrieve.deterministic`).
    Flag(&'static str, &'static str),
    /// A capability's metadata field is present and not `null`/`false`
    /// (`retrieve.levels`, a number: §6.1 "absent means flat").
    Present(&'static str, &'static str),
}

impl Read {
    /// Whether `init` advertises the feature.
    pub(crate) fn advertised(self, init: &Init) -> bool {
        match self {
            Self::Capability(cap) => init.supports(cap),
            Self::Flag(cap, flag) => init.flag(cap, flag),
            Self::Present(cap, field) => init
                .capability(cap)
                .and_then(|c| c.get(field))
                .is_some_and(|v| !v.is_null() && *v != Value::Bool(false)),
        }
    }

    /// How the finding names it: "`retrieve.levels`".
    pub(crate) fn words(self) -> String {
        match self {
            Self::Capability(cap) => format!("`{cap}`"),
            Self::Flag(cap, field) => format!("`{cap}.{field}: true`"),
            Self::Present(cap, field) => format!("`{cap}.{field}`"),
        }
    }
}

/// When a server may leave a malformed field unread: the spec lets a server
/// that does not offer the feature ignore the field, so a result is one
/// careful reading and -32602 the other; both are accepted. Once the feature
/// is advertised the field is read, and only -32602 passes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hint {
    /// What in the advertisement means the field is read.
    pub unless: Read,
    /// The spec sentence that lets it be ignored.
    pub why: &'static str,
}

/// One field of a method's params.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Field {
    pub name: &'static str,
    pub ty: Ty,
    pub required: bool,
    pub hint: Option<Hint>,
    /// The probe leaves this other field out (a synonym that would otherwise
    /// carry the request: `texts` for `inputs`).
    pub instead_of: Option<&'static str>,
}

const fn req(name: &'static str, ty: Ty) -> Field {
    Field {
        name,
        ty,
        required: true,
        hint: None,
        instead_of: None,
    }
}

const fn opt(name: &'static str, ty: Ty) -> Field {
    Field {
        name,
        ty,
        required: false,
        hint: None,
        instead_of: None,
    }
}

const fn hint(name: &'static str, ty: Ty, unless: Read, why: &'static str) -> Field {
    Field {
        name,
        ty,
        required: false,
        hint: Some(Hint { unless, why }),
        instead_of: None,
    }
}

/// §7.7.3: "The `sessionId` is a **hint, never a requirement**: a server that
/// ignores it **MUST** still answer correctly".
const SESSION_HINT: &str = "§7.7.3: `sessionId` is \"a hint, never a requirement\"";

/// One method and its params.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Method {
    pub name: &'static str,
    /// The capability that gates it.
    pub capability: &'static str,
    pub fields: &'static [Field],
}

/// `retrieve` (schema `RetrieveParams`: required `query`, `k`; §7.7: "Every
/// option beyond `query`/`k` is optional").
const RETRIEVE: &[Field] = &[
    req("query", Ty::Query),
    req("k", Ty::Int),
    opt("mode", Ty::Enum),
    opt("modality", Ty::Enum),
    opt("candidateK", Ty::Int),
    opt("fusion", Ty::Obj),
    opt("rerank", Ty::ObjOrFalse),
    opt("mmr", Ty::Obj),
    opt("rewrite", Ty::EnumOrFalse),
    opt("filter", Ty::Obj),
    opt("minScore", Ty::Num),
    opt("recency", Ty::Obj),
    // §7.7.2 calls `unit`, `level` and `tokenBudget` "all gated by `retrieve`
    // capability metadata (§6.1) and safely ignorable", then narrows `unit`:
    // "Requesting an unadvertised unit follows the usual `strict` rule
    // (§7.7)", and `retrieve.units` always names a set (absent: "`chunk`/
    // `passage` only", §6.1). A `unit` of the wrong type is outside that set,
    // so it is refused under the default `strict: true`: not exempt.
    opt("unit", Ty::Enum),
    // `level` has no such narrowing: without `retrieve.levels` the corpus is
    // flat (§6.1 "absent means flat") and the handle is safely ignorable.
    hint(
        "level",
        Ty::Int,
        Read::Present("retrieve", "levels"),
        "§7.7.2: `unit`, `level` and `tokenBudget` are \"safely ignorable\", and without `retrieve.levels` \
         the corpus is flat (§6.1)",
    ),
    // §7.7.2: "a server that does not support budgeting ignores it".
    hint(
        "tokenBudget",
        Ty::Int,
        Read::Flag("retrieve", "tokenBudget"),
        "§7.7.2: \"a server that does not support budgeting ignores it\"",
    ),
    hint(
        "sessionId",
        Ty::Str,
        Read::Capability("session"),
        SESSION_HINT,
    ),
    opt("includeText", Ty::Bool),
    opt("includeVectors", Ty::Bool),
    // §7.7.1: a server that cannot honour `seed` "**MUST** ignore it (never error)".
    hint(
        "seed",
        Ty::Int,
        Read::Flag("retrieve", "deterministic"),
        "§7.7.1: a server that cannot honour `seed` \"MUST ignore it (never error)\"",
    ),
    opt("indexVersion", Ty::Str),
    opt("strict", Ty::Bool),
    opt("cursor", Ty::Str),
];

/// `rerank` (schema `RerankParams`: required `query`, `passages`).
const RERANK: &[Field] = &[
    req("query", Ty::Query),
    req("passages", Ty::Arr),
    opt("method", Ty::Enum),
    opt("model", Ty::Str),
    opt("topN", Ty::Int),
];

/// `embed` (schema `EmbedParams`: `inputs` or its legacy synonym `texts`, §7.3).
const EMBED: &[Field] = &[
    req("inputs", Ty::Arr),
    Field {
        name: "texts",
        ty: Ty::Arr,
        required: false,
        hint: None,
        instead_of: Some("inputs"),
    },
    opt("kind", Ty::Enum),
    opt("encoding", Ty::Enum),
];

/// `embed/sparse` (§7.4: `{ "texts": [string], "kind"?: … }`, `texts` not optional).
const EMBED_SPARSE: &[Field] = &[req("texts", Ty::Arr), opt("kind", Ty::Enum)];

/// `embed/multi` (§7.5: `{ "inputs": [Content|string], "kind"?: … }`; §7.3.1:
/// "The same `encoding` field applies to `embed/multi`").
const EMBED_MULTI: &[Field] = &[
    req("inputs", Ty::Arr),
    opt("kind", Ty::Enum),
    opt("encoding", Ty::Enum),
];

/// `query/transform` (schema `TransformParams`: required `query`, `method`).
const TRANSFORM: &[Field] = &[
    req("query", Ty::Str),
    req("method", Ty::Enum),
    opt("n", Ty::Int),
];

/// `graph` (schema `GraphParams`: required `op`).
const GRAPH: &[Field] = &[
    req("op", Ty::Enum),
    opt("query", Ty::Str),
    opt("k", Ty::Int),
    opt("seedIds", Ty::Arr),
    opt("hops", Ty::Int),
    // §7.9 lists `graph`'s params as `op`, `query`, `k`, `seedIds` and `hops`;
    // only the schema's `GraphParams` adds `level`. A server written from the
    // prose treats it as an unknown field, which §4.6 says MUST be ignored,
    // so a result is one careful reading until levels are advertised.
    hint(
        "level",
        Ty::Int,
        Read::Present("retrieve", "levels"),
        "§7.9 does not list `level` among `graph`'s params (only the schema does), and unknown fields \
         MUST be ignored (§4.6); without `retrieve.levels` the corpus is flat (§6.1)",
    ),
    hint(
        "sessionId",
        Ty::Str,
        Read::Capability("session"),
        SESSION_HINT,
    ),
];

/// `memory/recall` (schema `MemoryRecallParams`: required `query`).
const MEMORY_RECALL: &[Field] = &[
    req("query", Ty::Str),
    opt("memoryId", Ty::Str),
    hint(
        "sessionId",
        Ty::Str,
        Read::Capability("session"),
        SESSION_HINT,
    ),
    opt("n", Ty::Int),
];

/// The read-only capability methods, in the order they are probed.
pub(crate) static METHODS: &[Method] = &[
    Method {
        name: "retrieve",
        capability: "retrieve",
        fields: RETRIEVE,
    },
    Method {
        name: "rerank",
        capability: "rerank",
        fields: RERANK,
    },
    Method {
        name: "embed",
        capability: "embed",
        fields: EMBED,
    },
    Method {
        name: "embed/sparse",
        capability: "sparseEmbed",
        fields: EMBED_SPARSE,
    },
    Method {
        name: "embed/multi",
        capability: "multiVector",
        fields: EMBED_MULTI,
    },
    Method {
        name: "query/transform",
        capability: "transform",
        fields: TRANSFORM,
    },
    Method {
        name: "graph",
        capability: "graph",
        fields: GRAPH,
    },
    Method {
        name: "memory/recall",
        capability: "memory",
        fields: MEMORY_RECALL,
    },
];

/// Valid params for `method`, with the options chosen from what `init`
/// advertises, so that a probe changes exactly one thing.
pub(crate) fn base(method: &str, init: &Init) -> Map<String, Value> {
    let first = |cap: &str, field: &str, known: &[&str], fallback: &str| -> String {
        init.advertised_list(cap, field)
            .and_then(|list| list.into_iter().find(|v| known.contains(&v.as_str())))
            .unwrap_or_else(|| fallback.to_owned())
    };
    let value = match method {
        "retrieve" => json!({"query": PROBE_QUERY, "k": 1}),
        "rerank" => json!({"query": PROBE_QUERY, "passages": ["a", "b"]}),
        "embed" | "embed/multi" => json!({"inputs": [PROBE_QUERY]}),
        "embed/sparse" => json!({"texts": [PROBE_QUERY]}),
        "query/transform" => {
            let known = ["rewrite", "multi-query", "decompose", "step-back", "hyde"];
            json!({"query": PROBE_QUERY, "method": first("transform", "methods", &known, "rewrite")})
        }
        "graph" => {
            // An op that takes a query first, so `query` is meaningful.
            let known = ["local", "global", "drift", "communities", "neighbors"];
            json!({"op": first("graph", "ops", &known, "local"), "query": PROBE_QUERY})
        }
        _ => json!({"query": PROBE_QUERY}),
    };
    value.as_object().cloned().unwrap_or_default()
}

/// One probe of RCP-L0-020.
pub(crate) struct ParamsProbe {
    pub method: &'static str,
    pub params: Value,
    /// What is wrong, for the finding: "without the required `query`",
    /// "with `k` = \"3\" (a string), not an integer,".
    pub what: String,
    /// When set, a result is also accepted (the field may be ignored), with why.
    pub ignorable: Option<&'static str>,
    /// For a field the spec lets a server ignore: the field, and whether the
    /// server advertises the feature (then it is read and not exempt), with
    /// what was advertised. The finding lists both.
    pub exemption: Option<Exemption>,
    /// Error codes accepted besides -32602, with why: a value that is
    /// malformed and, read another way, also an unsupported option value or
    /// an unknown cursor. The spec does not order those checks.
    pub also: Option<(&'static [i64], &'static str)>,
}

/// A field the spec lets a server ignore unless it offers the feature.
#[derive(Debug, Clone)]
pub(crate) struct Exemption {
    /// "`retrieve` `level`".
    pub field: String,
    /// `Some(advertisement)`: the feature is advertised, the field is read.
    pub read_because: Option<String>,
    pub why: &'static str,
}

/// An optional field with a value of the wrong type is malformed (-32602,
/// §12 "Missing/malformed params") and, read another way, a requested option
/// the server does not support (-32005, §14.1 rule 4: "unsupported
/// advertised-method options"), for example a `cursor` sent to a server that
/// does not advertise `pagination`, or a number where a mode name belongs.
/// The spec does not order the two checks, so both pass (the finding names
/// the code the server chose). A required field has only the first reading.
const ALSO_UNSUPPORTED: (&[i64], &str) = (
    &[-32005],
    "an unsupported option value, -32005 (§14.1 rule 4); the spec does not order that check and the \
     type check",
);

/// A `cursor` of the wrong type is also one the server never issued: an
/// unknown or expired cursor (-32015 NotFound); accepted as well.
const ALSO_UNKNOWN_CURSOR: (&[i64], &str) = (
    &[-32005, -32015],
    "an unsupported option or an unknown cursor (-32005, -32015); the spec does not order those \
     checks and the type check",
);

/// `params` that is not an object: §4.1 "`params` **MUST** be an object (RCP
/// does not use positional parameters)". That is malformed params (-32602,
/// §12) or, read as JSON-RPC reads it, a Request object that is not valid
/// (-32600); both are accepted.
const ALSO_INVALID_REQUEST: (&[i64], &str) = (
    &[-32600],
    "§4.1 \"`params` MUST be an object\" also makes the Request invalid, -32600; the spec does not \
     say which of the two codes a non-object `params` gets",
);

/// What the probes of RCP-L0-020 send, for the finding.
pub(crate) const CLASSES: &str = "each required field left out; each field of the wrong JSON type; \
     each integer below the schema's minimum, fractional and boolean (`k` also negative); a funnel \
     violation; each field of `fusion`, `rerank`, `mmr` and `recency` mistyped or out of range; \
     malformed Content blocks; `params` an array, a string and null";

/// The schema's `minimum` of each integer field (`schema/rcp-1.0.json`,
/// `$defs/*Params`): `k`, `candidateK`, `tokenBudget`, `topN`, `n`, `hops`
/// are `"minimum": 1`, `level` `"minimum": 0`. §12: `-32602` is for "a value
/// out of range"; "Only a value that is structurally invalid (`k` negative,
/// `k` non-integer) is `-32602`". `seed` has no minimum.
const MINIMUMS: &[(&str, &str, i64)] = &[
    ("retrieve", "k", 1),
    ("retrieve", "candidateK", 1),
    ("retrieve", "level", 0),
    ("retrieve", "tokenBudget", 1),
    ("rerank", "topN", 1),
    ("query/transform", "n", 1),
    ("graph", "k", 1),
    ("graph", "hops", 1),
    ("graph", "level", 0),
    ("memory/recall", "n", 1),
];

/// The values of an integer field that are not an integer of its range,
/// besides the string of [`Ty::wrong`]: below the schema's minimum, with a
/// fractional part (§4.6 "**Integers** … are JSON numbers with no fractional
/// part") and a boolean (§4.6 "**Booleans** are `true`/`false`, never
/// `0`/`1`", so `true` is no integer either).
fn int_classes(method: &str, field: &str) -> Vec<(Value, String)> {
    let mut out = Vec::new();
    if let Some((_, _, min)) = MINIMUMS
        .iter()
        .find(|(m, f, _)| *m == method && *f == field)
    {
        let below = min - 1;
        out.push((
            json!(below),
            format!("with `{field}` = {below}, below the schema's minimum {min},"),
        ));
    }
    out.push((json!(1.5), format!("with `{field}` = 1.5, not an integer,")));
    out.push((
        json!(true),
        format!("with `{field}` = true, a boolean, not an integer,"),
    ));
    out
}

/// The wrong-type value of a field, chosen so that a lenient server has a
/// reading to serve it by: `fusion` as the name of a fusion method (an
/// advertised one when listed), `mmr` as its bare `lambda`, `recency` as its
/// bare field name, `rerank` as `true`.
fn wrong_value(method: &str, field: &Field, init: &Init) -> Value {
    match (method, field.name) {
        ("retrieve", "fusion") => json!(first_fusion(init)),
        ("retrieve", "mmr") => json!(0.5),
        ("retrieve", "recency") => json!("timestamp"),
        ("retrieve", "rerank") => json!(true),
        _ => field.ty.wrong(),
    }
}

fn first_fusion(init: &Init) -> String {
    init.advertised_list("retrieve", "fusion")
        .and_then(|l| l.into_iter().next())
        .unwrap_or_else(|| "rrf".to_owned())
}

/// A base64 payload for the image blocks (the PNG signature).
const IMAGE_DATA: &str = "iVBORw0KGgo=";

/// Where a Content block may stand (§4.8: "wherever a query, a passage, or an
/// indexed document body appears"), per read-only method: the field, and
/// whether it is an array of them. The capability whose `modalities` say
/// whether a non-text block is offered comes with it.
const CONTENT_PLACES: &[(&str, &str, bool, &str)] = &[
    ("retrieve", "query", false, "retrieve"),
    ("rerank", "query", false, "rerank"),
    ("rerank", "passages", true, "rerank"),
    ("embed", "inputs", true, "embed"),
    ("embed/sparse", "texts", true, "sparseEmbed"),
    ("embed/multi", "inputs", true, "multiVector"),
];

/// Content blocks the schema's `Content` refuses: "`type` is `\"text\"`,
/// `\"image\"`, `\"audio\"`, or `\"blob\"` … `mimeType` is **REQUIRED** for
/// non-text blocks … inline as base64 `data` **or** by reference as `uri`
/// (never both); a `text` block uses `text`" (§4.8). The flag says the block
/// is not a text block: a server that does not offer its modality may also
/// refuse it with -32005 (§4.8 "**MUST** reject a block whose
/// `type`/`mimeType` is outside the modalities they advertised with
/// `-32005`"), and the spec does not order that check and the shape check.
fn bad_blocks() -> Vec<(Value, &'static str, Option<&'static str>)> {
    vec![
        (json!({"type": "text"}), "a text block without `text`", None),
        (json!({"text": PROBE_QUERY}), "a block without `type`", None),
        (
            json!({"type": "text", "text": 123}),
            "a text block whose `text` is a number",
            None,
        ),
        (
            json!({"type": "image", "data": IMAGE_DATA}),
            "an image block without the required `mimeType`",
            Some("image"),
        ),
        (
            json!({"type": "image", "mimeType": "image/png", "data": IMAGE_DATA, "uri": "https://example.invalid/protocheck.png"}),
            "an image block with both `data` and `uri`",
            Some("image"),
        ),
        (
            json!({"type": "video", "mimeType": "video/mp4", "data": IMAGE_DATA}),
            "a block of `type` \"video\", outside the schema's enumeration",
            Some("video"),
        ),
    ]
}

/// A block outside the advertised modalities may get -32005 too.
const ALSO_MODALITY: (&[i64], &str) = (
    &[-32005],
    "a block outside the advertised modalities, -32005 (§4.8); the spec does not order that check \
     and the shape check",
);

/// A field of a nested option object, its malformed value, and what is
/// wrong with it.
type NestedField = (&'static str, Value, String);

/// The nested option objects of `retrieve` (schema `RetrieveParams`), each
/// with valid contents and the probes of its fields: a wrong JSON type and,
/// where the schema bounds a number, a value out of range. `fusion.alpha`
/// and `mmr.lambda` are `"minimum": 0, "maximum": 1` (§7.7 `mmr`: "0=max
/// diversity,1=pure relevance"); `fusion.rrfK` and `rerank.topN` are
/// integers; `recency.halfLifeDays` a number without bounds.
fn nested(init: &Init) -> Vec<(&'static str, Value, Vec<NestedField>)> {
    let mut rerank = json!({});
    if let Some(m) = init
        .advertised_list("rerank", "methods")
        .and_then(|l| l.into_iter().next())
    {
        rerank["method"] = json!(m);
    }
    vec![
        (
            "fusion",
            json!({"method": first_fusion(init)}),
            vec![
                (
                    "method",
                    json!(123),
                    "a number, not a method name".to_owned(),
                ),
                ("rrfK", json!("60"), "a string, not an integer".to_owned()),
                ("rrfK", json!(1.5), "not an integer".to_owned()),
                (
                    "alpha",
                    json!(1.5),
                    "above the schema's maximum 1".to_owned(),
                ),
                ("alpha", json!("0.5"), "a string, not a number".to_owned()),
                ("weights", json!("dense"), "not an object".to_owned()),
                (
                    "weights",
                    json!({"dense": "0.5"}),
                    "an object whose weight is a string, not a number".to_owned(),
                ),
            ],
        ),
        (
            "rerank",
            rerank,
            vec![
                (
                    "method",
                    json!(123),
                    "a number, not a method name".to_owned(),
                ),
                ("model", json!(123), "a number, not a string".to_owned()),
                ("topN", json!("3"), "a string, not an integer".to_owned()),
                ("topN", json!(1.5), "not an integer".to_owned()),
                ("topN", json!(true), "a boolean, not an integer".to_owned()),
                (
                    "topN",
                    json!(0),
                    "below 1 and below `k` (the funnel `rerank.topN ≥ k`, §3.3)".to_owned(),
                ),
            ],
        ),
        (
            "mmr",
            json!({"lambda": 0.5}),
            vec![
                (
                    "lambda",
                    json!(1.5),
                    "above the schema's maximum 1".to_owned(),
                ),
                (
                    "lambda",
                    json!(-0.5),
                    "below the schema's minimum 0".to_owned(),
                ),
                ("lambda", json!("0.5"), "a string, not a number".to_owned()),
            ],
        ),
        (
            "recency",
            json!({"field": recency_field(init), "halfLifeDays": 30}),
            vec![
                (
                    "halfLifeDays",
                    json!("30"),
                    "a string, not a number".to_owned(),
                ),
                ("field", json!(123), "a number, not a field name".to_owned()),
            ],
        ),
    ]
}

/// A `date` field of `filter.fields` when one is advertised (§4.6:
/// "`recency.field` (§7.7) references such a field"), else `timestamp`.
fn recency_field(init: &Init) -> String {
    init.capability("filter")
        .and_then(|f| f.get("fields"))
        .and_then(Value::as_object)
        .and_then(|m| m.iter().find(|(_, t)| *t == "date").map(|(n, _)| n.clone()))
        .unwrap_or_else(|| "timestamp".to_owned())
}

/// Every probe for the methods `init` advertises: each required field left
/// out, each field with a value of the wrong JSON type, each integer out of
/// its range or not an integer, the funnel, the nested option objects,
/// malformed Content blocks, and `params` that is not an object.
pub(crate) fn probes(init: &Init) -> Vec<ParamsProbe> {
    let mut out = Vec::new();
    for method in METHODS.iter().filter(|m| init.supports(m.capability)) {
        let base = base(method.name, init);
        for field in method.fields.iter().filter(|f| f.required) {
            let mut params = base.clone();
            params.remove(field.name);
            out.push(ParamsProbe {
                method: method.name,
                params: Value::Object(params),
                what: format!("without the required `{}`", field.name),
                ignorable: None,
                exemption: None,
                also: None,
            });
        }
        for field in method.fields {
            let wrong = wrong_value(method.name, field, init);
            let mut values = vec![(
                wrong.clone(),
                format!(
                    "with `{}` = {}, not {},",
                    field.name,
                    show(&wrong),
                    field.ty.words()
                ),
            )];
            if field.ty == Ty::Int {
                values.extend(int_classes(method.name, field.name));
            }
            // An array of the wrong elements: every array field holds
            // strings or Content blocks (`passages`, `inputs`, `texts`,
            // `seedIds`), never numbers.
            if field.ty == Ty::Arr {
                values.push((
                    json!([123]),
                    format!(
                        "with `{}` = [123], an array whose element is neither a string nor a Content block,",
                        field.name
                    ),
                ));
            }
            for (value, what) in values {
                let mut params = base.clone();
                if let Some(other) = field.instead_of {
                    params.remove(other);
                }
                params.insert(field.name.to_owned(), value);
                let exemption = field.hint.map(|h| Exemption {
                    field: format!("`{}` `{}`", method.name, field.name),
                    read_because: h.unless.advertised(init).then(|| h.unless.words()),
                    why: h.why,
                });
                let ignorable = exemption
                    .as_ref()
                    .filter(|e| e.read_because.is_none())
                    .map(|e| e.why);
                let also = match (field.required, field.name) {
                    (true, _) => None,
                    (false, "cursor") => Some(ALSO_UNKNOWN_CURSOR),
                    (false, _) => Some(ALSO_UNSUPPORTED),
                };
                out.push(ParamsProbe {
                    method: method.name,
                    params: Value::Object(params),
                    what,
                    ignorable,
                    exemption,
                    also,
                });
            }
        }
        if method.name == "retrieve" {
            // §12: "Only a value that is structurally invalid (`k` negative,
            // `k` non-integer) is `-32602`".
            let mut params = base.clone();
            params.insert("k".into(), json!(-5));
            out.push(plain(method.name, params, "with `k` = -5".to_owned()));
            out.extend(retrieve_probes(&base, init));
        }
        for (m, field, array, cap) in CONTENT_PLACES {
            if *m != method.name {
                continue;
            }
            let offered = init
                .advertised_list(cap, "modalities")
                .unwrap_or_else(|| vec!["text".to_owned()]);
            for (block, words, kind) in bad_blocks() {
                let mut params = base.clone();
                let value = if *array { json!([block]) } else { block };
                params.insert((*field).to_owned(), value);
                let mut probe = plain(
                    method.name,
                    params,
                    format!(
                        "with {words} as {}`{field}`,",
                        if *array { "an element of " } else { "" }
                    ),
                );
                if let Some(kind) = kind
                    && !offered.iter().any(|o| o == kind)
                {
                    probe.also = Some(ALSO_MODALITY);
                }
                out.push(probe);
            }
        }
        for (value, words) in [
            (json!([PROBE_QUERY]), "an array"),
            (json!("protocheck-not-an-object"), "a string"),
            (Value::Null, "null"),
        ] {
            out.push(ParamsProbe {
                method: method.name,
                params: value,
                what: format!("with `params` {words}, not an object,"),
                ignorable: None,
                exemption: None,
                also: Some(ALSO_INVALID_REQUEST),
            });
        }
    }
    out
}

/// A probe with one reading: -32602 only.
fn plain(method: &'static str, params: Map<String, Value>, what: String) -> ParamsProbe {
    ParamsProbe {
        method,
        params: Value::Object(params),
        what,
        ignorable: None,
        exemption: None,
        also: None,
    }
}

/// `retrieve`'s funnel and nested option objects. §3.3: "The three
/// result-size knobs on `retrieve` therefore form a funnel and **MUST**
/// satisfy: `candidateK ≥ rerank.topN ≥ k`"; a request that breaks it is
/// out of range (-32602, §12). An option object the server does not offer
/// (`rerank` without built-in rerank, `recency`, `mmr`) may be refused as
/// unsupported (-32005) instead; the spec does not order the two checks.
fn retrieve_probes(base: &Map<String, Value>, init: &Init) -> Vec<ParamsProbe> {
    let mut out = Vec::new();
    let with = |extra: Value| {
        let mut params = base.clone();
        if let Some(extra) = extra.as_object() {
            params.extend(extra.clone());
        }
        params
    };
    let rerank_base = nested(init)
        .into_iter()
        .find(|(name, ..)| *name == "rerank")
        .map(|(_, v, _)| v)
        .unwrap_or_else(|| json!({}));
    let mut rerank_two = rerank_base.clone();
    rerank_two["topN"] = json!(2);
    let mut rerank_three = rerank_base;
    rerank_three["topN"] = json!(3);
    for (extra, what) in [
        (
            json!({"k": 3, "candidateK": 2}),
            "with `k` = 3 and `candidateK` = 2 (the funnel `candidateK ≥ k` broken, §3.3)",
        ),
        (
            json!({"k": 3, "rerank": rerank_two}),
            "with `k` = 3 and `rerank.topN` = 2 (the funnel `rerank.topN ≥ k` broken, §3.3)",
        ),
        (
            json!({"k": 1, "candidateK": 2, "rerank": rerank_three}),
            "with `candidateK` = 2 and `rerank.topN` = 3 (the funnel `candidateK ≥ rerank.topN` broken, §3.3)",
        ),
    ] {
        let mut probe = plain("retrieve", with(extra), what.to_owned());
        probe.also = Some(ALSO_UNSUPPORTED);
        out.push(probe);
    }
    let hybrid = init
        .advertised_list("retrieve", "modes")
        .is_some_and(|m| m.iter().any(|x| x == "hybrid"));
    for (name, valid, fields) in nested(init) {
        for (field, value, words) in fields {
            let mut object = valid.clone();
            object[field] = value.clone();
            let mut extra = json!({ name: object });
            // Fusion applies "when `mode:\"hybrid\"`" (§6.1).
            if name == "fusion" && hybrid {
                extra["mode"] = json!("hybrid");
            }
            let mut probe = plain(
                "retrieve",
                with(extra),
                format!("with `{name}.{field}` = {value} ({words}),"),
            );
            probe.also = Some(ALSO_UNSUPPORTED);
            out.push(probe);
        }
    }
    out
}

/// The unknown key the nested tolerance probes add.
const UNKNOWN_KEY: &str = "x-protocheck-unknown-field";

/// One nested probe of RCP-L0-016: valid params whose nested object carries
/// an unknown key, and the same params without it.
pub(crate) struct NestedUnknown {
    pub method: &'static str,
    pub with: Value,
    pub without: Value,
    /// "`retrieve` `fusion`".
    pub what: String,
}

/// §4.6: "**Unknown fields** in any object **MUST** be ignored by the
/// receiver, never rejected (forward compatibility). This does not apply to
/// `filter` *field names*". So an unknown key inside each nested object of
/// the read-only methods' params: `retrieve`'s `fusion`, `rerank`, `mmr` and
/// `recency`, a text Content block wherever one may stand (§4.8), and a
/// filter node, a leaf and each combinator (its *key*, never a field name);
/// and `info` and `catalog/list`, whose params no other probe carries.
pub(crate) fn nested_unknown(init: &Init) -> Vec<NestedUnknown> {
    let mut out = Vec::new();
    let unknown = json!({"nested": [1, "two"]});
    let mut add = |method: &'static str,
                   base: &Map<String, Value>,
                   field: &str,
                   valid: Value,
                   what: String| {
        let mut without = base.clone();
        without.insert(field.to_owned(), valid.clone());
        let mut with = without.clone();
        if let Some(v) = with.get_mut(field) {
            insert_unknown(v, &unknown);
        }
        out.push(NestedUnknown {
            method,
            with: Value::Object(with),
            without: Value::Object(without),
            what,
        });
    };
    if init.supports("retrieve") {
        let base = base("retrieve", init);
        for (name, valid, _) in nested(init) {
            let mut b = base.clone();
            if name == "fusion"
                && init
                    .advertised_list("retrieve", "modes")
                    .is_some_and(|m| m.iter().any(|x| x == "hybrid"))
            {
                b.insert("mode".into(), json!("hybrid"));
            }
            add("retrieve", &b, name, valid, format!("`retrieve` `{name}`"));
        }
        if init.supports("filter")
            && let Some(leaf) = filter_leaf(init)
        {
            add(
                "retrieve",
                &base,
                "filter",
                leaf.clone(),
                "`retrieve` a filter leaf".to_owned(),
            );
            for combinator in ["and", "or"] {
                add(
                    "retrieve",
                    &base,
                    "filter",
                    json!({ combinator: [leaf.clone()] }),
                    format!("`retrieve` a filter `{combinator}` node"),
                );
            }
            add(
                "retrieve",
                &base,
                "filter",
                json!({"not": leaf}),
                "`retrieve` a filter `not` node".to_owned(),
            );
        }
    }
    let block = json!({"type": "text", "text": PROBE_QUERY});
    for (method, field, array, cap) in CONTENT_PLACES {
        let Some(m) = METHODS.iter().find(|m| m.name == *method) else {
            continue;
        };
        if !init.supports(cap) {
            continue;
        }
        let valid = if *array {
            json!([block.clone()])
        } else {
            block.clone()
        };
        let base = base(m.name, init);
        add(
            m.name,
            &base,
            field,
            valid,
            format!("`{method}` a text Content block in `{field}`"),
        );
    }
    // The methods without a params table: `info` (open at any time) and
    // `catalog/list` when advertised, with an unknown top-level field.
    for (method, cap) in [("info", None), ("catalog/list", Some("catalog"))] {
        if cap.is_some_and(|c| !init.supports(c)) {
            continue;
        }
        out.push(NestedUnknown {
            method,
            with: json!({ UNKNOWN_KEY: unknown.clone() }),
            without: json!({}),
            what: format!("`{method}` (a top-level field)"),
        });
    }
    out
}

/// Adds the unknown key to `v`, or to its one element when it is an array.
fn insert_unknown(v: &mut Value, unknown: &Value) {
    match v {
        Value::Object(map) => {
            map.insert(UNKNOWN_KEY.to_owned(), unknown.clone());
        }
        Value::Array(items) => {
            if let Some(first) = items.first_mut() {
                insert_unknown(first, unknown);
            }
        }
        _ => {}
    }
}

/// A valid filter leaf on an advertised field with an advertised operator
/// whose value shape fits the field's type (§8's table): `exists` first
/// (any type, a boolean), then `eq`, `ne`, `in`, `nin`.
fn filter_leaf(init: &Init) -> Option<Value> {
    let fields: Vec<(String, Option<String>)> =
        match init.capability("filter").and_then(|f| f.get("fields")) {
            Some(Value::Array(list)) => list
                .iter()
                .filter_map(Value::as_str)
                .map(|n| (n.to_owned(), None))
                .collect(),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(n, t)| (n.clone(), t.as_str().map(str::to_owned)))
                .collect(),
            _ => Vec::new(),
        };
    let (field, ty) = fields.first()?;
    let ops = init.advertised_list("filter", "operators");
    let offered = |op: &str| ops.as_ref().is_none_or(|l| l.iter().any(|o| o == op));
    let scalar = match ty.as_deref() {
        Some("int") => json!(2000),
        Some("float") => json!(0.5),
        Some("bool") => json!(true),
        Some("date") => json!("2020-01-01"),
        _ => json!("protocheck-probe-value"),
    };
    let (op, value) = [
        ("exists", json!(true)),
        ("eq", scalar.clone()),
        ("ne", scalar.clone()),
        ("in", json!([scalar.clone()])),
        ("nin", json!([scalar])),
    ]
    .into_iter()
    .find(|(op, _)| offered(op))?;
    Some(json!({"field": field, "op": op, "value": value}))
}

impl Conversation<'_> {
    /// RCP-L0-016 inside nested objects (see [`nested_unknown`]): each probe
    /// must succeed; one that is refused goes again without the unknown key,
    /// and only when that succeeds is the key what was refused. Returns the
    /// problems and the notes for the finding.
    pub(super) async fn nested_tolerance(
        &mut self,
        rule: &'static Rule,
        init: &Init,
        check: &mut Check,
    ) -> Result<(Vec<String>, Vec<String>), EngineError> {
        let probes = nested_unknown(init);
        let answers = self
            .request_all(
                rule,
                probes.iter().map(|p| (p.method, p.with.clone())).collect(),
            )
            .await?;
        let mut tolerated = Vec::new();
        let mut again = Vec::new();
        for (probe, sent) in probes.iter().zip(&answers) {
            check.saw(sent);
            if result_of(sent).is_some_and(Value::is_object) {
                tolerated.push(probe.what.clone());
            } else {
                again.push((probe, outcome_words(sent)));
            }
        }
        let plain = self
            .request_all(
                rule,
                again
                    .iter()
                    .map(|(p, _)| (p.method, p.without.clone()))
                    .collect(),
            )
            .await?;
        let mut problems = Vec::new();
        let mut anyway = Vec::new();
        for ((probe, words), sent) in again.iter().zip(&plain) {
            check.saw(sent);
            if result_of(sent).is_some_and(Value::is_object) {
                problems.push(format!(
                    "{} with an unknown key (`{UNKNOWN_KEY}`) {words} while the same request without it succeeded",
                    probe.what
                ));
            } else {
                anyway.push(probe.what.clone());
            }
        }
        let mut notes = Vec::new();
        if !tolerated.is_empty() {
            notes.push(format!(
                "an unknown key inside a nested object was ignored in {}",
                tolerated.join(", ")
            ));
        }
        if !anyway.is_empty() {
            notes.push(format!(
                "not judged (refused with or without the unknown key, so the key was not what was refused): {}",
                anyway.join(", ")
            ));
        }
        if !problems.is_empty() {
            problems = vec![format!(
                "{}; unknown fields in any object MUST be ignored, never rejected (§4.6, §14.1 rule 7)",
                problems.join("; ")
            )];
        }
        Ok((problems, notes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn init(caps: Value) -> Init {
        Init {
            result: json!({"capabilities": caps})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            exchange: Exchange {
                request: crate::suite::RequestRecord {
                    line: "stdin".into(),
                    headers: Vec::new(),
                    body: String::new(),
                },
                response: None,
                error: None,
            },
            source: InitSource::Initialize,
        }
    }

    #[test]
    fn every_required_field_and_every_type_is_probed_for_advertised_methods_only() {
        let probes = probes(&init(json!({"retrieve": {}, "graph": {"ops": ["global"]}})));
        let retrieve: Vec<&ParamsProbe> =
            probes.iter().filter(|p| p.method == "retrieve").collect();
        // Two required fields, every field's type, the integer classes, `k`
        // negative, the funnel, the nested fields, the malformed blocks and
        // the three non-object `params`.
        let caps = init(json!({"retrieve": {}, "graph": {"ops": ["global"]}}));
        let ints: usize = RETRIEVE
            .iter()
            .filter(|f| f.ty == Ty::Int)
            .map(|f| int_classes("retrieve", f.name).len())
            .sum();
        let fields: usize = nested(&caps).iter().map(|(_, _, f)| f.len()).sum();
        assert_eq!(
            retrieve.len(),
            2 + RETRIEVE.len() + ints + 1 + 3 + fields + bad_blocks().len() + 3
        );
        for (value, what) in [
            (json!(0), "below the schema's minimum 1"),
            (json!(1.5), "not an integer"),
            (json!(true), "a boolean"),
        ] {
            assert!(
                retrieve
                    .iter()
                    .any(|p| p.params.get("k") == Some(&value) && p.what.contains(what)),
                "{what}"
            );
        }
        assert!(retrieve.iter().any(|p| {
            p.params.get("k") == Some(&json!(3)) && p.params.get("candidateK") == Some(&json!(2))
        }));
        let fusion = retrieve
            .iter()
            .find(|p| p.what.starts_with("with `fusion` ="))
            .expect("fusion");
        assert_eq!(fusion.params.get("fusion"), Some(&json!("rrf")));
        let not_object = retrieve
            .iter()
            .find(|p| p.params.is_null())
            .expect("null params");
        assert_eq!(not_object.also.map(|(c, _)| c), Some(&[-32600][..]));
        assert!(
            retrieve
                .iter()
                .any(|p| p.params == json!({"k": 1}) && p.what.contains("`query`"))
        );
        assert!(
            retrieve
                .iter()
                .any(|p| p.params == json!({"query": PROBE_QUERY}) && p.what.contains("`k`"))
        );
        let graph: Vec<&ParamsProbe> = probes.iter().filter(|p| p.method == "graph").collect();
        let graph_ints: usize = GRAPH
            .iter()
            .filter(|f| f.ty == Ty::Int)
            .map(|f| int_classes("graph", f.name).len())
            .sum();
        // ... one more for `seedIds` holding a number.
        assert_eq!(graph.len(), 1 + GRAPH.len() + graph_ints + 1 + 3);
        assert!(
            graph
                .iter()
                .any(|p| p.params == json!({"query": PROBE_QUERY}))
        );
        assert!(graph.iter().all(|p| {
            p.params
                .get("op")
                .is_none_or(|op| op == "global" || op == 123)
        }));
        assert!(
            probes
                .iter()
                .all(|p| p.method == "retrieve" || p.method == "graph")
        );
        let seed = retrieve
            .iter()
            .find(|p| p.what.starts_with("with `seed`"))
            .expect("seed");
        assert!(seed.ignorable.is_some());
        let seeded = probes_for(json!({"retrieve": {"deterministic": true}}), "`seed`");
        assert!(seeded.ignorable.is_none());
        // §7.7.2: `level` is ignorable on a flat corpus (no `retrieve.levels`),
        // read once levels are advertised; `unit` follows the `strict` rule.
        let level = probes_for(json!({"retrieve": {}}), "`level`");
        assert!(level.ignorable.is_some());
        assert!(
            level
                .exemption
                .as_ref()
                .is_some_and(|e| e.read_because.is_none())
        );
        let levelled = probes_for(json!({"retrieve": {"levels": 3}}), "`level`");
        assert!(levelled.ignorable.is_none());
        assert_eq!(
            levelled.exemption.and_then(|e| e.read_because).as_deref(),
            Some("`retrieve.levels`")
        );
        let unit = probes_for(json!({"retrieve": {}}), "`unit`");
        assert!(unit.ignorable.is_none() && unit.exemption.is_none());
        // A required field has one reading (-32602); an optional one is also
        // an unsupported option (-32005), and a cursor an unknown one.
        let query = probes_for(json!({"retrieve": {}}), "`query`");
        assert!(query.also.is_none());
        let mode = probes_for(json!({"retrieve": {}}), "`mode`");
        assert_eq!(mode.also.map(|(codes, _)| codes), Some(&[-32005][..]));
        let cursor = probes_for(json!({"retrieve": {}}), "`cursor`");
        assert_eq!(
            cursor.also.map(|(codes, _)| codes),
            Some(&[-32005, -32015][..])
        );
    }

    fn probes_for(caps: Value, what: &str) -> ParamsProbe {
        probes(&init(caps))
            .into_iter()
            .find(|p| p.what.starts_with(&format!("with {what}")))
            .expect("probe")
    }

    #[test]
    fn an_image_block_may_be_refused_as_a_modality_only_where_images_are_not_offered() {
        let find = |caps: Value| {
            probes(&init(caps))
                .into_iter()
                .find(|p| p.method == "embed" && p.what.contains("without the required `mimeType`"))
                .expect("image block")
        };
        assert!(find(json!({"embed": {}})).also.is_some());
        assert!(
            find(json!({"embed": {"modalities": ["text", "image"]}}))
                .also
                .is_none()
        );
    }

    #[test]
    fn unknown_keys_go_inside_every_nested_object_and_the_filter_nodes() {
        let caps = init(json!({
            "retrieve": {"modes": ["dense", "hybrid"]},
            "filter": {"fields": {"lang": "keyword"}, "operators": ["eq"]},
            "rerank": {},
        }));
        let probes = nested_unknown(&caps);
        let names: Vec<&str> = probes.iter().map(|p| p.what.as_str()).collect();
        for want in [
            "`retrieve` `fusion`",
            "`retrieve` `rerank`",
            "`retrieve` `mmr`",
            "`retrieve` `recency`",
            "`retrieve` a filter leaf",
            "`retrieve` a filter `and` node",
            "`retrieve` a filter `or` node",
            "`retrieve` a filter `not` node",
            "`retrieve` a text Content block in `query`",
            "`rerank` a text Content block in `passages`",
        ] {
            assert!(names.contains(&want), "{want}");
        }
        let leaf = probes
            .iter()
            .find(|p| p.what == "`retrieve` a filter leaf")
            .expect("leaf");
        assert_eq!(
            leaf.without["filter"],
            json!({"field": "lang", "op": "eq", "value": "protocheck-probe-value"})
        );
        assert!(leaf.with["filter"].get(UNKNOWN_KEY).is_some());
        let or = probes
            .iter()
            .find(|p| p.what == "`retrieve` a filter `or` node")
            .expect("or");
        // The key goes on the combinator node, not on its leaf.
        assert!(or.with["filter"].get(UNKNOWN_KEY).is_some());
        let fusion = probes
            .iter()
            .find(|p| p.what == "`retrieve` `fusion`")
            .expect("fusion");
        assert_eq!(fusion.without["mode"], json!("hybrid"));
    }

    #[test]
    fn the_legacy_synonym_is_probed_alone() {
        let texts = probes_for(json!({"embed": {}}), "`texts`");
        assert_eq!(texts.params, json!({"texts": "protocheck-not-an-array"}));
    }
}
