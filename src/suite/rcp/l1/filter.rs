//! Metadata filtering (spec §14.2, §8): `filter` advertised with its fields,
//! a filter on an advertised field restricting the hits, and the validation §8
//! requires.

use super::*;

pub const FILTER_RESTRICTS: Rule = item(
    "RCP-L1-004",
    "`filter` is advertised and a filter on an advertised field restricts the hits",
    SpecLevel::Should,
    "RCP/1 §14.2, §8",
)
.help(
    "protocheck needs `filter` with `fields`. From the `meta` values the hits of earlier requests \
     showed for advertised fields, in every mode the run asked for, it repeats those requests with \
     a clause per advertised operator and field type (`eq`, `ne`, `in`, `nin`, `gt`, `gte`, `lt`, \
     `lte`, `contains`, `exists`), then with `not`, `and`/`or`/`not` nested 3, 4 and 8 deep, and \
     `in`/`nin` with several values, built from two hits that showed different values of one \
     field. Every hit of the unfiltered result that a filter matches must stay, and no hit it \
     rejects may come back. Without `meta` on the hits the rule is not verified.",
    "The server accepts `filter` but ignores it (in one mode or all), applies an operator loosely \
     (`gt` behaving as `gte`, only the first value of an `in` list), drops or ignores `not`, \
     flattens nested combinators, refuses a tree more than two levels deep, or refuses with an \
     error a filter it advertises. Without `filter`, or without its `fields`, the rule is skipped \
     and L1 is not reached; without `meta` on the hits it is not verified, and L1 is not granted.",
    "Apply the filter inside the search in every mode (pre-filtering or a filtered index), \
     evaluate the whole boolean tree, implement each advertised operator exactly as §8 defines \
     it, advertise in `filter.fields` and `filter.operators` only what the backend supports, and \
     return `meta` with the filter fields on hits so that clients (and protocheck) can see what a \
     filter kept.",
);
pub const FILTER_VALIDATED: Rule = item(
    "RCP-L1-005",
    "an invalid filter (unadvertised field, wrong value type, operator the type does not take, empty `and`/`or`) is rejected with -32602",
    SpecLevel::Must,
    "RCP/1 §8, §15.4",
)
.help(
    "When `filter` advertises `fields`, protocheck sends `retrieve` with invalid filters: a clause \
     on `x-protocheck-unadvertised-field` alone and inside `and`, `or`, `not` and three \
     combinators deep; an empty `and` and `or`, alone and nested; for one field of each declared \
     type, a value of the wrong JSON type with every advertised operator the type takes (one \
     wrong element for `in`/`nin`); and every advertised operator the type does not take (`gt` \
     on a `keyword` field, `contains` on a field that is not `text` nor array-valued). Each must \
     get error -32602 with `error.data.field`.",
    "The server validates only the top of the tree, checks the operator but not the value's type \
     (or not the elements of an `in` list), passes an unknown field to its backend, where it \
     matches nothing, serves an empty `and` as \"everything\", or refuses with -32005 or -32603 \
     instead of -32602.",
    "Validate the whole filter tree before searching (the SDKs' validator does): reject a clause \
     on a field not listed in `filter.fields` at any depth, a value whose JSON type the field's \
     type does not take, an operator §8's table does not allow for the type, and an empty `and` \
     or `or` array, with `{\"code\": -32602, \"data\": {\"field\": …}}` (InvalidParams).",
);

/// A field name no server advertises.
const UNADVERTISED_FIELD: &str = "x-protocheck-unadvertised-field";
/// A value no document is expected to hold, for a field whose values the run
/// has not seen.
const PROBE_VALUE: &str = "protocheck-probe-value";

/// The advertised filter fields, in the order advertised, with their declared
/// type when `fields` is a name → type map (spec §6, §8).
fn fields(init: &Init) -> Option<Vec<(String, Option<String>)>> {
    let fields = init.capability("filter")?.get("fields")?;
    let named: Vec<(String, Option<String>)> = match fields {
        Value::Array(list) => list
            .iter()
            .filter_map(Value::as_str)
            .map(|n| (n.to_owned(), None))
            .collect(),
        Value::Object(map) => map
            .iter()
            .map(|(n, t)| (n.clone(), t.as_str().map(str::to_owned)))
            .collect(),
        _ => return None,
    };
    (!named.is_empty()).then_some(named)
}

/// Whether `op` may be used: listed in `filter.operators`, or no list given.
/// Decision (amendment 11): a filter is judged with the operators the server
/// advertises. §8: "Servers advertise allowed `fields` and `operators`", and
/// an operator outside them is -32005, so no probe uses one.
fn operator_allowed(init: &Init, op: &str) -> bool {
    init.advertised_list("filter", "operators")
        .is_none_or(|ops| ops.iter().any(|o| o == op))
}

/// Whether the ordered comparisons apply to a field of this declared type
/// (§8 table: `gt`…`lte` apply to `int`/`float`/`date`).
fn ordered_type(ty: Option<&str>) -> bool {
    ty.is_none_or(|t| matches!(t, "int" | "float" | "date"))
}

/// Whether a returned hit whose `meta.<field>` is `got` satisfies the clause
/// `op value` (§8 table); `None` when the answer is not known (values that do
/// not compare, an operator on an array-valued field other than membership).
fn satisfies(op: &str, value: &Value, got: &Value) -> Option<bool> {
    let scalar = |v: &Value| matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_));
    let member = |v: &Value| match got {
        Value::Array(items) => items.contains(v),
        other => other == v,
    };
    let ordered = |f: fn(f64, f64) -> bool| match (got.as_f64(), value.as_f64()) {
        (Some(a), Some(b)) => Some(f(a, b)),
        _ => None,
    };
    match op {
        "eq" if scalar(value) => Some(member(value)),
        "ne" if scalar(value) => Some(!member(value)),
        "gt" => ordered(|a, b| a > b),
        "gte" => ordered(|a, b| a >= b),
        "lt" => ordered(|a, b| a < b),
        "lte" => ordered(|a, b| a <= b),
        "in" => value.as_array().map(|set| set.iter().any(member)),
        "nin" => value.as_array().map(|set| !set.iter().any(member)),
        "contains" => match (got, value) {
            (Value::Array(items), v) => Some(items.contains(v)),
            (Value::String(s), Value::String(needle)) => Some(s.contains(needle.as_str())),
            _ => None,
        },
        // A hit that shows the field has it.
        "exists" => value.as_bool(),
        _ => None,
    }
}

