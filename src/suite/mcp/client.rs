//! A client for MCP 2026-07-28 over Streamable HTTP, built for probing: every
//! request is a [`Probe`] that starts conforming (headers mirrored from the body,
//! required `_meta`) and can be bent on purpose; every answer is a [`Reply`]
//! that keeps what a rule needs (status, media type, the final JSON-RPC message,
//! notifications and stray requests on an SSE stream, whether the stream ended)
//! together with bounded, redacted evidence. Replies are also logged as
//! [`Seen`] records, which the run-wide rules (RES, ERR, DSC-005) judge.

use super::wire::{self, ACCEPT_BOTH, H_METHOD, H_NAME, H_PROTOCOL_VERSION, PROTOCOL_VERSION};
use crate::suite::{BearerToken, Exchange, ResponseRecord};
use crate::transport::raw::{RawConnection, RawRequest};
use crate::transport::sse::{SseReader, is_event_stream};
use crate::transport::{HttpClient, HttpRequest, TransportError, excerpt, redact_headers};
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, Semaphore};
use url::Url;

/// How long the client waits after a final response on an SSE stream for the
/// stream to end. The spec says the final response SHOULD terminate the stream
/// (streamable-http, "Receiving Messages"); a short grace avoids waiting on a
/// server that keeps it open.
pub const STREAM_END_GRACE: Duration = Duration::from_millis(1500);
/// Most replies kept for the run-wide rules.
const MAX_SEEN: usize = 600;
/// Most JSON-RPC frames kept from one SSE stream.
const MAX_FRAMES: usize = 64;

/// The client identity protocheck declares in `_meta` (optional per spec, sent
/// because clients SHOULD).
pub fn client_info() -> Value {
    json!({"name": "protocheck", "version": env!("CARGO_PKG_VERSION")})
}

/// What a probe is for, set where the request is built: a request a
/// conforming server serves, or one bent on purpose so that a conforming
/// server must refuse it.
///
/// §15 amendment "A finding judges only what its probe provoked": the answer
/// to an invalid probe is judged only by the rule that sent it, which holds
/// the [`Reply`]. Only answers to valid probes enter the run's log, so the
/// run-wide rules ("every response", "every result", every error code) never
/// see the 403 to a bad Origin or the 400 to a missing header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    Valid,
    Invalid(Invalidity),
}

/// How a probe was made invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalidity {
    /// A required header (Mcp-Method, Mcp-Name, MCP-Protocol-Version,
    /// Mcp-Param-*) left out.
    MissingHeader,
    /// A required header whose value differs from the body.
    HeaderMismatch,
    /// An `Origin` the server does not serve.
    Origin,
    /// A method the 2026-07-28 revision does not define (or removed).
    UnknownMethod,
    /// A protocol version other than 2026-07-28.
    UnsupportedVersion,
    /// A required `_meta` key (or `_meta` itself) left out.
    MissingMeta,
    /// A credential the server did not issue.
    ForeignCredential,
}

impl Intent {
    pub fn is_valid(self) -> bool {
        self == Self::Valid
    }
}

/// The methods a 2026-07-28 client may send (schema `ClientRequest`); any other
/// method name makes a probe [`Invalidity::UnknownMethod`].
pub const MODERN_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "subscriptions/listen",
];

/// Headers that mirror the body: changing or dropping one makes a probe invalid.
fn is_mirrored(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == H_METHOD
        || name == H_NAME
        || name == H_PROTOCOL_VERSION
        || name.starts_with(wire::H_PARAM_PREFIX)
}

/// One request, conforming until a rule bends it.
#[derive(Debug, Clone)]
pub struct Probe {
    pub method: String,
    pub body: Value,
    pub headers: Vec<(String, String)>,
    /// A notification expects 202 and no body.
    pub notification: bool,
    /// Legacy (initialize-era) traffic is not judged by the run-wide rules.
    pub legacy: bool,
    /// Set by the builders below whenever they bend the request; never
    /// cleared once invalid.
    pub intent: Intent,
}

