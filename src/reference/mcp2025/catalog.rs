//! What the 2025-11-25 reference server offers: its tools (with what
//! `tools/call` does for each), resources, resource template, prompt and
//! argument completions. The answers are plain JSON-RPC results or errors;
//! the session, progress and cancellation around them live in `engine`.

use super::engine::{Call, Reply, error, invalid_params};
use super::{Mcp25ReferenceConfig, faults};
use crate::reference::mcp::ICON;
use serde_json::{Value, json};
use std::time::Duration;

/// Tools per `tools/list` page: small, so that a checker walks the cursor.
pub(super) const TOOLS_PAGE: usize = 2;
/// The 2025-11-25 code for an unknown resource (server/resources, "Error Handling").
pub(super) const RESOURCE_NOT_FOUND: i64 = -32002;
/// Pause between the progress notifications of `count`.
const COUNT_STEP: Duration = Duration::from_millis(20);
/// Pause between the steps of `slow`, each a point where it notices a cancellation.
const SLOW_STEP: Duration = Duration::from_millis(50);
/// `slow` reports progress (given a token) every this many steps.
const SLOW_PROGRESS_EVERY: u64 = 10;
/// Longest `slow` run, in steps.
const SLOW_MAX_STEPS: u64 = 200;

/// Every tool the server lists, in `tools/list` order.
pub(super) fn tools(config: &Mcp25ReferenceConfig) -> Vec<Value> {
    let mut tools = vec![
        json!({
            "name": "get_forecast",
            "title": "Weather forecast",
            "description": "Forecast for a region, as text and as structured content.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "region": {"type": "string", "description": "Region, e.g. us-west1"},
                    "days": {"type": "integer", "minimum": 1, "maximum": 7}
                },
                "required": ["region"],
                "additionalProperties": false
            },
            "outputSchema": {
                "type": "object",
                "properties": {"region": {"type": "string"}, "summary": {"type": "string"}},
                "required": ["region", "summary"]
            },
            "icons": [{"src": ICON, "mimeType": "image/png"}],
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        }),
        json!({
            "name": "divide",
            "title": "Divide two numbers",
            "description": "Divides `a` by `b`; dividing by zero is a tool error (isError).",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"]
            },
            "annotations": {"readOnlyHint": true, "idempotentHint": true}
        }),
        json!({
            "name": "count",
            "title": "Count with progress",
            "description": "Counts to `to`, sending progress notifications when given a progressToken.",
            "inputSchema": {
                "type": "object",
                "properties": {"to": {"type": "integer", "minimum": 1, "maximum": 5}},
                "required": ["to"]
            },
            "annotations": {"readOnlyHint": true}
        }),
        json!({
            "name": "slow",
            "title": "Wait, then answer",
            "description": "Waits `ms` milliseconds (default 2000, at most 10000) and answers, \
                            reporting progress when given a progressToken; stops without \
                            answering when cancelled.",
            "inputSchema": {
                "type": "object",
                "properties": {"ms": {"type": "integer", "minimum": 0, "maximum": 10000}}
            },
            "annotations": {"readOnlyHint": true}
        }),
    ];
    if config.tasks {
        tools.push(super::tasks::tool());
    }
    if config.breaks(faults::TOOL_TITLE) {
        tools[1]["title"] = json!(7);
    }
    if config.breaks(faults::INPUT_SCHEMA)
        && let Some(schema) = tools[3]["inputSchema"].as_object_mut()
    {
        schema.remove("type");
    }
    if config.breaks(faults::OUTPUT_SCHEMA)
        && let Some(schema) = tools[0]["outputSchema"].as_object_mut()
    {
        schema.remove("type");
    }
    if config.breaks(faults::TOOL_NAME_CHARACTERS) {
        // Not read-only, so that a careful checker never calls it.
        tools.push(
            json!({"name": "météo du jour", "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": false}}),
        );
    }
    tools
}

fn text(t: impl Into<String>) -> Value {
    json!([{"type": "text", "text": t.into()}])
}

/// A tool execution error: a result with `isError`, not a protocol error
/// (server/tools, "Error Handling": input validation errors are reported so).
fn tool_error(message: impl Into<String>) -> Value {
    json!({"content": text(message), "isError": true})
}

/// A tool's bad input: a tool error, or -32602 with MCP25-TOL-011's fault.
fn bad_input(call: &Call<'_>, message: &str) -> Result<Value, Reply> {
    if call.breaks(faults::TOOL_IS_ERROR) {
        return Err(invalid_params(call.id, message));
    }
    Ok(tool_error(message))
}

