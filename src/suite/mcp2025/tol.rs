//! TOL — tools (server/tools) and pagination (server/utilities/pagination).
//!
//! The listing rules read the run's survey of the tools
//! ([`Session::tools`]: `tools/list` walked once, every `nextCursor` within
//! bounds); the calls of the callable tools (annotated
//! `readOnlyHint: true`, or any when the run allows tool calls, digest §15
//! D14) are made once and judged by the result rules in `tol_call.rs`.

use super::client::Reply;
use super::rule::{INITIALIZE_ID, Mcp25Rule, spec};
pub(crate) use super::session::walk;
use super::session::{self, Judgement, Listing, Session};
use super::tol_call;
use crate::suite::Outcome;
use crate::suite::mcp::Keyword;
use crate::suite::mcp::client::clip;
use futures::FutureExt;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Most offenders a message names.
const MAX_NAMED: usize = 5;

/// The rules a server that lists tools without declaring them cannot be
/// judged by: they rest on the `tools` capability.
pub(crate) const TOOLS_DECLARED: &[&str] = &[INITIALIZE_ID, "MCP25-TOL-001"];

pub(crate) const DECLARED: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TOL-001",
    "A server that lists tools declares the `tools` capability",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/tools#capabilities"),
    "TOL",
    |s| declared(s).boxed(),
)
.says("servers that support tools declare the `tools` capability")
.help(
    "protocheck reads the `initialize` capabilities; when `tools` is not declared, it walks \
     `tools/list` anyway (following `nextCursor`, at most 20 pages) and fails if any tool is \
     listed.",
    "The server lists tools although its `capabilities` lack `tools`, usually because tools were \
     registered on a low-level server whose capabilities are set by hand, or the capabilities \
     were built before the tools were added.",
    "Declare `\"tools\": {}` (with `listChanged` if the server sends change notifications) in the \
     `capabilities` of the `initialize` result whenever the server offers tools.",
);

pub(crate) const LISTING: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TOL-002",
    "`tools/list` returns a `tools` array of tools with a string `name`",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/tools#listing-tools"),
    "TOL",
    |s| listing(s).boxed(),
)
.says(
    "`tools/list` answers with a `tools` array; each tool has a string `name`, and `title` and \
     `description` are strings when present (schema `ListToolsResult`, `Tool`)",
)
.help(
    "protocheck walks `tools/list` from its first page, following `nextCursor` (at most 20 pages \
     and 1000 tools; the finding says where a walk stopped). The first page must be a result, \
     each page needs a `tools` array (and a string `nextCursor`, if any), and each tool a string \
     `name`; when present, `title` and `description` are strings, `icons` an array of icons with \
     a string `src`, `annotations` an object whose hints are booleans, `execution.taskSupport` \
     one of `forbidden`, `optional`, `required`, and `_meta` an object.",
    "The first page is an error although `tools` is declared, `tools` is missing or not an array, \
     `nextCursor` is a number, or a tool lacks `name`, has a `description` that is `null`, a hint \
     such as `readOnlyHint` given as a string, or an unknown `taskSupport`.",
    "Answer `tools/list` with `{\"tools\": [...]}`, each tool with a string `name`; omit optional \
     fields instead of sending `null`, and send `nextCursor` only as a string, only when another \
     page follows.",
)
.requires(TOOLS_DECLARED)
.needs_capability("tools");

pub(crate) const INPUT_SCHEMA: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TOL-003",
    "Every `inputSchema` is a valid JSON Schema object rooted at `\"type\": \"object\"`",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/tools#tool"),
    "TOL",
    |s| schemas(s, "inputSchema").boxed(),
)
.says(
    "a tool's `inputSchema` is a valid JSON Schema object (never null) with `\"type\": \
     \"object\"` at its root, valid in its declared dialect or JSON Schema 2020-12 when it \
     declares none",
)
.help(
    "For each tool listed by `tools/list`, protocheck checks that `inputSchema` is present, is a \
     JSON object with `\"type\": \"object\"` at its root, and is valid against the meta-schema of \
     its `$schema` dialect (2020-12 when it names none). A dialect protocheck cannot validate is \
     reported as information.",
    "A tool has no `inputSchema` (common for tools without parameters), a schema without `type` \
     at its root, or an invalid one (say `required: true` on a property, or a misspelt type), \
     often produced by a converter from code.",
    "Give every tool an `inputSchema` of at least `{\"type\": \"object\"}`, even without \
     parameters, and check generated schemas against the JSON Schema 2020-12 meta-schema.",
)
.requires(TOOLS_DECLARED)
.needs_capability("tools");