impl Probe {
    /// A conforming modern request: `_meta` with version, capabilities and
    /// client info, and every required header mirrored from the body.
    pub fn request(id: i64, method: &str, params: Value) -> Self {
        let mut params = match params {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        params.insert(
            "_meta".into(),
            json!({
                wire::META_PROTOCOL_VERSION: PROTOCOL_VERSION,
                wire::META_CLIENT_CAPABILITIES: {},
                wire::META_CLIENT_INFO: client_info(),
            }),
        );
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let intent = if MODERN_METHODS.contains(&method) {
            Intent::Valid
        } else {
            Intent::Invalid(Invalidity::UnknownMethod)
        };
        let mut probe = Self {
            method: method.to_owned(),
            body,
            headers: vec![
                ("accept".into(), ACCEPT_BOTH.into()),
                (H_PROTOCOL_VERSION.into(), PROTOCOL_VERSION.into()),
                (H_METHOD.into(), method.into()),
            ],
            notification: false,
            legacy: false,
            intent,
        };
        probe.mirror_name();
        probe
    }

    /// A notification POST (no id) with the request headers: the spec leaves
    /// headers on notifications undefined, so sending them is harmless.
    pub fn notification(method: &str, params: Value) -> Self {
        let mut probe = Self::request(0, method, params);
        if let Some(obj) = probe.body.as_object_mut() {
            obj.remove("id");
        }
        probe.notification = true;
        probe
    }

    /// Sets `Mcp-Name` from the body field it mirrors, encoded when needed.
    fn mirror_name(&mut self) {
        let Some(field) = wire::name_field(&self.method) else {
            return;
        };
        if let Some(value) = self
            .body
            .pointer(&format!("/params/{field}"))
            .and_then(Value::as_str)
        {
            let encoded = wire::encode_header_value(value);
            self.put_header(H_NAME, encoded);
        }
    }

    /// Marks the probe invalid (the first reason is kept).
    pub fn invalid(mut self, why: Invalidity) -> Self {
        self.mark(why);
        self
    }

    fn mark(&mut self, why: Invalidity) {
        if self.intent.is_valid() {
            self.intent = Intent::Invalid(why);
        }
    }

    /// Sets a header without judging what it does to the probe's intent.
    fn put_header(&mut self, name: &str, value: String) {
        let name = name.to_ascii_lowercase();
        self.headers.retain(|(n, _)| *n != name);
        self.headers.push((name, value));
    }

    pub fn id(&self) -> Option<&Value> {
        self.body.get("id")
    }

    /// Sets a header. A mirrored header given another value than it has makes
    /// the probe a header mismatch; an `Origin` (protocheck sends one only to
    /// probe Origin validation) or an `Authorization` of its own (a credential
    /// the server did not issue) make it invalid too.
    pub fn set_header(&mut self, name: &str, value: impl Into<String>) {
        let value = value.into();
        let lower = name.to_ascii_lowercase();
        if is_mirrored(&lower) && self.header(&lower) != Some(value.as_str()) {
            self.mark(Invalidity::HeaderMismatch);
        } else if lower == "origin" {
            self.mark(Invalidity::Origin);
        } else if lower == "authorization" {
            self.mark(Invalidity::ForeignCredential);
        }
        self.put_header(&lower, value);
    }

    pub fn with_header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.set_header(name, value);
        self
    }

    pub fn without_header(mut self, name: &str) -> Self {
        let name = name.to_ascii_lowercase();
        if is_mirrored(&name) && self.header(&name).is_some() {
            self.mark(Invalidity::MissingHeader);
        }
        self.headers.retain(|(n, _)| *n != name);
        self
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn meta_mut(&mut self) -> Option<&mut Map<String, Value>> {
        self.body
            .pointer_mut("/params/_meta")
            .and_then(Value::as_object_mut)
    }

    pub fn with_meta(mut self, key: &str, value: Value) -> Self {
        if key == wire::META_PROTOCOL_VERSION && value.as_str() != Some(PROTOCOL_VERSION) {
            self.mark(Invalidity::UnsupportedVersion);
        }
        if let Some(meta) = self.meta_mut() {
            meta.insert(key.to_owned(), value);
        }
        self
    }

    pub fn without_meta(mut self, key: &str) -> Self {
        self.mark(Invalidity::MissingMeta);
        if let Some(meta) = self.meta_mut() {
            meta.remove(key);
        }
        self
    }

    /// Drops `params._meta` entirely.
    pub fn without_meta_object(mut self) -> Self {
        self.mark(Invalidity::MissingMeta);
        if let Some(params) = self.body.get_mut("params").and_then(Value::as_object_mut) {
            params.remove("_meta");
        }
        self
    }

    pub fn with_capabilities(self, capabilities: Value) -> Self {
        self.with_meta(wire::META_CLIENT_CAPABILITIES, capabilities)
    }

    /// Sets the `_meta` protocol version and the header to `version`.
    pub fn with_version(self, version: &str) -> Self {
        self.with_meta(wire::META_PROTOCOL_VERSION, json!(version))
            .with_header(H_PROTOCOL_VERSION, version)
    }

    /// Mirrors `x-mcp-header` arguments into `Mcp-Param-*` headers, as a
    /// conforming client must for a tool with that input schema.
    pub fn with_param_headers(mut self, input_schema: &Value) -> Self {
        let arguments = self
            .body
            .pointer("/params/arguments")
            .cloned()
            .unwrap_or(Value::Null);
        // Mirroring the body is what a conforming client does: still valid.
        for (name, value) in wire::param_headers(input_schema, &arguments) {
            self.put_header(&name, value);
        }
        self
    }

    pub fn with_params_field(mut self, key: &str, value: Value) -> Self {
        if let Some(params) = self.body.get_mut("params").and_then(Value::as_object_mut) {
            params.insert(key.to_owned(), value);
        }
        self
    }

    /// Replaces the body's `method` without touching the headers.
    pub fn with_body_method(mut self, method: &str) -> Self {
        if method != self.method {
            self.mark(Invalidity::HeaderMismatch);
        }
        if let Some(obj) = self.body.as_object_mut() {
            obj.insert("method".into(), json!(method));
        }
        self
    }
}

/// What came back for one probe.
#[derive(Debug, Clone)]
pub struct Reply {
    pub method: String,
    /// The intent of the probe this answers.
    pub intent: Intent,
    pub status: Option<u16>,
    pub content_type: Option<String>,
    pub sse: bool,
    /// The final JSON-RPC message (the body, or the SSE frame answering the id).
    pub message: Option<Value>,
    /// Notifications received on the SSE stream before the final message.
    pub notifications: Vec<Value>,
    /// JSON-RPC requests the server sent on the stream (never allowed).
    pub server_requests: Vec<Value>,
    /// Frames after the final message, or with another id.
    pub stray_frames: Vec<Value>,
    /// `Some(true)` when an SSE stream ended after the final message.
    pub terminated: Option<bool>,
    pub accel_buffering: Option<String>,
    pub session_id: Option<String>,
    /// The body length (JSON) or the number of SSE events read.
    pub body_len: usize,
    pub transport_error: Option<TransportError>,
    pub exchange: Exchange,
}

impl Reply {
    pub fn result(&self) -> Option<&Value> {
        self.message.as_ref()?.get("result")
    }

