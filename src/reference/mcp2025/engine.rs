//! The transport-free core of the 2025-11-25 reference server: the session
//! state the lifecycle needs (initialized or not, the log level,
//! subscriptions, requests in flight), notifications, and the dispatch of
//! every method. Reading and writing messages is `jsonrpc`'s.

pub(super) use super::jsonrpc::{Incoming, Reply, classify, encode, error, invalid_params};
use super::streams::Streams;
use super::{Mcp25ReferenceConfig, SUPPORTED_VERSIONS, catalog, faults, tasks};
use crate::reference::mcp::server_info;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Mutex;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

/// The revision the server prefers (and answers an unsupported request with).
pub(super) const LATEST: &str = "2025-11-25";
/// Answered request ids a session remembers.
const FINISHED_KEPT: usize = 64;
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
    /// Ids of requests answered lately (MCP25-UTL-002's fault looks them up).
    finished: Mutex<VecDeque<String>>,
    /// Its SSE streams over HTTP (unused on stdio).
    pub(super) streams: Mutex<Streams>,
    /// Cancelled when the session ends, stopping its requests and streams.
    pub(super) ended: CancellationToken,
    /// A server without sessions cannot tell clients apart: it enforces no
    /// lifecycle order and answers every `initialize`.
    stateless: bool,
    /// Its tasks (when the server plays tasks).
    pub(super) tasks: Mutex<tasks::Store>,
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
        if let Ok(mut done) = self.finished.lock() {
            if done.len() >= FINISHED_KEPT {
                done.pop_front();
            }
            done.push_back(id.to_string());
        }
    }

    fn answered(&self, id: &Value) -> bool {
        self.finished
            .lock()
            .is_ok_and(|done| done.contains(&id.to_string()))
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
            if !session.cancel(id) && session.answered(id) && config.breaks(faults::LATE_CANCEL) {
                return Noted::End;
            }
            Noted::Quiet
        }
        _ if config.breaks(faults::NOTIFICATION_ANSWERED) => Noted::Answer(unknown()),
        _ => Noted::Quiet,
    }
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
    // Any request may carry a progress token; but for the tools, which
    // report their own, one that does gets two steps of progress.
    if method != "tools/call"
        && let Some(token) = call.params.pointer("/_meta/progressToken")
    {
        catalog::progress(&call, token, 1, 2, "step").await;
    }
    if initialized && call.breaks(faults::LOGGING_UNDECLARED) {
        call.notify(undeclared_log(method));
    }
    let reply = match method {
        other if other.starts_with("resources/") && call.breaks(faults::EMBEDDED_UNDECLARED) => {
            error(id, -32601, format!("Method not found: {other}"), None)
        }
        "resources/list" | "resources/templates/list" | "prompts/list" if has_cursor(&call) => {
            // These lists fit on one page, so no cursor is one the server issued.
            invalid_params(id, "Invalid cursor")
        }
        "ping" if call.breaks(faults::PING) => error(id, -32601, "Method not found: ping", None),
        "ping" if call.breaks(faults::RESULT_AND_ERROR) => {
            let mut reply = Reply::result(id, json!({}));
            reply.0["error"] = json!({"code": -32603, "message": "and an error"});
            reply
        }
        "ping" => Reply::result(id, json!({})),
        "tools/list" => list_tools(&call),
        m if m.starts_with("tasks/") && call.config.tasks => {
            return tasks::request(&call, m).await;
        }
        "tools/call"
            if call.config.tasks
                && call.params.get("name").and_then(Value::as_str) == Some(tasks::TOOL) =>
        {
            tasks::call_report(&call)
        }
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
        "completion/complete" if call.breaks(faults::COMPLETION_NOT_FOUND) => {
            invalid_params(id, "Invalid params: completions are not offered")
        }
        "completion/complete" => catalog::complete(&call),
        "logging/setLevel" => set_level(&call),
        // An error with another code only warns (digest, D11): the fault
        // serves the unknown method instead.
        _ if call.breaks(faults::UNKNOWN_METHOD) => Reply::result(id, json!({})),
        other => error(id, -32601, format!("Method not found: {other}"), None),
    };
    Some(reply)
}

/// MCP25-LOG-001's fault: a log notification for every request, whatever
/// the level, from a server that does not declare `logging`.
fn undeclared_log(method: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "logger": "requests", "data": format!("handling {method}")}})
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
    let meta_key = if call.breaks(faults::META_KEY) {
        "dev..protocheck/reference server"
    } else {
        "dev.protocheck/reference"
    };
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
        "_meta": {meta_key: "mcp-2025-11-25"},
        "instructions": "protocheck's MCP 2025-11-25 reference server: a demo target for conformance checks."
    });
    let capabilities = &mut result["capabilities"];
    if let Some(tasks) = tasks::capability(call.config) {
        capabilities["tasks"] = tasks;
    }
    if call.breaks(faults::LIST_CHANGED_UNDECLARED) {
        capabilities["tools"] = json!({});
    }
    for (fault, capability) in [
        (faults::TOOLS_UNDECLARED, "tools"),
        (faults::RESOURCES_UNDECLARED, "resources"),
        (faults::EMBEDDED_UNDECLARED, "resources"),
        (faults::PROMPTS_UNDECLARED, "prompts"),
        (faults::COMPLETIONS_UNDECLARED, "completions"),
        (faults::COMPLETION_NOT_FOUND, "completions"),
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

/// Whether a list request names a cursor (null is the same as none).
fn has_cursor(call: &Call<'_>) -> bool {
    call.params.get("cursor").is_some_and(|c| !c.is_null())
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
    // MCP25-TOL-007's fault pages one tool at a time, so that there is a
    // cursor after the first for it to break.
    let page_size = if call.breaks(faults::PAGINATION) {
        1
    } else {
        catalog::TOOLS_PAGE
    };
    let start = match call.params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(cursor) => {
            let offset = cursor
                .as_str()
                .and_then(|c| c.strip_prefix("tools:"))
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| *n < all.len() && n % page_size == 0);
            match offset {
                Some(n) => n,
                None if call.breaks(faults::INVALID_CURSOR) => 0,
                None => return invalid_params(id, "Invalid cursor"),
            }
        }
    };
    let end = (start + page_size).min(all.len());
    let mut page: Vec<Value> = all[start..end].to_vec();
    if call.breaks(faults::TOOL_NAMES_UNIQUE) && start == 0 {
        page.push(all[0].clone());
    }
    let mut result = json!({"tools": page});
    if end < all.len() {
        let cursor = if call.breaks(faults::PAGINATION) && start > 0 {
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
    let rank = level
        .and_then(|l| LEVELS.iter().position(|x| *x == l))
        // A logging library's own name for it: `warning` is not on its list.
        .filter(|_| !(call.breaks(faults::SET_LEVEL) && level == Some("warning")));
    let Some(rank) = rank.or_else(|| call.breaks(faults::INVALID_LEVEL).then_some(0)) else {
        // The list the server says it knows: under the fault, the
        // library's `warn` stands where the protocol says `warning`.
        let known: Vec<&str> = LEVELS
            .iter()
            .map(|l| match *l {
                "warning" if call.breaks(faults::SET_LEVEL) => "warn",
                other => other,
            })
            .collect();
        return invalid_params(
            id,
            format!("unknown log level; one of {}", known.join(", ")),
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
