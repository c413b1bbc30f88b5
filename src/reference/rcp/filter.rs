//! Metadata filtering (spec §8): the advertised fields and operators, the
//! validation the spec requires (-32602 with `data.field` for an unadvertised
//! field, a value of the wrong type or an operator the field's type does not
//! allow, and for an empty `and`/`or`), and evaluation against a document.

use super::RcpReferenceConfig;
use super::engine::Doc;
use super::methods::{RpcError, bad_param};
use crate::suite::rcp::l1;
use serde_json::{Value, json};

/// The type of an advertised field (spec §8 table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldType {
    Keyword,
    Text,
    Int,
}

/// The advertised fields: `(name, type, array-valued)`.
const FIELDS: [(&str, FieldType, bool); 4] = [
    ("lang", FieldType::Keyword, false),
    ("year", FieldType::Int, false),
    ("tags", FieldType::Keyword, true),
    ("title", FieldType::Text, false),
];

pub(super) const OPERATORS: [&str; 10] = [
    "eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "exists",
];

/// Deepest nesting and most clauses one filter may have: the tree comes from
/// an untrusted client (spec §15.4).
const MAX_DEPTH: usize = 16;
const MAX_CLAUSES: usize = 64;
const MAX_SET: usize = 64;

/// The operators advertised: all of §8's, or those of the `filter-operators`
/// variant.
fn advertised_operators(config: &RcpReferenceConfig) -> Vec<&'static str> {
    match &config.variants.filter_operators {
        None => OPERATORS.to_vec(),
        Some(ops) => OPERATORS
            .iter()
            .copied()
            .filter(|o| ops.iter().any(|x| x == o))
            .collect(),
    }
}

/// The `filter` capability's metadata.
pub(super) fn capability(config: &RcpReferenceConfig) -> Value {
    let fields: serde_json::Map<String, Value> = FIELDS
        .iter()
        .map(|(name, ty, _)| {
            let ty = match ty {
                FieldType::Keyword => "keyword",
                FieldType::Text => "text",
                FieldType::Int => "int",
            };
            ((*name).to_owned(), json!(ty))
        })
        .collect();
    json!({"fields": fields, "operators": advertised_operators(config)})
}

/// A validated filter tree.
#[derive(Debug, Clone)]
pub(super) enum Filter {
    Leaf {
        field: &'static str,
        op: &'static str,
        value: Value,
    },
    And(Vec<Filter>),
    Or(Vec<Filter>),
    Not(Box<Filter>),
}

/// How a filter is validated.
#[derive(Debug, Clone, Copy)]
struct Rules<'a> {
    /// The fault of RCP-L1-005: a clause on an unadvertised field matches
    /// everything instead of -32602.
    lenient: bool,
    operators: &'a [&'static str],
    /// The `reject-empty-set` variant.
    reject_empty_set: bool,
}

/// Validates `value` as a filter tree against the advertised fields and
/// operators.
pub(super) fn parse(value: &Value, config: &RcpReferenceConfig) -> Result<Filter, RpcError> {
    let operators = advertised_operators(config);
    let rules = Rules {
        lenient: config.has(&l1::FILTER_VALIDATED),
        operators: &operators,
        reject_empty_set: config.variants.reject_empty_set,
    };
    let mut clauses = 0;
    parse_at(value, 0, &mut clauses, rules)
}