/// A field's type as the probes tell types apart: the declared type, else
/// the JSON kind of the value a hit showed.
fn type_key(ty: Option<&str>, value: &Value) -> String {
    if let Some(t) = ty {
        return t.to_owned();
    }
    match value {
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "boolean",
        Value::Array(_) => "array",
        _ => "other",
    }
    .to_owned()
}

/// Whether a hit whose `meta` is `meta` matches the filter tree (§8), when
/// its metadata decides it: `None` when a field the tree reads is not shown,
/// or a clause has no known answer (see [`satisfies`]).
fn evaluate(tree: &Value, meta: Option<&Value>) -> Option<bool> {
    evaluate_on(tree, meta?.as_object()?)
}

fn evaluate_on(tree: &Value, meta: &serde_json::Map<String, Value>) -> Option<bool> {
    let node = tree.as_object()?;
    if let Some(list) = node.get("and").and_then(Value::as_array) {
        let mut all = Some(true);
        for child in list {
            match evaluate_on(child, meta) {
                Some(false) => return Some(false),
                None => all = None,
                Some(true) => {}
            }
        }
        return all;
    }
    if let Some(list) = node.get("or").and_then(Value::as_array) {
        let mut any = Some(false);
        for child in list {
            match evaluate_on(child, meta) {
                Some(true) => return Some(true),
                None => any = None,
                Some(false) => {}
            }
        }
        return any;
    }
    if let Some(inner) = node.get("not") {
        return evaluate_on(inner, meta).map(|b| !b);
    }
    let field = node.get("field")?.as_str()?;
    let op = node.get("op")?.as_str()?;
    let value = node.get("value")?;
    let got = meta.get(field).filter(|v| !v.is_null())?;
    satisfies(op, value, got)
}

/// A value one hit showed for an advertised field: the material of the
/// probes built from data.
#[derive(Debug, Clone)]
struct Seen {
    field: String,
    ty: Option<String>,
    value: Value,
    hit: Value,
    base: usize,
}

/// A filter probe: a request of the run's repeated with a filter whose
/// answer the base result's metadata decides for some of its hits.
#[derive(Debug, Clone)]
struct Probe {
    /// The operator or combinator shape it checks, as the pass message
    /// names it (`eq`, `not`, `and/or/not nested 3 deep`, …).
    checks: String,
    /// The field it reads and that field's type, for the pass message.
    field: String,
    ty: String,
    filter: Value,
    /// The result whose request the probe repeats with the filter.
    base: usize,
    /// Some hit of the base result does not match: the filter must remove it.
    restrictive: bool,
}

impl Probe {
    fn new(
        checks: String,
        field: &str,
        ty: String,
        filter: Value,
        base: usize,
        retrieved: &[Retrieved],
    ) -> Self {
        let restrictive = retrieved.get(base).is_some_and(|b| {
            b.hits()
                .iter()
                .any(|h| evaluate(&filter, h.get("meta")) == Some(false))
        });
        Self {
            checks,
            field: field.to_owned(),
            ty,
            filter,
            base,
            restrictive,
        }
    }
}

/// The clauses of a probe built from `seen`, best first: `(op, value, keeps
/// the hit)`. Only advertised operators, with the value shape §8 gives them.
fn clauses_for(init: &Init, seen: &Seen) -> Vec<(&'static str, Value, bool)> {
    let v = &seen.value;
    let ty = seen.ty.as_deref();
    let mut out = Vec::new();
    let scalar = matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_));
    if scalar {
        out.push(("eq", v.clone(), true));
        out.push(("ne", v.clone(), false));
        out.push(("in", json!([v]), true));
        out.push(("nin", json!([v]), false));
        let comparable =
            (v.is_number() && ordered_type(ty)) || (v.is_string() && ty == Some("date"));
        if comparable {
            out.push(("gte", v.clone(), true));
            out.push(("gt", v.clone(), false));
            out.push(("lte", v.clone(), true));
            out.push(("lt", v.clone(), false));
        }
        if ty == Some("text") && v.is_string() {
            out.push(("contains", v.clone(), true));
        }
    } else if let Value::Array(items) = v
        && let Some(first) = items
            .iter()
            .find(|e| matches!(e, Value::String(_) | Value::Number(_) | Value::Bool(_)))
    {
        // §8: `contains` on an array-valued field is element membership.
        out.push(("contains", first.clone(), true));
    }
    out.push(("exists", json!(true), true));
    out.push(("exists", json!(false), false));
    out.retain(|(op, _, _)| operator_allowed(init, op));
    out
}

/// Every value the hits of the results `bases` showed for an advertised
/// field, in the order of the results, hits and fields.
fn seen_values(
    fields: &[(String, Option<String>)],
    retrieved: &[Retrieved],
    bases: &[usize],
) -> Vec<Seen> {
    let mut seen = Vec::new();
    for &base in bases {
        let Some(r) = retrieved.get(base) else {
            continue;
        };
        for hit in r.hits() {
            let (Some(meta), Some(id)) =
                (hit.get("meta").and_then(Value::as_object), hit.get("id"))
            else {
                continue;
            };
            for (field, ty) in fields {
                if let Some(v) = meta.get(field).filter(|v| !v.is_null()) {
                    seen.push(Seen {
                        field: field.clone(),
                        ty: ty.clone(),
                        value: v.clone(),
                        hit: id.clone(),
                        base,
                    });
                }
            }
        }
    }
    seen
}

/// The probes built from the metadata the hits showed: one per advertised
/// operator (and per `exists` value) and field type, each repeating a request
/// of the run with a clause on a value a hit of its result showed. The value
/// is the hit's own, so ranges are probed at their boundary: `gte`/`lte` of
/// the value keep the hit, `gt`/`lt` of it drop it (issue #26: a `gt` that
/// behaves as `>=` keeps it and fails). Per operator and type, a probe that
/// must remove a hit of its base result is preferred.
fn data_probes(init: &Init, seen: &[Seen], retrieved: &[Retrieved]) -> Vec<Probe> {
    let mut chosen: Vec<(String, Probe)> = Vec::new();
    for s in seen {
        let ty = type_key(s.ty.as_deref(), &s.value);
        for (op, value, _) in clauses_for(init, s) {
            // `exists` reads no value of the field: once, whatever the type.
            let key = if op == "exists" {
                format!("exists {value}")
            } else {
                format!("{op} {ty}")
            };
            let filter = json!({"field": s.field, "op": op, "value": value});
            let probe = Probe::new(
                op.to_owned(),
                &s.field,
                ty.clone(),
                filter,
                s.base,
                retrieved,
            );
            match chosen.iter_mut().find(|(k, _)| *k == key) {
                None => chosen.push((key, probe)),
                Some((_, old)) if !old.restrictive && probe.restrictive => *old = probe,
                Some(_) => {}
            }
        }
    }
    chosen.into_iter().map(|(_, p)| p).collect()
}

