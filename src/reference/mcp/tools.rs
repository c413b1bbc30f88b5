//! The tools: the four the server offers, the extra tool each schema and
//! security fault adds, `tools/call`, and the MRTR round of `ask_name` with
//! its signed `requestState`.

use super::methods::{ICON, complete, object};
use super::protocol::{Out, invalid_params, rpc_error};
use super::validate::Validated;
use super::{Inner, hmac_sha256};
use crate::suite::mcp::wire::code;
use crate::suite::mcp::{err, res, sch, sec, stl};
use axum::http::StatusCode;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

/// The tool list; `connection` is the ordinal of the asking connection, which
/// only the STL-008 fault looks at.
pub(super) fn tools(state: &Inner, connection: Option<usize>) -> Vec<Value> {
    let mut list = vec![
        json!({
            "name": "get_forecast",
            "title": "Weather forecast",
            "description": "Forecast for a region; the region travels in the Mcp-Param-Region header too.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "region": {"type": "string", "description": "Region, e.g. us-west1", "x-mcp-header": "Region"},
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
            "name": "count",
            "title": "Count with progress",
            "description": "Counts to `to`, reporting progress when asked for it.",
            "inputSchema": {
                "type": "object",
                "properties": {"to": {"type": "integer", "minimum": 1, "maximum": 5}},
                "required": ["to"],
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": true}
        }),
        json!({
            "name": "ask_name",
            "title": "Greet by name",
            "description": "Asks the user's name (elicitation through MRTR) and greets them.",
            "inputSchema": {"type": "object", "additionalProperties": false},
            "annotations": {"readOnlyHint": true}
        }),
        json!({
            "name": "set_reminder",
            "title": "Set a reminder",
            "description": "Stores a reminder: the one tool with a side effect.",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"]
            },
            "annotations": {"readOnlyHint": false, "destructiveHint": false}
        }),
    ];
    if state.config.annotated_tools {
        list.push(json!({
            "name": "lookup_zone",
            "title": "Look up a zone",
            "description": "Looks a zone up; each argument travels in an Mcp-Param header too.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "zone": {"type": "string", "x-mcp-header": "Zone"},
                    "limit": {"type": "integer", "x-mcp-header": "Limit"},
                    "exact": {"type": "boolean", "x-mcp-header": "Exact"}
                },
                "required": ["zone"]
            },
            "annotations": {"readOnlyHint": true}
        }));
    }
    // Each schema fault adds a tool that breaks only its rule; none is read-only,
    // so no probe ever calls one.
    let faulty = |name: &str, schema: Value| json!({"name": name, "inputSchema": schema});
    if state.breaks(&sch::HEADER_TOKEN) {
        list.push(faulty(
            "fault_header_token",
            json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region Code"}}}),
        ));
    }
    if state.breaks(&sch::HEADER_CONTROLS) {
        list.push(faulty(
            "fault_header_controls",
            json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region\r\nX-Injected"}}}),
        ));
    }
    if state.breaks(&sch::HEADER_UNIQUE) {
        list.push(faulty(
            "fault_header_unique",
            json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "string", "x-mcp-header": "REGION"}}}),
        ));
    }
    if state.breaks(&sch::HEADER_TYPE) {
        list.push(faulty(
            "fault_header_type",
            json!({"type": "object", "properties": {
            "ratio": {"type": "number", "x-mcp-header": "Ratio"}}}),
        ));
    }
    if state.breaks(&sch::HEADER_REACHABLE) {
        list.push(faulty(
            "fault_header_reachable",
            json!({"type": "object", "properties": {
            "regions": {"type": "array", "items": {"type": "string", "x-mcp-header": "Region"}}}}),
        ));
    }
    if state.breaks(&sch::SCHEMA_VALID) {
        list.push(faulty(
            "fault_schema_valid",
            json!({"type": "object", "properties": {
            "n": {"type": "integer", "minimum": "zero"}}}),
        ));
    }
    if state.breaks(&sch::HEADER_SAFE_NAMES) {
        list.push(faulty("météo du jour", json!({"type": "object"})));
    }
    if state.breaks(&sec::ICONS) {
        let mut tool = faulty("fault_icon", json!({"type": "object"}));
        tool["icons"] = json!([{"src": "javascript:alert(document.domain)"}]);
        list.push(tool);
    }
    if state.breaks(&sec::NETWORK_REF) {
        list.push(faulty(
            "fault_network_ref",
            json!({"type": "object", "properties": {
            "place": {"$ref": "https://schemas.example.com/place.json"}}}),
        ));
    }
    if state.breaks(&sec::SCHEMA_BOUNDS) {
        // 48 nested `items`: past protocheck's bound of 32, yet inside the JSON
        // nesting limit (128) of common parsers, so the list still reads.
        let mut schema = json!({"type": "string"});
        for _ in 0..48 {
            schema = json!({"type": "array", "items": schema});
        }
        list.push(faulty(
            "fault_deep_schema",
            json!({"type": "object", "properties": {"nested": schema}}),
        ));
    }
    if state.breaks(&stl::LIST_PER_CONNECTION)
        && let Some(n) = connection
    {
        list.push(faulty(&format!("scratch_{n}"), json!({"type": "object"})));
    }
    list
}

