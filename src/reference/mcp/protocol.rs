//! The Streamable HTTP face of the reference server: the handlers of its
//! routes, the checks every POST passes before its era is chosen (Origin,
//! JSON-RPC framing, notifications), and how an answer ([`Out`]) becomes an
//! HTTP response, plain JSON or an SSE stream.

use super::legacy::{self, REMOVED};
use super::validate::validate;
use super::{Allowed, Inner, MAX_BODY, Shared, auth, methods};
use crate::suite::mcp::wire::{self, H_SESSION_ID, code};
use crate::suite::mcp::{err, reg, res, sec, stl};
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Keep-alive period and lifetime of a `subscriptions/listen` stream.
const LISTEN_KEEPALIVE: Duration = Duration::from_secs(15);
const LISTEN_KEEPALIVES: u32 = 40;
/// Pause between progress notifications of the `count` tool.
const COUNT_STEP: Duration = Duration::from_millis(20);

/// What a request is answered with, before it becomes HTTP.
pub(super) enum Out {
    Json {
        status: StatusCode,
        body: Value,
        content_type: &'static str,
        session: Option<String>,
    },
    Empty(StatusCode),
    /// An SSE response: frames sent with a pause before each.
    Stream(Vec<Value>),
    /// A `subscriptions/listen` stream: the acknowledgement, keep-alives, the final result.
    Listen {
        ack: Value,
        last: Value,
    },
}

impl Out {
    pub(super) fn json(status: StatusCode, body: Value) -> Self {
        Self::Json {
            status,
            body,
            content_type: "application/json",
            session: None,
        }
    }
}

pub(super) fn rpc_error(
    status: StatusCode,
    id: &Value,
    code: i64,
    message: impl Into<String>,
    data: Option<Value>,
) -> Out {
    let mut error = json!({"code": code, "message": message.into()});
    if let Some(data) = data {
        error["data"] = data;
    }
    let mut body = json!({"jsonrpc": "2.0", "error": error});
    // An id that could not be read is left out (basic/index#error-responses).
    if !id.is_null() {
        body["id"] = id.clone();
    }
    Out::json(status, body)
}

pub(super) fn mismatch(id: &Value, message: impl Into<String>) -> Out {
    rpc_error(
        StatusCode::BAD_REQUEST,
        id,
        code::HEADER_MISMATCH,
        message,
        None,
    )
}

pub(super) fn invalid_params(id: &Value, message: impl Into<String>, data: Option<Value>) -> Out {
    rpc_error(
        StatusCode::BAD_REQUEST,
        id,
        code::INVALID_PARAMS,
        message,
        data,
    )
}

pub(super) fn method_not_found(state: &Inner, id: &Value, method: &str) -> Out {
    // Over stdio there is no status to get wrong: MCP-ERR-002's fault
    // answers with another code there.
    if state.stdio && state.breaks(&err::UNKNOWN_METHOD) && !REMOVED.contains(&method) {
        return rpc_error(
            StatusCode::OK,
            id,
            code::INVALID_REQUEST,
            format!("Invalid request: {method}"),
            None,
        );
    }
    let status = if state.breaks(&err::UNKNOWN_METHOD) && !REMOVED.contains(&method) {
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    };
    rpc_error(
        status,
        id,
        code::METHOD_NOT_FOUND,
        format!("Method not found: {method}"),
        None,
    )
}

fn sse_bytes(frame: &Value) -> Bytes {
    Bytes::from(format!("event: message\ndata: {frame}\n\n"))
}

/// Most streams the fault of `replaying_on_last_event_id` keeps.
const KEPT_STREAMS: usize = 64;

