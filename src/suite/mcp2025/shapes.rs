//! The optional members the 2025-11-25 schema gives listed items and
//! `Implementation` (`title`, `description`, `icons`, `annotations`,
//! `_meta`, ...): absent is fine, present must have the schema's type.
//! Shared by the listing rules (MCP25-TOL-002, RES-002, RES-004, PRM-002)
//! and MCP25-LIF-001.

use crate::suite::mcp::client::clip;
use serde_json::Value;

/// The JSON type of `value`, for a finding.
fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn shown(value: &Value) -> String {
    clip(&value.to_string(), 60)
}

/// Each of `fields` of `obj`, when present, must be a string.
pub(crate) fn strings(obj: &Value, fields: &[&str], what: &str, out: &mut Vec<String>) {
    for field in fields {
        if let Some(value) = obj.get(*field)
            && !value.is_string()
        {
            out.push(format!(
                "{what} has `{field}` of type {}, not a string: {}",
                type_of(value),
                shown(value)
            ));
        }
    }
}

/// `_meta`, when present, must be an object.
pub(crate) fn meta(obj: &Value, what: &str, out: &mut Vec<String>) {
    if let Some(value) = obj.get("_meta")
        && !value.is_object()
    {
        out.push(format!(
            "{what} has `_meta` of type {}, not an object",
            type_of(value)
        ));
    }
}

/// `icons`, when present: an array of `Icon` (a string `src`; `mimeType`
/// and `theme` strings, `sizes` an array of strings, when present).
pub(crate) fn icons(obj: &Value, what: &str, out: &mut Vec<String>) {
    let Some(value) = obj.get("icons") else {
        return;
    };
    let Some(list) = value.as_array() else {
        out.push(format!(
            "{what} has `icons` of type {}, not an array",
            type_of(value)
        ));
        return;
    };
    for (i, icon) in list.iter().enumerate() {
        let at = format!("{what}, icon #{}", i + 1);
        if !icon.is_object() {
            out.push(format!("{at} is a {}, not an object", type_of(icon)));
            continue;
        }
        if !icon.get("src").is_some_and(Value::is_string) {
            out.push(format!("{at} has no string `src`"));
        }
        strings(icon, &["mimeType", "theme"], &at, out);
        if let Some(sizes) = icon.get("sizes")
            && !sizes
                .as_array()
                .is_some_and(|s| s.iter().all(Value::is_string))
        {
            out.push(format!(
                "{at} has `sizes` that is not an array of strings: {}",
                shown(sizes)
            ));
        }
    }
}

/// A resource's or template's `annotations`, when present: `audience` an
/// array of `"user"`/`"assistant"`, `priority` a number from 0 to 1,
/// `lastModified` a string.
pub(crate) fn annotations(obj: &Value, what: &str, out: &mut Vec<String>) {
    let Some(value) = obj.get("annotations") else {
        return;
    };
    if !value.is_object() {
        out.push(format!(
            "{what} has `annotations` of type {}, not an object",
            type_of(value)
        ));
        return;
    }
    if let Some(audience) = value.get("audience")
        && !audience.as_array().is_some_and(|a| {
            a.iter()
                .all(|r| matches!(r.as_str(), Some("user" | "assistant")))
        })
    {
        out.push(format!(
            "{what} has `annotations.audience` that is not an array of \"user\" and \
             \"assistant\": {}",
            shown(audience)
        ));
    }
    if let Some(priority) = value.get("priority")
        && !priority.as_f64().is_some_and(|p| (0.0..=1.0).contains(&p))
    {
        out.push(format!(
            "{what} has `annotations.priority` that is not a number from 0 to 1: {}",
            shown(priority)
        ));
    }
    strings(
        value,
        &["lastModified"],
        &format!("{what}'s `annotations`"),
        out,
    );
}

/// A tool's `annotations`, when present: `title` a string, the four hints
/// booleans.
pub(crate) fn tool_annotations(obj: &Value, what: &str, out: &mut Vec<String>) {
    let Some(value) = obj.get("annotations") else {
        return;
    };
    if !value.is_object() {
        out.push(format!(
            "{what} has `annotations` of type {}, not an object",
            type_of(value)
        ));
        return;
    }
    strings(value, &["title"], &format!("{what}'s `annotations`"), out);
    for hint in [
        "readOnlyHint",
        "destructiveHint",
        "idempotentHint",
        "openWorldHint",
    ] {
        if let Some(v) = value.get(hint)
            && !v.is_boolean()
        {
            out.push(format!(
                "{what} has `annotations.{hint}` of type {}, not a boolean: {}",
                type_of(v),
                shown(v)
            ));
        }
    }
}