pub(crate) const OUTPUT_SCHEMA: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TOL-004",
    "Every `outputSchema` is a valid JSON Schema object rooted at `\"type\": \"object\"`",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/tools#tool"),
    "TOL",
    |s| schemas(s, "outputSchema").boxed(),
)
.says(
    "a tool's `outputSchema`, when present, follows the JSON Schema rules of the input schema \
     and has `\"type\": \"object\"` at its root",
)
.help(
    "For each listed tool that declares an `outputSchema`, protocheck checks that it is a JSON \
     object with `\"type\": \"object\"` at its root and is valid against the meta-schema of its \
     dialect (2020-12 when it names none). Without any `outputSchema` the rule does not apply.",
    "The output schema describes an array, a string or a number at its root, or is not a valid \
     schema, usually because it was derived from a function's return type.",
    "Root every `outputSchema` at `\"type\": \"object\"`; to return a list or a single value, \
     wrap it in a property of an object (such as `{\"items\": [...]}`) and describe that object.",
)
.requires(TOOLS_DECLARED)
.needs_capability("tools");

pub(crate) const UNIQUE_NAMES: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TOL-005",
    "Tool names are unique within the server",
    Keyword::Should,
    Outcome::Warn,
    spec!("/server/tools#tool-names"),
    "TOL",
    |s| unique_names(s).boxed(),
)
.says("tool names should be unique within a server")
.help(
    "protocheck counts the tool names over every page of `tools/list`, compared exactly and \
     case-sensitively, and reports each name listed more than once.",
    "The same tool is registered twice (by two modules, or again on every reload), or pages of \
     `tools/list` overlap, usually because of an offset bug in the pagination.",
    "Register each tool under one unique name (prefix the tools of different modules), and make \
     sure the pages of `tools/list` neither overlap nor repeat.",
)
.requires(TOOLS_DECLARED)
.needs_capability("tools");

pub(crate) const NAME_CHARACTERS: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TOL-006",
    "Tool names are 1–128 characters from `A-Z a-z 0-9 _ - .`",
    Keyword::Should,
    Outcome::Warn,
    spec!("/server/tools#tool-names"),
    "TOL",
    |s| name_characters(s).boxed(),
)
.says(
    "tool names should be 1 to 128 characters long and use only ASCII letters, digits, \
     underscore, hyphen and dot (case-sensitive, no spaces or other characters)",
)
.help(
    "protocheck checks every tool name listed by `tools/list`, over every page: 1 to 128 \
     characters, each an ASCII letter or digit, `_`, `-` or `.` (no spaces or other characters).",
    "Names hold spaces, slashes, colons or non-ASCII letters, or are built from long paths, \
     usually when tool names mirror titles meant for people or fully qualified function names.",
    "Use short identifiers such as `get_forecast` or `files.read` as a tool's `name`, and put the \
     human-readable label, with spaces or accents, in `title`.",
)
.requires(TOOLS_DECLARED)
.needs_capability("tools");

pub(crate) const STABLE_CURSORS: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TOL-007",
    "Following `nextCursor` yields a valid next page; a repeated cursor gives the same page",
    Keyword::Should,
    Outcome::Warn,
    spec!("/server/utilities/pagination#implementation-guidelines"),
    "TOL",
    |s| stable_cursors(s).boxed(),
)
.says("servers should provide stable cursors")
.help(
    "For `tools/list`, `resources/list`, `resources/templates/list` and `prompts/list`, \
     protocheck follows every `nextCursor` from the first page on (at most 20 pages a list, the \
     lists side by side), asks twice for each page a cursor names, and compares the two answers \
     item by item (by `name`, `uri` or `uriTemplate`). A list without a `nextCursor` is not \
     judged.",
    "The server refuses its own cursor (it expired, or is tied to a connection or a request), or \
     the same cursor gives different pages, usually because it is a one-shot token or an offset \
     into a list that changes.",
    "Make cursors self-contained and reusable: encode a stable position, such as the last item's \
     key, rather than a server-side iterator, and give the same page for the same cursor.",
);