    pub fn error(&self) -> Option<&Value> {
        self.message.as_ref()?.get("error")
    }

    pub fn error_code(&self) -> Option<i64> {
        // JSON-RPC codes are integers; `-32601.0` is one too (JSON Schema reading).
        wire::as_integer(self.error()?.get("code")?)
    }

    pub fn ok(&self) -> bool {
        self.status == Some(200) && self.result().is_some()
    }

    /// One line for a finding: `HTTP 400 with JSON-RPC error -32020 ("…")`.
    pub fn describe(&self) -> String {
        if let Some(err) = &self.transport_error {
            return format!("no answer ({err})");
        }
        let status = self.status.map(|s| format!("HTTP {s}")).unwrap_or_default();
        let media = if self.sse { " (SSE)" } else { "" };
        if let Some(error) = self.error() {
            let code = error
                .get("code")
                .map(Value::to_string)
                .unwrap_or_else(|| "without a code".into());
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map(|m| format!(" \"{}\"", clip(m, 120)))
                .unwrap_or_default();
            return format!("{status}{media} with JSON-RPC error {code}{message}");
        }
        if let Some(result) = self.result() {
            let kind = result
                .get("resultType")
                .and_then(Value::as_str)
                .map(|t| format!(" (resultType `{t}`)"))
                .unwrap_or_default();
            return format!("{status}{media} with a result{kind}");
        }
        if self.body_len == 0 {
            return format!("{status}{media} with an empty body");
        }
        let media_type = self.content_type.as_deref().unwrap_or("no content type");
        format!("{status}{media} with a body that is not a JSON-RPC response ({media_type})")
    }

    /// A reply to nothing: a request that was never sent.
    pub fn empty(method: &str) -> Self {
        let exchange = Exchange {
            request: crate::suite::RequestRecord {
                line: String::new(),
                headers: Vec::new(),
                body: String::new(),
            },
            response: None,
            error: Some("not sent".into()),
        };
        let mut probe = Probe::request(0, method, json!({}));
        probe.headers.clear();
        Self::failed(
            &probe,
            exchange,
            TransportError::Io("the request was not sent".into()),
        )
    }

    fn failed(probe: &Probe, exchange: Exchange, err: TransportError) -> Self {
        Self {
            method: probe.method.clone(),
            intent: probe.intent,
            status: None,
            content_type: None,
            sse: false,
            message: None,
            notifications: Vec::new(),
            server_requests: Vec::new(),
            stray_frames: Vec::new(),
            terminated: None,
            accel_buffering: None,
            session_id: None,
            body_len: 0,
            transport_error: Some(err),
            exchange,
        }
    }
}

/// A text cut to at most `max` characters, for messages.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// At most `max` items joined with `sep`, then how many were left out: lists
/// built from what a target sent stay short in a finding.
pub fn some(items: &[String], max: usize, sep: &str) -> String {
    let shown: Vec<&str> = items.iter().take(max).map(String::as_str).collect();
    let mut out = shown.join(sep);
    if items.len() > max {
        out.push_str(&format!("{sep}… and {} more", items.len() - max));
    }
    out
}

/// What the run-wide rules need to know about a reply to a modern request.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// The request's JSON-RPC id: [`McpClient::seen`] lists replies in this
    /// order, whatever order concurrent answers arrived in.
    pub order: i64,
    pub status: Option<u16>,
    pub content_type: Option<String>,
    pub sse: bool,
    pub listen: bool,
    /// The result, when the final message carried one.
    pub result: Option<Value>,
    pub error_code: Option<i64>,
    pub server_requests: usize,
    pub terminated: Option<bool>,
    pub accel_buffering: Option<String>,
    /// Whether the request carried the run's bearer token (MCP-AUT-007).
    pub authorized: bool,
    pub exchange: Exchange,
}