fn success(call: &Call<'_>, mut result: Value) -> Value {
    if call.breaks(faults::IS_ERROR_TYPE) {
        result["isError"] = json!("false");
    }
    result
}

/// `tools/call`; `None` when the call was cancelled (no answer is sent).
pub(super) async fn call_tool(call: &Call<'_>) -> Option<Reply> {
    let id = call.id;
    let name = call.params.get("name").and_then(Value::as_str);
    let args = call.params.get("arguments").cloned().unwrap_or(json!({}));
    let Some(name) = name else {
        return Some(invalid_params(id, "tools/call needs a string `name`"));
    };
    let result = match name {
        "get_forecast" => match args.get("region").and_then(Value::as_str) {
            Some(region) => {
                let summary = format!("Forecast for {region}: mild and dry");
                let mut structured = json!({"region": region, "summary": summary});
                if call.breaks(faults::STRUCTURED_CONTENT) {
                    structured = json!({"region": region});
                }
                // The structured result also travels as text (server/tools,
                // "Structured Content"), unless MCP25-TOL-013's fault is on.
                let shown = if call.breaks(faults::STRUCTURED_TEXT) {
                    summary
                } else {
                    structured.to_string()
                };
                // An embedded resource too, and a `_meta` key of protocheck's own.
                let embedded = json!({"type": "resource", "resource": {"uri": "ref://docs/readme",
                    "mimeType": "text/markdown", "text": "# protocheck reference server"}});
                let key = if call.breaks(faults::META_KEY) {
                    "dev..protocheck/region code"
                } else {
                    "dev.protocheck/region"
                };
                Ok(success(
                    call,
                    json!({"content": [text(shown)[0].clone(), embedded],
                        "structuredContent": structured, "isError": false,
                        "_meta": {key: region}}),
                ))
            }
            None => bad_input(call, "get_forecast needs a string `region`"),
        },
        "divide" => {
            let (a, b) = (
                args.get("a").and_then(Value::as_f64),
                args.get("b").and_then(Value::as_f64),
            );
            match (a, b) {
                (Some(_), Some(0.0)) => Ok(tool_error("cannot divide by zero")),
                (Some(a), Some(b)) => Ok(success(
                    call,
                    json!({"content": text(format!("{}", a / b)), "isError": false}),
                )),
                _ => bad_input(call, "divide needs numbers `a` and `b`"),
            }
        }
        "count" => return count(call, &args).await,
        "slow" => {
            let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(2000);
            let steps = (ms / SLOW_STEP.as_millis() as u64).min(SLOW_MAX_STEPS);
            let token = call.params.pointer("/_meta/progressToken").cloned();
            // MCP25-UTL-003's fault: a cancellation only stops the progress
            // notifications; the call runs to its end and is answered.
            let heed = !call.breaks(faults::CANCELLED_NO_RESPONSE);
            let mut heard = false;
            for step in 0..steps {
                if let Some(token) = &token
                    && !heard
                    && step % SLOW_PROGRESS_EVERY == 0
                {
                    call.notify(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": step * SLOW_STEP.as_millis() as u64,
                                   "total": ms, "message": "waiting"}}));
                }
                tokio::select! {
                    _ = call.cancel.cancelled(), if !heard => {
                        if heed {
                            return None;
                        }
                        heard = true;
                    }
                    _ = tokio::time::sleep(SLOW_STEP) => {}
                }
            }
            Ok(success(
                call,
                json!({"content": text(format!("waited {ms} ms")), "isError": false}),
            ))
        }
        other if call.breaks(faults::UNKNOWN_TOOL) => {
            Ok(tool_error(format!("Unknown tool: {other}")))
        }
        other => Err(invalid_params(id, format!("Unknown tool: {other}"))),
    };
    Some(match result {
        Ok(result) => Reply::result(id, result),
        Err(reply) => reply,
    })
}

