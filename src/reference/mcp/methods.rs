//! The 2026-07-28 methods: `server/discover`, the resources, the prompt, its
//! completion and `subscriptions/listen`, with the caching hints and the
//! `resultType` and `serverInfo` every result carries. The tools are in
//! [`super::tools`].

use super::protocol::{Out, invalid_params, method_not_found, rpc_error};
use super::tools::{call_tool, tools};
use super::validate::Validated;
use super::{Allowed, Inner, ReferenceEra, Variant};
use crate::suite::mcp::wire::{META_SERVER_INFO, META_SUBSCRIPTION_ID, code};
use crate::suite::mcp::{cac, dep, dsc, err, res};
use axum::http::StatusCode;
use serde_json::{Map, Value, json};
use std::net::SocketAddr;
use std::sync::atomic::Ordering;

/// The server's icon: a `data:` URI, so it is same-origin by construction
/// (basic/index#icons).
pub(crate) const ICON: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

pub(crate) fn server_info() -> Value {
    json!({
        "name": "protocheck-reference-mcp",
        "version": env!("CARGO_PKG_VERSION"),
        "icons": [{"src": ICON, "mimeType": "image/png", "sizes": ["1x1"]}]
    })
}

/// Wraps a result: `resultType` and `_meta` serverInfo on every result.
pub(super) fn complete(
    state: &Inner,
    id: &Value,
    method: &str,
    mut result: Map<String, Value>,
) -> Out {
    result
        .entry("resultType")
        .or_insert_with(|| json!("complete"));
    if state.breaks(&res::RESULT_TYPE) && method == "prompts/get" {
        result.remove("resultType");
    }
    // `input_required` is for tools/call, resources/read and prompts/get only.
    if state.breaks(&res::RESULT_TYPE_KNOWN) && method == "completion/complete" {
        result.insert("resultType".into(), json!("input_required"));
        result.insert("requestState".into(), json!("protocheck-reference"));
    }
    if state.has(Variant::ExtensionResultType) && method == "completion/complete" {
        result.insert("resultType".into(), json!("deferred"));
    }
    if !(state.breaks(&dsc::SERVER_INFO) && method == "tools/list") {
        let meta = result.entry("_meta").or_insert_with(|| json!({}));
        if let Some(m) = meta.as_object_mut() {
            m.insert(META_SERVER_INFO.into(), server_info());
        }
    }
    Out::json(
        StatusCode::OK,
        json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
}

pub(super) fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Caching hints (server/utilities/caching).
fn cached(mut result: Map<String, Value>, ttl_ms: i64, scope: &str) -> Map<String, Value> {
    result.insert("ttlMs".into(), json!(ttl_ms));
    result.insert("cacheScope".into(), json!(scope));
    result
}

/// Methods behind a capability the tools-only configuration does not advertise.
const NOT_TOOLS: &[&str] = &[
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
];

pub(super) fn dispatch(state: &Inner, peer: Option<SocketAddr>, req: Validated<'_>) -> Out {
    let id = req.id;
    if state.config.tools_only && NOT_TOOLS.contains(&req.method) {
        // A method behind an unadvertised capability is an unknown method.
        return method_not_found(state, id, req.method);
    }
    match req.method {
        "server/discover" => discover(state, id),
        "tools/list" => {
            let connection = state.connection(peer);
            let mut list = tools(state, connection.as_ref().map(|c| c.ordinal));
            // The fault of `keeping_version_per_connection`: a connection
            // that declared an older version is served that version's tools
            // (all but the last listed).
            if state.config.version_per_connection
                && connection.is_some_and(|c| c.other_version.is_some())
            {
                list.pop();
            }
            if state.breaks(&res::DETERMINISTIC_ORDER) && !list.is_empty() {
                let n = state.list_calls.fetch_add(1, Ordering::SeqCst) % list.len();
                list.rotate_left(n);
            }
            let ttl = if state.breaks(&cac::TTL_VALUE) {
                json!(-1)
            } else if state.allows(Allowed::IntegralFloatTtl) {
                json!(300_000.0)
            } else {
                json!(300_000)
            };
            let mut result = cached(object(json!({"tools": list})), 0, "public");
            result.insert("ttlMs".into(), ttl);
            complete(state, id, "tools/list", result)
        }
        "tools/call" => call_tool(state, &req),
        "resources/list" => {
            let list: Vec<Value> = RESOURCES.iter().map(|r| r.listing()).collect();
            let scope = if state.breaks(&cac::SCOPE_VALUE) {
                "shared"
            } else {
                "public"
            };
            complete(
                state,
                id,
                "resources/list",
                cached(object(json!({"resources": list})), 60_000, scope),
            )
        }
        "resources/templates/list" => {
            let mut result = cached(
                object(json!({"resourceTemplates": [{
                    "name": "docs", "title": "Reference documents",
                    "uriTemplate": "ref://docs/{name}", "mimeType": "text/markdown"
                }, {
                    "name": "topics", "title": "Notes on a topic of the specification",
                    "uriTemplate": TOPICS_TEMPLATE, "mimeType": "text/plain"
                }]})),
                60_000,
                "public",
            );
            if state.breaks(&cac::TTL_PRESENT) {
                result.remove("ttlMs");
            }
            let out = complete(state, id, "resources/templates/list", result);
            match out {
                Out::Json {
                    status,
                    body,
                    session,
                    ..
                } if state.breaks(&res::CONTENT_TYPE) => Out::Json {
                    status,
                    body,
                    content_type: "text/plain; charset=utf-8",
                    session,
                },
                other => other,
            }
        }
        "resources/read" => read_resource(state, &req),
        "prompts/list" => {
            let mut result = cached(
                object(json!({"prompts": [{
                    "name": "summarize", "title": "Summarize a topic",
                    "description": "Summarize what the MCP specification says about a topic",
                    "arguments": [{"name": "topic", "description": "The topic", "required": true}]
                }]})),
                60_000,
                "public",
            );
            if state.breaks(&cac::SCOPE_PRESENT) {
                result.remove("cacheScope");
            }
            complete(state, id, "prompts/list", result)
        }
        "prompts/get" => get_prompt(state, &req),
        "completion/complete" => completion(state, &req),
        "subscriptions/listen" => listen(state, &req),
        "ping" if state.breaks(&dep::NO_PING) => complete(state, id, "ping", Map::new()),
        "logging/setLevel" if state.breaks(&dep::NO_SET_LEVEL) => {
            complete(state, id, "logging/setLevel", Map::new())
        }
        "resources/subscribe" | "resources/unsubscribe" if state.breaks(&dep::NO_SUBSCRIBE) => {
            complete(state, id, req.method, Map::new())
        }
        other => method_not_found(state, id, other),
    }
}

fn discover(state: &Inner, id: &Value) -> Out {
    if state.breaks(&dsc::DISCOVER) {
        return method_not_found(state, id, "server/discover");
    }
    let extension = if state.breaks(&dsc::EXTENSION_IDS) {
        "dev.mcp/reference"
    } else {
        "dev.protocheck/reference"
    };
    let mut capabilities = json!({
        "tools": {"listChanged": true},
        "resources": {"subscribe": true, "listChanged": true},
        "prompts": {"listChanged": true},
        "completions": {},
        "extensions": {extension: {}}
    });
    // A dual-era server's fault shows only to its legacy clients (in the
    // `initialize` result, see `legacy`): `server/discover` stays clean.
    if state.breaks(&dep::NO_DEPRECATED_CAPABILITIES) && state.config.era != ReferenceEra::DualEra {
        capabilities["logging"] = json!({});
    }
    if state.config.tools_only {
        capabilities = json!({"tools": {}});
    }
    let mut result = cached(
        object(json!({
            "capabilities": capabilities,
            "instructions": "protocheck's MCP reference server: a demo target for conformance checks.",
        })),
        60_000,
        "public",
    );
    if !state.breaks(&dsc::VERSIONS) {
        result.insert(
            "supportedVersions".into(),
            json!(state.advertised_versions()),
        );
    }
    complete(state, id, "server/discover", result)
}

struct Resource {
    uri: &'static str,
    name: &'static str,
    mime: &'static str,
    /// Per caller: private unless the CAC-005 fault marks it public.
    personal: bool,
}

/// The template whose expansions no list names.
const TOPICS_TEMPLATE: &str = "ref://topics/{topic}";
/// The values of its variable `topic`.
const TOPICS: &[&str] = &["caching", "headers"];

const RESOURCES: &[Resource] = &[
    Resource {
        uri: "ref://docs/readme",
        name: "readme",
        mime: "text/markdown",
        personal: false,
    },
    Resource {
        uri: "ref://me/greeting",
        name: "greeting",
        mime: "text/plain",
        personal: true,
    },
    Resource {
        uri: "ref://docs/logo",
        name: "logo",
        mime: "image/png",
        personal: false,
    },
    Resource {
        uri: "ref://docs/changelog",
        name: "changelog",
        mime: "text/markdown",
        personal: false,
    },
    Resource {
        uri: "ref://docs/license",
        name: "license",
        mime: "text/plain",
        personal: false,
    },
    // The sixth, whose read loses `cacheScope` with
    // `Variant::SixthReadWithoutScope`.
    Resource {
        uri: "ref://docs/faq",
        name: "faq",
        mime: "text/markdown",
        personal: false,
    },
];

/// A 1×1 transparent PNG.
const LOGO_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

impl Resource {
    fn listing(&self) -> Value {
        json!({"uri": self.uri, "name": self.name, "mimeType": self.mime})
    }
}

fn read_resource(state: &Inner, req: &Validated<'_>) -> Out {
    let id = req.id;
    let Some(uri) = req.params.get("uri").and_then(Value::as_str) else {
        return invalid_params(id, "resources/read needs a string `uri`", None);
    };
    if let Some(topic) = uri
        .strip_prefix("ref://topics/")
        .filter(|t| TOPICS.contains(t))
    {
        let mut result = cached(
            object(json!({"contents": [{"uri": uri, "mimeType": "text/plain",
                "text": format!("What the MCP specification says about {topic}.")}]})),
            60_000,
            "public",
        );
        if state.has(Variant::TemplateReadWithoutTtl) {
            result.remove("ttlMs");
        }
        return complete(state, id, "resources/read", result);
    }
    let Some(resource) = RESOURCES.iter().find(|r| r.uri == uri) else {
        // resources#error-handling: -32602 since 2026-07-28 (was -32002).
        let code = if state.breaks(&err::RESOURCE_NOT_FOUND) {
            code::RETIRED_RESOURCE_NOT_FOUND
        } else {
            code::INVALID_PARAMS
        };
        return rpc_error(
            StatusCode::OK,
            id,
            code,
            format!("Resource not found: {uri}"),
            Some(json!({"uri": uri})),
        );
    };
    let contents = match resource.name {
        "logo" => json!([{"uri": uri, "mimeType": resource.mime, "blob": LOGO_PNG}]),
        "greeting" => {
            let who = req.client_name.as_deref().unwrap_or("anonymous");
            json!([{"uri": uri, "mimeType": resource.mime, "text": format!("Hello, {who}!")}])
        }
        _ => json!([{"uri": uri, "mimeType": resource.mime,
            "text": "# protocheck reference server\n\nA demo MCP 2026-07-28 server."}]),
    };
    let (ttl, scope) = if resource.personal && !state.breaks(&cac::PUBLIC_NOT_PERSONAL) {
        (0, "private")
    } else {
        (60_000, "public")
    };
    let mut result = cached(object(json!({"contents": contents})), ttl, scope);
    if state.has(Variant::SixthReadWithoutScope) && resource.name == "faq" {
        result.remove("cacheScope");
    }
    complete(state, id, "resources/read", result)
}

fn get_prompt(state: &Inner, req: &Validated<'_>) -> Out {
    let id = req.id;
    let name = req
        .params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name != "summarize" {
        let code = if state.breaks(&err::LEGACY_RANGE) {
            -32000
        } else {
            code::INVALID_PARAMS
        };
        return rpc_error(
            StatusCode::OK,
            id,
            code,
            format!("Unknown prompt: {name}"),
            None,
        );
    }
    let Some(topic) = req
        .params
        .get("arguments")
        .and_then(|a| a.get("topic"))
        .and_then(Value::as_str)
    else {
        return invalid_params(id, "prompt `summarize` needs the argument `topic`", None);
    };
    complete(
        state,
        id,
        "prompts/get",
        object(json!({
            "description": "Summarize a topic",
            "messages": [{"role": "user", "content": {"type": "text",
                "text": format!("Summarize what the MCP specification says about {topic}.")}}]
        })),
    )
}

fn completion(state: &Inner, req: &Validated<'_>) -> Out {
    let id = req.id;
    let reference = req.params.get("ref").cloned().unwrap_or(Value::Null);
    let argument = req.params.get("argument").cloned().unwrap_or(Value::Null);
    let prefix = argument
        .get("value")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let candidates: &[&str] = match (
        reference.get("type").and_then(Value::as_str),
        argument.get("name").and_then(Value::as_str),
    ) {
        (Some("ref/prompt"), Some("topic")) if reference["name"] == "summarize" => {
            &["caching", "headers", "statelessness", "subscriptions"]
        }
        (Some("ref/resource"), Some("name")) if reference["uri"] == "ref://docs/{name}" => {
            &["logo", "readme"]
        }
        (Some("ref/resource"), Some("topic")) if reference["uri"] == TOPICS_TEMPLATE => TOPICS,
        _ => {
            return invalid_params(
                id,
                "nothing to complete for that reference and argument",
                None,
            );
        }
    };
    let values: Vec<&str> = candidates
        .iter()
        .copied()
        .filter(|c| c.starts_with(prefix))
        .collect();
    complete(
        state,
        id,
        "completion/complete",
        object(json!({
            "completion": {"values": values, "total": values.len(), "hasMore": false}
        })),
    )
}

fn listen(state: &Inner, req: &Validated<'_>) -> Out {
    let id = req.id;
    let Some(filter) = req.params.get("notifications").and_then(Value::as_object) else {
        return invalid_params(
            id,
            "subscriptions/listen needs a `notifications` filter",
            None,
        );
    };
    // The acknowledgement names the subset honoured (patterns/subscriptions).
    let mut honoured = Map::new();
    for key in [
        "toolsListChanged",
        "promptsListChanged",
        "resourcesListChanged",
    ] {
        if filter.get(key) == Some(&json!(true)) {
            honoured.insert(key.into(), json!(true));
        }
    }
    if let Some(uris) = filter
        .get("resourceSubscriptions")
        .and_then(Value::as_array)
    {
        let known: Vec<&Value> = uris
            .iter()
            .filter(|u| RESOURCES.iter().any(|r| Some(r.uri) == u.as_str()))
            .collect();
        honoured.insert("resourceSubscriptions".into(), json!(known));
    }
    let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": honoured, "_meta": {META_SUBSCRIPTION_ID: id}}});
    let last = match complete(
        state,
        id,
        "subscriptions/listen",
        object(json!({"_meta": {META_SUBSCRIPTION_ID: id}})),
    ) {
        Out::Json { body, .. } => body,
        _ => Value::Null,
    };
    Out::Listen { ack, last }
}
