//! A recording RCP/1 client over HTTP (spec §5: `POST <base>/<method>`) and
//! stdio (NDJSON, one compact object per line). Every request and what came back
//! is kept as an [`Exchange`] so a finding can show its evidence.

use crate::suite::detect::join_method;
use crate::suite::runner::{Endpoint, EngineError, RunContext};
use crate::suite::{Exchange, RequestRecord, ResponseRecord};
use crate::transport::stdio::StdioChild;
use crate::transport::{HttpClient, HttpRequest, HttpResponse, TransportError, excerpt};
use bytes::Bytes;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use url::Url;

/// How long a stdio server is given to (wrongly) answer a notification. The
/// reference harness waits 0.5 s; a local child that answers at all answers
/// within milliseconds, so this keeps runs quick without missing real answers.
pub(crate) const STDIO_NOTIFICATION_WAIT: Duration = Duration::from_millis(300);

/// How long an exited child's stderr is waited for, to quote it in the failure.
const STDERR_SETTLE: Duration = Duration::from_millis(250);

/// The HTTP header that carries a session token (protocheck decision 5, spec §5).
pub(crate) const SESSION_HEADER: &str = "rcp-session";

enum Wire {
    Http { base: Url, http: HttpClient },
    Stdio { child: Box<StdioChild> },
}

/// What came back for one request.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    /// No bytes (HTTP only: stdio readers skip blank lines).
    Empty,
    Json(Value),
    /// Bytes that do not parse as JSON.
    NotJson,
}

/// A request's answer with its evidence.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    /// The method the request named (the HTTP path's last part).
    pub method: String,
    /// The id the request carried, `None` for a frame without one.
    pub request_id: Option<Value>,
    pub exchange: Exchange,
    /// HTTP status; `None` on stdio.
    pub status: Option<u16>,
    pub body: Body,
    /// Whether the run-wide rules judge this answer as a JSON-RPC reply: false
    /// for answers to notifications (their own rules judge them), and for an
    /// empty body or a non-2xx status without JSON over HTTP (an HTTP-level
    /// answer, spec §5 status mapping, judged by the rule that sent the request).
    pub framed: bool,
    /// The request was a batch (an array of frames), so is the reply (spec §11).
    pub batch: bool,
}

impl Reply {
    pub fn json(&self) -> Option<&Value> {
        match &self.body {
            Body::Json(v) => Some(v),
            _ => None,
        }
    }

    /// `result` of a success reply (an object with `result` and no `error`).
    pub fn result(&self) -> Option<&Value> {
        let obj = self.json()?.as_object()?;
        if obj.contains_key("error") {
            return None;
        }
        obj.get("result")
    }

    /// `error.code` of an error reply, when it is an integer.
    pub fn error_code(&self) -> Option<i64> {
        self.json()?.get("error")?.get("code")?.as_i64()
    }

    /// What the server answered, in words for a finding: "a result",
    /// "error -32601 (MethodNotFound: \"Method not found\")", "HTTP 500 with a
    /// body that is not JSON".
    pub fn describe(&self) -> String {
        let what = match &self.body {
            Body::Empty => "an empty body".to_owned(),
            Body::NotJson => "a body that is not JSON".to_owned(),
            Body::Json(v) => match v.as_object() {
                Some(obj) if obj.contains_key("error") => describe_error(&obj["error"]),
                Some(obj) if obj.contains_key("result") => "a result".to_owned(),
                _ => "JSON that is not a JSON-RPC response".to_owned(),
            },
        };
        match self.status {
            Some(200) | None => what,
            Some(status) => format!("HTTP {status} with {what}"),
        }
    }
}

fn describe_error(error: &Value) -> String {
    let Some(code) = error.get("code").and_then(Value::as_i64) else {
        return "an error without an integer code".to_owned();
    };
    let name = error_name(code)
        .map(|n| format!(" ({n})"))
        .unwrap_or_default();
    format!("error {code}{name}")
}

