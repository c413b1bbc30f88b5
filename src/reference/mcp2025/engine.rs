//! The transport-free core of the 2025-11-25 reference server: how a
//! message is read as a request, a notification or a response (JSON-RPC
//! framing), the session state the lifecycle needs (initialized or not,
//! the negotiated version, the log level, subscriptions, requests in
//! flight) and the dispatch of every method.

use super::streams::Streams;
use super::{Mcp25ReferenceConfig, SUPPORTED_VERSIONS, catalog, faults};
use crate::reference::mcp::server_info;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

/// The revision the server prefers (and answers an unsupported request with).
pub(super) const LATEST: &str = "2025-11-25";
/// Log levels (RFC 5424 severities) from least to most severe.
const LEVELS: &[&str] = &[
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// A JSON-RPC answer, ready to send.
#[derive(Debug, Clone)]
pub(super) struct Reply(pub(super) Value);

impl Reply {
    pub(super) fn result(id: &Value, result: Value) -> Self {
        Self(json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }

    /// Whether this answer is an error (HTTP maps framing errors to 400).
    pub(super) fn code(&self) -> Option<i64> {
        self.0.pointer("/error/code").and_then(Value::as_i64)
    }
}

/// An error answer. An id that could not be read is left out: the
/// 2025-11-25 schema makes an error's `id` optional and never null
/// (`JSONRPCErrorResponse` in schema.ts).
pub(super) fn error(
    id: &Value,
    code: i64,
    message: impl Into<String>,
    data: Option<Value>,
) -> Reply {
    let mut err = json!({"code": code, "message": message.into()});
    if let Some(data) = data {
        err["data"] = data;
    }
    let mut body = json!({"jsonrpc": "2.0", "error": err});
    if !id.is_null() {
        body["id"] = id.clone();
    }
    Reply(body)
}

pub(super) fn invalid_params(id: &Value, message: impl Into<String>) -> Reply {
    error(id, -32602, message, None)
}

/// What a message read from the client is.
#[derive(Debug)]
pub(super) enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// An answer to a request of the server's (it sends none; ignored).
    Response,
}

/// Reads one message; an `Err` is the error answer it gets.
pub(super) fn classify(config: &Mcp25ReferenceConfig, text: &[u8]) -> Result<Incoming, Reply> {
    let Ok(message) = serde_json::from_slice::<Value>(text) else {
        if config.breaks(faults::PARSE_ERROR) {
            return Err(Reply(json!({"jsonrpc": "2.0", "id": null, "result": {}})));
        }
        return Err(error(&Value::Null, -32700, "Parse error", None));
    };
    if message.is_array() {
        // 2025-06-18 removed JSON-RPC batching: an array is not a message.
        return Err(error(
            &Value::Null,
            -32600,
            "Invalid request: batches are not supported in MCP 2025-11-25",
            None,
        ));
    }
    let Some(msg) = message.as_object() else {
        return Err(error(
            &Value::Null,
            -32600,
            "Invalid request: not an object",
            None,
        ));
    };
    let id = msg.get("id").cloned();
    let usable_id = id
        .clone()
        .filter(|i| i.is_string() || i.is_i64() || i.is_u64())
        .unwrap_or(Value::Null);
    if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(error(
            &usable_id,
            -32600,
            "Invalid request: jsonrpc must be \"2.0\"",
            None,
        ));
    }
    let method = match msg.get("method") {
        Some(Value::String(m)) => m.clone(),
        Some(_) => {
            return Err(error(
                &usable_id,
                -32600,
                "Invalid request: method must be a string",
                None,
            ));
        }
        None if id.is_some() && (msg.contains_key("result") || msg.contains_key("error")) => {
            return Ok(Incoming::Response);
        }
        None if config.breaks(faults::MISSING_METHOD) => {
            return Ok(Incoming::Request {
                id: usable_id,
                method: "ping".into(),
                params: json!({}),
            });
        }
        None => {
            return Err(error(
                &usable_id,
                -32600,
                "Invalid request: missing method",
                None,
            ));
        }
    };
    let params = msg.get("params").cloned().unwrap_or(json!({}));
    if !(params.is_object() || params.is_array()) {
        return Err(error(
            &usable_id,
            -32600,
            "Invalid request: params must be an object",
            None,
        ));
    }
    match id {
        None => Ok(Incoming::Notification { method, params }),
        Some(Value::Null) if config.breaks(faults::NULL_ID) => Ok(Incoming::Request {
            id: Value::Null,
            method,
            params,
        }),
        Some(id) if id.is_string() || id.is_i64() || id.is_u64() => {
            Ok(Incoming::Request { id, method, params })
        }
        Some(_) => Err(error(
            &Value::Null,
            -32600,
            "Invalid request: id must be a string or an integer, never null",
            None,
        )),
    }
}

