//! SCH — tool and prompt schemas and `x-mcp-header` (server/tools#x-mcp-header,
//! streamable-http#schema-extension, basic/index#json-schema-usage).
//!
//! Judged on the tools/list, prompts/list and resources/list the survey read.

use super::client::{Reply, clip, some};
use super::rule::{Keyword, McpRule, spec};
use super::session::{Judgement, Session};
use super::survey::Listing;
use super::wire::{self, HeaderAnnotation};
use crate::suite::Outcome;
use futures::FutureExt;
use serde_json::Value;
use std::collections::HashMap;

pub(crate) const HEADER_TOKEN: McpRule = McpRule::new(
    "MCP-SCH-001",
    "x-mcp-header is non-empty and matches RFC 9110 token syntax",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/tools#x-mcp-header"),
    "SCH",
    |s| header_token(s).boxed(),
)
.says("an x-mcp-header value MUST be a non-empty RFC 9110 token")
.help(
    "protocheck walks the `inputSchema` of every tool the survey listed and checks each \
     `x-mcp-header` value: a non-empty string of RFC 9110 token characters (letters, digits and a \
     few symbols such as `-`, `_` and `.`). Control characters are left to MCP-SCH-002; skipped \
     when no tool declares one.",
    "The value holds a space, `:`, `/` or non-ASCII letters, is empty, or is a number or an \
     object rather than a string. Clients drop a tool whose annotation cannot name a header.",
    "Use a short token such as `Region` or `Tenant-Id` as the `x-mcp-header` value; clients send \
     it as `Mcp-Param-{value}`, so keep to letters, digits and hyphens.",
);

pub(crate) const HEADER_CONTROLS: McpRule = McpRule::new(
    "MCP-SCH-002",
    "x-mcp-header contains no control characters, CR, or LF",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/server/tools#x-mcp-header"),
    "SCH",
    |s| header_controls(s).boxed(),
)
.says("an x-mcp-header value MUST NOT contain control characters, CR or LF")
.help(
    "protocheck walks the `inputSchema` of every listed tool and checks each string \
     `x-mcp-header` value for ASCII control characters, CR and LF included. Skipped when no tool \
     declares one.",
    "The value was usually built from text with a trailing newline or tab (a template, a \
     multi-line string in a configuration file), or crafted on purpose to inject headers.",
    "Make the value a plain token without control characters, such as `Region`; a CR or LF in a \
     header name would let a client's request carry injected headers or be split in two.",
);

pub(crate) const HEADER_UNIQUE: McpRule = McpRule::new(
    "MCP-SCH-003",
    "x-mcp-header values are case-insensitively unique per inputSchema",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/tools#x-mcp-header"),
    "SCH",
    |s| header_unique(s).boxed(),
)
.says("x-mcp-header values MUST be case-insensitively unique within an inputSchema")
.help(
    "For every listed tool, protocheck collects the string `x-mcp-header` values in its \
     `inputSchema` and looks for two that are equal ignoring case; header names are \
     case-insensitive, so such values would name one header.",
    "Two properties are mirrored into the same header, such as `region` and `Region`, or one \
     annotation was copied onto a second property; the client would have to send two values in \
     one header.",
    "Give each annotated property of a tool its own header name, unique regardless of case (e.g. \
     `Region` and `Target-Region`), or annotate only one of the properties.",
);

pub(crate) const HEADER_TYPE: McpRule = McpRule::new(
    "MCP-SCH-004",
    "x-mcp-header only on string/integer/boolean — never number",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/tools#x-mcp-header"),
    "SCH",
    |s| header_type(s).boxed(),
)
.says("x-mcp-header MUST only annotate properties of type string, integer or boolean")
.help(
    "For every `x-mcp-header` in the listed tools' input schemas, protocheck reads the annotated \
     property's type as JSON Schema 2020-12 does (following a local `$ref`, taking an `enum`'s \
     single value type, reading `[\"string\", \"null\"]` as string) and requires `string`, \
     `integer` or `boolean`.",
    "The annotation sits on a `number`, `object` or `array` property, or on one whose type cannot \
     be told: no `type`, a remote `$ref`, an `enum` of mixed types, or several types.",
    "Annotate only string, integer or boolean properties and declare the type explicitly, e.g. \
     `\"type\": \"string\"`; use `integer` rather than `number` for numeric values sent in a \
     header.",
);