/// The fault of `replaying_on_last_event_id`: the frames that followed the
/// event `Last-Event-ID` names in a kept stream, each with its id.
fn resumed(state: &Inner, headers: &HeaderMap) -> Vec<(String, Value)> {
    if !state.config.replays_events {
        return Vec::new();
    }
    let Some(last) = headers
        .get(wire::H_LAST_EVENT_ID)
        .and_then(|v| v.to_str().ok())
    else {
        return Vec::new();
    };
    let Some((stream, event)) = last
        .strip_prefix('s')
        .and_then(|rest| rest.split_once('-'))
        .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
    else {
        return Vec::new();
    };
    let Ok(kept) = state.streams.lock() else {
        return Vec::new();
    };
    kept.iter()
        .find(|(n, _)| *n == stream)
        .map(|(_, frames)| {
            frames
                .iter()
                .enumerate()
                .skip(event + 1)
                .map(|(i, f)| (format!("s{stream}-{i}"), f.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// The fault of `replaying_on_last_event_id`: keeps a stream's frames and
/// gives the ids of its events (`None` without the fault).
fn keep_stream(state: &Inner, frames: &[Value]) -> Option<usize> {
    if !state.config.replays_events {
        return None;
    }
    let n = state.next_stream.fetch_add(1, Ordering::SeqCst);
    if let Ok(mut kept) = state.streams.lock() {
        if kept.len() >= KEPT_STREAMS {
            kept.pop_front();
        }
        kept.push_back((n, frames.to_vec()));
    }
    Some(n)
}

/// An event with an id.
fn sse_bytes_with_id(id: &str, frame: &Value) -> Bytes {
    Bytes::from(format!("id: {id}\nevent: message\ndata: {frame}\n\n"))
}

fn respond(state: &Inner, out: Out) -> Response {
    respond_resuming(state, out, Vec::new())
}

/// [`respond`], with the replayed events of a resumed stream first (the
/// fault of `replaying_on_last_event_id`).
fn respond_resuming(state: &Inner, out: Out, replay: Vec<(String, Value)>) -> Response {
    let out = match out {
        Out::Json { status, body, .. } if !replay.is_empty() && status.is_success() => {
            Out::Stream(vec![body])
        }
        other => other,
    };
    let replayed: Vec<Bytes> = replay
        .iter()
        .map(|(id, frame)| sse_bytes_with_id(id, frame))
        .collect();
    let mut resp = match out {
        Out::Json {
            status,
            body,
            content_type,
            session,
        } => {
            // A plain-text body is written as it is, not as a JSON string.
            let text = match &body {
                Value::String(t) if !content_type.contains("json") => t.clone(),
                other => other.to_string(),
            };
            let mut resp = (status, text).into_response();
            resp.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
            if let Some(sid) = session
                && let Ok(v) = HeaderValue::from_str(&sid)
            {
                resp.headers_mut().insert(H_SESSION_ID, v);
            }
            resp
        }
        Out::Empty(status) => status.into_response(),
        Out::Stream(frames) => {
            let kept = keep_stream(state, &frames);
            let events: Vec<Bytes> = frames
                .iter()
                .enumerate()
                .map(|(i, frame)| match kept {
                    Some(n) => sse_bytes_with_id(&format!("s{n}-{i}"), frame),
                    None => sse_bytes(frame),
                })
                .collect();
            let replayed = futures::stream::iter(replayed).map(Ok::<_, Infallible>);
            let stream = futures::stream::iter(events).then(|event| async move {
                tokio::time::sleep(COUNT_STEP).await;
                Ok::<_, Infallible>(event)
            });
            sse_response(state, Body::from_stream(replayed.chain(stream)))
        }
        Out::Listen { ack, last } => {
            let kept = keep_stream(state, &[ack.clone(), last.clone()]);
            let (ack, last) = match kept {
                Some(n) => (
                    sse_bytes_with_id(&format!("s{n}-0"), &ack),
                    sse_bytes_with_id(&format!("s{n}-1"), &last),
                ),
                None => (sse_bytes(&ack), sse_bytes(&last)),
            };
            let replayed = futures::stream::iter(replayed).map(Ok::<_, Infallible>);
            let stream = futures::stream::unfold(0u32, move |n| {
                let (ack, last) = (ack.clone(), last.clone());
                async move {
                    match n {
                        0 => Some((Ok::<_, Infallible>(ack), 1)),
                        n if n > LISTEN_KEEPALIVES => None,
                        n => {
                            tokio::time::sleep(LISTEN_KEEPALIVE).await;
                            // The graceful end: a final result with the subscription id.
                            let frame = if n == LISTEN_KEEPALIVES {
                                last
                            } else {
                                Bytes::from_static(b":\n\n")
                            };
                            Some((Ok(frame), n + 1))
                        }
                    }
                }
            });
            sse_response(state, Body::from_stream(replayed.chain(stream)))
        }
    };
    if state.breaks(&stl::NO_SESSION_ID) {
        let minted = format!("{:032x}", rand::random::<u128>());
        if let Ok(v) = HeaderValue::from_str(&minted) {
            resp.headers_mut().insert(H_SESSION_ID, v);
        }
    }
    resp
}

/// A stream body whose text comes only once the configured latency has
/// passed after the headers (at once without latency).
pub(super) fn late_body(state: &Inner, text: String) -> Body {
    let latency = state.config.latency;
    if latency.is_zero() {
        return Body::from(text);
    }
    Body::from_stream(futures::stream::once(async move {
        tokio::time::sleep(latency).await;
        Ok::<_, std::convert::Infallible>(text)
    }))
}

pub(super) fn sse_response(state: &Inner, body: Body) -> Response {
    let mut resp = Response::new(body);
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if !state.breaks(&res::ACCEL_BUFFERING) {
        h.insert(wire::H_ACCEL_BUFFERING, HeaderValue::from_static("no"));
    }
    resp
}

pub(super) async fn handle_protected_resource(
    State(state): State<Shared>,
    headers: HeaderMap,
) -> Response {
    auth::protected_resource(&state, &headers)
}

pub(super) async fn handle_authorization_server(
    State(state): State<Shared>,
    headers: HeaderMap,
) -> Response {
    auth::authorization_server(&state, &headers, false)
}

pub(super) async fn handle_openid_configuration(
    State(state): State<Shared>,
    headers: HeaderMap,
) -> Response {
    auth::authorization_server(&state, &headers, true)
}

pub(super) async fn handle_get(State(state): State<Shared>, headers: HeaderMap) -> Response {
    if let Some(refused) = origin_refused(&state, &headers) {
        return refused;
    }
    if let Some(refused) = auth::check(&state, &headers, None) {
        return refused;
    }
    let replay = resumed(&state, &headers);
    if !replay.is_empty() {
        // The fault of `replaying_on_last_event_id`: the stream resumed.
        let text: String = replay
            .iter()
            .map(|(id, frame)| format!("id: {id}\nevent: message\ndata: {frame}\n\n"))
            .collect();
        return sse_response(&state, late_body(&state, text));
    }
    if state.breaks(&stl::GET_405) {
        // The 2025-11-25 standalone stream: open, a comment, then closed.
        return sse_response(&state, late_body(&state, ":stream\n\n".to_owned()));
    }
    method_not_allowed()
}

pub(super) async fn handle_delete(State(state): State<Shared>, headers: HeaderMap) -> Response {
    if let Some(refused) = origin_refused(&state, &headers) {
        return refused;
    }
    if let Some(refused) = auth::check(&state, &headers, None) {
        return refused;
    }
    if legacy::end_session(&state, &headers) {
        return StatusCode::OK.into_response();
    }
    if state.breaks(&stl::DELETE_405) {
        return StatusCode::OK.into_response();
    }
    method_not_allowed()
}

/// The 403 to a GET or DELETE from an invalid `Origin`: the server validates
/// Origin "on all incoming connections" (streamable-http, "Security &
/// Endpoint"), not only on POSTs.
fn origin_refused(state: &Inner, headers: &HeaderMap) -> Option<Response> {
    if state.breaks(&sec::ORIGIN_403) || origin_allowed(headers, state.config.origin_prefix_match) {
        return None;
    }
    let mut resp = (StatusCode::FORBIDDEN, "Forbidden: Origin not allowed").into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    Some(resp)
}

fn method_not_allowed() -> Response {
    let mut resp = StatusCode::METHOD_NOT_ALLOWED.into_response();
    resp.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    resp
}

pub(super) async fn handle_server_json(
    State(state): State<Shared>,
    headers: HeaderMap,
) -> Response {
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("127.0.0.1");
    let path = if state.breaks(&reg::REMOTE_MATCHES) {
        "/mcp-v2"
    } else {
        "/mcp"
    };
    let description = if state.breaks(&reg::SERVER_JSON_VALID) {
        "protocheck's MCP reference server. ".repeat(5)
    } else {
        "protocheck's MCP 2026-07-28 reference server".to_owned()
    };
    let name = if state.breaks(&reg::NAMESPACE) {
        "protocheck-reference/mcp"
    } else {
        "io.github.protocheck/reference-mcp"
    };
    let version = if state.breaks(&reg::SEMVER) {
        "v1.0"
    } else {
        "0.1.0"
    };
    let doc = json!({
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
        "name": name,
        "description": description,
        "version": version,
        "repository": {"url": "https://github.com/protocheck/protocheck", "source": "github"},
        "remotes": [{"type": "streamable-http", "url": format!("{}://{host}{path}", if state.config.tls { "https" } else { "http" })}]
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        doc.to_string(),
    )
        .into_response()
}

pub(super) async fn handle_post(State(state): State<Shared>, req: Request) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    let headers = req.headers().clone();
    let body = match axum::body::to_bytes(req.into_body(), MAX_BODY).await {
        Ok(b) => b,
        Err(_) => {
            let out = rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                &Value::Null,
                code::INVALID_REQUEST,
                "request body too large",
                None,
            );
            return respond(&state, out);
        }
    };
    if state.config.auth.is_some() {
        let method = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|m| m.get("method").and_then(Value::as_str).map(str::to_owned));
        if let Some(refused) = auth::check(&state, &headers, method.as_deref()) {
            return refused;
        }
    }
    let out = process(&state, peer, &headers, &body);
    let replay = resumed(&state, &headers);
    respond_resuming(&state, echo_faults(&state, &headers, out), replay)
}

/// The faults of MCP-SEC-003 and MCP-SEC-007: error messages that repeat the
/// request's headers (all but Authorization) or its Authorization header.
fn echo_faults(state: &Inner, headers: &HeaderMap, mut out: Out) -> Out {
    let echo_headers = state.breaks(&sec::NO_ECHO);
    let echo_authorization = state.breaks(&sec::NO_AUTH_REFLECTION);
    if !echo_headers && !echo_authorization {
        return out;
    }
    if let Out::Json { status, body, .. } = &mut out
        && status.as_u16() >= 400
        && let Some(message) = body.pointer_mut("/error/message")
        && let Some(text) = message.as_str()
    {
        let mut text = text.to_owned();
        for (name, value) in headers {
            let is_authorization = *name == header::AUTHORIZATION;
            if (is_authorization && echo_authorization) || (!is_authorization && echo_headers) {
                text.push_str(&format!(
                    " [{name}: {}]",
                    value.to_str().unwrap_or("(not text)")
                ));
            }
        }
        *message = Value::String(text);
    }
    out
}

/// An `Origin` that is not this machine is refused (streamable-http, "Security
/// & Endpoint": DNS rebinding). With `prefix_match` (a test's fault, see
/// `with_origin_prefix_match`) it is compared as a string by prefix, the
/// commonest real Origin bug: `http://localhost.attacker.example` gets in.
pub(crate) fn origin_allowed(headers: &HeaderMap, prefix_match: bool) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    if prefix_match {
        let origin = origin.to_str().unwrap_or_default();
        return ["http://localhost", "http://127.0.0.1", "http://[::1]"]
            .iter()
            .any(|p| origin.starts_with(p));
    }
    let Some(host) = origin
        .to_str()
        .ok()
        .and_then(|o| url::Url::parse(o).ok())
        .and_then(|u| u.host_str().map(str::to_owned))
    else {
        return false;
    };
    matches!(host.as_str(), "localhost" | "127.0.0.1" | "[::1]")
}

pub(super) fn process(
    state: &Inner,
    peer: Option<SocketAddr>,
    headers: &HeaderMap,
    body: &[u8],
) -> Out {
    if !state.breaks(&sec::ORIGIN_403) && !origin_allowed(headers, state.config.origin_prefix_match)
    {
        if state.allows(Allowed::PlainForbidden) {
            return Out::Json {
                status: StatusCode::FORBIDDEN,
                body: Value::String("Forbidden: Origin not allowed".into()),
                content_type: "text/plain; charset=utf-8",
                session: None,
            };
        }
        return rpc_error(
            StatusCode::FORBIDDEN,
            &Value::Null,
            code::INVALID_REQUEST,
            "Origin not allowed",
            None,
        );
    }
    let Ok(message) = serde_json::from_slice::<Value>(body) else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            &Value::Null,
            code::PARSE_ERROR,
            "Parse error",
            None,
        );
    };
    let Some(msg) = message.as_object() else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            &Value::Null,
            code::INVALID_REQUEST,
            "Invalid request: not a JSON-RPC object",
            None,
        );
    };
    let Some(method) = msg.get("method").and_then(Value::as_str) else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            &Value::Null,
            code::INVALID_REQUEST,
            "Invalid request: clients send requests and notifications only",
            None,
        );
    };
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    if !msg.contains_key("id") {
        // A notification (streamable-http, "Sending Messages" 5).
        return if state.breaks(&res::NOTIFICATION_202) {
            Out::Empty(StatusCode::NO_CONTENT)
        } else {
            Out::Empty(StatusCode::ACCEPTED)
        };
    }
    if !(id.is_string() || id.is_i64() || id.is_u64()) {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            &Value::Null,
            code::INVALID_REQUEST,
            "Invalid request: id must be a string or an integer",
            None,
        );
    }
    let legacy = legacy::speaks_legacy(state, headers, method);
    if method == "initialize" && state.config.version_per_connection {
        let asked = msg
            .get("params")
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str)
            .unwrap_or(crate::suite::mcp::wire::LEGACY_VERSION)
            .to_owned();
        state.remember(peer, |c| c.other_version = Some(asked));
    }
    let out = if legacy {
        legacy::legacy_request(state, headers, &id, method, msg.get("params"))
    } else {
        modern_request(state, peer, headers, &id, method, msg.get("params"))
    };
    if method == "initialize" && !legacy {
        return legacy::name_versions(state, out);
    }
    out
}

fn modern_request(
    state: &Inner,
    peer: Option<SocketAddr>,
    headers: &HeaderMap,
    id: &Value,
    method: &str,
    params: Option<&Value>,
) -> Out {
    match validate(state, peer, headers, id, method, params) {
        Ok(request) => methods::dispatch(state, peer, request),
        Err(out) => out,
    }
}