/// Progress notifications for `token` from `first` to `last`, one every
/// [`COUNT_STEP`] after the first (and, with MCP25-UTL-006's fault, one more
/// after the answer).
pub(super) async fn progress(call: &Call<'_>, token: &Value, first: i64, last: i64, what: &str) {
    for i in first..=last {
        if i > 0 {
            tokio::time::sleep(COUNT_STEP).await;
        }
        let progress = if call.breaks(faults::PROGRESS_INCREASES) {
            first + last - i
        } else {
            i
        };
        let token = if call.breaks(faults::PROGRESS_TOKEN) {
            json!("not-your-token")
        } else {
            token.clone()
        };
        call.notify(json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token, "progress": progress, "total": last,
                       "message": format!("{what} {i} of {last}")}}));
    }
    if call.breaks(faults::PROGRESS_AFTER_RESPONSE) {
        let late = json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token, "progress": last + 1, "total": last + 1}});
        let sink = call.sink.clone();
        tokio::spawn(async move {
            tokio::time::sleep(COUNT_STEP).await;
            let _ = sink.send(late);
        });
    }
}

async fn count(call: &Call<'_>, args: &Value) -> Option<Reply> {
    let id = call.id;
    let to = args.get("to").and_then(Value::as_i64).unwrap_or(0);
    if !(1..=5).contains(&to) {
        return Some(
            match bad_input(call, "count needs an integer `to` from 1 to 5") {
                Ok(result) => Reply::result(id, result),
                Err(reply) => reply,
            },
        );
    }
    let token = call
        .params
        .get("_meta")
        .and_then(|m| m.get("progressToken"))
        .cloned();
    if let Some(token) = token {
        // Progress 0 as it starts, then one per step: even `to: 1` gives
        // two notifications, so that their order can be judged.
        progress(call, &token, 0, to, "counted").await;
    }
    Some(Reply::result(
        id,
        success(
            call,
            json!({"content": text(format!("Counted to {to}")), "isError": false}),
        ),
    ))
}

/// One listed resource.
pub(super) struct Resource {
    pub(super) uri: &'static str,
    name: &'static str,
    mime: &'static str,
}

pub(super) const RESOURCES: &[Resource] = &[
    Resource {
        uri: "ref://docs/readme",
        name: "readme",
        mime: "text/markdown",
    },
    Resource {
        uri: "ref://docs/logo",
        name: "logo",
        mime: "image/png",
    },
];

/// A 1×1 transparent PNG.
const LOGO_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/// The URI a resource is listed and read by (MCP25-RES-003's fault puts a
/// space in one).
fn uri_of(config: &Mcp25ReferenceConfig, resource: &Resource) -> String {
    if config.breaks(faults::RESOURCE_URI) && resource.name == "readme" {
        return "ref://docs/read me".to_owned();
    }
    resource.uri.to_owned()
}

pub(super) fn resources(config: &Mcp25ReferenceConfig) -> Value {
    let list: Vec<Value> = RESOURCES
        .iter()
        .map(|r| {
            let mut listed = json!({"uri": uri_of(config, r), "name": r.name, "mimeType": r.mime});
            if config.breaks(faults::RESOURCE_NAME)
                && r.name == "logo"
                && let Some(l) = listed.as_object_mut()
            {
                l.remove("name");
            }
            listed
        })
        .collect();
    json!({"resources": list})
}

pub(super) fn resource_templates(config: &Mcp25ReferenceConfig) -> Value {
    let mut template = json!({
        "name": "docs", "title": "Reference documents",
        "uriTemplate": "ref://docs/{name}", "mimeType": "text/markdown"
    });
    if config.breaks(faults::TEMPLATE_NAME)
        && let Some(t) = template.as_object_mut()
    {
        t.remove("name");
    }
    json!({"resourceTemplates": [template]})
}

fn find_resource<'r>(config: &Mcp25ReferenceConfig, uri: &str) -> Option<&'r Resource> {
    RESOURCES.iter().find(|r| uri_of(config, r) == uri)
}

pub(super) fn known_resource(config: &Mcp25ReferenceConfig, uri: &str) -> bool {
    find_resource(config, uri).is_some()
}

pub(super) fn read_resource(call: &Call<'_>) -> Reply {
    let id = call.id;
    let Some(uri) = call.params.get("uri").and_then(Value::as_str) else {
        return invalid_params(id, "resources/read needs a string `uri`");
    };
    let Some(resource) = find_resource(call.config, uri) else {
        let code = if call.breaks(faults::RESOURCE_NOT_FOUND) {
            -32603
        } else {
            RESOURCE_NOT_FOUND
        };
        return error(
            id,
            code,
            format!("Resource not found: {uri}"),
            Some(json!({"uri": uri})),
        );
    };
    let blob = if call.breaks(faults::BLOB_BASE64) {
        "not base64 at all!"
    } else {
        LOGO_PNG
    };
    let mut content = if resource.name == "logo" {
        json!({"uri": uri, "mimeType": resource.mime, "blob": blob})
    } else {
        json!({"uri": uri, "mimeType": resource.mime,
               "text": "# protocheck reference server\n\nA demo MCP 2025-11-25 server."})
    };
    if call.breaks(faults::RESOURCE_CONTENTS) {
        content["blob"] = json!(LOGO_PNG);
        content["text"] = json!("both text and blob");
    }
    Reply::result(id, json!({"contents": [content]}))
}