fn parse_at(
    value: &Value,
    depth: usize,
    clauses: &mut usize,
    rules: Rules<'_>,
) -> Result<Filter, RpcError> {
    let lenient = rules.lenient;
    *clauses += 1;
    if depth > MAX_DEPTH || *clauses > MAX_CLAUSES {
        return Err(bad_param(
            "filter",
            format!("a filter may nest {MAX_DEPTH} deep and hold {MAX_CLAUSES} clauses"),
        ));
    }
    let Some(obj) = value.as_object() else {
        return Err(bad_param("filter", "a filter clause must be an object"));
    };
    for (key, make) in [("and", Filter::And as fn(_) -> _), ("or", Filter::Or)] {
        if let Some(list) = obj.get(key) {
            let Some(items) = list.as_array().filter(|l| !l.is_empty()) else {
                return Err(bad_param(
                    "filter",
                    format!("`{key}` must be a non-empty array of clauses"),
                ));
            };
            let parsed = items
                .iter()
                .map(|c| parse_at(c, depth + 1, clauses, rules))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(make(parsed));
        }
    }
    if let Some(inner) = obj.get("not") {
        return Ok(Filter::Not(Box::new(parse_at(
            inner,
            depth + 1,
            clauses,
            rules,
        )?)));
    }
    let Some(name) = obj.get("field").and_then(Value::as_str) else {
        return Err(bad_param(
            "filter",
            "a filter clause is `{field, op, value}`, `and`, `or` or `not`",
        ));
    };
    let path = format!("filter.{name}");
    let Some(&(field, ty, array)) = FIELDS.iter().find(|(f, _, _)| *f == name) else {
        if lenient {
            return Ok(Filter::And(Vec::new()));
        }
        return Err(bad_param(
            &path,
            format!("`{name}` is not an advertised filter field"),
        ));
    };
    let Some(op) = obj
        .get("op")
        .and_then(Value::as_str)
        .and_then(|op| OPERATORS.iter().find(|o| **o == op).copied())
    else {
        return Err(bad_param(&path, "`op` must be one of the operators of §8"));
    };
    // Spec §8: an operator outside the advertised `filter.operators` is -32005.
    if !rules.operators.contains(&op) {
        return Err((
            -32005,
            format!("filter operator `{op}` is not advertised"),
            json!({"option": "filter.op"}),
        ));
    }
    let value = obj.get("value").cloned().unwrap_or(Value::Null);
    let fits = |v: &Value| match ty {
        FieldType::Keyword | FieldType::Text => v.is_string(),
        FieldType::Int => v.is_i64() || v.is_u64(),
    };
    let ok = match op {
        "eq" | "ne" => fits(&value),
        "gt" | "gte" | "lt" | "lte" => ty == FieldType::Int && fits(&value),
        "in" | "nin" => value.as_array().is_some_and(|set| {
            set.len() <= MAX_SET
                && set.iter().all(fits)
                && !(set.is_empty() && rules.reject_empty_set)
        }),
        "contains" => (ty == FieldType::Text || array) && value.is_string(),
        _ => value.is_boolean(), // exists
    };
    if !ok {
        return Err(bad_param(
            &path,
            format!("operator `{op}` with value {value} does not fit the field's type"),
        ));
    }
    Ok(Filter::Leaf { field, op, value })
}

fn field_value(doc: &Doc, field: &str) -> Option<Value> {
    if field == "title" {
        return (!doc.title.is_empty()).then(|| json!(doc.title));
    }
    doc.meta.get(field).filter(|v| !v.is_null()).cloned()
}

