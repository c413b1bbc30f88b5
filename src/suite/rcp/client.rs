//! A recording RCP/1 client over HTTP (spec §5: `POST <base>/<method>`) and
//! stdio (NDJSON, one compact object per line). Every request and what came back
//! is kept as an [`Exchange`] so a finding can show its evidence.

use crate::suite::detect::join_method;
use crate::suite::runner::{Endpoint, EngineError, RunContext};
use crate::suite::{Exchange, RequestRecord, ResponseRecord};
use crate::transport::sse::{SseReader, is_event_stream};
use crate::transport::stdio::StdioChild;
use crate::transport::{HttpClient, HttpRequest, HttpResponse, TransportError, excerpt};
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use url::Url;

/// How long a stdio server is given to (wrongly) answer a notification. The
/// reference harness waits 0.5 s; a local child that answers at all answers
/// within milliseconds, so this keeps runs quick without missing real answers.
pub(crate) const STDIO_NOTIFICATION_WAIT: Duration = Duration::from_millis(300);

/// The pause between the two writes of a split frame: long enough that the
/// halves arrive in separate reads.
const SPLIT_PAUSE: Duration = Duration::from_millis(50);

/// Most unexpected lines read while waiting for the reply to a split frame.
const MAX_STRAYS: usize = 8;

/// How long an exited child's stderr is waited for, to quote it in the failure.
const STDERR_SETTLE: Duration = Duration::from_millis(250);

/// The HTTP header that carries a session token (protocheck decision 5, spec §5).
pub(crate) const SESSION_HEADER: &str = "rcp-session";

/// Most server notifications kept for the rules that judge them; later ones
/// are counted but not kept.
const MAX_OBSERVED: usize = 256;

/// A notification the server sent (`notifications/progress`, `…/log`, or any
/// frame with a `method` and no `id`), with what protocheck had asked for when
/// it arrived, so a rule can tell a solicited notification from one the
/// client never opted into (spec §7.1).
#[derive(Debug, Clone)]
pub(crate) struct Observed {
    pub frame: Value,
    /// The notification as evidence.
    pub exchange: Exchange,
    /// The method of the request whose answer was awaited.
    pub during: String,
    /// The `_meta.progressToken` of that request, if it carried one.
    pub token: Option<Value>,
    /// Whether any request so far had opted into logs (`_meta.logLevel`, or the
    /// `log` capability of `initialize`).
    pub log_opted_in: bool,
    /// Whether it arrived inside an HTTP event stream (else on stdout).
    pub in_stream: bool,
}