pub(crate) const INVALID_CURSOR: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TOL-008",
    "An invalid cursor gets error -32602",
    Keyword::Should,
    Outcome::Warn,
    spec!("/server/utilities/pagination#error-handling"),
    "TOL",
    |s| invalid_cursor(s).boxed(),
)
.says("an invalid cursor should result in an error with code -32602 (Invalid params)")
.help(
    "For each advertised list (`tools/list`, `resources/list`, `resources/templates/list`, \
     `prompts/list`), protocheck sends the cursor `protocheck-invalid-cursor` and expects error \
     -32602. A list answered -32601 is not judged.",
    "The server ignores the unknown cursor and starts again from the first page (a result), or \
     answers -32603 or another code, usually because cursor decoding falls back to the start or \
     raises an unhandled error.",
    "Validate the cursor before using it, and answer a cursor the server did not issue, or cannot \
     decode, with `{\"code\": -32602, \"message\": \"Invalid cursor\"}`.",
);

pub(crate) const UNKNOWN_TOOL: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TOL-009",
    "`tools/call` of an unknown tool is a protocol error (-32602), not a tool result",
    Keyword::Should,
    Outcome::Warn,
    spec!("/server/tools#error-handling"),
    "TOL",
    |s| unknown_tool(s).boxed(),
)
.says(
    "an unknown tool is a protocol error, reported as a JSON-RPC error (the specification's \
     example uses -32602, Invalid params), not as a tool result",
)
.help(
    "protocheck sends `tools/call` for a made-up tool name (`protocheck_no_such_tool_` and random \
     hex) with empty arguments. Any JSON-RPC error passes (the specification's example uses \
     -32602); a result is a warning.",
    "The server answers with a tool result with `isError: true` (often an \"Unknown tool\" text), \
     or even a successful one, usually because the call handler wraps every failure in a tool \
     result.",
    "Look the tool up before running it, and answer an unknown name with a JSON-RPC error, such \
     as `{\"code\": -32602, \"message\": \"Unknown tool: …\"}`, rather than a tool result.",
)
.requires(TOOLS_DECLARED)
.needs_capability("tools");

pub(crate) const RULES: &[Mcp25Rule] = &[
    DECLARED,
    LISTING,
    INPUT_SCHEMA,
    OUTPUT_SCHEMA,
    UNIQUE_NAMES,
    NAME_CHARACTERS,
    STABLE_CURSORS,
    INVALID_CURSOR,
    UNKNOWN_TOOL,
    tol_call::CONTENT,
    tol_call::INPUT_ERRORS,
    tol_call::STRUCTURED,
    tol_call::STRUCTURED_TEXT,
    tol_call::EMBEDDED,
];

/// A tool's `name`, for messages.
pub(crate) fn tool_name(tool: &Value) -> String {
    tool.get("name")
        .and_then(Value::as_str)
        .map(|n| clip(n, 80))
        .unwrap_or_else(|| "(no name)".to_owned())
}

pub(crate) fn quoted(text: &str) -> String {
    format!("`{}`", clip(text, 80))
}

