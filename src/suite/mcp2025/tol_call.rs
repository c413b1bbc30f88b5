//! TOL — the rules that judge `tools/call` results (server/tools, "Tool
//! Result"). protocheck calls a tool only when it is annotated
//! `readOnlyHint: true` or the run allows tool calls (digest §15 D14), and
//! never one that runs only as a task; each callable tool once per run, with
//! arguments built from the required part of its `inputSchema` (and optional
//! numbers with a `minimum` at it), and within a budget on the wire: a call
//! still running past it is cancelled and not judged, and the findings name
//! it.

use super::client::Reply;
use super::rule::{Mcp25Rule, spec};
use super::session::{Judgement, Session, ToolSurvey};
use super::tol::{TOOLS_DECLARED, some, tool_name};
use crate::suite::Outcome;
use crate::suite::mcp::Keyword;
use crate::suite::mcp::client::clip;
use crate::suite::mcp::survey::placeholder_arguments;
use base64::Engine;
use futures::FutureExt;
use serde_json::{Value, json};
use std::sync::Arc;

/// Most tools protocheck calls in one run.
const MAX_CALLS: usize = 10;

pub(crate) const CONTENT: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TOL-010",
    "A `tools/call` result has a `content` array of well-formed blocks; `isError` is boolean",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/tools#tool-result"),
    "TOL",
    |s| content(s).boxed(),
)
.says(
    "a tool result carries a `content` array of content blocks of the defined kinds (text, \
     image, audio, resource link, embedded resource), and `isError`, when present, is a boolean \
     (schema `CallToolResult`, `ContentBlock`)",
)
.help(
    "protocheck calls each tool it may call (annotated `readOnlyHint: true`, or any when the run \
     allows tool calls; at most 10; not a tool whose `execution.taskSupport` is \"required\", \
     which runs only as a task) once, with placeholder arguments built from the required part \
     of its `inputSchema` (an optional number with a `minimum` is given that minimum, the least \
     work it allows), and checks each result: a `content` array of well-formed text, image, \
     audio, `resource_link` or `resource` blocks, and a boolean `isError`. A call still unanswered \
     after 3 s of the tool's work (and one round trip) is cancelled with \
     `notifications/cancelled`, as the lifecycle's \"Timeouts\" asks of a sender, and named as not \
     judged.",
    "A result lacks `content` (it returns only `structuredContent`, or a bare value), a block has \
     an unknown `type` or misses `text`, `mimeType` or `uri`, image or audio `data` is not \
     base64, or `isError` is a string.",
    "Return at least `{\"content\": [{\"type\": \"text\", \"text\": \"…\"}]}`, with blocks of the \
     defined kinds and their required fields; base64-encode binary `data`, and omit `isError` or \
     make it a boolean.",
)
.requires(TOOLS_DECLARED)
.needs_capability("tools");

pub(crate) const INPUT_ERRORS: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TOL-011",
    "Arguments that violate a tool's `inputSchema` are a tool execution error (`isError: true`)",
    Keyword::Should,
    Outcome::Warn,
    spec!("/server/tools#error-handling"),
    "TOL",
    |s| input_errors(s).boxed(),
)
.says(
    "input validation errors are tool execution errors, reported in a result with `isError: \
     true` so that the model can correct itself, rather than as protocol errors",
)
.help(
    "protocheck takes the first tool it may call that has a required property (not one whose \
     `execution.taskSupport` is \"required\": a plain call of it is refused whatever its \
     arguments), builds placeholder arguments from its `inputSchema`, leaves that property out, and calls the tool. A result \
     with `isError: true` passes, a JSON-RPC error is a warning, and a successful result is \
     information.",
    "The server rejects the arguments with a JSON-RPC error (usually -32602, from SDKs that \
     validate arguments before the handler runs), so that the model never sees what was wrong.",
    "Report argument validation errors as a tool result with `isError: true` and a text block \
     saying what is wrong, rather than as a protocol error, so that the model can correct its \
     call.",
)
.requires(TOOLS_DECLARED)
.needs_capability("tools");