pub(crate) const HEADER_REACHABLE: McpRule = McpRule::new(
    "MCP-SCH-005",
    "x-mcp-header property is statically reachable via properties only",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http#schema-extension"),
    "SCH",
    |s| header_reachable(s).boxed(),
)
.says("x-mcp-header MUST only sit on properties reachable from the root through properties alone")
.help(
    "protocheck walks every listed tool's `inputSchema` and checks that each `x-mcp-header` sits \
     on a property reached from the root through `properties` keys alone, not under `items`, \
     `anyOf`, `oneOf`, `allOf`, `if`/`then`/`else`, `$defs` or similar keywords.",
    "The annotation was placed in a shared definition under `$defs`, on array items, or in one \
     branch of a `oneOf`; such a property has no single value a client can mirror, and clients \
     reject the tool.",
    "Move the annotation onto the concrete property under `properties` (nested objects are fine \
     as long as each step is a `properties` key), inlining it rather than reaching it through \
     `$ref` or a composition keyword.",
);

pub(crate) const SCHEMA_VALID: McpRule = McpRule::new(
    "MCP-SCH-006",
    "inputSchema/outputSchema validate against the declared or default 2020-12 dialect",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/index#json-schema-usage"),
    "SCH",
    |s| schema_valid(s).boxed(),
)
.says("schemas MUST be valid for their declared dialect, JSON Schema 2020-12 by default")
.help(
    "protocheck validates every listed tool's `inputSchema` and `outputSchema` against the \
     metaschema of its `$schema` dialect (JSON Schema 2020-12 when none is declared), and checks \
     that each `inputSchema` is an object with `\"type\": \"object\"` at its root.",
    "The schema misuses a keyword (`\"required\": true` on a property, in the draft-03 style), \
     gives a keyword a value of the wrong type, lacks the root `\"type\": \"object\"`, or the \
     tool has no `inputSchema`. A dialect protocheck cannot validate is noted, not failed.",
    "Give every tool an `inputSchema` with `\"type\": \"object\"`, list required properties in a \
     `required` array, generate schemas with a JSON Schema 2020-12 aware library, and validate \
     them against the metaschema in your tests.",
);

pub(crate) const HEADER_SAFE_NAMES: McpRule = McpRule::new(
    "MCP-SCH-007",
    "Tool, prompt, and resource names are header-safe ASCII",
    Keyword::Should,
    Outcome::Warn,
    spec!("/server/tools#tool-names"),
    "SCH",
    |s| header_safe_names(s).boxed(),
)
.says("tool, prompt and resource names SHOULD be header-safe ASCII")
.help(
    "protocheck checks every listed tool name against 1 to 128 characters of `A-Z`, `a-z`, `0-9`, \
     `_`, `-` and `.`, and every listed prompt name and resource URI for plain header-safe ASCII: \
     visible characters, no leading or trailing space, not shaped like the Base64 sentinel.",
    "Names hold spaces, `/`, `:` or non-ASCII letters, or are generated and overlong; they must \
     then travel Base64-encoded in `Mcp-Name`, which gateways, logs and routing rules cannot \
     read.",
    "Rename tools to short ASCII identifiers such as `get_weather` or `files.read`, and keep \
     prompt names and resource URIs within visible ASCII, percent-encoding anything else in a \
     URI.",
);

pub(crate) const RULES: &[McpRule] = &[
    HEADER_TOKEN,
    HEADER_CONTROLS,
    HEADER_UNIQUE,
    HEADER_TYPE,
    HEADER_REACHABLE,
    SCHEMA_VALID,
    HEADER_SAFE_NAMES,
];