/// At most [`MAX_NAMED`] of `items`, joined, with how many more there were.
pub(crate) fn some(items: &[String]) -> String {
    let mut out = items
        .iter()
        .take(MAX_NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if items.len() > MAX_NAMED {
        out.push_str(&format!(" (and {} more)", items.len() - MAX_NAMED));
    }
    out
}

/// The listing's pages as evidence (at most the session's bound).
fn with_pages(j: Judgement, listing: &Listing) -> Judgement {
    listing.pages.iter().fold(j, Judgement::reply)
}

/// The skip of a rule that reads the listed tools, when none was listed.
fn nothing_listed(listing: &Listing) -> Option<Judgement> {
    listing.items.is_empty().then(|| {
        let why = match listing.first() {
            Some(r) if r.result().is_none() => {
                format!("`tools/list` was answered {}", r.describe())
            }
            _ => "`tools/list` listed no tool".to_owned(),
        };
        Judgement::skip(format!("not applicable: {why}"))
    })
}

async fn declared(s: &Session) -> Judgement {
    if s.advertises("tools") {
        return Judgement::pass("the server declares the `tools` capability")
            .with(&s.init.exchange);
    }
    let survey = s.tools().await;
    let listing = &survey.listing;
    let Some(first) = listing.first() else {
        return Judgement::pass("`tools/list` got no answer");
    };
    if listing.items.is_empty() {
        return Judgement::pass(format!(
            "the server declares no `tools` capability, and `tools/list` was answered {} \
             listing no tool",
            first.describe()
        ))
        .reply(first);
    }
    let names: Vec<String> = listing.items.iter().map(tool_name).collect();
    Judgement::fail(format!(
        "the server lists {} tool(s) ({}) in answer to `tools/list` but its `initialize` result \
         declares no `tools` capability; declare `\"tools\": {{}}` in `capabilities`",
        listing.items.len(),
        some(&names)
    ))
    .with(&s.init.exchange)
    .reply(first)
}

/// What is wrong with one listed tool's `name` and optional members
/// (`title`, `description`, `icons`, `annotations`, `execution`, `_meta`).
fn tool_problems(index: usize, tool: &Value) -> Vec<String> {
    let Some(obj) = tool.as_object() else {
        return vec![format!(
            "tool #{index} is {}, not an object",
            clip(&tool.to_string(), 60)
        )];
    };
    let mut problems = Vec::new();
    match obj.get("name") {
        Some(Value::String(_)) => {}
        Some(other) => problems.push(format!(
            "tool #{index} has a `name` that is not a string: {}",
            clip(&other.to_string(), 60)
        )),
        None => problems.push(format!("tool #{index} has no `name`")),
    }
    let what = format!("tool `{}`", tool_name(tool));
    super::shapes::strings(tool, &["title", "description"], &what, &mut problems);
    super::shapes::icons(tool, &what, &mut problems);
    super::shapes::tool_annotations(tool, &what, &mut problems);
    super::shapes::execution(tool, &what, &mut problems);
    super::shapes::meta(tool, &what, &mut problems);
    problems
}

async fn listing(s: &Session) -> Judgement {
    let survey = s.tools().await;
    let listing = &survey.listing;
    let mut problems = Vec::new();
    let mut index = 0;
    for (n, page) in listing.pages.iter().enumerate() {
        let Some(result) = page.result() else {
            if n == 0 {
                problems.push(format!(
                    "`tools/list` was answered {} although the server declares `tools`",
                    page.describe()
                ));
            }
            // A refused later page is a cursor problem: MCP25-TOL-007 judges it.
            continue;
        };
        match result.get("tools") {
            Some(Value::Array(tools)) => {
                for tool in tools {
                    index += 1;
                    problems.extend(tool_problems(index, tool));
                }
            }
            Some(other) => problems.push(format!(
                "page {} has a `tools` member that is not an array: {}",
                n + 1,
                clip(&other.to_string(), 60)
            )),
            None => problems.push(format!("page {} has no `tools` array", n + 1)),
        }
        if let Some(cursor) = result.get("nextCursor")
            && !cursor.is_string()
        {
            problems.push(format!(
                "page {} has a `nextCursor` that is not a string: {}",
                n + 1,
                clip(&cursor.to_string(), 60)
            ));
        }
    }
    let pages = listing.pages.len();
    let note = listing
        .stopped
        .as_ref()
        .map(|why| format!(" (the walk stopped: {why})"))
        .unwrap_or_default();
    if problems.is_empty() {
        return with_pages(
            Judgement::pass(format!(
                "`tools/list` listed {} tool(s) on {pages} page(s), each with a string \
                 `name`{note}",
                listing.items.len()
            )),
            listing,
        );
    }
    with_pages(
        Judgement::fail(format!("{}{note}", some(&problems))),
        listing,
    )
}

/// The JSON Schema dialects protocheck validates against, by the `$schema`
/// URI naming each (scheme `http` or `https`, with or without the empty
/// fragment `#`, both spellings found in the wild).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Draft4,
    Draft6,
    Draft7,
    Draft201909,
    Draft202012,
}

impl Dialect {
    /// The dialect a `$schema` URI names, if it is one of the five.
    pub(crate) fn named(uri: &str) -> Option<Self> {
        let uri = uri.strip_suffix('#').unwrap_or(uri);
        let rest = uri
            .strip_prefix("https://")
            .or_else(|| uri.strip_prefix("http://"))?;
        Some(match rest {
            "json-schema.org/draft-04/schema" => Self::Draft4,
            "json-schema.org/draft-06/schema" => Self::Draft6,
            "json-schema.org/draft-07/schema" => Self::Draft7,
            "json-schema.org/draft/2019-09/schema" => Self::Draft201909,
            "json-schema.org/draft/2020-12/schema" => Self::Draft202012,
            _ => return None,
        })
    }