/// A session's lifecycle state.
#[derive(Debug, Default)]
struct Lifecycle {
    /// `initialize` has been answered.
    initialized: bool,
    /// The minimum level of `notifications/message`; none until set.
    log_level: Option<usize>,
    subscriptions: HashSet<String>,
}

/// One client's session (the whole connection on stdio; one
/// `Mcp-Session-Id` over HTTP; the whole server for a server without sessions).
#[derive(Debug, Default)]
pub(super) struct Session {
    lifecycle: Mutex<Lifecycle>,
    in_flight: Mutex<HashMap<String, CancellationToken>>,
    /// Its SSE streams over HTTP (unused on stdio).
    pub(super) streams: Mutex<Streams>,
    /// Cancelled when the session ends, stopping its requests and streams.
    pub(super) ended: CancellationToken,
    /// A server without sessions cannot tell clients apart: it enforces no
    /// lifecycle order and answers every `initialize`.
    stateless: bool,
}

impl Session {
    pub(super) fn stateless() -> Self {
        Self {
            stateless: true,
            ..Self::default()
        }
    }

    /// Registers a request in flight; its token is cancelled by
    /// `notifications/cancelled` naming it, or when the session ends.
    pub(super) fn begin(&self, id: &Value) -> CancellationToken {
        let token = self.ended.child_token();
        if let Ok(mut map) = self.in_flight.lock() {
            map.insert(id.to_string(), token.clone());
        }
        token
    }

    pub(super) fn finish(&self, id: &Value) {
        if let Ok(mut map) = self.in_flight.lock() {
            map.remove(&id.to_string());
        }
    }

    /// Cancels the request `id`; `false` if none such is in flight.
    fn cancel(&self, id: &Value) -> bool {
        let Ok(map) = self.in_flight.lock() else {
            return false;
        };
        match map.get(&id.to_string()) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }
}

/// One request being answered, as the methods see it.
pub(super) struct Call<'a> {
    pub(super) config: &'a Mcp25ReferenceConfig,
    pub(super) session: &'a Session,
    pub(super) id: &'a Value,
    pub(super) params: &'a Value,
    pub(super) cancel: CancellationToken,
    /// Where notifications tied to this request go (progress, logs).
    pub(super) sink: &'a UnboundedSender<Value>,
}

impl Call<'_> {
    pub(super) fn breaks(&self, fault: &str) -> bool {
        self.config.breaks(fault)
    }

    pub(super) fn notify(&self, message: Value) {
        let _ = self.sink.send(message);
    }

    /// A `notifications/message` at `level`, if the session asked for that
    /// level or a lower one.
    fn log(&self, level: &str, logger: &str, data: Value) {
        let wanted = self.session.lifecycle.lock().ok().and_then(|l| l.log_level);
        let rank = LEVELS.iter().position(|l| *l == level).unwrap_or(0);
        if wanted.is_some_and(|min| rank >= min) {
            let level = if self.breaks(faults::LOG_LEVEL) {
                "verbose"
            } else {
                level
            };
            self.notify(json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": level, "logger": logger, "data": data}}));
        }
    }
}

/// What a notification from the client leads to.
pub(super) enum Noted {
    /// Nothing to send (the correct answer to every notification).
    Quiet,
    /// A fault answers it.
    Answer(Reply),
    /// MCP25-UTL-002's fault: the session (on stdio, the server) ends.
    End,
}

