//! Metadata filtering (spec §14.2, §8): `filter` advertised with its fields,
//! a filter on an advertised field restricting the hits, and the validation §8
//! requires.

use super::*;

pub const FILTER_RESTRICTS: Rule = item(
    "RCP-L1-004",
    "`filter` is advertised and a filter on an advertised field restricts the hits",
    SpecLevel::Should,
    "RCP/1 §14.2, §8",
);
pub const FILTER_VALIDATED: Rule = item(
    "RCP-L1-005",
    "a filter on an unadvertised field, or an empty `and`, is rejected with -32602",
    SpecLevel::Must,
    "RCP/1 §8, §15.4",
);

/// A field name no server advertises.
const UNADVERTISED_FIELD: &str = "x-protocheck-unadvertised-field";

/// The advertised filter field names (spec §6: a list, or a name → type map).
fn fields(init: &Init) -> Option<Vec<String>> {
    let fields = init.capability("filter")?.get("fields")?;
    let names: Vec<String> = match fields {
        Value::Array(list) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Value::Object(map) => map.keys().cloned().collect(),
        _ => return None,
    };
    (!names.is_empty()).then_some(names)
}

/// Whether `op` may be used: listed in `filter.operators`, or no list given.
fn operator_allowed(init: &Init, op: &str) -> bool {
    init.advertised_list("filter", "operators")
        .is_none_or(|ops| ops.iter().any(|o| o == op))
}

/// A scalar `meta` value one of the hits carries for an advertised field:
/// `(field, value, hit id, the result it came from)`.
fn known_value(
    fields: &[String],
    retrieved: &[Retrieved],
) -> Option<(String, Value, Value, Retrieved)> {
    for r in retrieved {
        for hit in r.hits() {
            let Some(meta) = hit.get("meta").and_then(Value::as_object) else {
                continue;
            };
            for field in fields {
                match meta.get(field) {
                    Some(v @ (Value::String(_) | Value::Number(_) | Value::Bool(_))) => {
                        let id = hit.get("id").cloned().unwrap_or(Value::Null);
                        return Some((field.clone(), v.clone(), id, r.clone()));
                    }
                    _ => continue,
                }
            }
        }
    }
    None
}