    /// The first problem the dialect's meta-schema finds in `schema`.
    fn problem(self, schema: &Value) -> Option<String> {
        let checked = match self {
            Self::Draft4 => jsonschema::draft4::meta::validate(schema),
            Self::Draft6 => jsonschema::draft6::meta::validate(schema),
            Self::Draft7 => jsonschema::draft7::meta::validate(schema),
            Self::Draft201909 => jsonschema::draft201909::meta::validate(schema),
            Self::Draft202012 => jsonschema::draft202012::meta::validate(schema),
        };
        checked.err().map(|e| {
            format!(
                "is not a valid schema of its dialect ({self:?}): {} (at `{}`)",
                clip(&e.to_string(), 160),
                if e.instance_path.as_str().is_empty() {
                    "/"
                } else {
                    e.instance_path.as_str()
                }
            )
        })
    }
}

/// Why `schema` is not a valid JSON Schema of its dialect: `Err` with the
/// problem, or `Ok(Some(note))` when its dialect is one protocheck cannot
/// validate against. Without `$schema` (or with one that is not a string,
/// which the 2020-12 meta-schema then refuses) the dialect is 2020-12.
pub(crate) fn schema_problem(schema: &Value) -> Result<Option<String>, String> {
    let dialect = match schema.get("$schema").and_then(Value::as_str) {
        None => Dialect::Draft202012,
        Some(uri) => match Dialect::named(uri) {
            Some(dialect) => dialect,
            None => {
                return Ok(Some(format!(
                    "declares the dialect \"{}\", which protocheck cannot validate against",
                    clip(&uri.escape_debug().to_string(), 80)
                )));
            }
        },
    };
    dialect.problem(schema).map_or(Ok(None), Err)
}

/// TOL-003 (`inputSchema`, required) and TOL-004 (`outputSchema`, optional).
async fn schemas(s: &Session, field: &str) -> Judgement {
    let survey = s.tools().await;
    let listing = &survey.listing;
    if let Some(skip) = nothing_listed(listing) {
        return skip;
    }
    let required = field == "inputSchema";
    let mut problems = Vec::new();
    let mut unjudged = Vec::new();
    let mut judged = 0;
    for tool in &listing.items {
        let name = tool_name(tool);
        let schema = match tool.get(field) {
            None if required => {
                problems.push(format!("tool `{name}` has no `{field}`"));
                continue;
            }
            None => continue,
            Some(schema) => schema,
        };
        judged += 1;
        let Some(obj) = schema.as_object() else {
            problems.push(format!(
                "tool `{name}` has an `{field}` that is {}, not a JSON object",
                clip(&schema.to_string(), 60)
            ));
            continue;
        };
        match obj.get("type") {
            Some(Value::String(t)) if t == "object" => {}
            Some(other) => problems.push(format!(
                "tool `{name}` `{field}` has `\"type\": {}` at its root, not `\"object\"`",
                clip(&other.to_string(), 40)
            )),
            None => problems.push(format!(
                "tool `{name}` `{field}` has no `\"type\": \"object\"` at its root"
            )),
        }
        match schema_problem(schema) {
            Ok(None) => {}
            Ok(Some(note)) => unjudged.push(format!("tool `{name}` `{field}` {note}")),
            Err(p) => problems.push(format!("tool `{name}` `{field}` {p}")),
        }
    }
    if judged == 0 {
        return Judgement::skip(format!("not applicable: no listed tool declares `{field}`"));
    }
    if !problems.is_empty() {
        return with_pages(Judgement::fail(some(&problems)), listing);
    }
    if !unjudged.is_empty() {
        return with_pages(
            Judgement::info(format!(
                "{}; the other {} schema(s) are valid",
                some(&unjudged),
                judged - unjudged.len()
            )),
            listing,
        );
    }
    with_pages(
        Judgement::pass(format!(
            "{judged} `{field}`(s) are valid JSON Schema objects rooted at `\"type\": \"object\"`"
        )),
        listing,
    )
}

async fn unique_names(s: &Session) -> Judgement {
    let survey = s.tools().await;
    let listing = &survey.listing;
    if let Some(skip) = nothing_listed(listing) {
        return skip;
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for name in listing.items.iter().filter_map(|t| t.get("name")?.as_str()) {
        *counts.entry(name).or_default() += 1;
    }
    let repeated: Vec<String> = counts
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(name, n)| format!("{} is listed {n} times", quoted(name)))
        .collect();
    if repeated.is_empty() {
        return with_pages(
            Judgement::pass(format!("the {} listed tool names are unique", counts.len())),
            listing,
        );
    }
    with_pages(
        Judgement::fail(format!(
            "{} (compared exactly, case-sensitive, over every page of `tools/list`)",
            some(&repeated)
        )),
        listing,
    )
}