/// Handles a notification from the client.
pub(super) fn notification(
    config: &Mcp25ReferenceConfig,
    session: &Session,
    method: &str,
    params: &Value,
) -> Noted {
    let unknown = || {
        error(
            &Value::Null,
            -32601,
            format!("Method not found: {method}"),
            None,
        )
    };
    match method {
        "notifications/initialized" if config.breaks(faults::INITIALIZED_ANSWERED) => {
            Noted::Answer(unknown())
        }
        // Nothing waits on it: the server sends no request of its own.
        "notifications/initialized" => Noted::Quiet,
        "notifications/cancelled" => {
            let Some(id) = params.get("requestId") else {
                return Noted::Quiet;
            };
            if !session.cancel(id) && config.breaks(faults::LATE_CANCEL) {
                return Noted::End;
            }
            Noted::Quiet
        }
        _ if config.breaks(faults::NOTIFICATION_ANSWERED) => Noted::Answer(unknown()),
        _ => Noted::Quiet,
    }
}

/// What goes on the wire for `message`: its JSON text, as the faults that
/// touch every message shape it.
pub(super) fn encode(config: &Mcp25ReferenceConfig, message: &Value) -> Vec<u8> {
    let mut message = message.clone();
    if config.breaks(faults::ERROR_SHAPE)
        && let Some(error) = message.get_mut("error").and_then(Value::as_object_mut)
    {
        error.remove("message");
    }
    let answer = message.get("result").is_some() || message.get("error").is_some();
    if config.breaks(faults::ID_TYPE)
        && answer
        && let Some(id) = message.get("id").and_then(Value::as_i64)
    {
        message["id"] = json!(id.to_string());
    }
    let mut bytes = message.to_string().into_bytes();
    if config.breaks(faults::INVALID_UTF8) && message.pointer("/result/prompts").is_some() {
        // A lone Latin-1 byte (0xE9, "é") where UTF-8 needs two, in place of
        // the first capital S (inside a string: no key has one).
        if let Some(at) = bytes.iter().position(|&b| b == b'S') {
            bytes[at] = 0xe9;
        }
    }
    bytes
}

/// Whether the answer to `method` goes over SSE whatever the request
/// (the faults that send messages before it need a stream).
pub(super) fn needs_stream(config: &Mcp25ReferenceConfig, method: &str) -> bool {
    method == "tools/list"
        && (config.breaks(faults::LIST_CHANGED_UNDECLARED)
            || config.breaks(faults::SAMPLING_UNDECLARED))
}

/// MCP25-LIF-006's fault: the request sent right after the initialize
/// answer, before `notifications/initialized`.
pub(super) fn early_request(config: &Mcp25ReferenceConfig) -> Option<Value> {
    config
        .breaks(faults::REQUEST_BEFORE_INITIALIZED)
        .then(|| json!({"jsonrpc": "2.0", "id": "early-1", "method": "tasks/list", "params": {}}))
}

/// MCP25-RPC-008's fault: a batch answered as a batch, every item as a
/// request of its own (`None` when `text` is no non-empty array).
pub(super) async fn batch(
    config: &Mcp25ReferenceConfig,
    session: &Session,
    text: &[u8],
) -> Option<Value> {
    if !config.breaks(faults::NO_BATCH) {
        return None;
    }
    let items = serde_json::from_slice::<Vec<Value>>(text).ok()?;
    if items.is_empty() {
        return None;
    }
    let (sink, _side) = tokio::sync::mpsc::unbounded_channel();
    let mut answers = Vec::new();
    for item in items {
        let incoming = classify(config, item.to_string().as_bytes());
        match incoming {
            Err(reply) => answers.push(reply.0),
            Ok(Incoming::Request { id, method, params }) => {
                let call = Call {
                    config,
                    session,
                    id: &id,
                    params: &params,
                    cancel: session.ended.child_token(),
                    sink: &sink,
                };
                if let Some(reply) = request(call, &method).await {
                    answers.push(reply.0);
                }
            }
            Ok(Incoming::Notification { method, params }) => {
                notification(config, session, &method, &params);
            }
            Ok(Incoming::Response) => {}
        }
    }
    Some(Value::Array(answers))
}