/// Names of the error codes of spec §12, as the digest spells them.
pub(crate) fn error_name(code: i64) -> Option<&'static str> {
    Some(match code {
        -32700 => "ParseError",
        -32600 => "InvalidRequest",
        -32601 => "MethodNotFound",
        -32602 => "InvalidParams",
        -32603 => "InternalError",
        -32001 => "NotInitialized",
        -32002 => "VersionMismatch",
        -32003 => "CapabilityMissing",
        -32004 => "UnknownMethod",
        -32005 => "OptionUnsupported",
        -32006 => "Cancelled",
        -32010 => "BackendUnavailable",
        -32011 => "RateLimited",
        -32012 => "Unauthorized",
        -32013 => "PayloadTooLarge",
        -32014 => "Timeout",
        -32015 => "NotFound",
        -32016 => "Conflict",
        _ => return None,
    })
}

/// A request that got no answer at all.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub exchange: Exchange,
    pub error: TransportError,
}

/// The outcome of sending a notification.
#[derive(Debug, Clone)]
pub(crate) enum Notified {
    /// Not answered: HTTP 2xx with an empty body, or no line on stdio in time.
    Silent(Exchange),
    Answered(Reply),
}

/// The recording client. One per run; requests are sent one at a time.
pub(crate) struct RcpClient {
    wire: Wire,
    session: Option<String>,
    timeout: Duration,
    evidence_bytes: usize,
    /// Whether anything at all has come back from the target yet.
    answered: bool,
    /// Ids already answered or given up on: a late or repeated reply carrying one
    /// of them is skipped instead of being taken for the answer to a later request.
    retired_ids: Vec<Value>,
    replies: Vec<Reply>,
    next_id: u64,
    /// A stdio pipe failed (EOF, broken pipe): the child is gone for good.
    broken: bool,
}

impl RcpClient {
    /// Opens the transport: nothing is sent yet over HTTP; a stdio child is spawned.
    pub async fn connect(endpoint: &Endpoint, ctx: &RunContext) -> Result<Self, EngineError> {
        let limits = ctx.http.limits();
        let wire = match endpoint {
            Endpoint::Http(url) => Wire::Http {
                base: url.clone(),
                http: ctx.http.clone(),
            },
            Endpoint::Stdio(command) => {
                let child =
                    StdioChild::spawn(command, limits).map_err(EngineError::from_transport)?;
                Wire::Stdio {
                    child: Box::new(child),
                }
            }
        };
        Ok(Self {
            wire,
            session: None,
            timeout: ctx.options.request_timeout(),
            evidence_bytes: limits.evidence_bytes,
            answered: false,
            retired_ids: Vec::new(),
            replies: Vec::new(),
            next_id: 0,
            broken: false,
        })
    }

    pub fn is_http(&self) -> bool {
        matches!(self.wire, Wire::Http { .. })
    }

    /// Whether any request has been answered (with anything) yet: a transport
    /// failure before that means the target is unreachable, not non-conformant.
    pub fn has_answered(&self) -> bool {
        self.answered
    }

    /// Whether the target is known to be gone (a stdio child closed stdout or
    /// its stdin pipe broke).
    pub fn is_closed(&self) -> bool {
        match &self.wire {
            Wire::Http { .. } => false,
            Wire::Stdio { child } => self.broken || child.is_closed(),
        }
    }

    /// Sends later requests with this session token (decision 5).
    pub fn set_session(&mut self, token: Option<String>) {
        self.session = token;
    }

    /// A fresh numeric request id.
    pub fn next_id(&mut self) -> Value {
        self.next_id += 1;
        json!(self.next_id)
    }

    /// Every reply received for a request (not for notifications), in order.
    pub fn replies(&self) -> &[Reply] {
        &self.replies
    }

    /// Sends `{"jsonrpc":"2.0","id":id,"method":method,"params":params}`.
    pub async fn call(&mut self, id: Value, method: &str, params: Value) -> Result<Reply, Failure> {
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let result = self
            .send_frame(method, Some(id.clone()), frame.to_string(), false)
            .await;
        self.retired_ids.push(id);
        result
    }

    /// Sends bytes that may not be JSON at all (the parse-error probe); over HTTP
    /// the path names `path_method`.
    pub async fn send_raw(&mut self, path_method: &str, body: &str) -> Result<Reply, Failure> {
        self.send_frame(path_method, None, body.to_owned(), false)
            .await
    }

    /// Sends a notification (a frame without `id`) and reports whether it was answered.
    pub async fn notify(&mut self, method: &str, params: Value) -> Result<Notified, Failure> {
        let frame = json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string();
        self.send_unanswered(method, frame).await
    }

