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
    "protocheck needs `filter` with `fields`. From the `meta` values earlier hits showed for \
     advertised fields, it repeats those requests with a clause per advertised operator that must \
     keep (`eq`, `in`, `gte`, `lte`, `contains`, `exists` true) or drop (`ne`, `nin`, `gt`, `lt`, \
     `exists` false) a given hit. Failing that, a filter no document can satisfy must return no \
     hits.",
    "The server accepts `filter` but ignores it, applies an operator loosely (`gt` behaving as \
     `gte`, numbers compared as strings), or refuses with an error a filter it advertises. \
     Without `filter`, or without its `fields`, the rule is skipped and L1 is not reached.",
    "Apply the filter inside the search (pre-filtering or a filtered index), implement each \
     advertised operator exactly as §8 defines it, advertise in `filter.fields` and \
     `filter.operators` only what the backend supports, and return `meta` on hits.",
);
pub const FILTER_VALIDATED: Rule = item(
    "RCP-L1-005",
    "a filter on an unadvertised field, or an empty `and`, is rejected with -32602",
    SpecLevel::Must,
    "RCP/1 §8, §15.4",
)
.help(
    "When `filter` advertises `fields`, protocheck sends `retrieve` with a clause on \
     `x-protocheck-unadvertised-field` (using the first advertised operator), then with the \
     filter `{\"and\": []}`; each must get error -32602.",
    "The server passes the filter to its backend unchecked, so an unknown field matches nothing \
     and an empty `and` matches everything, or it refuses with -32005 or -32603 instead of \
     -32602.",
    "Validate the filter before searching: reject a clause on a field not listed in \
     `filter.fields`, and an empty `and` or `or` array, with `{\"code\": -32602}` \
     (InvalidParams).",
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

/// A filter probe and what it must do.
#[derive(Debug, Clone)]
struct Probe {
    field: String,
    op: &'static str,
    value: Value,
    /// The hit the probe was built from, and whether it must stay.
    subject: Option<(Value, bool)>,
    /// The result whose request the probe repeats with the filter.
    base: Option<usize>,
    /// Some hit must go: the subject is dropped, or the base shows a hit that
    /// contradicts the clause.
    restrictive: bool,
}

impl Probe {
    fn clause(&self) -> Value {
        json!({"field": self.field, "op": self.op, "value": self.value})
    }

    fn label(&self) -> String {
        format!("{} {} {}", self.field, self.op, self.value)
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

/// Every value the hits of plain (unfiltered, first-page) results showed for
/// an advertised field, in the order of the results, hits and fields.
fn seen_values(fields: &[(String, Option<String>)], retrieved: &[Retrieved]) -> Vec<Seen> {
    let mut seen = Vec::new();
    for (base, r) in retrieved.iter().enumerate() {
        if ["filter", "minScore", "cursor"]
            .iter()
            .any(|k| r.params.get(*k).is_some())
        {
            continue;
        }
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

/// Whether another hit of the base result shows a value of the field that
/// the clause rejects (so the filter must remove it).
fn contradicted_in(base: &Retrieved, field: &str, op: &str, value: &Value) -> bool {
    base.hits().iter().any(|h| {
        h.get("meta")
            .and_then(|m| m.get(field))
            .and_then(|got| satisfies(op, value, got))
            == Some(false)
    })
}

/// The probes built from the metadata the hits showed: one per advertised
/// operator (and per `exists` value), each repeating the request a hit came
/// from with a clause that must keep or drop that hit. The value is the
/// hit's own, so ranges are probed at their boundary: `gte`/`lte` of the
/// value keep the hit, `gt`/`lt` of it drop it (issue #26: a `gt` that
/// behaves as `>=` keeps it and fails). Per operator, a probe that must
/// also remove another hit of its base result is preferred.
fn data_probes(init: &Init, seen: &[Seen], retrieved: &[Retrieved]) -> Vec<Probe> {
    let mut chosen: Vec<(String, Probe)> = Vec::new();
    for s in seen {
        for (op, value, keeps) in clauses_for(init, s) {
            let key = if op == "exists" {
                format!("exists {value}")
            } else {
                op.to_owned()
            };
            let restrictive = !keeps
                || retrieved
                    .get(s.base)
                    .is_some_and(|b| contradicted_in(b, &s.field, op, &value));
            let probe = Probe {
                field: s.field.clone(),
                op,
                value,
                subject: Some((s.hit.clone(), keeps)),
                base: Some(s.base),
                restrictive,
            };
            match chosen.iter_mut().find(|(k, _)| *k == key) {
                None => chosen.push((key, probe)),
                Some((_, old)) if !old.restrictive && restrictive => *old = probe,
                Some(_) => {}
            }
        }
    }
    chosen.into_iter().map(|(_, p)| p).collect()
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

/// What the probes covered, for the pass message: each operator checked
/// (with the fields it was checked on), the advertised operators no hit's
/// metadata could build a probe for, and the §8 operators not advertised.
fn operator_coverage(init: &Init, probes: &[Probe]) -> String {
    const ALL: [&str; 10] = [
        "eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "exists",
    ];
    let mut checked: Vec<String> = Vec::new();
    let mut unchecked = Vec::new();
    let mut absent = Vec::new();
    for op in ALL {
        let on: Vec<&str> = probes
            .iter()
            .filter(|p| p.op == op)
            .map(|p| p.field.as_str())
            .collect();
        if !on.is_empty() {
            let mut fields = on.clone();
            fields.dedup();
            checked.push(format!("`{op}` on `{}`", fields.join("`, `")));
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

/// The fields the hits showed values for, once each.
fn seen_fields(seen: &[Seen]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for s in seen {
        if !names.contains(&s.field.as_str()) {
            names.push(&s.field);
        }
    }
    names.join(", ")
}

fn ids(hits: &[Value]) -> Vec<&Value> {
    hits.iter().filter_map(|h| h.get("id")).collect()
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
    /// `fields` and `operators`"): a clause that must keep a hit (`eq`, `in`,
    /// `gte`, `lte`, `contains`, `exists: true`) and one that must drop it
    /// (`ne`, `nin`, `gt`, `lt`, `exists: false`), each repeating the request
    /// the hit came from. When the hits show no metadata, or no probe could
    /// show a hit being removed, a filter no document can satisfy must
    /// return no hits.
    pub(super) async fn filter(&mut self) -> Result<(), EngineError> {
        let rule = &FILTER_RESTRICTS;
        if let Some(reason) = self.filter_skip() {
            return self.conv.skip(rule, reason).await;
        }
        let fields = fields(self.init).unwrap_or_default();
        let seen = seen_values(&fields, &self.facts.retrieved);
        let probes = data_probes(self.init, &seen, &self.facts.retrieved);
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let mut done = Vec::new();
        // Each probe repeats a request of the run's with a filter added:
        // they depend on none of one another's answers, so they go side by
        // side where the session allows it.
        let sent: Vec<(&Probe, Retrieved, String, Value)> = probes
            .iter()
            .filter_map(|probe| {
                let base = self.facts.retrieved.get(probe.base?)?.clone();
                let mut params = base.params.clone();
                params["filter"] = probe.clause();
                let label = format!("`retrieve` with filter {}", probe.label());
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
            self.judge_probe(probe, base, label, sent, &mut problems, &mut done);
        }
        if !probes.iter().any(|p| p.restrictive) {
            match contradiction(self.init, &fields, &seen) {
                Some((filter, field, guess)) => {
                    let skipped = self
                        .run_contradiction(
                            &mut check,
                            &filter,
                            &field,
                            guess,
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
                    let shown = if seen.is_empty() {
                        "no hit showed a `meta` value for an advertised field".to_owned()
                    } else {
                        format!(
                            "the hits showed `meta` values ({}) but none that a probe could remove",
                            seen_fields(&seen)
                        )
                    };
                    let reason = format!(
                        "not verified: {shown}, and the advertised operators ({ops}) cannot write a filter with a known \
                         answer on the advertised fields"
                    );
                    return self.conv.emit(check.finding(Outcome::Skip, reason)).await;
                }
            }
        }
        let finding = check.verdict(
            &problems,
            format!(
                "{}: {}",
                operator_coverage(self.init, &probes),
                done.join("; ")
            ),
            "an advertised `filter` restricts the hits to those its clauses match (§8, §14.2)",
        );
        self.conv.emit(finding).await
    }

    /// What one probe built from data got: the subject hit kept or dropped,
    /// and no returned hit showing a value the clause rejects.
    fn judge_probe(
        &self,
        probe: &Probe,
        base: &Retrieved,
        label: &str,
        sent: &Sent,
        problems: &mut Vec<String>,
        done: &mut Vec<String>,
    ) {
        let hits = match result_of(sent).map(hit_essentials) {
            Some(Ok(hits)) => hits,
            Some(Err(problem)) => {
                problems.push(format!("{label}: {problem}"));
                return;
            }
            None => {
                problems.push(format!(
                    "{label} {} (the operator is advertised)",
                    outcome_words(sent)
                ));
                return;
            }
        };
        let field = &probe.field;
        if let Some((id, keep)) = &probe.subject {
            let present = ids(hits).contains(&id);
            let shown = self.shown_value(probe.base, id, field);
            if *keep && !present {
                problems.push(format!(
                    "{label} dropped hit {id}, whose `meta.{field}` is {shown} (it was in the unfiltered top {})",
                    base.hits().len()
                ));
            }
            if !*keep && present {
                problems.push(format!(
                    "{label} still returned hit {id}, whose `meta.{field}` is {shown}"
                ));
            }
            if *keep == present {
                done.push(format!(
                    "{} {} hit {id}",
                    probe.label(),
                    if *keep { "kept" } else { "dropped" }
                ));
            }
        }
        let wrong: Vec<&Value> = hits
            .iter()
            .filter(|h| {
                h.get("meta")
                    .and_then(|m| m.get(field))
                    .and_then(|got| satisfies(probe.op, &probe.value, got))
                    == Some(false)
            })
            .filter_map(|h| h.get("id"))
            .collect();
        if !wrong.is_empty() {
            problems.push(format!(
                "{label} returned hits whose `meta.{field}` contradicts it: {}",
                show(&json!(wrong))
            ));
        }
    }

    /// The value hit `id` showed for `field` in result `base`, for a finding.
    fn shown_value(&self, base: Option<usize>, id: &Value, field: &str) -> String {
        base.and_then(|b| self.facts.retrieved.get(b))
            .and_then(|r| r.hits().iter().find(|h| h.get("id") == Some(id)).cloned())
            .and_then(|h| h.get("meta").and_then(|m| m.get(field)).cloned())
            .map_or_else(|| "unknown".to_owned(), |v| show(&v))
    }

    /// A filter no document can satisfy must return no hits. Returns a skip
    /// reason when the answer is an error that a guessed value type explains.
    async fn run_contradiction(
        &mut self,
        check: &mut Check,
        filter: &Value,
        field: &str,
        guess: bool,
        problems: &mut Vec<String>,
        done: &mut Vec<String>,
    ) -> Result<Option<String>, EngineError> {
        let rule = &FILTER_RESTRICTS;
        let params = json!({"query": self.query(), "k": PROBE_K, "filter": filter});
        let sent = self
            .retrieve(
                rule,
                "`retrieve` with a filter no document can satisfy",
                params,
            )
            .await?;
        check.saw(&sent);
        match result_of(&sent).map(hit_essentials) {
            Some(Ok([])) => done.push(format!(
                "a filter no document can satisfy ({filter}) returned no hits"
            )),
            Some(Ok(hits)) => problems.push(format!(
                "the filter {filter}, which no document can satisfy, returned {} hits",
                hits.len()
            )),
            Some(Err(problem)) => problems.push(format!("a filtered `retrieve`: {problem}")),
            None if guess && code_of(&sent) == Some(-32602) => {
                return Ok(Some(format!(
                    "not verified: no hit showed a `meta` value and `filter.fields` declares no type for `{field}`, so \
                     the value of the probe {filter} was a guess, and it was refused with -32602"
                )));
            }
            None => problems.push(format!(
                "`retrieve` with the filter {filter} {} (its operators and field are advertised)",
                outcome_words(&sent)
            )),
        }
        Ok(None)
    }

    pub(super) async fn validated_filter(&mut self) -> Result<(), EngineError> {
        let rule = &FILTER_VALIDATED;
        if let Some(reason) = self.filter_skip() {
            return self.conv.skip(rule, reason).await;
        }
        let fields: Vec<String> = fields(self.init)
            .unwrap_or_default()
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        // An advertised operator, with a value of the shape §8 gives it, so
        // only the field is wrong.
        let op = self
            .init
            .advertised_list("filter", "operators")
            .and_then(|ops| ops.into_iter().next())
            .unwrap_or_else(|| "eq".to_owned());
        let value = match op.as_str() {
            "gt" | "gte" | "lt" | "lte" => json!(1),
            "in" | "nin" => json!(["x"]),
            "exists" => json!(true),
            _ => json!("x"),
        };
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let query = self.query();
        let probes = [
            (
                json!({"field": UNADVERTISED_FIELD, "op": op, "value": value}),
                format!("a clause on the unadvertised field `{UNADVERTISED_FIELD}`"),
            ),
            (json!({"and": []}), "an empty `and`".to_owned()),
        ];
        let requests = probes
            .iter()
            .map(|(filter, _)| {
                let params = json!({"query": query, "k": PROBE_K, "filter": filter});
                ("retrieve", params)
            })
            .collect();
        let answers = self.conv.request_all(rule, requests).await?;
        for ((_, what), sent) in probes.iter().zip(&answers) {
            check.saw(sent);
            if code_of(sent) != Some(-32602) {
                problems.push(format!("a filter with {what} {}", outcome_words(sent)));
            }
        }
        let finding = check.verdict(
            &problems,
            format!(
                "a filter on an unadvertised field and an empty `and` were rejected with -32602 (advertised fields: {})",
                fields.join(", ")
            ),
            "filters referencing unadvertised fields, and empty `and`/`or` arrays, MUST be rejected with -32602 (§8, §15.4)",
        );
        self.conv.emit(finding).await
    }
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
}