/// A clause that holds exactly for the hits whose `field` is `value`: `eq`,
/// or `in` of that one value, whichever is advertised.
fn equal_clause(init: &Init, field: &str, value: &Value) -> Option<Value> {
    if operator_allowed(init, "eq") {
        Some(json!({"field": field, "op": "eq", "value": value}))
    } else if operator_allowed(init, "in") {
        Some(json!({"field": field, "op": "in", "value": [value]}))
    } else {
        None
    }
}

/// How deep the deepest combinator probe nests.
const DEEP: usize = 8;

/// The probes of the combinators (§8: "Boolean combinators `and`/`or`/`not`
/// nest arbitrarily") and of `in`/`nin` with several values, from two hits
/// of one result that showed different values `v1`, `v2` of one field. With
/// `P(v)` the clause "field is v", each keeps the first hit and drops the
/// second (or, for `in`/`nin`, keeps or drops both), so a server that drops
/// `not`, ignores it, flattens nested `and`/`or` into their parent, refuses a
/// tree three or more deep, or reads only the first value of a set, keeps or
/// drops a hit it must not. `None` when no result showed such a pair.
fn combinator_probes(init: &Init, seen: &[Seen], retrieved: &[Retrieved]) -> Option<Vec<Probe>> {
    let scalar = |v: &Value| matches!(v, Value::String(_) | Value::Number(_) | Value::Bool(_));
    let meta_of = |base: usize, id: &Value| {
        retrieved
            .get(base)
            .and_then(|r| r.hits().iter().find(|h| h.get("id") == Some(id)))
            .and_then(|h| h.get("meta"))
            .cloned()
    };
    for a in seen.iter().filter(|s| scalar(&s.value)) {
        let pair = seen.iter().find(|b| {
            b.base == a.base
                && b.field == a.field
                && b.hit != a.hit
                && scalar(&b.value)
                && b.value != a.value
        });
        let Some(b) = pair else { continue };
        let (Some(p1), Some(p2)) = (
            equal_clause(init, &a.field, &a.value),
            equal_clause(init, &a.field, &b.value),
        ) else {
            return None;
        };
        let (m1, m2) = (meta_of(a.base, &a.hit), meta_of(a.base, &b.hit));
        let decides = |tree: &Value, first: bool, second: bool| {
            evaluate(tree, m1.as_ref()) == Some(first)
                && evaluate(tree, m2.as_ref()) == Some(second)
        };
        let mut deep = json!({"not": {"not": p1}});
        for level in 2..DEEP {
            deep = if level % 2 == 0 {
                json!({"and": [deep]})
            } else {
                json!({"or": [deep]})
            };
        }
        let mut trees = vec![
            ("`not`".to_owned(), json!({"not": p1}), false, true),
            (
                "`and`/`or`/`not` nested 3 deep".to_owned(),
                json!({"or": [{"and": [p1, {"not": p2}]}, {"and": [p2, p1]}]}),
                true,
                false,
            ),
            (
                "`and`/`or`/`not` nested 4 deep".to_owned(),
                json!({"and": [{"or": [p1, p2]}, {"not": {"and": [p2, {"not": p1}]}}]}),
                true,
                false,
            ),
            (
                format!("`and`/`or`/`not` nested {DEEP} deep"),
                deep,
                true,
                false,
            ),
        ];
        let set = json!([b.value, a.value]);
        for (op, keeps) in [("in", true), ("nin", false)] {
            if operator_allowed(init, op) {
                trees.push((
                    format!("`{op}` with several values"),
                    json!({"field": a.field, "op": op, "value": set}),
                    keeps,
                    keeps,
                ));
            }
        }
        let ty = type_key(a.ty.as_deref(), &a.value);
        let probes: Vec<Probe> = trees
            .into_iter()
            .filter(|(_, tree, first, second)| decides(tree, *first, *second))
            .map(|(checks, tree, _, _)| {
                Probe::new(checks, &a.field, ty.clone(), tree, a.base, retrieved)
            })
            .collect();
        return Some(probes);
    }
    None
}

/// A value of the declared type to write a clause with, when the run saw
/// none: the type's own kind of value, or a string when no type is declared.
fn typed_value(ty: Option<&str>) -> Option<Value> {
    match ty {
        None | Some("keyword" | "text") => Some(json!(PROBE_VALUE)),
        Some("int") => Some(json!(0)),
        Some("float") => Some(json!(0.5)),
        Some("bool") => Some(json!(true)),
        // A date's encoding is the server's choice (§4.6); geo has no
        // operator of its own in §8.
        _ => None,
    }
}

/// A value whose JSON type no field of the declared type takes (§4.6: text
/// is a string, integers and floats are numbers, booleans `true`/`false`; a
/// date, whatever encoding the server chose, is no boolean); `None` for
/// `geo`, whose value shape §8 does not define, or an undeclared type.
fn mistyped_value(ty: Option<&str>) -> Option<Value> {
    match ty? {
        "keyword" | "text" => Some(json!(7)),
        "int" | "float" => Some(json!("7")),
        "bool" => Some(json!("true")),
        "date" => Some(json!(true)),
        _ => None,
    }
}

/// The operators §8's table allows on a field of a declared type, with a
/// scalar value: `eq`/`ne`/`in`/`nin` on any, the ordered comparisons on
/// `int`/`float`/`date`, `contains` on `text`.
fn ops_for_type(ty: &str) -> Vec<&'static str> {
    let mut ops = vec!["eq", "ne", "in", "nin"];
    if matches!(ty, "int" | "float" | "date") {
        ops.extend(["gt", "gte", "lt", "lte"]);
    }
    if ty == "text" {
        ops.push("contains");
    }
    ops
}