pub(crate) const STRUCTURED: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TOL-012",
    "A tool with an `outputSchema` returns `structuredContent` that validates against it",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/tools#output-schema"),
    "TOL",
    |s| structured(s).boxed(),
)
.says(
    "when an output schema is provided, the server provides structured results that conform to it",
)
.help(
    "From the tool calls of MCP25-TOL-010, protocheck takes each successful result (not \
     `isError`) of a tool with an `outputSchema` and validates its `structuredContent` against \
     that schema; a missing `structuredContent` fails, and a schema that cannot be compiled is \
     noted.",
    "The tool returns only text content, or `structuredContent` whose shape drifted from the \
     declared schema: a renamed field, a number sent as a string, a required property left out.",
    "When a tool declares an `outputSchema`, return `structuredContent` that validates against it \
     on every successful call; derive both from the same type, and test the output against the \
     schema.",
)
.requires(TOOLS_DECLARED)
.needs_capability("tools");

pub(crate) const STRUCTURED_TEXT: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TOL-013",
    "A result with `structuredContent` also carries that JSON serialised in a text block",
    Keyword::Should,
    Outcome::Warn,
    spec!("/server/tools#structured-content"),
    "TOL",
    |s| structured_text(s).boxed(),
)
.says(
    "for backwards compatibility, a tool returning structured content should also return the \
     serialised JSON in a text content block",
)
.help(
    "From the tool calls of MCP25-TOL-010, protocheck takes each result carrying \
     `structuredContent` and looks for a text block whose text parses as JSON equal to it.",
    "The tool returns `structuredContent` with only a human-readable summary as text, or with no \
     content block at all, or its text holds other JSON (a subset, a wrapped copy).",
    "Alongside `structuredContent`, return a text content block holding the same value serialised \
     as JSON, for clients that do not read structured content.",
)
.requires(TOOLS_DECLARED)
.needs_capability("tools");

pub(crate) const EMBEDDED: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TOL-014",
    "A server whose tool results embed resources declares the `resources` capability",
    Keyword::Should,
    Outcome::Warn,
    spec!("/server/tools#embedded-resources"),
    "TOL",
    |s| embedded(s).boxed(),
)
.says("servers that use embedded resources should implement the `resources` capability")
.help(
    "From the tool calls of MCP25-TOL-010, protocheck looks for results with a content block of \
     type `resource` (an embedded resource) and checks that the `initialize` capabilities declare \
     `resources`.",
    "A tool embeds resources in its results while the server offers no `resources` capability, so \
     that clients cannot list, read or subscribe to them.",
    "Declare the `resources` capability and serve the embedded resources through `resources/list` \
     and `resources/read`, or return the data as another kind of content block.",
)
.requires(TOOLS_DECLARED)
.needs_capability("tools");

/// The calls of the run: each callable tool with placeholder arguments.
pub(crate) struct ToolCalls {
    /// How many tools were listed.
    listed: usize,
    /// Each tool called and answered (or refused, or failed), with its answer.
    calls: Vec<(Value, Reply)>,
}

async fn tool_calls(s: &Session) -> Arc<ToolCalls> {
    s.shared(|| async {
        let survey = s.tools().await;
        // Side by side, within the run's limit on requests in flight; the
        // results keep the order of the list, so messages repeat run to run.
        // Each call is awaited within the tool budget (`call`): one still
        // running past it is cancelled and named as not judged.
        let calls = futures::future::join_all(
            survey
                .callable()
                .into_iter()
                .take(MAX_CALLS)
                .map(|tool| call(s, tool)),
        )
        .await;
        ToolCalls {
            listed: survey.items().len(),
            calls,
        }
    })
    .await
}

/// Calls `tool` with placeholder arguments, within the run's tool budget
/// (see [`Client::tool_budget`](super::client::Client::tool_budget)).
async fn call(s: &Session, tool: &Value) -> (Value, Reply) {
    let schema = tool.get("inputSchema").cloned().unwrap_or(json!({}));
    let params = json!({"name": tool.get("name"), "arguments": placeholder_arguments(&schema)});
    let budget = s.client.tool_budget();
    (
        tool.clone(),
        s.main.request_within("tools/call", params, budget).await,
    )
}