/// What is wrong with a tool name's form, if anything.
fn name_problem(name: &str) -> Option<String> {
    let len = name.chars().count();
    let bad: Vec<String> = {
        let mut seen = Vec::new();
        for c in name.chars() {
            let ok = c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
            if !ok && !seen.contains(&c) {
                seen.push(c);
            }
        }
        seen.iter().map(|c| format!("{c:?}")).collect()
    };
    let mut why = Vec::new();
    if len == 0 {
        why.push("is empty".to_owned());
    }
    if len > 128 {
        why.push(format!("is {len} characters long (at most 128)"));
    }
    if !bad.is_empty() {
        why.push(format!("has the character(s) {}", bad.join(", ")));
    }
    (!why.is_empty()).then(|| format!("{} {}", quoted(name), why.join(" and ")))
}

async fn name_characters(s: &Session) -> Judgement {
    let survey = s.tools().await;
    let listing = &survey.listing;
    if let Some(skip) = nothing_listed(listing) {
        return skip;
    }
    let names: Vec<&str> = listing
        .items
        .iter()
        .filter_map(|t| t.get("name")?.as_str())
        .collect();
    let bad: Vec<String> = names.iter().filter_map(|n| name_problem(n)).collect();
    if bad.is_empty() {
        return with_pages(
            Judgement::pass(format!(
                "the {} listed tool names are 1–128 characters from A-Z a-z 0-9 _ - .",
                names.len()
            )),
            listing,
        );
    }
    with_pages(Judgement::fail(some(&bad)), listing)
}

/// The list methods of the specification, the member holding their items,
/// the member naming an item, and the capability that offers them.
pub(crate) const LISTS: &[(&str, &str, &str, &str)] = &[
    ("tools/list", "tools", "name", "tools"),
    ("resources/list", "resources", "uri", "resources"),
    (
        "resources/templates/list",
        "resourceTemplates",
        "uriTemplate",
        "resources",
    ),
    ("prompts/list", "prompts", "name", "prompts"),
];

/// The names (or URIs) of a page's items, when it is a well-formed page.
fn page_keys(reply: &Reply, key: &str, id: &str) -> Option<Vec<String>> {
    let items = reply.result()?.get(key)?.as_array()?;
    Some(
        items
            .iter()
            .map(|i| match i.get(id) {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => i.to_string(),
            })
            .collect(),
    )
}

/// What TOL-007 saw of one list: every cursor it issued, each asked twice.
#[derive(Default)]
struct CursorWalk {
    /// How many cursors were asked twice.
    cursors: usize,
    problem: Option<String>,
    /// Where the walk stopped short of the list's end (protocheck's page cap).
    stopped: Option<String>,
    evidence: Vec<Reply>,
}