/// Answers a request; `None` when it was cancelled (it gets no answer).
pub(super) async fn request(call: Call<'_>, method: &str) -> Option<Reply> {
    let id = call.id;
    if method == "initialize" {
        return Some(initialize(&call));
    }
    let initialized = call.session.lifecycle.lock().is_ok_and(|l| l.initialized);
    if !initialized
        && !call.session.stateless
        && method != "ping"
        && !call.breaks(faults::BEFORE_INIT)
    {
        return Some(error(
            id,
            -32600,
            "Invalid request: the session is not initialized (send initialize first)",
            None,
        ));
    }
    let meta = call.params.get("_meta").and_then(Value::as_object);
    if call.breaks(faults::META_REFUSED)
        && meta.is_some_and(|m| m.keys().any(|k| k != "progressToken"))
    {
        return Some(invalid_params(id, "unknown _meta key"));
    }
    let reply = match method {
        "ping" if call.breaks(faults::PING) => error(id, -32601, "Method not found: ping", None),
        "ping" if call.breaks(faults::RESULT_AND_ERROR) => {
            let mut reply = Reply::result(id, json!({}));
            reply.0["error"] = json!({"code": -32603, "message": "and an error"});
            reply
        }
        "ping" => Reply::result(id, json!({})),
        "tools/list" => list_tools(&call),
        "tools/call" => {
            let name = call.params.get("name").cloned().unwrap_or(Value::Null);
            call.log("info", "tools", json!(format!("tools/call {name}")));
            return catalog::call_tool(&call).await;
        }
        "resources/list" => Reply::result(id, catalog::resources(call.config)),
        "resources/templates/list" => Reply::result(id, catalog::resource_templates(call.config)),
        "resources/read" => catalog::read_resource(&call),
        "resources/subscribe" | "resources/unsubscribe" => subscribe(&call, method),
        "prompts/list" => Reply::result(id, catalog::prompts(call.config)),
        "prompts/get" => catalog::get_prompt(&call),
        "completion/complete" => catalog::complete(&call),
        "logging/setLevel" => set_level(&call),
        other if call.breaks(faults::UNKNOWN_METHOD) => {
            error(id, -32603, format!("Internal error: {other}"), None)
        }
        other => error(id, -32601, format!("Method not found: {other}"), None),
    };
    Some(reply)
}

fn initialize(call: &Call<'_>) -> Reply {
    let id = call.id;
    let Some(asked) = call.params.get("protocolVersion").and_then(Value::as_str) else {
        return invalid_params(id, "initialize needs a string `protocolVersion`");
    };
    let Ok(mut lifecycle) = call.session.lifecycle.lock() else {
        return error(id, -32603, "Internal error", None);
    };
    if lifecycle.initialized && !call.session.stateless {
        return error(
            id,
            -32600,
            "Invalid request: the session is already initialized",
            None,
        );
    }
    let negotiated = if SUPPORTED_VERSIONS.contains(&asked) {
        if call.breaks(faults::VERSION_ECHO_KNOWN) && asked == LATEST {
            "2025-06-18"
        } else {
            asked
        }
    } else if call.breaks(faults::VERSION_ECHO_UNKNOWN) {
        asked
    } else if call.breaks(faults::VERSION_NOT_LATEST) {
        "2025-03-26"
    } else {
        LATEST
    };
    lifecycle.initialized = true;
    let mut info = server_info();
    if call.breaks(faults::SERVER_INFO)
        && let Some(info) = info.as_object_mut()
    {
        info.remove("version");
    }
    let mut result = json!({
        "protocolVersion": negotiated,
        "capabilities": {
            "tools": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "prompts": {"listChanged": true},
            "completions": {},
            "logging": {}
        },
        "serverInfo": info,
        "instructions": "protocheck's MCP 2025-11-25 reference server: a demo target for conformance checks."
    });
    let capabilities = &mut result["capabilities"];
    if call.breaks(faults::LIST_CHANGED_UNDECLARED) {
        capabilities["tools"] = json!({});
    }
    for (fault, capability) in [
        (faults::TOOLS_UNDECLARED, "tools"),
        (faults::RESOURCES_UNDECLARED, "resources"),
        (faults::PROMPTS_UNDECLARED, "prompts"),
        (faults::COMPLETIONS_UNDECLARED, "completions"),
        (faults::LOGGING_UNDECLARED, "logging"),
    ] {
        if call.breaks(fault)
            && let Some(c) = capabilities.as_object_mut()
        {
            c.remove(capability);
        }
    }
    Reply::result(id, result)
}