/// Each listed tool's name and every `x-mcp-header` annotation in its input schema.
fn annotated(s: &Session) -> Result<Vec<(String, Vec<HeaderAnnotation>)>, Judgement> {
    if !s.advertises("tools") {
        return Err(Judgement::skip("the server does not advertise tools"));
    }
    if s.survey.tools.pages.is_empty() || s.survey.tools.items.is_empty() {
        return Err(Judgement::skip(format!(
            "no tool was listed{}",
            s.survey
                .tools
                .problem
                .as_deref()
                .map(|p| format!(" ({p})"))
                .unwrap_or_default()
        )));
    }
    let all: Vec<(String, Vec<HeaderAnnotation>)> = s
        .survey
        .tools
        .items
        .iter()
        .map(|t| {
            let name = t
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_owned();
            let found = t
                .get("inputSchema")
                .map(wire::header_annotations)
                .unwrap_or_default();
            (name, found)
        })
        .filter(|(_, found)| !found.is_empty())
        .collect();
    if all.is_empty() {
        return Err(Judgement::skip(format!(
            "none of the {} tools declares x-mcp-header",
            s.survey.tools.items.len()
        )));
    }
    Ok(all)
}

/// Judges every annotation with `problem`; the evidence is the tools/list page.
fn judge_annotations(
    s: &Session,
    problem: impl Fn(&HeaderAnnotation) -> Option<String>,
    advice: &str,
) -> Judgement {
    let all = match annotated(s) {
        Ok(a) => a,
        Err(skip) => return skip,
    };
    let count: usize = all.iter().map(|(_, a)| a.len()).sum();
    let problem = &problem;
    let problems: Vec<String> = all
        .iter()
        .flat_map(|(tool, found)| {
            found.iter().filter_map(move |a| {
                problem(a).map(|p| format!("tool `{tool}` at inputSchema{} {p}", a.pointer))
            })
        })
        .collect();
    if problems.is_empty() {
        Judgement::pass(format!("all {count} x-mcp-header annotations are fine"))
    } else {
        let mut j = Judgement::fail(format!("{}; {advice}", some(&problems, 5, "; ")));
        if let Some(page) = s.survey.tools.pages.first() {
            j = j.reply(page);
        }
        j
    }
}

fn is_control(c: char) -> bool {
    c.is_ascii_control()
}

async fn header_token(s: &Session) -> Judgement {
    judge_annotations(
        s,
        |a| match &a.value {
            Value::String(v) if v.is_empty() => Some("has an empty x-mcp-header".into()),
            // Control characters are MCP-SCH-002's to report.
            Value::String(v) if v.chars().all(|c| wire::is_tchar(c) || is_control(c)) => None,
            Value::String(v) => {
                let bad: String = v
                    .chars()
                    .filter(|c| !wire::is_tchar(*c) && !is_control(*c))
                    .collect();
                Some(format!(
                    "has x-mcp-header {v:?}, with {bad:?} outside RFC 9110 tchar"
                ))
            }
            other => Some(format!(
                "has x-mcp-header {}, not a string",
                clip(&other.to_string(), 40)
            )),
        },
        "the value names the header `Mcp-Param-{value}`, so it MUST be a non-empty RFC 9110 \
         token (letters, digits and !#$%&'*+-.^_`|~); clients drop such tools",
    )
}

async fn header_controls(s: &Session) -> Judgement {
    judge_annotations(
        s,
        |a| {
            let v = a.value.as_str()?;
            v.chars()
                .any(is_control)
                .then(|| format!("has x-mcp-header {v:?}, which contains control characters"))
        },
        "CR, LF and other control characters in a header name allow header injection and \
         MUST NOT appear",
    )
}