impl ToolCalls {
    /// What a finding says of the calls cut at their budget, which no rule
    /// judges: empty when there were none.
    fn cut_note(&self) -> String {
        let cut: Vec<String> = self
            .calls
            .iter()
            .filter_map(|(tool, reply)| {
                reply
                    .cut
                    .map(|b| format!("`{}` ({} ms)", tool_name(tool), b.as_millis()))
            })
            .collect();
        if cut.is_empty() {
            return String::new();
        }
        format!(
            "; not judged: {}, still running at the end of its budget and cancelled with \
             `notifications/cancelled`",
            some(&cut)
        )
    }
}

/// `judgement` with what [`ToolCalls::cut_note`] says appended.
fn noting_cuts(mut judgement: Judgement, calls: &ToolCalls) -> Judgement {
    judgement.message.push_str(&calls.cut_note());
    judgement
}

/// Why no call can be judged: no tool listed, or none protocheck may call.
fn no_calls(calls: &ToolCalls) -> Option<Judgement> {
    if calls.listed == 0 {
        return Some(Judgement::skip(
            "not applicable: `tools/list` listed no tool",
        ));
    }
    calls.calls.is_empty().then(|| {
        Judgement::skip(
            "not applicable: no listed tool is annotated `readOnlyHint: true` and the run does \
             not allow tool calls (allow_tool_calls), so protocheck called none",
        )
    })
}

/// The calls answered with a result, or the skip when none was.
fn results(calls: &ToolCalls) -> Result<Vec<(&Value, &Reply, &Value)>, Judgement> {
    if let Some(skip) = no_calls(calls) {
        return Err(skip);
    }
    let answered: Vec<_> = calls
        .calls
        .iter()
        .filter_map(|(tool, reply)| Some((tool, reply, reply.result()?)))
        .collect();
    if answered.is_empty() {
        // The calls cut at their budget are named by `noting_cuts`.
        let why: Vec<String> = calls
            .calls
            .iter()
            .filter(|(_, reply)| reply.cut.is_none())
            .map(|(tool, reply)| format!("`{}`: {}", tool_name(tool), reply.describe()))
            .collect();
        let why = if why.is_empty() {
            String::new()
        } else {
            format!(" ({})", some(&why))
        };
        return Err(Judgement::skip(format!(
            "not verified: no tool call was answered with a result{why}"
        )));
    }
    Ok(answered)
}

fn is_error(result: &Value) -> bool {
    result.get("isError") == Some(&Value::Bool(true))
}