fn list_tools(call: &Call<'_>) -> Reply {
    let id = call.id;
    let all = catalog::tools(call.config);
    if call.breaks(faults::LIST_CHANGED_UNDECLARED) {
        call.notify(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
    }
    if call.breaks(faults::SAMPLING_UNDECLARED) {
        call.notify(
            json!({"jsonrpc": "2.0", "id": "sampling-1", "method": "sampling/createMessage",
            "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                       "maxTokens": 10}}),
        );
    }
    let start = match call.params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(cursor) => {
            let offset = cursor
                .as_str()
                .and_then(|c| c.strip_prefix("tools:"))
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| *n < all.len() && n % catalog::TOOLS_PAGE == 0);
            match offset {
                Some(n) => n,
                None if call.breaks(faults::INVALID_CURSOR) => 0,
                None => return invalid_params(id, "Invalid cursor"),
            }
        }
    };
    let end = (start + catalog::TOOLS_PAGE).min(all.len());
    let mut page: Vec<Value> = all[start..end].to_vec();
    if call.breaks(faults::TOOL_NAMES_UNIQUE) && start == 0 {
        page.push(all[0].clone());
    }
    let mut result = json!({"tools": page});
    if end < all.len() {
        let cursor = if call.breaks(faults::PAGINATION) {
            format!("page-{end}")
        } else {
            format!("tools:{end}")
        };
        result["nextCursor"] = json!(cursor);
    }
    Reply::result(id, result)
}

fn subscribe(call: &Call<'_>, method: &str) -> Reply {
    let id = call.id;
    let Some(uri) = call.params.get("uri").and_then(Value::as_str) else {
        return invalid_params(id, format!("{method} needs a string `uri`"));
    };
    if call.breaks(faults::SUBSCRIBE) {
        return error(id, -32603, "Internal error: subscriptions are down", None);
    }
    if !catalog::known_resource(call.config, uri) {
        return error(
            id,
            catalog::RESOURCE_NOT_FOUND,
            format!("Resource not found: {uri}"),
            Some(json!({"uri": uri})),
        );
    }
    if let Ok(mut l) = call.session.lifecycle.lock() {
        if method == "resources/subscribe" {
            l.subscriptions.insert(uri.to_owned());
        } else {
            l.subscriptions.remove(uri);
        }
    }
    Reply::result(id, json!({}))
}

fn set_level(call: &Call<'_>) -> Reply {
    let id = call.id;
    let level = call.params.get("level").and_then(Value::as_str);
    if call.breaks(faults::SET_LEVEL) {
        return error(id, -32603, "Internal error: logging is down", None);
    }
    let rank = level.and_then(|l| LEVELS.iter().position(|x| *x == l));
    let Some(rank) = rank.or_else(|| call.breaks(faults::INVALID_LEVEL).then_some(0)) else {
        return invalid_params(
            id,
            format!("unknown log level; one of {}", LEVELS.join(", ")),
        );
    };
    if let Ok(mut l) = call.session.lifecycle.lock() {
        l.log_level = Some(rank);
    }
    call.log(
        "notice",
        "logging",
        json!(format!("log level set to {}", LEVELS[rank])),
    );
    Reply::result(id, json!({}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Mcp25ReferenceConfig {
        Mcp25ReferenceConfig::new()
    }

    #[test]
    fn framing_errors_have_their_codes() {
        let code = |text: &str| {
            classify(&config(), text.as_bytes())
                .err()
                .and_then(|r| r.code())
        };
        assert_eq!(code("{"), Some(-32700));
        assert_eq!(code("[]"), Some(-32600));
        assert_eq!(
            code(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            Some(-32600)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            Some(-32600)
        );
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1}"#), Some(-32600));
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), None);
        assert!(matches!(
            classify(
                &config(),
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
            ),
            Ok(Incoming::Notification { .. })
        ));
        assert!(matches!(
            classify(&config(), br#"{"jsonrpc":"2.0","id":"s1","result":{}}"#),
            Ok(Incoming::Response)
        ));
    }
}