    /// Sends a batch (spec §11); over HTTP the path names `path_method`, the
    /// first member's method, since the binding has one path per POST.
    pub async fn send_batch(
        &mut self,
        path_method: &str,
        frames: Vec<Value>,
    ) -> Result<Reply, Failure> {
        let ids: Vec<Value> = frames.iter().filter_map(|f| f.get("id").cloned()).collect();
        let result = self
            .send_frame(path_method, None, Value::Array(frames).to_string(), true)
            .await;
        self.retired_ids.extend(ids);
        result
    }

    /// Sends a frame that must not be answered (a notification, or a batch of
    /// only notifications) and reports whether it was.
    pub async fn send_unanswered(
        &mut self,
        method: &str,
        frame: String,
    ) -> Result<Notified, Failure> {
        match &self.wire {
            Wire::Http { base, http } => {
                let session = self.session.as_deref();
                let (exchange, resp) = post(base, http, session, self.timeout, method, frame).await;
                let resp = resp.map_err(|error| Failure {
                    exchange: exchange.clone(),
                    error,
                })?;
                self.answered = true;
                let blank = resp.body.iter().all(u8::is_ascii_whitespace);
                // Decision 6: 204, or a 2xx with an empty body, is "not answered".
                if (200..300).contains(&resp.status) && blank {
                    return Ok(Notified::Silent(exchange));
                }
                Ok(Notified::Answered(Reply {
                    method: method.to_owned(),
                    request_id: None,
                    exchange,
                    status: Some(resp.status),
                    body: parse_body(&resp.body),
                    framed: false,
                    batch: false,
                }))
            }
            Wire::Stdio { .. } => {
                let started = Instant::now();
                let request = self.stdin_record(&frame);
                if let Err(error) = self.stdio_write(&frame).await {
                    return Err(self.stdio_failure(request, error).await);
                }
                match self.stdio_read_reply(STDIO_NOTIFICATION_WAIT).await {
                    Ok(line) => {
                        self.answered = true;
                        let reply = self.stdio_reply(method, None, request, &line, started);
                        Ok(Notified::Answered(Reply {
                            framed: false,
                            ..reply
                        }))
                    }
                    Err(TransportError::Timeout(_)) => Ok(Notified::Silent(Exchange {
                        request,
                        response: None,
                        error: None,
                    })),
                    Err(error) => Err(self.stdio_failure(request, error).await),
                }
            }
        }
    }

    async fn send_frame(
        &mut self,
        method: &str,
        id: Option<Value>,
        frame: String,
        batch: bool,
    ) -> Result<Reply, Failure> {
        let reply = match &self.wire {
            Wire::Http { base, http } => {
                let session = self.session.as_deref();
                let (exchange, resp) = post(base, http, session, self.timeout, method, frame).await;
                let resp = resp.map_err(|error| Failure {
                    exchange: exchange.clone(),
                    error,
                })?;
                let body = if resp.body.iter().all(u8::is_ascii_whitespace) {
                    Body::Empty
                } else {
                    parse_body(&resp.body)
                };
                let framed = !matches!(body, Body::Empty)
                    && ((200..300).contains(&resp.status) || matches!(body, Body::Json(_)));
                Reply {
                    method: method.to_owned(),
                    request_id: id,
                    exchange,
                    status: Some(resp.status),
                    body,
                    framed,
                    batch,
                }
            }
            Wire::Stdio { .. } => {
                let started = Instant::now();
                let request = self.stdin_record(&frame);
                if let Err(error) = self.stdio_write(&frame).await {
                    return Err(self.stdio_failure(request, error).await);
                }
                match self.stdio_read_reply(self.timeout).await {
                    Ok(line) => Reply {
                        batch,
                        ..self.stdio_reply(method, id, request, &line, started)
                    },
                    Err(error) => return Err(self.stdio_failure(request, error).await),
                }
            }
        };
        self.answered = true;
        self.replies.push(reply.clone());
        Ok(reply)
    }

    fn stdin_record(&self, frame: &str) -> RequestRecord {
        RequestRecord {
            line: "stdin".to_owned(),
            headers: Vec::new(),
            body: excerpt(frame.as_bytes(), self.evidence_bytes).0,
        }
    }