/// The MCP client of one run. Cheap to clone; clones share the id counter, the
/// concurrency limit and the log.
#[derive(Clone)]
pub struct McpClient {
    http: HttpClient,
    url: Url,
    timeout: Duration,
    permits: Arc<Semaphore>,
    next_id: Arc<AtomicI64>,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// Set once a stream stayed open after its final response: later streams are
    /// not waited on, so a server that never closes them cannot stretch the run.
    open_stream_seen: Arc<AtomicBool>,
    /// The run's bearer token, sent on every request (authorization is per
    /// request: there is no session to carry it, spec §9.6).
    bearer: Option<BearerToken>,
    /// A value unique to this run, sent in [`CANARY_HEADER`] on every request so
    /// that MCP-SEC-003 can look for it in every reply.
    canary: Arc<str>,
}

/// The header that carries the run's canary value: an ordinary, non-credential
/// header a server has no reason to repeat.
pub const CANARY_HEADER: &str = "x-protocheck-canary";

impl McpClient {
    pub fn new(http: HttpClient, url: Url, timeout: Duration, max_concurrency: usize) -> Self {
        Self {
            http,
            url,
            timeout,
            permits: Arc::new(Semaphore::new(max_concurrency.max(1))),
            next_id: Arc::new(AtomicI64::new(1)),
            seen: Arc::new(Mutex::new(Vec::new())),
            open_stream_seen: Arc::new(AtomicBool::new(false)),
            bearer: None,
            canary: format!("pc-canary-{:016x}", rand::random::<u64>()).into(),
        }
    }

    /// The same client sending `token` as a bearer token on every request.
    pub fn with_bearer(mut self, token: Option<BearerToken>) -> Self {
        self.bearer = token;
        self
    }

    /// The run's bearer token, if it has one.
    pub fn bearer(&self) -> Option<&BearerToken> {
        self.bearer.as_ref()
    }

    /// The canary value every request of the run carries.
    pub fn canary(&self) -> &str {
        &self.canary
    }

    /// Adds the run's credentials and canary to a request that sets neither.
    pub fn authorize(&self, mut req: HttpRequest) -> HttpRequest {
        let has = |req: &HttpRequest, name: &str| req.headers.iter().any(|(n, _)| n == name);
        if let Some(token) = &self.bearer
            && !has(&req, "authorization")
        {
            req = req.header("authorization", format!("Bearer {}", token.expose()));
        }
        if !has(&req, CANARY_HEADER) {
            req = req.header(CANARY_HEADER, self.canary.to_string());
        }
        req
    }

    /// The same client on a new connection pool, so its first request opens a
    /// new connection (STL rules). Shares the limit and the log.
    pub fn fresh_connection(&self) -> Result<Self, TransportError> {
        let http = self.http.fresh()?;
        Ok(Self {
            http,
            ..self.clone()
        })
    }

    pub fn url(&self) -> &Url {
        &self.url
    }