impl Filter {
    pub fn matches(&self, doc: &Doc) -> bool {
        match self {
            Self::And(all) => all.iter().all(|f| f.matches(doc)),
            Self::Or(any) => any.iter().any(|f| f.matches(doc)),
            Self::Not(inner) => !inner.matches(doc),
            Self::Leaf { field, op, value } => {
                let got = field_value(doc, field);
                // An array-valued field matches when one of its elements does.
                let elements: Vec<&Value> = match &got {
                    Some(Value::Array(items)) => items.iter().collect(),
                    Some(v) => vec![v],
                    None => Vec::new(),
                };
                let cmp = |f: fn(i64, i64) -> bool| {
                    elements
                        .iter()
                        .any(|e| e.as_i64().zip(value.as_i64()).is_some_and(|(a, b)| f(a, b)))
                };
                let in_set = || {
                    value
                        .as_array()
                        .is_some_and(|set| elements.iter().any(|e| set.contains(e)))
                };
                match *op {
                    "eq" => elements.contains(&value),
                    "ne" => !elements.contains(&value),
                    "gt" => cmp(|a, b| a > b),
                    "gte" => cmp(|a, b| a >= b),
                    "lt" => cmp(|a, b| a < b),
                    "lte" => cmp(|a, b| a <= b),
                    "in" => in_set(),
                    "nin" => !in_set(),
                    "contains" => match (&got, value.as_str()) {
                        (Some(Value::String(s)), Some(needle)) => s.contains(needle),
                        (Some(Value::Array(_)), _) => elements.contains(&value),
                        _ => false,
                    },
                    _ => got.is_some() == value.as_bool().unwrap_or(true),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::engine::Index;
    use super::*;

    fn count(filter: Value) -> usize {
        let f = parse(&filter, &RcpReferenceConfig::default()).expect("valid filter");
        Index::builtin()
            .docs()
            .iter()
            .filter(|d| f.matches(d))
            .count()
    }

    #[test]
    fn filters_select_by_metadata() {
        let all = Index::builtin().docs().len();
        let en = count(json!({"field": "lang", "op": "eq", "value": "en"}));
        assert!(en > 0 && en < all);
        assert_eq!(
            count(json!({"field": "lang", "op": "ne", "value": "en"})),
            all - en
        );
        assert_eq!(
            count(json!({"and": [
                {"field": "lang", "op": "exists", "value": true},
                {"field": "lang", "op": "exists", "value": false}
            ]})),
            0
        );
        assert!(count(json!({"field": "tags", "op": "contains", "value": "dense"})) >= 2);
        assert!(count(json!({"field": "year", "op": "gte", "value": 2023})) >= 2);
        assert_eq!(
            count(json!({"not": {"field": "year", "op": "lt", "value": 3000}})),
            0
        );
    }

    #[test]
    fn variants_narrow_the_operators_and_refuse_empty_sets() {
        let config = RcpReferenceConfig {
            variants: super::super::RcpVariants::parse([
                "filter-operators=gt,gte,lt,lte",
                "reject-empty-set",
            ])
            .expect("variants"),
            ..RcpReferenceConfig::default()
        };
        assert_eq!(
            capability(&config)["operators"],
            json!(["gt", "gte", "lt", "lte"])
        );
        let (code, _, data) = parse(
            &json!({"field": "lang", "op": "eq", "value": "en"}),
            &config,
        )
        .expect_err("unadvertised operator");
        assert_eq!((code, &data["option"]), (-32005, &json!("filter.op")));
        assert!(
            parse(
                &json!({"field": "year", "op": "gte", "value": 2020}),
                &config
            )
            .is_ok()
        );
        let config = RcpReferenceConfig {
            variants: super::super::RcpVariants::parse(["reject-empty-set"]).expect("variant"),
            ..RcpReferenceConfig::default()
        };
        let (code, _, _) = parse(&json!({"field": "lang", "op": "in", "value": []}), &config)
            .expect_err("empty set");
        assert_eq!(code, -32602);
        assert!(
            parse(
                &json!({"field": "lang", "op": "in", "value": []}),
                &RcpReferenceConfig::default()
            )
            .is_ok(),
            "by default an empty set is accepted and matches nothing"
        );
        assert!(super::super::RcpVariants::parse(["filter-operators=like"]).is_err());
        assert!(super::super::RcpVariants::parse(["max-k=0"]).is_err());
        assert!(super::super::RcpVariants::parse(["no-such-variant"]).is_err());
    }

    #[test]
    fn invalid_filters_are_refused_with_the_field() {
        for (filter, field) in [
            (
                json!({"field": "colour", "op": "eq", "value": "red"}),
                "filter.colour",
            ),
            (
                json!({"field": "year", "op": "eq", "value": "2020"}),
                "filter.year",
            ),
            (
                json!({"field": "lang", "op": "gt", "value": 3}),
                "filter.lang",
            ),
            (
                json!({"field": "lang", "op": "contains", "value": "e"}),
                "filter.lang",
            ),
            (json!({"and": []}), "filter"),
        ] {
            let (code, _, data) =
                parse(&filter, &RcpReferenceConfig::default()).expect_err("invalid");
            assert_eq!(code, -32602);
            assert_eq!(data["field"], field, "{filter}");
        }
    }
}