async fn header_unique(s: &Session) -> Judgement {
    let all = match annotated(s) {
        Ok(a) => a,
        Err(skip) => return skip,
    };
    let mut problems = Vec::new();
    for (tool, found) in &all {
        let mut by_lower: HashMap<String, Vec<&str>> = HashMap::new();
        for a in found {
            if let Some(v) = a.name() {
                by_lower.entry(v.to_ascii_lowercase()).or_default().push(v);
            }
        }
        let mut clashes: Vec<_> = by_lower.into_values().filter(|v| v.len() > 1).collect();
        clashes.sort();
        for clash in clashes {
            problems.push(format!("tool `{tool}` declares x-mcp-header {clash:?}"));
        }
    }
    if problems.is_empty() {
        Judgement::pass("x-mcp-header values are unique within each input schema, ignoring case")
    } else {
        let mut j = Judgement::fail(format!(
            "{}; header names are case-insensitive, so these would be one header: each value \
             MUST be unique ignoring case",
            some(&problems, 5, "; ")
        ));
        if let Some(page) = s.survey.tools.pages.first() {
            j = j.reply(page);
        }
        j
    }
}

async fn header_type(s: &Session) -> Judgement {
    judge_annotations(
        s,
        |a| {
            // The type as JSON Schema 2020-12 reads the property schema: a
            // local `$ref` is followed, an enum-only schema has the type of
            // its values, and `["string", "null"]` is a string (null sends no
            // header). Decisions and spec sentences: `wire::value_type`.
            let allowed = |t: &str| matches!(t, "string" | "integer" | "boolean");
            match (&a.value_type, &a.schema_type) {
                (Some(t), _) if allowed(t) => None,
                (Some(t), _) => Some(format!("is on a property of type {t}")),
                (None, Some(t)) => Some(format!("is on a property of type {t}")),
                (None, None) => Some(
                    "is on a property whose type cannot be told (no `type`, no local `$ref`, \
                     no single-typed `enum`)"
                        .into(),
                ),
            }
        },
        "x-mcp-header MUST only annotate string, integer or boolean properties (never number, \
         whose text form is ambiguous)",
    )
}

async fn header_reachable(s: &Session) -> Judgement {
    judge_annotations(
        s,
        |a| {
            a.path
                .is_none()
                .then(|| "is not reachable from the root through `properties` alone".to_owned())
        },
        "an annotation under items, anyOf/oneOf/allOf/not, if/then/else, $ref or $defs \
         has no single value to mirror, and makes the tool invalid",
    )
}

/// Why `schema` is not a valid schema of its dialect, if it is not, and a note
/// when its dialect cannot be judged.
fn schema_problem(schema: &Value) -> Result<(), String> {
    match jsonschema::meta::try_validate(schema) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!(
            "is not a valid schema of its dialect: {} (at {})",
            clip(&e.to_string(), 160),
            if e.instance_path.as_str().is_empty() {
                "/"
            } else {
                e.instance_path.as_str()
            }
        )),
        Err(_) => Err(format!(
            "declares the dialect {}, which protocheck cannot validate against",
            schema
                .get("$schema")
                .map(Value::to_string)
                .unwrap_or_default()
        )),
    }
}

async fn schema_valid(s: &Session) -> Judgement {
    if !s.advertises("tools") {
        return Judgement::skip("the server does not advertise tools");
    }
    if s.survey.tools.items.is_empty() {
        return Judgement::skip("no tool was listed");
    }
    let mut problems = Vec::new();
    let mut unjudged = Vec::new();
    let mut judged = 0;
    for tool in &s.survey.tools.items {
        let name = clip(tool.get("name").and_then(Value::as_str).unwrap_or("?"), 80);
        match tool.get("inputSchema") {
            Some(schema @ Value::Object(obj)) => {
                if obj.get("type") != Some(&Value::String("object".into())) {
                    problems.push(format!(
                        "tool `{name}` inputSchema has no `\"type\": \"object\"` at its root"
                    ));
                }
                judged += 1;
                match schema_problem(schema) {
                    Ok(()) => {}
                    Err(p) if p.starts_with("declares the dialect") => {
                        unjudged.push(format!("`{name}` inputSchema {p}"));
                    }
                    Err(p) => problems.push(format!("tool `{name}` inputSchema {p}")),
                }
            }
            Some(other) => problems.push(format!(
                "tool `{name}` inputSchema is {}, not a schema object",
                clip(&other.to_string(), 40)
            )),
            None => problems.push(format!("tool `{name}` has no inputSchema")),
        }
        if let Some(output) = tool.get("outputSchema") {
            judged += 1;
            match schema_problem(output) {
                Ok(()) => {}
                Err(p) if p.starts_with("declares the dialect") => {
                    unjudged.push(format!("`{name}` outputSchema {p}"));
                }
                Err(p) => problems.push(format!("tool `{name}` outputSchema {p}")),
            }
        }
    }
    if !problems.is_empty() {
        let mut j = Judgement::fail(format!(
            "{}; schemas MUST be valid for their declared dialect, or JSON Schema 2020-12 when \
             they declare none",
            some(&problems, 5, "; ")
        ));
        if let Some(page) = s.survey.tools.pages.first() {
            j = j.reply(page);
        }
        return j;
    }
    let note = if unjudged.is_empty() {
        String::new()
    } else {
        format!(
            " ({} not judged: {})",
            unjudged.len(),
            some(&unjudged, 3, "; ")
        )
    };
    if judged == unjudged.len() {
        return Judgement::skip(format!(
            "no schema is in a dialect protocheck can validate{note}"
        ));
    }
    Judgement::pass(format!(
        "{} tool schemas are valid for their dialect{note}",
        judged - unjudged.len()
    ))
}