    pub fn http(&self) -> &HttpClient {
        &self.http
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    pub fn next_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// A conforming request with a fresh id.
    pub fn request(&self, method: &str, params: Value) -> Probe {
        Probe::request(self.next_id(), method, params)
    }

    /// The answers to the valid probes of the run so far: the one way the
    /// run-wide rules read replies. Answers to invalid probes are never here.
    pub async fn seen(&self) -> Vec<Seen> {
        let mut seen = self.seen.lock().await.clone();
        // Repeatability: the order of requests, not of concurrent answers.
        seen.sort_by_key(|r| r.order);
        seen
    }

    /// Builds the HTTP request of a probe.
    fn http_request(&self, probe: &Probe) -> HttpRequest {
        self.authorize(self.plain_request(probe))
    }

    /// The HTTP request of a probe without the run's token or canary: for the
    /// authorization probes, which must arrive unauthenticated or with a token
    /// of their own. Not sent through the log.
    pub fn plain_request(&self, probe: &Probe) -> HttpRequest {
        let mut req = HttpRequest::post_raw(
            self.url.clone(),
            "application/json",
            Bytes::from(probe.body.to_string()),
        )
        .timeout(self.timeout);
        for (name, value) in &probe.headers {
            req = req.header(name, value.clone());
        }
        req
    }

    /// Sends a probe and reads the whole answer, JSON or SSE, within bounds.
    pub async fn send(&self, probe: &Probe) -> Reply {
        self.send_inner(probe, false, None).await
    }

    /// Sends a long-lived request (`subscriptions/listen`) and reads its stream
    /// for at most `window`, then closes it (closing is the cancellation).
    pub async fn listen(&self, probe: &Probe, window: Duration) -> Reply {
        self.send_inner(probe, true, Some(window)).await
    }

    async fn send_inner(&self, probe: &Probe, listen: bool, window: Option<Duration>) -> Reply {
        // A closed semaphore cannot happen (it is never closed); go on unlimited if it did.
        let _permit = self.permits.acquire().await.ok();
        let req = self.http_request(probe);
        let evidence_bytes = self.http.limits().evidence_bytes;
        let started = Instant::now();
        let record = req.record(evidence_bytes);
        let resp = match self.http.send_streaming(&req).await {
            Ok(resp) => resp,
            Err(err) => {
                let exchange = Exchange {
                    request: record,
                    response: None,
                    error: Some(err.to_string()),
                };
                return Reply::failed(probe, exchange, err);
            }
        };
        let status = resp.status;
        let headers = resp.headers.clone();
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let content_type = header("content-type");
        let accel_buffering = header(wire::H_ACCEL_BUFFERING);
        let session_id = header(wire::H_SESSION_ID);
        let shown_headers = redact_headers(headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())));
        let sse = is_event_stream(&headers);
        let mut reply = Reply {
            method: probe.method.clone(),
            intent: probe.intent,
            status: Some(status),
            content_type,
            sse,
            message: None,
            notifications: Vec::new(),
            server_requests: Vec::new(),
            stray_frames: Vec::new(),
            terminated: None,
            accel_buffering,
            session_id,
            body_len: 0,
            transport_error: None,
            exchange: Exchange {
                request: record,
                response: None,
                error: None,
            },
        };
        let (shown_body, truncated) = if sse {
            self.read_sse(resp, probe, listen, window, &mut reply).await
        } else {
            self.read_json(resp, &mut reply).await
        };
        reply.exchange.response = Some(ResponseRecord {
            status: Some(status),
            headers: shown_headers,
            body: shown_body,
            truncated,
            elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        });
        if let Some(err) = &reply.transport_error {
            reply.exchange.error = Some(err.to_string());
        }
        // Only answers to valid modern requests are logged (see [`Intent`]).
        if !probe.legacy && !probe.notification && probe.intent.is_valid() {
            let authorized = self.bearer.is_some() && probe.header("authorization").is_none();
            let order = probe.id().and_then(wire::as_integer).unwrap_or(i64::MAX);
            self.log(&reply, order, listen, authorized).await;
        }
        reply
    }

    async fn log(&self, reply: &Reply, order: i64, listen: bool, authorized: bool) {
        let mut seen = self.seen.lock().await;
        if seen.len() >= MAX_SEEN || reply.status.is_none() {
            return;
        }
        seen.push(Seen {
            method: reply.method.clone(),
            order,
            status: reply.status,
            content_type: reply.content_type.clone(),
            sse: reply.sse,
            listen,
            result: reply.result().cloned(),
            error_code: reply.error_code(),
            server_requests: reply.server_requests.len(),
            terminated: reply.terminated,
            accel_buffering: reply.accel_buffering.clone(),
            authorized,
            exchange: reply.exchange.clone(),
        });
    }

    /// Reads a non-SSE body within the size cap and the request timeout.
    async fn read_json(
        &self,
        mut resp: crate::transport::StreamingResponse,
        reply: &mut Reply,
    ) -> (String, bool) {
        let limit = self.http.limits().max_body_bytes;
        let deadline = tokio::time::Instant::from_std(resp.started) + self.timeout;
        let mut body = BytesMut::new();
        loop {
            match tokio::time::timeout_at(deadline, resp.body.next()).await {
                Err(_) => {
                    reply.transport_error = Some(TransportError::Timeout(self.timeout));
                    break;
                }
                Ok(None) => break,
                Ok(Some(Err(err))) => {
                    reply.transport_error = Some(err);
                    break;
                }
                Ok(Some(Ok(chunk))) => {
                    if body.len() + chunk.len() > limit {
                        reply.transport_error = Some(TransportError::TooLarge { limit });
                        break;
                    }
                    body.extend_from_slice(&chunk);
                }
            }
        }
        reply.body_len = body.len();
        // The media type is judged by RES-005; the body is read as JSON whatever
        // it claims, so that one wrong header does not hide every other finding.
        reply.message = serde_json::from_slice::<Value>(&body)
            .ok()
            .filter(Value::is_object);
        excerpt(&body, self.http.limits().evidence_bytes)
    }

    /// Reads an SSE response: frames until the one answering the probe's id,
    /// then waits briefly for the stream to end. A listen stream is read for
    /// its window and then closed.
    async fn read_sse(
        &self,
        resp: crate::transport::StreamingResponse,
        probe: &Probe,
        listen: bool,
        window: Option<Duration>,
        reply: &mut Reply,
    ) -> (String, bool) {
        let limits = self.http.limits();
        let evidence_bytes = limits.evidence_bytes;
        let mut shown = String::new();
        let mut reader = SseReader::new(resp, limits);
        let id = probe.id().cloned();
        let budget = window.unwrap_or(self.timeout);
        let deadline = tokio::time::Instant::now() + budget;
        let mut frames = 0usize;
        loop {
            let next = tokio::time::timeout_at(deadline, reader.next_event()).await;
            let event = match next {
                Err(_) => {
                    if !listen {
                        reply.transport_error = Some(TransportError::Timeout(budget));
                    }
                    break;
                }
                Ok(Ok(None)) => {
                    if reply.message.is_some() {
                        reply.terminated = Some(true);
                    }
                    break;
                }
                Ok(Err(err)) => {
                    reply.transport_error = Some(err);
                    break;
                }
                Ok(Ok(Some(event))) => event,
            };
            reply.body_len += 1;
            if shown.len() < evidence_bytes {
                if let Some(name) = &event.event {
                    shown.push_str(&format!("event: {name}\n"));
                }
                shown.push_str(&format!("data: {}\n\n", event.data));
            }
            frames += 1;
            if frames > MAX_FRAMES {
                break;
            }
            let Ok(frame) = serde_json::from_str::<Value>(&event.data) else {
                reply
                    .stray_frames
                    .push(Value::String(clip(&event.data, 200)));
                continue;
            };
            let has_method = frame.get("method").is_some();
            let has_id = frame.get("id").is_some_and(|v| !v.is_null());
            if has_method && has_id {
                reply.server_requests.push(frame);
            } else if has_method {
                if reply.message.is_some() {
                    reply.stray_frames.push(frame);
                } else {
                    reply.notifications.push(frame);
                    // A listen stream is watched only until its first notification
                    // (the acknowledgement); closing it is the cancellation.
                    if listen {
                        break;
                    }
                }
            } else if reply.message.is_none()
                && frame
                    .get("id")
                    .is_none_or(|v| v.is_null() || id.is_none() || Some(v) == id.as_ref())
            {
                reply.message = Some(frame);
                if listen || self.open_stream_seen.load(Ordering::Relaxed) {
                    break;
                }
                // The final response SHOULD terminate the stream: give it a moment.
                match tokio::time::timeout(STREAM_END_GRACE, reader.next_event()).await {
                    Ok(Ok(None)) => reply.terminated = Some(true),
                    Ok(Ok(Some(extra))) => {
                        reply.terminated = Some(false);
                        reply.stray_frames.push(
                            serde_json::from_str(&extra.data)
                                .unwrap_or_else(|_| Value::String(clip(&extra.data, 200))),
                        );
                    }
                    // An error after the final frame (a reset) still ends the stream.
                    Ok(Err(_)) => reply.terminated = Some(true),
                    Err(_) => reply.terminated = Some(false),
                }
                if reply.terminated == Some(false) {
                    self.open_stream_seen.store(true, Ordering::Relaxed);
                }
                break;
            } else {
                reply.stray_frames.push(frame);
            }
        }
        let truncated = shown.len() > evidence_bytes;
        let (text, cut) = excerpt(shown.as_bytes(), evidence_bytes);
        (text, cut || truncated)
    }

    /// Sends a GET or DELETE to the endpoint (STL-005/006, DEP-004); the body is
    /// read only as far as the first event or `window`.
    pub async fn bare(&self, req: HttpRequest, window: Duration) -> BareReply {
        let _permit = self.permits.acquire().await.ok();
        let req = self.authorize(req);
        let evidence_bytes = self.http.limits().evidence_bytes;
        let record = req.record(evidence_bytes);
        let started = Instant::now();
        let resp = match self.http.send_streaming(&req).await {
            Ok(resp) => resp,
            Err(err) => {
                return BareReply {
                    status: None,
                    first_event: None,
                    sse: false,
                    exchange: Exchange {
                        request: record,
                        response: None,
                        error: Some(err.to_string()),
                    },
                };
            }
        };
        let status = resp.status;
        let sse = is_event_stream(&resp.headers);
        let headers = redact_headers(resp.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())));
        let mut first_event = None;
        let mut shown = String::new();
        if sse {
            let mut reader = SseReader::new(resp, self.http.limits());
            if let Ok(Ok(Some(event))) = tokio::time::timeout(window, reader.next_event()).await {
                shown = format!(
                    "event: {}\ndata: {}\n\n",
                    event.event.as_deref().unwrap_or("message"),
                    event.data
                );
                first_event = Some(event);
            }
        } else {
            let mut body = resp.body;
            let mut bytes = BytesMut::new();
            let deadline = tokio::time::Instant::now() + window;
            while bytes.len() < evidence_bytes {
                match tokio::time::timeout_at(deadline, body.next()).await {
                    Ok(Some(Ok(chunk))) => bytes.extend_from_slice(&chunk),
                    _ => break,
                }
            }
            shown = excerpt(&bytes, evidence_bytes).0;
        }
        let (body, truncated) = excerpt(shown.as_bytes(), evidence_bytes);
        BareReply {
            status: Some(status),
            first_event,
            sse,
            exchange: Exchange {
                request: record,
                response: Some(ResponseRecord {
                    status: Some(status),
                    headers,
                    body,
                    truncated,
                    elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                }),
                error: None,
            },
        }
    }
}