/// The answer to a request sent with `Accept: text/event-stream` (spec §5.2).
#[derive(Debug, Clone)]
pub(crate) struct Streamed {
    pub reply: Reply,
    /// The response was an event stream (`Content-Type: text/event-stream`); on
    /// stdio, always false.
    pub event_stream: bool,
    /// Notifications received before the reply (stream frames, or stdout lines).
    pub notifications: Vec<Value>,
    /// What was wrong with the stream itself, in words.
    pub problems: Vec<String>,
}

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
    /// Server notifications received so far (bounded), and how many in all.
    observed: Vec<Observed>,
    observed_total: usize,
    /// The method and progress token of the request being answered.
    awaiting: (String, Option<Value>),
    /// A request has opted into logs: `_meta.logLevel`, or the `log`
    /// capability of `initialize` (spec §17.1).
    log_opted_in: bool,
    /// The exchanges of notifications sent over HTTP, for the status rule.
    notification_exchanges: Vec<Exchange>,
    limits: crate::transport::Limits,
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
            observed: Vec::new(),
            observed_total: 0,
            awaiting: (String::new(), None),
            log_opted_in: false,
            notification_exchanges: Vec::new(),
            limits: limits.clone(),
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

    /// Every server notification received so far (bounded).
    pub fn observed(&self) -> &[Observed] {
        &self.observed
    }

    /// How many server notifications were received, kept or not.
    pub fn observed_total(&self) -> usize {
        self.observed_total
    }

    /// The HTTP exchanges of the notifications sent so far.
    pub fn notification_exchanges(&self) -> &[Exchange] {
        &self.notification_exchanges
    }

    fn observe(&mut self, frame: Value, in_stream: bool) {
        self.observed_total += 1;
        if self.observed.len() < MAX_OBSERVED {
            let (during, token) = self.awaiting.clone();
            let (body, truncated) = excerpt(frame.to_string().as_bytes(), self.evidence_bytes);
            let exchange = Exchange {
                request: RequestRecord {
                    line: format!("(while awaiting the reply to `{during}`)"),
                    headers: Vec::new(),
                    body: String::new(),
                },
                response: Some(ResponseRecord {
                    status: None,
                    headers: Vec::new(),
                    body,
                    truncated,
                    elapsed_ms: 0,
                }),
                error: None,
            };
            self.observed.push(Observed {
                frame,
                exchange,
                during,
                token,
                log_opted_in: self.log_opted_in,
                in_stream,
            });
        }
    }

    /// Notes what a request asks for before it is sent (see [`Observed`]).
    /// A client opts into logs with `_meta.logLevel` on a request, or with the
    /// `log` capability of its `initialize` (spec §7.1, §17.1).
    fn note_request(&mut self, method: &str, params: &Value) {
        let meta = params.get("_meta");
        let token = meta.and_then(|m| m.get("progressToken")).cloned();
        let log_capability = method == "initialize"
            && params
                .get("capabilities")
                .and_then(|c| c.get("log"))
                .is_some_and(|l| !l.is_null());
        if log_capability || meta.and_then(|m| m.get("logLevel")).is_some() {
            self.log_opted_in = true;
        }
        self.awaiting = (method.to_owned(), token);
    }

    /// Sends `{"jsonrpc":"2.0","id":id,"method":method,"params":params}`.
    pub async fn call(&mut self, id: Value, method: &str, params: Value) -> Result<Reply, Failure> {
        self.call_at(method, id, method, params).await
    }

    /// Like [`call`](Self::call), but over HTTP the path names `path_method`,
    /// which may differ from the body's method (spec §5.2 requires -32600 then).
    pub async fn call_at(
        &mut self,
        path_method: &str,
        id: Value,
        method: &str,
        params: Value,
    ) -> Result<Reply, Failure> {
        self.note_request(method, &params);
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let result = self
            .send_frame(path_method, Some(id.clone()), frame.to_string(), false)
            .await;
        self.retired_ids.push(id);
        result
    }

    /// Over stdio, sends the request after two blank lines and in two writes
    /// with a pause between them: a reader must tolerate blank lines and buffer
    /// until the newline (spec §5.1). Returns the reply to this request (or,
    /// when none came, the first line the server wrote instead) and the other
    /// lines the server wrote meanwhile, which are read off so later requests
    /// stay paired with their replies.
    pub async fn call_split(
        &mut self,
        id: Value,
        method: &str,
        params: Value,
    ) -> Result<(Reply, Vec<String>), Failure> {
        self.note_request(method, &params);
        let frame =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let started = Instant::now();
        let request = self.stdin_record(&frame);
        let (head, tail) = frame.split_at(frame.len() / 2);
        let written = match &mut self.wire {
            Wire::Stdio { child } => {
                let mut result = child.write_raw(format!("\n\n{head}").as_bytes()).await;
                if result.is_ok() {
                    tokio::time::sleep(SPLIT_PAUSE).await;
                    result = child.write_raw(format!("{tail}\n").as_bytes()).await;
                }
                result
            }
            Wire::Http { .. } => Err(TransportError::Protocol("not a stdio target".into())),
        };
        if let Err(error) = written {
            self.retired_ids.push(id);
            return Err(self.stdio_failure(request, error).await);
        }
        let mut strays: Vec<String> = Vec::new();
        let answer = loop {
            // Once the server has written something else, more of it is
            // waited for only briefly.
            let wait = if strays.is_empty() {
                self.timeout
            } else {
                STDIO_NOTIFICATION_WAIT
            };
            match self.stdio_read_reply(wait).await {
                Ok(line) => {
                    let ours = serde_json::from_str::<Value>(&line)
                        .ok()
                        .and_then(|v| v.get("id").cloned())
                        .is_some_and(|got| got == id);
                    if ours {
                        break Ok((line, true));
                    }
                    strays.push(line);
                    if strays.len() >= MAX_STRAYS {
                        break Ok((strays.remove(0), false));
                    }
                }
                Err(TransportError::Timeout(_)) if !strays.is_empty() => {
                    break Ok((strays.remove(0), false));
                }
                Err(error) => break Err(error),
            }
        };
        self.retired_ids.push(id.clone());
        match answer {
            Ok((line, ours)) => {
                self.answered = true;
                let reply = self.stdio_reply(method, Some(id), request, &line, started);
                // A line that is not the reply to this request is judged by the
                // framing rule alone, not as this request's reply.
                let reply = Reply {
                    framed: ours,
                    ..reply
                };
                self.replies.push(reply.clone());
                Ok((reply, strays))
            }
            Err(error) => Err(self.stdio_failure(request, error).await),
        }
    }

    /// Sends a request asking for an event stream (spec §5.2: `Accept:
    /// text/event-stream`), reading progress frames and the final response.
    /// Over stdio the request is sent as usual and the notifications that
    /// precede the reply on stdout are returned with it.
    pub async fn call_stream(
        &mut self,
        id: Value,
        method: &str,
        params: Value,
    ) -> Result<Streamed, Failure> {
        let before = self.observed.len();
        let Wire::Http { base, http } = &self.wire else {
            let reply = self.call(id, method, params).await?;
            let notifications = self.observed[before..]
                .iter()
                .map(|o| o.frame.clone())
                .collect();
            return Ok(Streamed {
                reply,
                event_stream: false,
                notifications,
                problems: Vec::new(),
            });
        };
        let (base, http) = (base.clone(), http.clone());
        self.note_request(method, &params);
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let url = join_method(&base, method);
        let mut req =
            HttpRequest::post_raw(url, "application/json", Bytes::from(frame.to_string()))
                .timeout(self.timeout)
                .header("accept", "text/event-stream, application/json");
        if let Some(token) = &self.session {
            req = req.header(SESSION_HEADER, token.clone());
        }
        self.retired_ids.push(id.clone());
        let request = req.record(self.evidence_bytes);
        let started = Instant::now();
        let response = match http.send_streaming(&req).await {
            Ok(r) => r,
            Err(error) => {
                return Err(Failure {
                    exchange: Exchange {
                        request,
                        response: None,
                        error: Some(error.to_string()),
                    },
                    error,
                });
            }
        };
        self.answered = true;
        let status = response.status;
        let headers = response.headers.clone();
        let event_stream = is_event_stream(&headers);
        let mut problems = Vec::new();
        let mut notifications = Vec::new();
        let mut final_frame: Option<Value> = None;
        let mut raw = String::new();
        let mut failure: Option<TransportError> = None;
        if event_stream {
            let mut reader = SseReader::new(response, &self.limits);
            loop {
                match reader.next_event().await {
                    Ok(Some(event)) => {
                        if raw.len() < self.evidence_bytes {
                            raw.push_str("data: ");
                            raw.push_str(&event.data);
                            raw.push_str("\n\n");
                        }
                        let Ok(value) = serde_json::from_str::<Value>(&event.data) else {
                            problems.push(format!(
                                "an event's data is not JSON: {}",
                                excerpt(event.data.as_bytes(), 80).0
                            ));
                            continue;
                        };
                        let is_notification =
                            value.get("method").is_some() && value.get("id").is_none();
                        if final_frame.is_some() {
                            problems.push(format!(
                                "a frame followed the final response; the stream must end after it: {}",
                                excerpt(value.to_string().as_bytes(), 80).0
                            ));
                        } else if is_notification {
                            notifications.push(value.clone());
                            self.observe(value, true);
                        } else {
                            final_frame = Some(value);
                        }
                    }
                    Ok(None) => break,
                    Err(error) => {
                        failure = Some(error);
                        break;
                    }
                }
            }
        } else {
            // A buffered answer: read it whole, within the body limit and the timeout.
            let limit = self.limits.max_body_bytes;
            let mut body = BytesMut::new();
            let mut stream = response.body;
            let read = async {
                while let Some(chunk) = stream.next().await {
                    let chunk = chunk?;
                    if body.len() + chunk.len() > limit {
                        return Err(TransportError::TooLarge { limit });
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(())
            };
            match tokio::time::timeout(self.timeout, read).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => failure = Some(e),
                Err(_) => failure = Some(TransportError::Timeout(self.timeout)),
            }
            raw = excerpt(&body, self.evidence_bytes).0;
            if !body.iter().all(u8::is_ascii_whitespace) {
                match serde_json::from_slice::<Value>(&body) {
                    Ok(v) => final_frame = Some(v),
                    Err(_) => problems.push("the body is not JSON".to_owned()),
                }
            }
        }
        let (body_excerpt, truncated) = excerpt(raw.as_bytes(), self.evidence_bytes);
        let exchange = Exchange {
            request,
            response: Some(ResponseRecord {
                status: Some(status),
                headers: crate::transport::redact_headers(
                    headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())),
                ),
                body: body_excerpt,
                truncated,
                elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            }),
            error: failure.as_ref().map(ToString::to_string),
        };
        if let Some(error) = failure
            && final_frame.is_none()
        {
            return Err(Failure { exchange, error });
        }
        let body = match final_frame {
            Some(v) => Body::Json(v),
            None => Body::Empty,
        };
        let framed = matches!(body, Body::Json(_));
        let reply = Reply {
            method: method.to_owned(),
            request_id: Some(id),
            exchange,
            status: Some(status),
            body,
            framed,
            batch: false,
        };
        self.replies.push(reply.clone());
        Ok(Streamed {
            reply,
            event_stream,
            notifications,
            problems,
        })
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
                if self.notification_exchanges.len() < MAX_OBSERVED {
                    self.notification_exchanges.push(exchange.clone());
                }
                let resp = resp.map_err(|error| Failure {
                    exchange: exchange.clone(),
                    error,
                })?;
                self.answered = true;
                // Decision 6: a JSON-RPC body is an answer. Anything else (204,
                // an empty 2xx, or an HTTP-level status without JSON) is silence
                // at the JSON-RPC layer; its status is judged by RCP-OUT-003.
                let body = parse_body(&resp.body);
                if !matches!(body, Body::Json(_)) {
                    return Ok(Notified::Silent(exchange));
                }
                Ok(Notified::Answered(Reply {
                    method: method.to_owned(),
                    request_id: None,
                    exchange,
                    status: Some(resp.status),
                    body,
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
                // An event stream nobody asked for is the streaming rules'
                // concern (RCP-L2-007), not a malformed JSON reply.
                let framed = !matches!(body, Body::Empty)
                    && !is_event_stream(&resp.headers)
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
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(TransportError::Timeout(wait));
            }
            let Wire::Stdio { child } = &mut self.wire else {
                return Err(TransportError::Protocol("not a stdio target".into()));
            };
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
                self.observe(value, false);
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