pub(super) fn prompts(config: &Mcp25ReferenceConfig) -> Value {
    let mut arguments =
        vec![json!({"name": "topic", "description": "The topic", "required": true})];
    if config.breaks(faults::PROMPT_ARGUMENTS) {
        // An optional argument of its own, so that `topic` stays required.
        arguments.push(json!({"name": "tone", "description": "The tone", "required": "no"}));
    }
    json!({"prompts": [{
        "name": "summarize", "title": "Summarize a topic",
        "description": "Summarize what the MCP specification says about a topic",
        "arguments": arguments
    }]})
}

pub(super) fn get_prompt(call: &Call<'_>) -> Reply {
    let id = call.id;
    let name = call.params.get("name").and_then(Value::as_str);
    if name != Some("summarize") {
        let code = if call.breaks(faults::UNKNOWN_PROMPT) {
            -32603
        } else {
            -32602
        };
        return error(
            id,
            code,
            format!("Unknown prompt: {}", name.unwrap_or("(none)")),
            None,
        );
    }
    let topic = call
        .params
        .get("arguments")
        .and_then(|a| a.get("topic"))
        .and_then(Value::as_str);
    let topic = match topic {
        Some(topic) => topic,
        None if call.breaks(faults::PROMPT_ARGUMENT) => "(nothing)",
        None => return invalid_params(id, "prompt `summarize` needs the argument `topic`"),
    };
    let role = if call.breaks(faults::PROMPT_ROLE) {
        "system"
    } else {
        "user"
    };
    let image_type = if call.breaks(faults::PROMPT_IMAGE) {
        "text/plain"
    } else {
        "image/png"
    };
    let mut embedded = json!({"uri": "ref://docs/readme", "mimeType": "text/markdown",
        "text": "# protocheck reference server"});
    if call.breaks(faults::PROMPT_RESOURCE)
        && let Some(e) = embedded.as_object_mut()
    {
        e.remove("text");
    }
    // One block of each kind a prompt message can carry that a checker
    // validates: text, an image, an embedded resource.
    Reply::result(
        id,
        json!({
            "description": "Summarize a topic",
            "messages": [
                {"role": role, "content": {"type": "text",
                    "text": format!("Summarize what the MCP specification says about {topic}.")}},
                {"role": "user", "content": {"type": "image", "data": LOGO_PNG, "mimeType": image_type}},
                {"role": "user", "content": {"type": "resource", "resource": embedded}}
            ]
        }),
    )
}

pub(super) fn complete(call: &Call<'_>) -> Reply {
    let id = call.id;
    let reference = call.params.get("ref").cloned().unwrap_or(Value::Null);
    let argument = call.params.get("argument").cloned().unwrap_or(Value::Null);
    let prefix = argument
        .get("value")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let candidates: &[&str] = match (
        reference.get("type").and_then(Value::as_str),
        argument.get("name").and_then(Value::as_str),
    ) {
        (Some("ref/prompt"), Some("topic")) if reference["name"] == "summarize" => {
            &["caching", "lifecycle", "sessions", "transports"]
        }
        (Some("ref/resource"), Some("name")) if reference["uri"] == "ref://docs/{name}" => {
            &["logo", "readme"]
        }
        _ if call.breaks(faults::COMPLETION_UNKNOWN_PROMPT) => &[],
        _ => return invalid_params(id, "nothing to complete for that reference and argument"),
    };
    let mut values: Vec<String> = candidates
        .iter()
        .filter(|c| c.starts_with(prefix))
        .map(|c| (*c).to_owned())
        .collect();
    if call.breaks(faults::COMPLETION_LIMIT) {
        values = (0..101).map(|i| format!("{prefix}{i}")).collect();
    }
    let total = values.len();
    Reply::result(
        id,
        json!({"completion": {"values": values, "total": total, "hasMore": false}}),
    )
}
