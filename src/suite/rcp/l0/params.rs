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
    opt("level", Ty::Int),
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

/// Every probe for the methods `init` advertises: each required field left
/// out, each field with a value of the wrong JSON type, and `k` out of range.
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
            let mut params = base.clone();
            if let Some(other) = field.instead_of {
                params.remove(other);
            }
            let wrong = field.ty.wrong();
            let what = format!(
                "with `{}` = {}, not {},",
                field.name,
                show(&wrong),
                field.ty.words()
            );
            params.insert(field.name.to_owned(), wrong);
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
        if method.name == "retrieve" {
            // §12: "Only a value that is structurally invalid (`k` negative,
            // `k` non-integer) is `-32602`".
            let mut params = base.clone();
            params.insert("k".into(), json!(-5));
            out.push(ParamsProbe {
                method: method.name,
                params: Value::Object(params),
                what: "with `k` = -5".to_owned(),
                ignorable: None,
                exemption: None,
                also: None,
            });
        }
    }
    out
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
        // Two required fields, every field's type, and `k` out of range.
        assert_eq!(retrieve.len(), 2 + RETRIEVE.len() + 1);
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
        assert_eq!(graph.len(), 1 + GRAPH.len());
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
    fn the_legacy_synonym_is_probed_alone() {
        let texts = probes_for(json!({"embed": {}}), "`texts`");
        assert_eq!(texts.params, json!({"texts": "protocheck-not-an-array"}));
    }
}