/// How the header names of a probe are spelled on a dedicated connection.
/// Header names are case-insensitive (streamable-http#case-sensitivity), so
/// every spelling of a valid request must be served alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// `mcp-method`: what the pooled client sends (hyper lower-cases names).
    Lower,
    /// As the spec writes them: `Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`,
    /// `Mcp-Param-{Name}`; other names in Title-Case.
    Spec,
    /// `MCP-METHOD`.
    Upper,
}

impl Spelling {
    pub fn name(self, lower: &str) -> String {
        match self {
            Self::Lower => lower.to_ascii_lowercase(),
            Self::Upper => lower.to_ascii_uppercase(),
            Self::Spec if lower.eq_ignore_ascii_case(H_PROTOCOL_VERSION) => {
                "MCP-Protocol-Version".to_owned()
            }
            Self::Spec => lower
                .split('-')
                .map(|part| {
                    let mut chars = part.chars();
                    match chars.next() {
                        Some(first) => {
                            first.to_ascii_uppercase().to_string()
                                + &chars.as_str().to_ascii_lowercase()
                        }
                        None => String::new(),
                    }
                })
                .collect::<Vec<_>>()
                .join("-"),
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Self::Lower => "lower-case (`mcp-method`)",
            Self::Spec => {
                "as the spec writes them (`Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`)"
            }
            Self::Upper => "upper-case (`MCP-METHOD`)",
        }
    }
}