/// Every `nextCursor` of `method`'s list, from the first page on, asked
/// twice; the walk follows the first answer's `nextCursor` and stops at the
/// list's end, at a problem, or after [`session::MAX_PAGES`] pages.
async fn walk_cursors(s: &Session, method: &str, key: &str, id: &str) -> CursorWalk {
    let mut walk = CursorWalk::default();
    let first = if method == "tools/list" {
        match s.tools().await.listing.first() {
            Some(first) => first.clone(),
            None => return walk,
        }
    } else {
        s.main.request(method, json!({})).await
    };
    let next = |reply: &Reply| {
        reply
            .result()
            .and_then(|r| r.get("nextCursor"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let mut cursor = next(&first);
    let mut before = first;
    let mut page = 1;
    while let Some(c) = cursor.take() {
        if page >= session::MAX_PAGES {
            walk.stopped = Some(format!(
                "protocheck reads at most {} pages of a list; page {page} of `{method}` named                  a further cursor",
                session::MAX_PAGES
            ));
            break;
        }
        page += 1;
        walk.cursors += 1;
        // One after the other: the second ask repeats a cursor already used.
        let once = s.main.request(method, json!({"cursor": c})).await;
        let twice = s.main.request(method, json!({"cursor": c})).await;
        let (a, b) = (page_keys(&once, key, id), page_keys(&twice, key, id));
        let problem = match (&a, &b) {
            (None, _) => Some(format!(
                "`{method}` with the server's own `nextCursor` {} (page {page}) was answered {},                  not a page with a `{key}` array",
                quoted(&c),
                once.describe()
            )),
            (_, None) => Some(format!(
                "`{method}` with the cursor {} (page {page}) gave a page, then, asked again, was                  answered {}",
                quoted(&c),
                twice.describe()
            )),
            (Some(a), Some(b)) if a != b => Some(format!(
                "`{method}` with the cursor {} (page {page}) gave [{}], then, asked again, [{}]",
                quoted(&c),
                clip(&a.join(", "), 160),
                clip(&b.join(", "), 160)
            )),
            _ => None,
        };
        if let Some(p) = problem {
            walk.problem = Some(p);
            walk.evidence = vec![before, once, twice];
            return walk;
        }
        cursor = next(&once);
        walk.evidence = vec![once, twice];
        before = walk.evidence[0].clone();
    }
    walk
}

async fn stable_cursors(s: &Session) -> Judgement {
    // The four lists are independent: walked side by side.
    let walks = futures::future::join_all(
        LISTS
            .iter()
            .map(|(method, key, id, _)| walk_cursors(s, method, key, id)),
    )
    .await;
    let mut problems = Vec::new();
    let mut judged = Vec::new();
    let mut stopped = Vec::new();
    let mut evidence = Vec::new();
    let mut seen = Vec::new();
    for ((method, ..), walk) in LISTS.iter().zip(walks) {
        if walk.cursors == 0 {
            continue;
        }
        judged.push(format!("`{method}` ({} cursor(s))", walk.cursors));
        stopped.extend(walk.stopped);
        match walk.problem {
            Some(p) => {
                problems.push(p);
                evidence.extend(walk.evidence);
            }
            None => seen.extend(walk.evidence),
        }
    }
    if judged.is_empty() {
        return Judgement::skip(
            "not applicable: no list (tools, resources, resource templates, prompts) returned a \
             `nextCursor`",
        );
    }
    let stopped = if stopped.is_empty() {
        String::new()
    } else {
        format!(" ({})", stopped.join("; "))
    };
    if problems.is_empty() {
        return seen.iter().fold(
            Judgement::pass(format!(
                "every `nextCursor` of {} gave a valid page, the same when asked twice{stopped}",
                judged.join(", ")
            )),
            Judgement::reply,
        );
    }
    evidence.iter().fold(
        Judgement::fail(format!("{}{stopped}", some(&problems))),
        Judgement::reply,
    )
}

async fn invalid_cursor(s: &Session) -> Judgement {
    let mut problems = Vec::new();
    let mut judged = Vec::new();
    let mut unjudged = Vec::new();
    let mut evidence = Vec::new();
    let mut seen = Vec::new();
    for (method, key, _, capability) in LISTS {
        if !s.advertises(capability) {
            continue;
        }
        let reply = s
            .main
            .request(method, json!({"cursor": "protocheck-invalid-cursor"}))
            .await;
        match reply.error_code() {
            Some(-32602) => {
                judged.push(format!("`{method}`"));
                seen.push(reply);
            }
            // A list the server does not implement says nothing of cursors
            // (MCP25-RES-004 judges a missing templates list).
            Some(-32601) => unjudged.push(format!("`{method}` is not implemented (-32601)")),
            Some(_) => {
                judged.push(format!("`{method}`"));
                problems.push(format!(
                    "`{method}` with the cursor `protocheck-invalid-cursor` was answered {}, not \
                     -32602",
                    reply.describe()
                ));
                evidence.push(reply);
            }
            None if reply.result().is_some() => {
                judged.push(format!("`{method}`"));
                // An empty list is a page too, but not "of items": say which.
                let restart = match reply.result().and_then(|r| r.get(*key)) {
                    Some(Value::Array(items)) if items.is_empty() => {
                        " (an empty list: the server seems to ignore the cursor, which hides a \
                         client's mistake)"
                    }
                    Some(Value::Array(_)) => {
                        " (a page of items: the server seems to ignore the cursor and start \
                         over, which hides a client's mistake)"
                    }
                    _ => "",
                };
                problems.push(format!(
                    "`{method}` with the cursor `protocheck-invalid-cursor` was answered with a \
                     result, not error -32602{restart}"
                ));
                evidence.push(reply);
            }
            None => unjudged.push(format!("`{method}` was answered {}", reply.describe())),
        }
    }
    if judged.is_empty() && unjudged.is_empty() {
        return Judgement::skip(
            "not applicable: the server advertises no list method (tools, resources, prompts)",
        );
    }
    if judged.is_empty() {
        return Judgement::skip(format!("not verified: {}", some(&unjudged)));
    }
    if problems.is_empty() {
        return seen.iter().fold(
            Judgement::pass(format!(
                "an invalid cursor got -32602 from {}",
                judged.join(", ")
            )),
            Judgement::reply,
        );
    }
    evidence
        .iter()
        .fold(Judgement::fail(some(&problems)), Judgement::reply)
}

async fn unknown_tool(s: &Session) -> Judgement {
    let name = format!("protocheck_no_such_tool_{:08x}", rand::random::<u32>());
    let reply = s
        .main
        .request("tools/call", json!({"name": name, "arguments": {}}))
        .await;
    if let Some(code) = reply.error_code() {
        let note = if code == -32602 {
            String::new()
        } else {
            format!(
                " (code {code}: any JSON-RPC error is a protocol error; the specification's \
                 example uses -32602)"
            )
        };
        return Judgement::pass(format!(
            "`tools/call` of the unknown tool `{name}` got a JSON-RPC error{note}"
        ))
        .reply(&reply);
    }
    let Some(result) = reply.result() else {
        return Judgement::skip(format!(
            "not verified: `tools/call` of the unknown tool `{name}` was answered {}",
            reply.describe()
        ))
        .reply(&reply);
    };
    let message = if result.get("isError") == Some(&Value::Bool(true)) {
        format!(
            "`tools/call` of the unknown tool `{name}` was answered with a tool result with \
             `isError: true`; an unknown tool is a protocol error, answered with a JSON-RPC \
             error such as -32602"
        )
    } else {
        format!(
            "`tools/call` of the unknown tool `{name}` reported success for a tool that does not \
             exist; answer with a JSON-RPC error such as -32602"
        )
    };
    Judgement::fail(message).reply(&reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_are_judged_by_length_and_characters() {
        assert_eq!(name_problem("get_forecast-v1.2"), None);
        assert!(name_problem("").is_some_and(|p| p.contains("empty")));
        assert!(
            name_problem("météo du jour").is_some_and(|p| p.contains("'é'") && p.contains("' '")),
            "{:?}",
            name_problem("météo du jour")
        );
        assert!(name_problem(&"a".repeat(129)).is_some_and(|p| p.contains("129")));
        assert_eq!(name_problem(&"a".repeat(128)), None);
    }

    #[test]
    fn schemas_are_judged_in_their_dialect() {
        assert_eq!(schema_problem(&json!({"type": "object"})), Ok(None));
        assert!(schema_problem(&json!({"type": 7})).is_err());
        assert!(matches!(
            schema_problem(&json!({"$schema": "https://example.com/unknown", "type": "object"})),
            Ok(Some(_))
        ));
        // Each of the five dialects is judged by its own meta-schema: a
        // boolean `exclusiveMinimum` is draft-04 only, `$defs` is not checked
        // by draft-07 but `definitions` holding a non-schema is.
        let draft4 = json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
            "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": true}}});
        assert_eq!(schema_problem(&draft4), Ok(None));
        let mut draft6 = draft4.clone();
        draft6["$schema"] = json!("http://json-schema.org/draft-06/schema#");
        assert!(schema_problem(&draft6).is_err());
        for uri in [
            "http://json-schema.org/draft-04/schema",
            "https://json-schema.org/draft-06/schema#",
            "http://json-schema.org/draft-07/schema#",
            "https://json-schema.org/draft/2019-09/schema",
            "http://json-schema.org/draft/2020-12/schema#",
        ] {
            let good =
                json!({"$schema": uri, "type": "object", "properties": {"a": {"type": "string"}}});
            assert_eq!(schema_problem(&good), Ok(None), "{uri}");
            let bad =
                json!({"$schema": uri, "type": "object", "properties": {"a": {"type": "strang"}}});
            assert!(schema_problem(&bad).is_err(), "{uri}");
            assert!(Dialect::named(uri).is_some(), "{uri}");
        }
        assert!(schema_problem(&json!({"$schema": 4, "type": "object"})).is_err());
        assert!(matches!(
            schema_problem(&json!({"$schema": "http://json-schema.org/draft-03/schema#"})),
            Ok(Some(_))
        ));
    }
}