pub(super) fn call_tool(state: &Inner, req: &Validated<'_>) -> Out {
    let id = req.id;
    let name = req
        .params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let args = req
        .params
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let text = |t: String| json!([{"type": "text", "text": t}]);
    match name {
        "get_forecast" => {
            let Some(region) = args.get("region").and_then(Value::as_str) else {
                return invalid_params(id, "get_forecast needs a string `region`", None);
            };
            let summary = format!("Forecast for {region}: mild and dry");
            complete(
                state,
                id,
                "tools/call",
                object(json!({
                    "content": text(summary.clone()),
                    "structuredContent": {"region": region, "summary": summary},
                    "isError": false
                })),
            )
        }
        "count" => {
            let to = args.get("to").and_then(Value::as_i64).unwrap_or(0);
            if !(1..=5).contains(&to) {
                return invalid_params(id, "count needs an integer `to` from 1 to 5", None);
            }
            let result = complete(
                state,
                id,
                "tools/call",
                object(json!({
                    "content": text(format!("Counted to {to}")), "isError": false
                })),
            );
            let token = req
                .params
                .get("_meta")
                .and_then(|m| m.get("progressToken"))
                .cloned();
            match (token, result) {
                (Some(token), Out::Json { body, .. }) => {
                    let mut frames: Vec<Value> = (1..=to)
                        .map(|i| {
                            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                            "params": {"progressToken": token, "progress": i, "total": to}})
                        })
                        .collect();
                    if state.breaks(&res::NO_SERVER_REQUESTS) {
                        frames.insert(0, json!({"jsonrpc": "2.0", "id": "server-1", "method": "roots/list", "params": {}}));
                    }
                    frames.push(body);
                    Out::Stream(frames)
                }
                (_, out) => out,
            }
        }
        "ask_name" => ask_name(state, req),
        "set_reminder" => {
            let Some(what) = args.get("text").and_then(Value::as_str) else {
                return invalid_params(id, "set_reminder needs a string `text`", None);
            };
            state.config.side_effects.fetch_add(1, Ordering::SeqCst);
            complete(
                state,
                id,
                "tools/call",
                object(json!({
                    "content": text(format!("Reminder set: {what}")), "isError": false
                })),
            )
        }
        other if tools(state, None).iter().any(|t| t["name"] == other) => complete(
            state,
            id,
            "tools/call",
            object(json!({"content": text("ok".into()), "isError": false})),
        ),
        other => {
            let code = if state.breaks(&err::RESERVED_RANGE) {
                -32050
            } else {
                code::INVALID_PARAMS
            };
            rpc_error(
                StatusCode::OK,
                id,
                code,
                format!("Unknown tool: {other}"),
                None,
            )
        }
    }
}

/// `requestState` is attacker-controlled (mrtr page): it is a nonce and an HMAC.
fn sign_state(state: &Inner, payload: &str) -> String {
    format!(
        "{payload}.{}",
        hex::encode(hmac_sha256(&state.state_key, payload.as_bytes()))
    )
}

fn verify_state(state: &Inner, token: &str) -> bool {
    token.rsplit_once('.').is_some_and(|(payload, mac)| {
        hex::decode(mac).is_ok_and(|m| m == hmac_sha256(&state.state_key, payload.as_bytes()))
    })
}

fn ask_name(state: &Inner, req: &Validated<'_>) -> Out {
    let id = req.id;
    if req.capabilities.get("elicitation").is_none() {
        // basic/index#meta: never rely on a capability the request did not declare.
        let data = if state.breaks(&err::MISSING_CAPABILITY) {
            json!({"requiredCapabilities": ["elicitation"]})
        } else {
            json!({"requiredCapabilities": {"elicitation": {}}})
        };
        return rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            code::MISSING_CLIENT_CAPABILITY,
            "Missing required client capability: elicitation",
            Some(data),
        );
    }
    let answered = req.params.get("inputResponses").and_then(|r| r.get("name"));
    if let Some(answer) = answered {
        let Some(token) = req.params.get("requestState").and_then(Value::as_str) else {
            return invalid_params(id, "requestState is required with inputResponses", None);
        };
        if !verify_state(state, token) {
            return invalid_params(id, "requestState failed its integrity check", None);
        }
        let who = match answer.get("action").and_then(Value::as_str) {
            Some("accept") => answer
                .pointer("/content/name")
                .and_then(Value::as_str)
                .unwrap_or("stranger")
                .to_owned(),
            _ => "stranger".to_owned(),
        };
        return complete(
            state,
            id,
            "tools/call",
            object(json!({
                "content": [{"type": "text", "text": format!("Hello, {who}!")}], "isError": false
            })),
        );
    }
    if state.breaks(&err::NO_32042) {
        return rpc_error(
            StatusCode::OK,
            id,
            code::RETIRED_URL_ELICITATION,
            "URL elicitation required",
            None,
        );
    }
    let nonce = format!("ask_name:{:016x}", rand::random::<u64>());
    complete(
        state,
        id,
        "tools/call",
        object(json!({
            "resultType": "input_required",
            "inputRequests": {"name": {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "What is your name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
                }
            }},
            "requestState": sign_state(state, &nonce)
        })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::mcp::McpReferenceConfig;
    use std::collections::BTreeSet;

    #[test]
    fn request_state_is_integrity_protected() {
        let state = Inner::new(McpReferenceConfig::new(BTreeSet::new()).expect("config"));
        let token = sign_state(&state, "ask_name:1");
        assert!(verify_state(&state, &token));
        assert!(!verify_state(
            &state,
            &token.replace("ask_name:1", "ask_name:2")
        ));
        assert!(!verify_state(&state, "garbage"));
    }
}