/// The JSON-RPC messages of an event-stream body read so far.
fn sse_messages(body: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(body).replace("\r\n", "\n");
    let mut out = Vec::new();
    // Only complete events: the text after the last blank line may be partial.
    let complete = match text.rfind("\n\n") {
        Some(end) => &text[..end],
        None => return out,
    };
    for event in complete.split("\n\n") {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        if data.is_empty() {
            continue;
        }
        if let Ok(v) = serde_json::from_str::<Value>(&data.join("\n")) {
            out.push(v);
        }
    }
    out
}

/// Whether `frame` is the final answer to the request `id`.
fn answers(frame: &Value, id: Option<&Value>) -> bool {
    frame.get("method").is_none()
        && (frame.get("result").is_some() || frame.get("error").is_some())
        && frame
            .get("id")
            .is_none_or(|v| v.is_null() || id.is_none() || Some(v) == id)
}

impl McpClient {
    /// Opens a dedicated HTTP/1.1 connection to the endpoint: requests sent
    /// with [`Self::send_on`] travel on it one after the other, on the same
    /// TCP connection, or fail (it never reconnects).
    pub async fn dedicated(&self) -> Result<RawConnection, TransportError> {
        RawConnection::open(&self.http, &self.url).await
    }

    /// Sends `probe` on `conn` with its header names spelled `spelling`. The
    /// answer is judged by the rule that sent it and is not logged: the
    /// run-wide rules judge the replies of the streaming client, which also
    /// measures how streams end.
    pub async fn send_on(
        &self,
        conn: &mut RawConnection,
        probe: &Probe,
        spelling: Spelling,
    ) -> Reply {
        let _permit = self.permits.acquire().await.ok();
        let body = Bytes::from(probe.body.to_string());
        let mut headers: Vec<(String, String)> = vec![
            (spelling.name("content-type"), "application/json".to_owned()),
            (spelling.name("user-agent"), USER_AGENT_RAW.to_owned()),
        ];
        for (name, value) in &probe.headers {
            headers.push((spelling.name(name), value.clone()));
        }
        if let Some(token) = &self.bearer
            && probe.header("authorization").is_none()
        {
            headers.push((
                spelling.name("authorization"),
                format!("Bearer {}", token.expose()),
            ));
        }
        headers.push((spelling.name(CANARY_HEADER), self.canary.to_string()));
        let evidence_bytes = self.http.limits().evidence_bytes;
        let record = crate::suite::RequestRecord {
            line: format!(
                "POST {} (dedicated connection {} → {}, request {})",
                self.url,
                conn.local_addr(),
                conn.peer_addr(),
                conn.requests + 1
            ),
            // Names as sent (the spelling is what a finding may be about),
            // values redacted as everywhere.
            headers: redact_headers(headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())))
                .into_iter()
                .zip(&headers)
                .map(|((_, value), (name, _))| (name.clone(), value))
                .collect(),
            body: excerpt(&body, evidence_bytes).0,
        };
        let id = probe.id().cloned();
        let enough =
            move |so_far: &[u8]| sse_messages(so_far).iter().any(|f| answers(f, id.as_ref()));
        let req = RawRequest {
            method: "POST",
            headers,
            body,
        };
        let resp = match conn.send(&req, &enough).await {
            Ok(resp) => resp,
            Err(err) => {
                let exchange = Exchange {
                    request: record,
                    response: None,
                    error: Some(err.to_string()),
                };
                return Reply::failed(probe, exchange, err);
            }
        };
        let content_type = resp.header("content-type").map(str::to_owned);
        let sse = content_type
            .as_deref()
            .is_some_and(|c| c.to_ascii_lowercase().contains("text/event-stream"));
        let mut reply = Reply {
            method: probe.method.clone(),
            intent: probe.intent,
            status: Some(resp.status),
            content_type,
            sse,
            message: None,
            notifications: Vec::new(),
            server_requests: Vec::new(),
            stray_frames: Vec::new(),
            terminated: None,
            accel_buffering: resp.header(wire::H_ACCEL_BUFFERING).map(str::to_owned),
            session_id: resp.header(wire::H_SESSION_ID).map(str::to_owned),
            body_len: resp.body.len(),
            transport_error: None,
            exchange: Exchange {
                request: record,
                response: None,
                error: None,
            },
        };
        if sse {
            let id = probe.id();
            for frame in sse_messages(&resp.body) {
                let has_method = frame.get("method").is_some();
                let has_id = frame.get("id").is_some_and(|v| !v.is_null());
                if has_method && has_id {
                    reply.server_requests.push(frame);
                } else if has_method {
                    reply.notifications.push(frame);
                } else if reply.message.is_none() && answers(&frame, id) {
                    reply.message = Some(frame);
                } else {
                    reply.stray_frames.push(frame);
                }
            }
            reply.terminated = Some(!resp.cut);
        } else {
            reply.message = serde_json::from_slice::<Value>(&resp.body)
                .ok()
                .filter(Value::is_object);
        }
        let (shown, truncated) = excerpt(&resp.body, evidence_bytes);
        reply.exchange.response = Some(ResponseRecord {
            status: Some(resp.status),
            headers: redact_headers(resp.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes()))),
            body: shown,
            truncated,
            elapsed_ms: u64::try_from(resp.elapsed.as_millis()).unwrap_or(u64::MAX),
        });
        reply
    }
}