/// A tool's `execution`, when present: an object whose `taskSupport`, when
/// present, is `"forbidden"`, `"optional"` or `"required"`.
pub(crate) fn execution(obj: &Value, what: &str, out: &mut Vec<String>) {
    let Some(value) = obj.get("execution") else {
        return;
    };
    if !value.is_object() {
        out.push(format!(
            "{what} has `execution` of type {}, not an object",
            type_of(value)
        ));
        return;
    }
    if let Some(support) = value.get("taskSupport")
        && !matches!(
            support.as_str(),
            Some("forbidden" | "optional" | "required")
        )
    {
        out.push(format!(
            "{what} has `execution.taskSupport` {}, not \"forbidden\", \"optional\" or \
             \"required\"",
            shown(support)
        ));
    }
}

/// What is wrong with an RFC 6570 URI template: braces that do not pair,
/// an empty expression, an unknown operator, a variable name with
/// characters outside `ALPHA / DIGIT / "_" / pct-encoded` (and `.` between
/// them), or a prefix modifier that is not 1 to 9999.
pub(crate) fn uri_template_problem(template: &str) -> Option<String> {
    let mut rest = template;
    while let Some(open) = rest.find(['{', '}']) {
        if rest[open..].starts_with('}') {
            return Some("a `}` with no `{` before it".to_owned());
        }
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            return Some("a `{` that is never closed".to_owned());
        };
        let expr = &after[..close];
        if expr.contains('{') {
            return Some(format!("a `{{` inside the expression `{{{expr}`"));
        }
        let body = expr
            .strip_prefix(['+', '#', '.', '/', ';', '?', '&'])
            .unwrap_or(expr);
        if body.is_empty() {
            return Some(format!("the expression `{{{expr}}}` names no variable"));
        }
        if expr.starts_with(['=', ',', '!', '@', '|']) {
            return Some(format!(
                "the expression `{{{expr}}}` uses an operator RFC 6570 reserves"
            ));
        }
        for spec in body.split(',') {
            let (name, modifier) = match spec.find([':', '*']) {
                Some(at) => (&spec[..at], Some(&spec[at..])),
                None => (spec, None),
            };
            if !var_name_ok(name) {
                return Some(format!(
                    "the expression `{{{expr}}}` has a variable name `{name}` RFC 6570 does not \
                     allow"
                ));
            }
            match modifier {
                None | Some("*") => {}
                Some(m) => {
                    let digits = m.strip_prefix(':').unwrap_or("");
                    let ok = !digits.is_empty()
                        && digits.len() <= 4
                        && digits.bytes().all(|b| b.is_ascii_digit())
                        && !digits.starts_with('0');
                    if !ok {
                        return Some(format!(
                            "the expression `{{{expr}}}` has a modifier `{m}` RFC 6570 does not \
                             allow"
                        ));
                    }
                }
            }
        }
        rest = &after[close + 1..];
    }
    None
}

/// An RFC 6570 `varname`: `varchar *( ["."] varchar )`, a varchar being a
/// letter, digit, `_` or a `%XX` escape.
fn var_name_ok(name: &str) -> bool {
    if name.is_empty() || name.starts_with('.') || name.ends_with('.') || name.contains("..") {
        return false;
    }
    let bytes = name.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                if i + 2 >= bytes.len()
                    || !bytes[i + 1].is_ascii_hexdigit()
                    || !bytes[i + 2].is_ascii_hexdigit()
                {
                    return false;
                }
                i += 3;
            }
            b if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' => i += 1,
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn uri_templates() {
        for ok in [
            "file:///{path}",
            "memo://{+path}/x{?a,b*}",
            "x://{var:30}{#frag}{.ext}{/seg}{;p}{&q}",
            "plain://no-expression",
            "x://{a.b}{%20c}",
        ] {
            assert_eq!(uri_template_problem(ok), None, "{ok}");
        }
        for bad in [
            "x://{path",
            "x://path}",
            "x://{}",
            "x://{a b}",
            "x://{a:0}",
            "x://{=a}",
            "x://{a-b}",
        ] {
            assert!(uri_template_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn optional_members() {
        let mut out = Vec::new();
        let tool = json!({"name": "t", "title": 3, "icons": [{"src": "a", "sizes": [1]}],
            "annotations": {"readOnlyHint": "yes"}, "execution": {"taskSupport": "always"},
            "_meta": []});
        strings(&tool, &["title", "description"], "tool `t`", &mut out);
        icons(&tool, "tool `t`", &mut out);
        tool_annotations(&tool, "tool `t`", &mut out);
        execution(&tool, "tool `t`", &mut out);
        meta(&tool, "tool `t`", &mut out);
        assert_eq!(out.len(), 5, "{out:?}");
        let mut out = Vec::new();
        let fine = json!({"name": "r", "icons": [{"src": "data:,", "mimeType": "image/png"}],
            "annotations": {"audience": ["user"], "priority": 0.5, "lastModified": "2025-01-12T15:00:58Z"}});
        icons(&fine, "r", &mut out);
        annotations(&fine, "r", &mut out);
        assert!(out.is_empty(), "{out:?}");
        annotations(
            &json!({"annotations": {"audience": ["robot"], "priority": 2}}),
            "r",
            &mut out,
        );
        assert_eq!(out.len(), 2, "{out:?}");
    }
}