/// The tool-name SHOULD of server/tools#tool-names: 1–128 of `[A-Za-z0-9_.-]`.
fn tool_name_problem(name: &str) -> Option<String> {
    let len = name.chars().count();
    if !(1..=128).contains(&len) {
        return Some(format!("is {len} characters long (1–128 expected)"));
    }
    let bad: String = name
        .chars()
        .filter(|c| !(c.is_ascii_alphanumeric() || "_-.".contains(*c)))
        .collect();
    (!bad.is_empty()).then(|| format!("contains {bad:?} outside A-Z a-z 0-9 _ - ."))
}

/// Adds to `pages` the page of `listing` that lists the item whose `key` is
/// `value`, unless it is there already.
fn cite<'a>(listing: &'a Listing, key: &str, value: &str, pages: &mut Vec<&'a Reply>) {
    if let Some(page) = listing.page_with(key, value).map(|i| &listing.pages[i])
        && !pages.iter().any(|p| std::ptr::eq(*p, page))
    {
        pages.push(page);
    }
}

async fn header_safe_names(s: &Session) -> Judgement {
    let mut checked = 0;
    let mut problems = Vec::new();
    // The pages that list what was found, each once, in the order found:
    // the evidence shows the names the message quotes.
    let mut pages: Vec<&Reply> = Vec::new();
    for tool in &s.survey.tools.items {
        if let Some(name) = tool.get("name").and_then(Value::as_str) {
            checked += 1;
            if let Some(p) = tool_name_problem(name) {
                problems.push(format!("tool name {:?} {p}", clip(name, 80)));
                cite(&s.survey.tools, "name", name, &mut pages);
            }
        }
    }
    // Prompt names and resource URIs travel in Mcp-Name too; outside the safe set
    // they must be Base64-encoded, which intermediaries cannot route on.
    for (kind, listing, key) in [
        ("prompt name", &s.survey.prompts, "name"),
        ("resource URI", &s.survey.resources, "uri"),
    ] {
        for value in listing.names(key) {
            checked += 1;
            if !wire::is_plain_header_safe(&value) {
                problems.push(format!(
                    "{kind} {:?} is not plain header-safe ASCII and must travel Base64-encoded in Mcp-Name",
                    clip(&value, 80)
                ));
                cite(listing, key, &value, &mut pages);
            }
        }
    }
    if checked == 0 {
        return Judgement::skip("no tool, prompt or resource was listed");
    }
    if problems.is_empty() {
        return Judgement::pass(format!("all {checked} names travel as plain header values"));
    }
    pages.into_iter().fold(
        Judgement::fail(format!(
            "{}; names SHOULD stay within header-safe ASCII so Mcp-Name is readable by \
             intermediaries",
            some(&problems, 5, "; ")
        )),
        Judgement::reply,
    )
}