/// The user agent of the dedicated connections (the pooled client's own).
const USER_AGENT_RAW: &str = concat!(
    "protocheck/",
    env!("CARGO_PKG_VERSION"),
    " (conformance checker)"
);

/// The answer to a GET or DELETE on the endpoint.
#[derive(Debug, Clone)]
pub struct BareReply {
    pub status: Option<u16>,
    pub sse: bool,
    pub first_event: Option<crate::transport::sse::SseEvent>,
    pub exchange: Exchange,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_texts_from_targets_stay_short() {
        let items: Vec<String> = (1..=8).map(|i| i.to_string()).collect();
        assert_eq!(some(&items, 3, ", "), "1, 2, 3, … and 5 more");
        assert_eq!(some(&items[..2], 3, ", "), "1, 2");
        assert_eq!(clip("abcdef", 3), "abc…");
        assert_eq!(clip("abc", 3), "abc");
    }

    #[test]
    fn probes_mirror_the_body_into_headers() {
        let probe = Probe::request(7, "tools/call", json!({"name": "météo", "arguments": {}}));
        assert_eq!(probe.header("mcp-method"), Some("tools/call"));
        assert_eq!(probe.header("mcp-protocol-version"), Some(PROTOCOL_VERSION));
        // A name outside the header-safe set travels Base64-encoded.
        assert_eq!(
            probe.header("mcp-name"),
            Some(wire::sentinel("météo").as_str())
        );
        assert_eq!(
            probe
                .body
                .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion"),
            Some(&json!(PROTOCOL_VERSION))
        );
        let bent = probe
            .without_header("MCP-Method")
            .without_meta(wire::META_PROTOCOL_VERSION);
        assert_eq!(bent.header("mcp-method"), None);
        assert!(
            bent.body
                .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
                .is_none()
        );
        let note = Probe::notification("notifications/cancelled", json!({}));
        assert!(note.notification && note.id().is_none());
    }
}