/// Whether a hit's `meta` value for `field` equals `value` (an array-valued
/// field matches when one of its elements does); `None` when the hit does not
/// show the field.
fn meta_equals(hit: &Value, field: &str, value: &Value) -> Option<bool> {
    let got = hit.get("meta")?.get(field)?;
    Some(match got {
        Value::Array(items) => items.contains(value),
        other => other == value,
    })
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

    pub(super) async fn filter(&mut self) -> Result<(), EngineError> {
        let rule = &FILTER_RESTRICTS;
        if let Some(reason) = self.filter_skip() {
            return self.conv.skip(rule, reason).await;
        }
        let fields = fields(self.init).unwrap_or_default();
        match known_value(&fields, &self.facts.retrieved) {
            Some(known)
                if operator_allowed(self.init, "eq") && operator_allowed(self.init, "ne") =>
            {
                self.filter_by_value(known).await
            }
            _ => self.filter_contradiction(&fields).await,
        }
    }

    /// A hit showed `field = value`: `eq` must keep it, `ne` must drop it. The
    /// same query, mode and `k` are used, so the filtered candidates are a
    /// subset of the unfiltered ones and the hit stays in the top `k`.
    async fn filter_by_value(
        &mut self,
        (field, value, id, base): (String, Value, Value, Retrieved),
    ) -> Result<(), EngineError> {
        let rule = &FILTER_RESTRICTS;
        let mut check = Check::new(rule);
        check.keep(base.exchange.clone());
        let mut problems = Vec::new();
        for (op, keep) in [("eq", true), ("ne", false)] {
            let mut params = base.params.clone();
            params["filter"] = json!({"field": field, "op": op, "value": value});
            let label = format!("`retrieve` with filter {field} {op} {value}");
            let sent = self.retrieve(rule, &label, params).await?;
            check.saw(&sent);
            let hits = match result_of(&sent).map(hit_essentials) {
                Some(Ok(hits)) => hits,
                Some(Err(problem)) => {
                    problems.push(format!("{label}: {problem}"));
                    continue;
                }
                None => {
                    problems.push(format!("{label} {}", outcome_words(&sent)));
                    continue;
                }
            };
            let present = ids(hits).contains(&&id);
            if keep && !present {
                problems.push(format!(
                    "{label} dropped hit {id}, whose `meta.{field}` is {value} (it was in the unfiltered top {})",
                    base.hits().len()
                ));
            }
            if !keep && present {
                problems.push(format!(
                    "{label} still returned hit {id}, whose `meta.{field}` is {value}"
                ));
            }
            let wrong: Vec<&Value> = hits
                .iter()
                .filter(|h| meta_equals(h, &field, &value) == Some(!keep))
                .filter_map(|h| h.get("id"))
                .collect();
            if !wrong.is_empty() {
                problems.push(format!(
                    "{label} returned hits whose `meta.{field}` contradicts it: {}",
                    show(&json!(wrong))
                ));
            }
        }
        let finding = check.verdict(
            &problems,
            format!("filter `{field}` eq {value} kept hit {id} and `ne` dropped it"),
            "an advertised `filter` restricts the hits to those its clauses match (§8, §14.2)",
        );
        self.conv.emit(finding).await
    }

    /// No hit shows its metadata: a filter no document can satisfy must
    /// return no hits.
    async fn filter_contradiction(&mut self, fields: &[String]) -> Result<(), EngineError> {
        let rule = &FILTER_RESTRICTS;
        let Some(field) = fields.first() else {
            return self
                .conv
                .skip(rule, "not verified: `filter.fields` is empty")
                .await;
        };
        let filter = if operator_allowed(self.init, "exists") {
            json!({"and": [
                {"field": field, "op": "exists", "value": true},
                {"field": field, "op": "exists", "value": false},
            ]})
        } else if operator_allowed(self.init, "in") {
            json!({"field": field, "op": "in", "value": []})
        } else {
            return self
                .conv
                .skip(
                    rule,
                    "not verified: no hit shows its metadata and neither `exists` nor `in` is an advertised operator, \
                     so no filter with a known answer could be written",
                )
                .await;
        };
        let mut check = Check::new(rule);
        let params = json!({"query": self.query(), "k": PROBE_K, "filter": filter});
        let sent = self
            .retrieve(
                rule,
                "`retrieve` with a filter no document satisfies",
                params,
            )
            .await?;
        check.saw(&sent);
        let finding = match result_of(&sent).map(hit_essentials) {
            Some(Ok([])) => check.finding(
                Outcome::Pass,
                format!("a filter no document can satisfy ({filter}) returned no hits"),
            ),
            Some(Ok(hits)) => check.finding(
                rule.on_failure,
                format!(
                    "the filter {filter}, which no document can satisfy, returned {} hits; an advertised `filter` \
                     restricts the hits (§8, §14.2)",
                    hits.len()
                ),
            ),
            Some(Err(problem)) => check.finding(rule.on_failure, format!("a filtered `retrieve`: {problem}")),
            None => check.finding(
                rule.on_failure,
                format!("`retrieve` with the filter {filter} {} (§8)", outcome_words(&sent)),
            ),
        };
        self.conv.emit(finding).await
    }

    pub(super) async fn validated_filter(&mut self) -> Result<(), EngineError> {
        let rule = &FILTER_VALIDATED;
        if let Some(reason) = self.filter_skip() {
            return self.conv.skip(rule, reason).await;
        }
        let fields = fields(self.init).unwrap_or_default();
        let op = self
            .init
            .advertised_list("filter", "operators")
            .and_then(|ops| ops.into_iter().next())
            .unwrap_or_else(|| "eq".to_owned());
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let query = self.query();
        let probes = [
            (
                json!({"field": UNADVERTISED_FIELD, "op": op, "value": "x"}),
                format!("a clause on the unadvertised field `{UNADVERTISED_FIELD}`"),
            ),
            (json!({"and": []}), "an empty `and`".to_owned()),
        ];
        for (filter, what) in probes {
            let sent = self
                .conv
                .request(
                    rule,
                    "retrieve",
                    json!({"query": query, "k": PROBE_K, "filter": filter}),
                )
                .await?;
            check.saw(&sent);
            if code_of(&sent) != Some(-32602) {
                problems.push(format!("a filter with {what} {}", outcome_words(&sent)));
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