/// The content blocks of a result (none when `content` is not an array).
fn blocks(result: &Value) -> &[Value] {
    result
        .get("content")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn string_member(block: &Value, field: &str) -> Option<String> {
    match block.get(field) {
        Some(Value::String(_)) => None,
        Some(other) => Some(format!(
            "`{field}` is {}, not a string",
            clip(&other.to_string(), 40)
        )),
        None => Some(format!("has no `{field}`")),
    }
}

/// What is wrong with one content block, if anything.
pub(crate) fn block_problem(block: &Value) -> Option<String> {
    if !block.is_object() {
        return Some(format!(
            "is {}, not an object",
            clip(&block.to_string(), 40)
        ));
    }
    let kind = block.get("type").and_then(Value::as_str);
    let mut why = Vec::new();
    match kind {
        Some("text") => why.extend(string_member(block, "text")),
        Some("image" | "audio") => {
            why.extend(string_member(block, "mimeType"));
            match block.get("data").and_then(Value::as_str) {
                Some(data) => {
                    if base64::engine::general_purpose::STANDARD
                        .decode(data)
                        .is_err()
                    {
                        why.push("`data` is not valid base64".into());
                    }
                }
                None => why.extend(string_member(block, "data")),
            }
        }
        Some("resource_link") => {
            why.extend(string_member(block, "uri"));
            why.extend(string_member(block, "name"));
        }
        Some("resource") => match block.get("resource") {
            Some(resource @ Value::Object(obj)) => {
                why.extend(string_member(resource, "uri").map(|w| format!("resource {w}")));
                let text = obj.get("text");
                let blob = obj.get("blob");
                match (text, blob) {
                    (Some(_), Some(_)) => why.push("resource has both `text` and `blob`".into()),
                    (None, None) => why.push("resource has neither `text` nor `blob`".into()),
                    (Some(t), None) if !t.is_string() => {
                        why.push("resource `text` is not a string".into())
                    }
                    (None, Some(b)) if !b.is_string() => {
                        why.push("resource `blob` is not a string".into())
                    }
                    _ => {}
                }
            }
            Some(other) => why.push(format!(
                "`resource` is {}, not an object",
                clip(&other.to_string(), 40)
            )),
            None => why.push("has no `resource`".into()),
        },
        Some(other) => why.push(format!(
            "has the type `{}`, which is none of text, image, audio, resource_link, resource",
            clip(other, 40)
        )),
        None => why.push("has no string `type`".into()),
    }
    (!why.is_empty()).then(|| why.join(", "))
}

/// What is wrong with one tool result, if anything.
fn result_problems(name: &str, result: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    match result.get("content") {
        Some(Value::Array(items)) => {
            for (i, block) in items.iter().enumerate() {
                if let Some(p) = block_problem(block) {
                    problems.push(format!("`{name}`: content block #{} {p}", i + 1));
                }
            }
        }
        Some(other) => problems.push(format!(
            "`{name}`: `content` is {}, not an array",
            clip(&other.to_string(), 40)
        )),
        None => problems.push(format!("`{name}`: the result has no `content` array")),
    }
    if let Some(flag) = result.get("isError")
        && !flag.is_boolean()
    {
        problems.push(format!(
            "`{name}`: `isError` is {}, not a boolean",
            clip(&flag.to_string(), 40)
        ));
    }
    problems
}

async fn content(s: &Session) -> Judgement {
    let calls = tool_calls(s).await;
    noting_cuts(content_of(&calls), &calls)
}

fn content_of(calls: &ToolCalls) -> Judgement {
    let answered = match results(calls) {
        Ok(answered) => answered,
        Err(skip) => return skip,
    };
    let mut problems = Vec::new();
    let mut evidence = Vec::new();
    for (tool, reply, result) in &answered {
        let found = result_problems(&tool_name(tool), result);
        if !found.is_empty() {
            problems.extend(found);
            evidence.push(*reply);
        }
    }
    if problems.is_empty() {
        return answered.iter().fold(
            Judgement::pass(format!(
                "{} tool result(s) hold well-formed content blocks",
                answered.len()
            )),
            |j, (_, reply, _)| j.reply(reply),
        );
    }
    evidence
        .into_iter()
        .fold(Judgement::fail(some(&problems)), Judgement::reply)
}

/// The first callable tool with a required property, and that property.
fn with_required(survey: &ToolSurvey) -> Option<(Value, String)> {
    survey
        .callable()
        .into_iter()
        .take(MAX_CALLS)
        .find_map(|tool| {
            let first = tool
                .pointer("/inputSchema/required")?
                .as_array()?
                .iter()
                .find_map(Value::as_str)?
                .to_owned();
            Some((tool.clone(), first))
        })
}

async fn input_errors(s: &Session) -> Judgement {
    let Some((tool, missing)) = with_required(&*s.tools().await) else {
        return Judgement::skip(
            "not applicable: no tool protocheck may call (annotated `readOnlyHint: true`, or any \
             when the run allows tool calls) has a required property",
        );
    };
    let name = tool_name(&tool);
    let schema = tool.get("inputSchema").cloned().unwrap_or(json!({}));
    let mut arguments = placeholder_arguments(&schema);
    if let Some(obj) = arguments.as_object_mut() {
        obj.remove(&missing);
    }
    let reply = s
        .main
        .request_within(
            "tools/call",
            json!({"name": tool.get("name"), "arguments": arguments}),
            s.client.tool_budget(),
        )
        .await;
    let what = format!(
        "`tools/call` of `{name}` without its required property `{}`",
        clip(&missing, 60)
    );
    if let Some(code) = reply.error_code() {
        let older = if code == -32602 {
            " (-32602 is how older readings report it; 2025-11-25 asks for a tool execution error)"
        } else {
            ""
        };
        return Judgement::fail(format!(
            "{what} was answered with JSON-RPC error {code}, not a result with `isError: \
             true`{older}"
        ))
        .reply(&reply);
    }
    match reply.result() {
        Some(result) if is_error(result) => {
            Judgement::pass(format!("{what} got a tool result with `isError: true`")).reply(&reply)
        }
        Some(_) => Judgement::info(format!(
            "{what} was answered with a successful result: the tool may accept it, so protocheck \
             cannot tell whether input validation errors are reported with `isError: true`"
        ))
        .reply(&reply),
        None => Judgement::skip(format!(
            "not verified: {what} was answered {}",
            reply.describe()
        ))
        .reply(&reply),
    }
}

/// Why `instance` does not validate against `schema`: `Err` with the
/// problem, `Ok(Some(note))` when the schema cannot be compiled.
fn validate(schema: &Value, instance: &Value) -> Result<Option<String>, String> {
    let validator = match jsonschema::validator_for(schema) {
        Ok(v) => v,
        Err(e) => {
            return Ok(Some(format!(
                "its `outputSchema` cannot be compiled: {}",
                clip(&e.to_string(), 120)
            )));
        }
    };
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .take(3)
        .map(|e| {
            let at = e.instance_path.as_str();
            format!(
                "{} (at `{}`)",
                clip(&e.to_string(), 120),
                if at.is_empty() { "/" } else { at }
            )
        })
        .collect();
    if errors.is_empty() {
        Ok(None)
    } else {
        Err(errors.join("; "))
    }
}

async fn structured(s: &Session) -> Judgement {
    let calls = tool_calls(s).await;
    noting_cuts(structured_of(s, &calls).await, &calls)
}

async fn structured_of(s: &Session, calls: &ToolCalls) -> Judgement {
    if calls.listed > 0
        && !s
            .tools()
            .await
            .items()
            .iter()
            .any(|t| t.get("outputSchema").is_some())
    {
        return Judgement::skip("not applicable: no listed tool declares `outputSchema`");
    }
    let answered = match results(calls) {
        Ok(answered) => answered,
        Err(skip) => return skip,
    };
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    let mut evidence = Vec::new();
    let mut judged = 0;
    let mut seen = Vec::new();
    for (tool, reply, result) in answered {
        let Some(schema) = tool.get("outputSchema") else {
            continue;
        };
        if is_error(result) {
            continue;
        }
        judged += 1;
        seen.push(reply);
        let name = tool_name(tool);
        let problem = match result.get("structuredContent") {
            None => Some(format!(
                "`{name}` declares an `outputSchema` but its result has no `structuredContent`"
            )),
            Some(content) => match validate(schema, content) {
                Ok(None) => None,
                Ok(Some(note)) => {
                    notes.push(format!("`{name}`: {note}"));
                    None
                }
                Err(why) => Some(format!(
                    "`{name}`: `structuredContent` does not validate against its \
                     `outputSchema`: {why}"
                )),
            },
        };
        if let Some(p) = problem {
            problems.push(p);
            evidence.push(reply);
        }
    }
    if judged == 0 {
        return Judgement::skip(
            "not verified: no tool with an `outputSchema` that protocheck called returned a \
             successful result",
        );
    }
    if !problems.is_empty() {
        return evidence
            .into_iter()
            .fold(Judgement::fail(some(&problems)), Judgement::reply);
    }
    let note = if notes.is_empty() {
        String::new()
    } else {
        format!(" ({} not validated: {})", notes.len(), some(&notes))
    };
    seen.into_iter().fold(
        Judgement::pass(format!(
            "{judged} successful result(s) of tools with an `outputSchema` carry conforming \
             `structuredContent`{note}"
        )),
        Judgement::reply,
    )
}

async fn structured_text(s: &Session) -> Judgement {
    let calls = tool_calls(s).await;
    noting_cuts(structured_text_of(&calls), &calls)
}

fn structured_text_of(calls: &ToolCalls) -> Judgement {
    let answered = match results(calls) {
        Ok(answered) => answered,
        Err(skip) => return skip,
    };
    let mut problems = Vec::new();
    let mut evidence = Vec::new();
    let mut judged = 0;
    let mut seen = Vec::new();
    for (tool, reply, result) in answered {
        let Some(structured) = result.get("structuredContent") else {
            continue;
        };
        judged += 1;
        seen.push(reply);
        let repeated = blocks(result).iter().any(|b| {
            b.get("type").and_then(Value::as_str) == Some("text")
                && b.get("text")
                    .and_then(Value::as_str)
                    .and_then(|t| serde_json::from_str::<Value>(t).ok())
                    .is_some_and(|v| &v == structured)
        });
        if !repeated {
            problems.push(format!(
                "`{}`: no text block holds JSON equal to its `structuredContent`",
                tool_name(tool)
            ));
            evidence.push(reply);
        }
    }
    if judged == 0 {
        return Judgement::skip("not applicable: no tool result carried `structuredContent`");
    }
    if problems.is_empty() {
        return seen.into_iter().fold(
            Judgement::pass(format!(
                "{judged} result(s) with `structuredContent` repeat it as JSON in a text block"
            )),
            Judgement::reply,
        );
    }
    evidence
        .into_iter()
        .fold(Judgement::fail(some(&problems)), Judgement::reply)
}

async fn embedded(s: &Session) -> Judgement {
    let calls = tool_calls(s).await;
    noting_cuts(embedded_of(s, &calls).await, &calls)
}

async fn embedded_of(s: &Session, calls: &ToolCalls) -> Judgement {
    let answered = match results(calls) {
        Ok(answered) => answered,
        Err(skip) => return skip,
    };
    let with: Vec<(&Value, &Reply)> = answered
        .iter()
        .filter(|(_, _, result)| {
            blocks(result)
                .iter()
                .any(|b| b.get("type").and_then(Value::as_str) == Some("resource"))
        })
        .map(|(tool, reply, _)| (*tool, *reply))
        .collect();
    if with.is_empty() {
        return Judgement::skip("not applicable: no tool result embedded a resource");
    }
    let names: Vec<String> = with
        .iter()
        .map(|(t, _)| format!("`{}`", tool_name(t)))
        .collect();
    if s.advertises("resources") {
        return with.iter().fold(
            Judgement::pass(format!(
                "the results of {} embed resources, and the server declares `resources`",
                some(&names)
            )),
            |j, (_, reply)| j.reply(reply),
        );
    }
    with.iter().fold(
        Judgement::fail(format!(
            "the results of {} embed resources, but the server's `initialize` result declares no \
             `resources` capability",
            some(&names)
        ))
        .with(&s.init.exchange),
        |j, (_, reply)| j.reply(reply),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_blocks_are_judged_by_kind() {
        assert_eq!(block_problem(&json!({"type": "text", "text": "hi"})), None);
        assert!(block_problem(&json!({"type": "text"})).is_some());
        assert_eq!(
            block_problem(&json!({"type": "image", "data": "aGk=", "mimeType": "image/png"})),
            None
        );
        assert!(
            block_problem(&json!({"type": "audio", "data": "not base64!", "mimeType": "a/b"}))
                .is_some_and(|p| p.contains("base64"))
        );
        assert_eq!(
            block_problem(&json!({"type": "resource_link", "uri": "a:b", "name": "n"})),
            None
        );
        assert!(block_problem(&json!({"type": "resource_link", "uri": "a:b"})).is_some());
        assert_eq!(
            block_problem(&json!({"type": "resource", "resource": {"uri": "a:b", "text": "t"}})),
            None
        );
        assert!(
            block_problem(
                &json!({"type": "resource", "resource": {"uri": "a:b", "text": "t", "blob": "aGk="}})
            )
            .is_some_and(|p| p.contains("both"))
        );
        assert!(block_problem(&json!({"type": "video"})).is_some());
        assert!(block_problem(&json!("text")).is_some());
    }

    #[test]
    fn structured_content_is_validated_against_the_output_schema() {
        let schema = json!({"type": "object", "required": ["a"]});
        assert_eq!(validate(&schema, &json!({"a": 1})), Ok(None));
        assert!(validate(&schema, &json!({"b": 1})).is_err());
    }
}