/// A filter no document can satisfy, built from advertised operators only:
/// `exists` both ways, `eq` and `ne` (or `in` and `nin`) of one value, or a
/// lower bound above an upper one. Returns the filter, its field, and whether
/// the field's value type is only a guess (no declared type, no value seen).
///
/// Decision (amendment 11): an empty `in` list is never probed. §8 defines
/// `in` as "set membership" with an "array of scalars" and says nothing of
/// an empty one, and the SDKs' validator, which §8's implementation note says
/// a server "SHOULD call", rejects it with -32602: a case the spec leaves
/// undefined never decides a level.
fn contradiction(
    init: &Init,
    fields: &[(String, Option<String>)],
    seen: &[Seen],
) -> Option<(Value, String, bool)> {
    let allowed = |op: &str| operator_allowed(init, op);
    let (first, _) = fields.first()?;
    if allowed("exists") {
        return Some((
            json!({"and": [
                {"field": first, "op": "exists", "value": true},
                {"field": first, "op": "exists", "value": false},
            ]}),
            first.clone(),
            false,
        ));
    }
    // A field and a value of its type: one the hits showed, else one of its
    // declared type, else a string for an untyped field (a guess).
    let valued: Vec<(String, Option<String>, Value, bool)> = fields
        .iter()
        .filter_map(|(f, ty)| {
            let shown = seen
                .iter()
                .find(|s| {
                    &s.field == f
                        && matches!(
                            s.value,
                            Value::String(_) | Value::Number(_) | Value::Bool(_)
                        )
                })
                .map(|s| s.value.clone());
            match shown {
                Some(v) => Some((f.clone(), ty.clone(), v, false)),
                None => {
                    typed_value(ty.as_deref()).map(|v| (f.clone(), ty.clone(), v, ty.is_none()))
                }
            }
        })
        .collect();
    for (a, b, set) in [("eq", "ne", false), ("in", "nin", true)] {
        if allowed(a) && allowed(b) {
            let (field, _, value, guess) = valued.first()?;
            let value = if set { json!([value]) } else { value.clone() };
            return Some((
                json!({"and": [
                    {"field": field, "op": a, "value": value},
                    {"field": field, "op": b, "value": value},
                ]}),
                field.clone(),
                *guess,
            ));
        }
    }
    // x > 1 (or ≥ 1) and x < 0 (or ≤ 0): no number is both.
    let lower = ["gt", "gte"].into_iter().find(|o| allowed(o))?;
    let upper = ["lt", "lte"].into_iter().find(|o| allowed(o))?;
    let (field, ..) = valued.iter().find(|(_, ty, v, _)| {
        matches!(ty.as_deref(), Some("int" | "float")) || (ty.is_none() && v.is_number())
    })?;
    Some((
        json!({"and": [
            {"field": field, "op": lower, "value": 1},
            {"field": field, "op": upper, "value": 0},
        ]}),
        field.clone(),
        false,
    ))
}

/// What the probes covered, for the pass message: each operator and
/// combinator shape checked (with the fields and types it was checked on),
/// the advertised operators no hit's metadata could build a probe for, and
/// the §8 operators not advertised.
fn operator_coverage(init: &Init, probes: &[Probe]) -> String {
    const ALL: [&str; 10] = [
        "eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "exists",
    ];
    let mut checked: Vec<String> = Vec::new();
    let mut unchecked = Vec::new();
    let mut absent = Vec::new();
    let mut shapes: Vec<String> = Vec::new();
    for p in probes {
        if !ALL.contains(&p.checks.as_str()) && !shapes.contains(&p.checks) {
            shapes.push(p.checks.clone());
        }
    }
    for op in ALL {
        let mut on: Vec<String> = probes
            .iter()
            .filter(|p| p.checks == op)
            .map(|p| format!("{} ({})", p.field, p.ty))
            .collect();
        on.sort();
        on.dedup();
        if !on.is_empty() {
            checked.push(format!("`{op}` on {}", on.join(", ")));
        } else if operator_allowed(init, op) {
            unchecked.push(format!("`{op}`"));
        } else {
            absent.push(format!("`{op}`"));
        }
    }
    let mut out = if checked.is_empty() {
        "no operator checked on the hits' own metadata".to_owned()
    } else {
        format!(
            "{} checked against the hits' own metadata (ranges at the hit's value: `gte`/`lte` keep it, \
             `gt`/`lt` drop it)",
            checked.join(", ")
        )
    };
    if !shapes.is_empty() {
        out.push_str(&format!("; also {}", shapes.join(", ")));
    }
    if !unchecked.is_empty() {
        out.push_str(&format!(
            "; advertised but not checked (no hit showed a value it applies to): {}",
            unchecked.join(", ")
        ));
    }
    if !absent.is_empty() {
        out.push_str(&format!("; not advertised: {}", absent.join(", ")));
    }
    out
}

fn ids(hits: &[Value]) -> Vec<&Value> {
    hits.iter().filter_map(|h| h.get("id")).collect()
}

/// An invalid filter RCP-L1-005 sends, and what makes it invalid.
type Invalid = (Value, String);

/// What the filter probes showed: hits kept that their filter matches, and
/// hits dropped that it rejects.
#[derive(Debug, Default)]
struct Judged {
    requests: usize,
    kept: usize,
    dropped: usize,
}