    async fn stdio_write(&mut self, frame: &str) -> Result<(), TransportError> {
        match &mut self.wire {
            Wire::Stdio { child } => child.write_line(frame).await,
            Wire::Http { .. } => Err(TransportError::Protocol("not a stdio target".into())),
        }
    }

    /// Reads the next line that can be an answer, within `wait`: notifications
    /// the server sends meanwhile (`notifications/log`, `…/progress`: a `method`
    /// and no `id`) and replies to retired ids are skipped (§9 client behaviour;
    /// the harness's one-line-per-request assumption, Q7, is not made here).
    async fn stdio_read_reply(&mut self, wait: Duration) -> Result<String, TransportError> {
        let deadline = Instant::now() + wait;
        let Wire::Stdio { child } = &mut self.wire else {
            return Err(TransportError::Protocol("not a stdio target".into()));
        };
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(TransportError::Timeout(wait));
            }
            let line = child.read_line(remaining).await.map_err(|e| match e {
                TransportError::Timeout(_) => TransportError::Timeout(wait),
                other => other,
            })?;
            let Ok(value) = serde_json::from_str::<Value>(&line) else {
                // stdout carries only protocol frames (spec §5): anything else is
                // shown to the rule waiting for an answer.
                return Ok(line);
            };
            let Some(obj) = value.as_object() else {
                return Ok(line);
            };
            if obj.contains_key("method") && !obj.contains_key("id") {
                continue;
            }
            if let Some(id) = obj.get("id")
                && !id.is_null()
                && self.retired_ids.contains(id)
            {
                continue;
            }
            return Ok(line);
        }
    }

    fn stdio_reply(
        &self,
        method: &str,
        id: Option<Value>,
        request: RequestRecord,
        line: &str,
        started: Instant,
    ) -> Reply {
        let (body, truncated) = excerpt(line.as_bytes(), self.evidence_bytes);
        let exchange = Exchange {
            request,
            response: Some(ResponseRecord {
                status: None,
                headers: Vec::new(),
                body,
                truncated,
                elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            }),
            error: None,
        };
        Reply {
            method: method.to_owned(),
            request_id: id,
            exchange,
            status: None,
            body: parse_body(line.as_bytes()),
            framed: true,
            batch: false,
        }
    }

    /// A stdio failure as evidence.
    async fn stdio_failure(&mut self, request: RequestRecord, error: TransportError) -> Failure {
        // A pipe error or EOF usually means the child exited: say so, with its
        // status and the end of its stderr, where the reason usually is.
        let error = match (&mut self.wire, error) {
            (Wire::Stdio { child }, TransportError::Io(msg)) => {
                self.broken = true;
                match child.exit_status(STDERR_SETTLE).await {
                    Some(status) => {
                        let tail = child.settled_stderr_tail(STDERR_SETTLE).await;
                        let tail = excerpt(tail.trim().as_bytes(), 1024).0;
                        if tail.is_empty() {
                            TransportError::Io(format!("{msg} ({status})"))
                        } else {
                            TransportError::Io(format!(
                                "{msg} ({status}); its stderr ended with: {tail}"
                            ))
                        }
                    }
                    None => TransportError::Io(msg),
                }
            }
            (_, error) => error,
        };
        Failure {
            exchange: Exchange {
                request,
                response: None,
                error: Some(error.to_string()),
            },
            error,
        }
    }

    /// Ends the conversation: a stdio child gets EOF, then is killed if it lingers.
    pub async fn close(self) {
        if let Wire::Stdio { child } = self.wire {
            child.close().await;
        }
    }
}

fn parse_body(bytes: &[u8]) -> Body {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Body::Empty;
    }
    match serde_json::from_slice(bytes) {
        Ok(v) => Body::Json(v),
        Err(_) => Body::NotJson,
    }
}

/// `POST <base>/<method>` with the JSON-RPC body (spec §5), carrying the session
/// token when there is one.
async fn post(
    base: &Url,
    http: &HttpClient,
    session: Option<&str>,
    timeout: Duration,
    method: &str,
    frame: String,
) -> (Exchange, Result<HttpResponse, TransportError>) {
    let url = join_method(base, method);
    let mut req =
        HttpRequest::post_raw(url, "application/json", Bytes::from(frame)).timeout(timeout);
    if let Some(token) = session {
        req = req.header(SESSION_HEADER, token);
    }
    http.exchange(&req).await
}