/// Each hit's `meta.<field>`, for a finding: `doc-1: "en", doc-2: "fr"`.
fn values_of(hits: &[&Value], field: &str) -> String {
    hits.iter()
        .map(|h| {
            let id = h
                .get("id")
                .map_or_else(|| "?".to_owned(), |id| id.to_string());
            let v = h
                .get("meta")
                .and_then(|m| m.get(field))
                .map_or_else(|| "not shown".to_owned(), ToString::to_string);
            format!("{id}: {v}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether a result's request carried no filter, `minScore` or cursor: the
/// results the filter probes repeat.
fn is_plain(r: &Retrieved) -> bool {
    ["filter", "minScore", "cursor"]
        .iter()
        .all(|k| r.params.get(*k).is_none())
}

/// The `error.data.field` of an error answer, when it is there.
fn data_field(sent: &Sent) -> Option<&Value> {
    sent.as_ref()
        .ok()
        .and_then(|r| r.json())
        .and_then(|j| j.pointer("/error/data/field"))
        .filter(|f| !f.is_null())
}

impl L1Run<'_, '_> {
    /// The reason both filter rules are skipped, if they are.
    fn filter_skip(&self) -> Option<String> {
        if let Some(reason) = self.conv.gone() {
            return Some(reason);
        }
        if !self.init.supports("filter") {
            return Some(not_advertised("`filter`", "`filter` is not advertised"));
        }
        fields(self.init).is_none().then(|| {
            not_advertised(
                "`filter`",
                "`filter` advertises no `fields`, so no filter can be written",
            )
        })
    }

    /// RCP-L1-004. Probes are built from the operators the server advertises
    /// and the metadata its hits showed (§8: "Servers advertise allowed
    /// `fields` and `operators`"), in every mode the run asked for: per
    /// operator and field type, a clause on a value a hit showed; then `not`,
    /// `and`/`or`/`not` nested 3, 4 and 8 deep, and `in`/`nin` with several
    /// values, from two hits that showed different values of one field. Each
    /// repeats the request its hits came from, and every hit of that result
    /// whose metadata decides the filter must be kept or dropped accordingly.
    /// When the hits show no metadata, the rule is not verified: only a filter
    /// no document can satisfy has a known answer, and it can only fail.
    pub(super) async fn filter(&mut self) -> Result<(), EngineError> {
        let rule = &FILTER_RESTRICTS;
        if let Some(reason) = self.filter_skip() {
            return self.conv.skip(rule, reason).await;
        }
        let fields = fields(self.init).unwrap_or_default();
        let groups = self.by_mode(is_plain);
        let mut probes = Vec::new();
        let mut unchecked = Vec::new();
        let mut all_seen = Vec::new();
        for (mode, bases) in &groups {
            let seen = seen_values(&fields, &self.facts.retrieved, bases);
            if seen.is_empty() {
                continue;
            }
            probes.extend(data_probes(self.init, &seen, &self.facts.retrieved));
            match combinator_probes(self.init, &seen, &self.facts.retrieved) {
                Some(more) => probes.extend(more),
                None => unchecked.push(format!(
                    "in {}, no two hits of one result showed different values of one field (or neither `eq` nor \
                     `in` is advertised), so `not`, nested combinators and `in`/`nin` with several values were not sent",
                    mode_words(mode.as_deref())
                )),
            }
            all_seen.extend(seen);
        }
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let mut judged = Judged::default();
        // Each probe repeats a request of the run's with a filter added:
        // they depend on none of one another's answers, so they go side by
        // side where the session allows it.
        let sent: Vec<(&Probe, Retrieved, String, Value)> = probes
            .iter()
            .filter_map(|probe| {
                let base = self.facts.retrieved.get(probe.base)?.clone();
                let mut params = base.params.clone();
                params["filter"] = probe.filter.clone();
                let label = format!(
                    "`retrieve` in {} with the filter {}",
                    mode_words(mode_of(&base.params)),
                    probe.filter
                );
                Some((probe, base, label, params))
            })
            .collect();
        let requests = sent
            .iter()
            .map(|(_, _, label, params)| (label.clone(), params.clone()))
            .collect();
        let answers = self.retrieve_all(rule, requests).await?;
        for ((probe, base, label, _), sent) in sent.iter().zip(&answers) {
            check.keep(base.exchange.clone());
            check.saw(sent);
            judge_probe(probe, base, label, sent, &mut problems, &mut judged);
        }
        if probes.is_empty() {
            return self.filter_unobservable(check, &fields, &groups).await;
        }
        let mut done = Vec::new();
        if !probes.iter().any(|p| p.restrictive) {
            match contradiction(self.init, &fields, &all_seen) {
                Some((filter, field, guess)) => {
                    let skipped = self
                        .run_contradiction(
                            &mut check,
                            (&filter, &field, guess),
                            None,
                            &mut problems,
                            &mut done,
                        )
                        .await?;
                    if let Some(reason) = skipped {
                        return self.conv.emit(check.finding(Outcome::Skip, reason)).await;
                    }
                }
                None if !problems.is_empty() => {}
                None => {
                    let ops = self
                        .init
                        .advertised_list("filter", "operators")
                        .map_or_else(|| "all of §8".to_owned(), |o| o.join(", "));
                    let reason = format!(
                        "not verified: the hits showed `meta` values but none that a filter of the advertised \
                         operators ({ops}) could remove, and those operators cannot write a filter with a known \
                         answer on the advertised fields"
                    );
                    return self.conv.emit(check.finding(Outcome::Skip, reason)).await;
                }
            }
        }
        let modes: Vec<String> = groups
            .iter()
            .map(|(m, _)| mode_words(m.as_deref()))
            .collect();
        let mut passed = format!(
            "{}; in {}: {} filtered `retrieve`s kept the {} hits of their unfiltered results that their filters \
             match and returned none that they reject ({} dropped)",
            operator_coverage(self.init, &probes),
            modes.join(", "),
            judged.requests,
            judged.kept,
            judged.dropped
        );
        for line in done.iter().chain(&unchecked) {
            passed.push_str("; ");
            passed.push_str(line);
        }
        let finding = check.verdict(
            &problems,
            passed,
            "an advertised `filter` restricts the hits to those its clauses match, in every mode, with \
             combinators nested arbitrarily (§8, §14.2)",
        );
        self.conv.emit(finding).await
    }

    /// RCP-L1-004 when no hit showed a `meta` value for an advertised
    /// field: which hits a filter keeps cannot be seen, so the rule is not
    /// verified. A filter no document can satisfy is still sent in every
    /// mode, and fails the rule when it returns hits.
    async fn filter_unobservable(
        &mut self,
        mut check: Check,
        fields: &[(String, Option<String>)],
        groups: &[(Option<String>, Vec<usize>)],
    ) -> Result<(), EngineError> {
        let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
        let need = format!(
            "to be judged, hits must carry `meta` with the advertised filter fields ({}) (§7.7 `Hit.meta`), so \
             that each operator and combinator can be checked against them",
            names.join(", ")
        );
        let Some((filter, field, guess)) = contradiction(self.init, fields, &[]) else {
            let ops = self
                .init
                .advertised_list("filter", "operators")
                .map_or_else(|| "all of §8".to_owned(), |o| o.join(", "));
            let reason = format!(
                "not verified: no hit showed a `meta` value for an advertised field, and the advertised operators \
                 ({ops}) cannot write a filter with a known answer on the advertised fields; {need}"
            );
            return self.conv.emit(check.finding(Outcome::Skip, reason)).await;
        };
        let mut modes: Vec<Option<String>> = groups.iter().map(|(m, _)| m.clone()).collect();
        if modes.is_empty() {
            modes.push(None);
        }
        let mut problems = Vec::new();
        let mut done = Vec::new();
        for mode in &modes {
            let skipped = self
                .run_contradiction(
                    &mut check,
                    (&filter, &field, guess),
                    mode.as_deref(),
                    &mut problems,
                    &mut done,
                )
                .await?;
            if let Some(reason) = skipped {
                return self.conv.emit(check.finding(Outcome::Skip, reason)).await;
            }
        }
        if !problems.is_empty() {
            let finding = check.verdict(
                &problems,
                String::new(),
                "an advertised `filter` restricts the hits to those its clauses match (§8, §14.2)",
            );
            return self.conv.emit(finding).await;
        }
        let shown: Vec<String> = modes.iter().map(|m| mode_words(m.as_deref())).collect();
        let reason = format!(
            "not verified: no hit of this run showed a `meta` value for an advertised filter field, so which hits \
             a filter keeps cannot be seen; the one filter whose answer is known without metadata, {filter}, which \
             no document can satisfy, returned no hits in {}; {need}",
            shown.join(", ")
        );
        self.conv.emit(check.finding(Outcome::Skip, reason)).await
    }

    /// A filter no document can satisfy must return no hits. Returns a skip
    /// reason when the answer is an error that a guessed value type explains.
    async fn run_contradiction(
        &mut self,
        check: &mut Check,
        (filter, field, guess): (&Value, &str, bool),
        mode: Option<&str>,
        problems: &mut Vec<String>,
        done: &mut Vec<String>,
    ) -> Result<Option<String>, EngineError> {
        let rule = &FILTER_RESTRICTS;
        let mut params = json!({"query": self.query(), "k": PROBE_K, "filter": filter});
        if let Some(mode) = mode {
            params["mode"] = json!(mode);
        }
        let in_mode = mode_words(mode);
        let sent = self
            .retrieve(
                rule,
                &format!("`retrieve` in {in_mode} with a filter no document can satisfy"),
                params,
            )
            .await?;
        check.saw(&sent);
        match result_of(&sent).map(hit_essentials) {
            Some(Ok([])) => done.push(format!(
                "a filter no document can satisfy ({filter}) returned no hits in {in_mode}"
            )),
            Some(Ok(hits)) => problems.push(format!(
                "in {in_mode}, the filter {filter}, which no document can satisfy, returned {} hits",
                hits.len()
            )),
            Some(Err(problem)) => {
                problems.push(format!("a filtered `retrieve` in {in_mode}: {problem}"));
            }
            None if guess && code_of(&sent) == Some(-32602) => {
                return Ok(Some(format!(
                    "not verified: no hit showed a `meta` value and `filter.fields` declares no type for `{field}`, so \
                     the value of the probe {filter} was a guess, and it was refused with -32602"
                )));
            }
            None => problems.push(format!(
                "`retrieve` in {in_mode} with the filter {filter} {} (its operators and field are advertised)",
                outcome_words(&sent)
            )),
        }
        Ok(None)
    }

    /// RCP-L1-005: every invalid filter §8 names, each of which must get
    /// -32602 with `error.data.field`: an unadvertised field, alone and at
    /// every depth of a tree; an empty `and` or `or`, alone and nested; per
    /// declared field type, a value of the wrong JSON type with every
    /// advertised operator the type takes (for `in`/`nin`, one element
    /// wrong); and every advertised operator the type does not take.
    pub(super) async fn validated_filter(&mut self) -> Result<(), EngineError> {
        let rule = &FILTER_VALIDATED;
        if let Some(reason) = self.filter_skip() {
            return self.conv.skip(rule, reason).await;
        }
        let fields = fields(self.init).unwrap_or_default();
        let every: Vec<usize> = (0..self.facts.retrieved.len()).collect();
        let seen = seen_values(&fields, &self.facts.retrieved, &every);
        let (probes, unprobed) = invalid_filters(self.init, &fields, &seen);
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let query = self.query();
        let requests = probes
            .iter()
            .map(|(filter, _)| {
                let params = json!({"query": query, "k": PROBE_K, "filter": filter});
                ("retrieve", params)
            })
            .collect();
        let answers = self.conv.request_all(rule, requests).await?;
        for ((filter, what), sent) in probes.iter().zip(&answers) {
            let code = code_of(sent);
            if code != Some(-32602) {
                check.saw(sent);
                problems.push(format!(
                    "a filter with {what} ({}) {}",
                    show(filter),
                    outcome_words(sent)
                ));
            } else if data_field(sent).is_none() {
                check.saw(sent);
                problems.push(format!(
                    "a filter with {what} ({}) got -32602 without `error.data.field`",
                    show(filter)
                ));
            }
        }
        if problems.is_empty()
            && let Some(first) = answers.first()
        {
            check.saw(first);
        }
        let mut passed = format!(
            "{} invalid filters were each rejected with -32602 and `error.data.field`: {}",
            probes.len(),
            invalid_summary(&probes)
        );
        if !unprobed.is_empty() {
            passed.push_str(&format!("; not sent: {}", unprobed.join("; ")));
        }
        let finding = check.verdict(
            &problems,
            passed,
            "a filter on an unadvertised field (at any depth), a value of the wrong JSON type for the field, an \
             operator the field's type does not allow, and an empty `and`/`or` MUST be rejected with -32602 and \
             `error.data.field` (§8, §15.4)",
        );
        self.conv.emit(finding).await
    }
}

/// What one probe built from data got: every hit of its base result whose
/// metadata the filter matches kept, and no returned hit whose metadata it
/// rejects.
fn judge_probe(
    probe: &Probe,
    base: &Retrieved,
    label: &str,
    sent: &Sent,
    problems: &mut Vec<String>,
    judged: &mut Judged,
) {
    let hits = match result_of(sent).map(hit_essentials) {
        Some(Ok(hits)) => hits,
        Some(Err(problem)) => {
            problems.push(format!("{label}: {problem}"));
            return;
        }
        None => {
            problems.push(format!(
                "{label} {} (its operators and fields are advertised)",
                outcome_words(sent)
            ));
            return;
        }
    };
    judged.requests += 1;
    let returned = ids(hits);
    let mut missing: Vec<&Value> = Vec::new();
    for hit in base.hits() {
        let Some(id) = hit.get("id") else { continue };
        match evaluate(&probe.filter, hit.get("meta")) {
            Some(true) if !returned.contains(&id) => missing.push(hit),
            Some(true) => judged.kept += 1,
            Some(false) if !returned.contains(&id) => judged.dropped += 1,
            _ => {}
        }
    }
    let field = &probe.field;
    if !missing.is_empty() {
        problems.push(format!(
            "{label} dropped hits the filter matches, which were in the unfiltered top {} (`meta.{field}` of each: {})",
            base.hits().len(),
            values_of(&missing, field)
        ));
    }
    // A returned hit is judged by its own `meta`, or by the one it showed in
    // the unfiltered result.
    let wrong: Vec<&Value> = hits
        .iter()
        .filter(|h| {
            let meta = h.get("meta").or_else(|| {
                base.hits()
                    .iter()
                    .find(|b| b.get("id").is_some() && b.get("id") == h.get("id"))
                    .and_then(|b| b.get("meta"))
            });
            evaluate(&probe.filter, meta) == Some(false)
        })
        .collect();
    if !wrong.is_empty() {
        problems.push(format!(
            "{label} returned hits the filter rejects (`meta.{field}` of each: {})",
            values_of(&wrong, field)
        ));
    }
}

/// The invalid filters sent, for the pass message: the fixed ones in a
/// sentence, the value types and operators per field.
fn invalid_summary(probes: &[Invalid]) -> String {
    let per_field = |marker: &str| {
        let mut fields: Vec<String> = Vec::new();
        for (filter, what) in probes.iter().filter(|(_, w)| w.contains(marker)) {
            let (Some(field), Some(op)) = (
                filter.get("field").and_then(Value::as_str),
                filter.get("op").and_then(Value::as_str),
            ) else {
                continue;
            };
            let ty = what
                .split(" field ")
                .next()
                .and_then(|w| w.rsplit(' ').next())
                .unwrap_or("");
            let key = format!("{ty} `{field}`: ");
            match fields.iter_mut().find(|f| f.starts_with(&key)) {
                Some(line) => line.push_str(&format!(", `{op}`")),
                None => fields.push(format!("{key}`{op}`")),
            }
        }
        fields.join("; ")
    };
    let mut out = format!(
        "a clause on the unadvertised field `{UNADVERTISED_FIELD}` alone and inside `and`, `or`, `not` and three \
         combinators deep; an empty `and` and `or`, alone and nested"
    );
    let wrong = per_field("wrong JSON type");
    if !wrong.is_empty() {
        out.push_str(&format!(
            "; a value of the wrong JSON type (for `in`/`nin`, one wrong element) on {wrong}"
        ));
    }
    let mut ops = per_field("does not take");
    let contains = per_field("not array-valued");
    if !contains.is_empty() {
        ops = if ops.is_empty() {
            contains
        } else {
            format!("{ops}; {contains}")
        };
    }
    if !ops.is_empty() {
        out.push_str(&format!(
            "; an operator the field's type does not take on {ops}"
        ));
    }
    out
}

/// The invalid filters RCP-L1-005 sends, each with what makes it invalid,
/// and the kinds it could not write (with why).
fn invalid_filters(
    init: &Init,
    fields: &[(String, Option<String>)],
    seen: &[Seen],
) -> (Vec<Invalid>, Vec<String>) {
    // An advertised operator, with a value of the shape §8 gives it, so only
    // the field is wrong.
    let op = init
        .advertised_list("filter", "operators")
        .and_then(|ops| ops.into_iter().next())
        .unwrap_or_else(|| "eq".to_owned());
    let value = match op.as_str() {
        "gt" | "gte" | "lt" | "lte" => json!(1),
        "in" | "nin" => json!(["x"]),
        "exists" => json!(true),
        _ => json!("x"),
    };
    let unadvertised = json!({"field": UNADVERTISED_FIELD, "op": op, "value": value});
    // A value of a field's own type: one the hits showed, else one of its
    // declared type.
    let good = |field: &str, ty: Option<&str>| {
        seen.iter()
            .find(|s| {
                s.field == field
                    && matches!(
                        s.value,
                        Value::String(_) | Value::Number(_) | Value::Bool(_)
                    )
            })
            .map(|s| s.value.clone())
            .or_else(|| typed_value(ty))
    };
    // A valid clause to stand beside the invalid one in a combinator: a
    // value of an untyped field only when a hit showed it.
    let valid = fields.iter().find_map(|(field, ty)| {
        if operator_allowed(init, "exists") {
            return Some(json!({"field": field, "op": "exists", "value": true}));
        }
        let v = if ty.is_some() {
            good(field, ty.as_deref())?
        } else {
            seen.iter()
                .find(|s| &s.field == field && !s.value.is_array() && !s.value.is_object())?
                .value
                .clone()
        };
        ["eq", "ne", "in", "nin"]
            .into_iter()
            .find(|o| operator_allowed(init, o))
            .map(|o| {
                let value = if matches!(o, "in" | "nin") {
                    json!([v])
                } else {
                    v
                };
                json!({"field": field, "op": o, "value": value})
            })
    });
    let beside = valid.clone().unwrap_or_else(|| unadvertised.clone());
    let mut out: Vec<Invalid> = vec![
        (
            unadvertised.clone(),
            format!("a clause on the unadvertised field `{UNADVERTISED_FIELD}`"),
        ),
        (
            json!({"and": [beside, unadvertised]}),
            "the unadvertised field inside `and`".to_owned(),
        ),
        (
            json!({"or": [beside, unadvertised]}),
            "the unadvertised field inside `or`".to_owned(),
        ),
        (
            json!({"not": unadvertised}),
            "the unadvertised field inside `not`".to_owned(),
        ),
        (
            json!({"and": [beside, {"or": [beside, {"not": unadvertised}]}]}),
            "the unadvertised field 3 combinators deep".to_owned(),
        ),
        (json!({"and": []}), "an empty `and`".to_owned()),
        (json!({"or": []}), "an empty `or`".to_owned()),
        (
            json!({"and": [beside, {"or": []}]}),
            "an empty `or` inside an `and`".to_owned(),
        ),
        (
            json!({"not": {"and": []}}),
            "an empty `and` inside a `not`".to_owned(),
        ),
    ];
    let mut unprobed = Vec::new();
    if valid.is_none() {
        unprobed.push(
            "a valid clause beside the invalid one (no advertised field and operator could write one), so the \
             unadvertised field stands beside itself"
                .to_owned(),
        );
    }
    // One field of each declared type.
    let mut typed: Vec<(&str, &str)> = Vec::new();
    for (field, ty) in fields {
        if let Some(t) = ty.as_deref()
            && !typed.iter().any(|(_, x)| *x == t)
        {
            typed.push((field, t));
        }
    }
    if typed.is_empty() {
        unprobed.push(
            "values of the wrong type and operators a type does not take: `filter.fields` declares no types"
                .to_owned(),
        );
    }
    for &(field, ty) in &typed {
        let own = good(field, Some(ty));
        match mistyped_value(Some(ty)) {
            Some(bad) => {
                for op in ops_for_type(ty).into_iter().filter(|o| operator_allowed(init, o)) {
                    let value = match (op, &own) {
                        ("in" | "nin", Some(own)) => json!([own, bad]),
                        ("in" | "nin", None) => json!([bad]),
                        _ => bad.clone(),
                    };
                    out.push((
                        json!({"field": field, "op": op, "value": value}),
                        format!("`{op}` on the {ty} field `{field}` with a value of the wrong JSON type"),
                    ));
                }
            }
            None => unprobed.push(format!(
                "a value of the wrong type for the {ty} field `{field}` (§8 defines no value shape for it)"
            )),
        }
        let Some(own) = own else {
            unprobed.push(format!(
                "operators the {ty} type does not take, on `{field}` (no value of it was shown, and its encoding \
                 is the server's choice)"
            ));
            continue;
        };
        if !matches!(ty, "int" | "float" | "date") {
            for op in ["gt", "gte", "lt", "lte"]
                .into_iter()
                .filter(|o| operator_allowed(init, o))
            {
                out.push((
                    json!({"field": field, "op": op, "value": own}),
                    format!("`{op}` on the {ty} field `{field}`, which its type does not take"),
                ));
            }
        }
    }
    // `contains` takes a `text` field or an array-valued one: sent, per
    // type, on a field whose shown values were all scalars.
    if operator_allowed(init, "contains") {
        let mut done: Vec<&str> = Vec::new();
        for (field, ty) in fields {
            let Some(ty) = ty.as_deref().filter(|t| !matches!(*t, "text" | "geo")) else {
                continue;
            };
            if done.contains(&ty) {
                continue;
            }
            let shown: Vec<&Seen> = seen.iter().filter(|s| &s.field == field).collect();
            if let Some(first) = shown.first()
                && shown
                    .iter()
                    .all(|s| !s.value.is_array() && !s.value.is_object())
            {
                done.push(ty);
                out.push((
                    json!({"field": field, "op": "contains", "value": first.value}),
                    format!("`contains` on the {ty} field `{field}`, which is not array-valued"),
                ));
            }
        }
        for (_, ty) in &typed {
            if !matches!(*ty, "text" | "geo") && !done.contains(ty) {
                unprobed.push(format!(
                    "`contains` on a {ty} field (no hit showed a field of that type with scalar values, so whether \
                     it is array-valued is not known)"
                ));
            }
        }
    }
    (out, unprobed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clauses_are_judged_as_section_8_defines_them() {
        assert_eq!(satisfies("gte", &json!(2020), &json!(2021)), Some(true));
        assert_eq!(satisfies("gt", &json!(2020), &json!(2020)), Some(false));
        assert_eq!(satisfies("lte", &json!(2020.5), &json!(2020)), Some(true));
        assert_eq!(satisfies("eq", &json!("a"), &json!(["a", "b"])), Some(true));
        assert_eq!(satisfies("ne", &json!("a"), &json!("b")), Some(true));
        assert_eq!(
            satisfies("in", &json!(["a"]), &json!(["b", "a"])),
            Some(true)
        );
        assert_eq!(satisfies("nin", &json!(["a"]), &json!("a")), Some(false));
        assert_eq!(
            satisfies("contains", &json!("ens"), &json!("dense")),
            Some(true)
        );
        assert_eq!(satisfies("exists", &json!(false), &json!(1)), Some(false));
        // Values that do not compare give no answer, never a verdict.
        assert_eq!(satisfies("lt", &json!(1), &json!("x")), None);
        assert_eq!(satisfies("gt", &json!(1), &json!([2])), None);
    }

    #[test]
    fn trees_are_evaluated_on_the_metadata_a_hit_shows() {
        let en = json!({"lang": "en", "year": 2020});
        let de = json!({"lang": "de"});
        let p = |v: &str| json!({"field": "lang", "op": "eq", "value": v});
        // The combinator probes keep the first hit and drop the second; a
        // server that flattens `and[or[…], not[…]]` into one `and` drops
        // both, one that flattens the `or` at the top keeps both.
        let nested3 =
            json!({"or": [{"and": [p("en"), {"not": p("de")}]}, {"and": [p("de"), p("en")]}]});
        let nested4 = json!({"and": [{"or": [p("en"), p("de")]}, {"not": {"and": [p("de"), {"not": p("en")}]}}]});
        for tree in [&nested3, &nested4] {
            assert_eq!(evaluate(tree, Some(&en)), Some(true), "{tree}");
            assert_eq!(evaluate(tree, Some(&de)), Some(false), "{tree}");
        }
        let flattened =
            json!({"and": [p("en"), p("de"), {"not": {"and": [p("de"), {"not": p("en")}]}}]});
        assert_eq!(evaluate(&flattened, Some(&en)), Some(false));
        assert_eq!(evaluate(&json!({"not": p("en")}), Some(&en)), Some(false));
        // A field the hit does not show, or no `meta`, decides nothing.
        let year = json!({"field": "year", "op": "gt", "value": 2019});
        assert_eq!(evaluate(&year, Some(&de)), None);
        assert_eq!(evaluate(&json!({"or": [year, p("en")]}), Some(&de)), None);
        assert_eq!(
            evaluate(&json!({"and": [year, p("en")]}), Some(&de)),
            Some(false)
        );
        assert_eq!(evaluate(&p("en"), None), None);
        assert_eq!(
            evaluate(
                &json!({"field": "lang", "op": "in", "value": ["de", "en"]}),
                Some(&en)
            ),
            Some(true)
        );
    }

    #[test]
    fn a_mistyped_value_is_never_of_the_field_type() {
        assert_eq!(mistyped_value(Some("keyword")), Some(json!(7)));
        assert_eq!(mistyped_value(Some("int")), Some(json!("7")));
        assert_eq!(mistyped_value(Some("date")), Some(json!(true)));
        assert_eq!(mistyped_value(Some("geo")), None);
        assert_eq!(mistyped_value(None), None);
        assert!(ops_for_type("int").contains(&"gt"));
        assert!(!ops_for_type("keyword").contains(&"gt"));
        assert!(ops_for_type("text").contains(&"contains"));
    }
}
