//! HTP — Streamable HTTP (basic/transports): what a POST, a GET and a
//! DELETE on the endpoint get back, SSE streams (priming, the response,
//! their end, `retry`, event ids, resumption), sessions and the
//! `MCP-Protocol-Version` and `Origin` checks. Every rule is written for
//! HTTP only. A server that issues no `MCP-Session-Id` skips the session
//! rules (MCP25-HTP-012…016) and is judged on every other one (digest §15
//! D6).
//!
//! The stream rules shape requests the connection would not send (a header
//! left out or bent, `Last-Event-ID`) and read the event stream themselves,
//! event by event, so that ids, `retry` and the end of the stream are seen.

use super::client::{PROTOCOL_VERSION, Transport};
use super::rule::Mcp25Rule;
use super::session::{Judgement, Session};
use crate::suite::mcp::Keyword;
use crate::suite::mcp::client::clip;
use crate::suite::mcp::wire::{ACCEPT_BOTH, H_LAST_EVENT_ID, H_PROTOCOL_VERSION, H_SESSION_ID};
use crate::suite::{Exchange, Outcome, ResponseRecord};
use crate::transport::sse::{SseReader, is_event_stream};
use crate::transport::{HttpClient, HttpRequest, excerpt, redact_headers};
use bytes::BytesMut;
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use url::Url;

mod rules;
mod sessions;

pub(crate) use rules::RULES;

/// Most events read from one stream.
const MAX_EVENTS: usize = 64;
/// The longest a resumption waits for the `retry` delay the server asked for.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(5);

/// One dispatched event of a stream.
#[derive(Debug, Clone)]
struct Event {
    id: Option<String>,
    data: String,
    /// The JSON-RPC message the data holds, when it is JSON.
    message: Option<Value>,
}

/// How reading a response ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// The server ended the body.
    Closed,
    /// Still open when protocheck stopped reading.
    Open,
    /// The body broke off with an error (a reset, a bound exceeded).
    Failed,
}

/// What came back for one request a rule shaped itself.
#[derive(Debug, Clone)]
struct Raw {
    status: Option<u16>,
    content_type: Option<String>,
    sse: bool,
    session_id: Option<String>,
    events: Vec<Event>,
    /// The JSON body of an answer that is not an event stream.
    body: Option<Value>,
    body_len: usize,
    /// The index of the event holding the awaited response.
    answer: Option<usize>,
    /// The `retry` field the stream carried, if any.
    retry: Option<u64>,
    end: End,
    exchange: Exchange,
}

impl Raw {
    /// Nothing read yet for the request `exchange` records.
    fn unanswered(exchange: Exchange) -> Self {
        Self {
            status: None,
            content_type: None,
            sse: false,
            session_id: None,
            events: Vec::new(),
            body: None,
            body_len: 0,
            answer: None,
            retry: None,
            end: End::Failed,
            exchange,
        }
    }

    fn describe(&self) -> String {
        let Some(status) = self.status else {
            return format!(
                "no answer ({})",
                self.exchange.error.as_deref().unwrap_or("no response")
            );
        };
        let media = self
            .content_type
            .as_deref()
            .map_or("no Content-Type".to_owned(), |c| {
                format!("`{}`", clip(c, 80))
            });
        if self.sse {
            return format!("HTTP {status} {media} with {} events", self.events.len());
        }
        match &self.body {
            Some(body) if body.get("error").is_some() => format!(
                "HTTP {status} {media} with JSON-RPC error {}",
                clip(&body["error"].to_string(), 160)
            ),
            Some(body) if body.get("result").is_some() => {
                format!("HTTP {status} {media} with a result")
            }
            Some(body) => format!("HTTP {status} {media}: {}", clip(&body.to_string(), 160)),
            None if self.body_len == 0 => format!("HTTP {status} with an empty body"),
            None => format!("HTTP {status} {media} with a body that is not JSON"),
        }
    }

    /// The first event id the stream carried.
    fn first_id(&self) -> Option<&str> {
        self.events.iter().find_map(|e| e.id.as_deref())
    }

    /// The last event id the stream carried.
    fn last_id(&self) -> Option<&str> {
        self.events.iter().rev().find_map(|e| e.id.as_deref())
    }

    /// The messages the stream (or the JSON body) carried.
    fn messages(&self) -> Vec<&Value> {
        let mut all: Vec<&Value> = self
            .events
            .iter()
            .filter_map(|e| e.message.as_ref())
            .collect();
        all.extend(self.body.as_ref());
        all
    }
}

/// How long to read a response.
#[derive(Debug, Clone)]
enum Read {
    /// Up to the response with this id (within `hard`), then for `linger`
    /// more to see whether the stream ends.
    Answer {
        id: Value,
        hard: Duration,
        linger: Duration,
    },
    /// For this long after the headers (a GET stream).
    Window(Duration),
}

/// Whether `frame` is a JSON-RPC response (a result or an error, no method).
fn is_response(frame: &Value) -> bool {
    frame.as_object().is_some_and(|o| {
        !o.contains_key("method") && (o.contains_key("result") || o.contains_key("error"))
    })
}

/// The HTTP client and URL of the run, or the skip that says there are none.
fn target(s: &Session) -> Result<(&HttpClient, &Url), Judgement> {
    s.client
        .http_target()
        .ok_or_else(|| Judgement::skip("not applicable: the target is not an HTTP endpoint"))
}

/// A request as a 2025-11-25 client sends it after `initialize`: a POST of
/// `body` accepting JSON and SSE (a GET or DELETE accepting SSE when
/// `body` is none), with the negotiated version, `session`'s id and the
/// run's bearer token.
fn shaped(
    s: &Session,
    url: &Url,
    method: ::http::Method,
    body: Option<&Value>,
    session: Option<&str>,
) -> HttpRequest {
    let mut req = match body {
        Some(body) => HttpRequest::post_json(url.clone(), body).header("accept", ACCEPT_BOTH),
        None => HttpRequest {
            method,
            ..HttpRequest::get(url.clone())
        }
        .header("accept", "text/event-stream"),
    };
    req = req.header(
        H_PROTOCOL_VERSION,
        s.negotiated().unwrap_or(PROTOCOL_VERSION).to_owned(),
    );
    if let Some(sid) = session {
        req = req.header(H_SESSION_ID, sid);
    }
    // The run's credentials travel on these requests as on every other.
    if let Some(token) = s.client.bearer() {
        req = req.header("authorization", format!("Bearer {token}"));
    }
    req.timeout(s.client.timeout())
}

/// `req` with the header `name` set to `value` (or removed, for none).
fn set_header(mut req: HttpRequest, name: &str, value: Option<&str>) -> HttpRequest {
    req.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    match value {
        Some(value) => req.header(name, value),
        None => req,
    }
}

/// A JSON-RPC request frame.
fn frame(id: &Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Sends `req` and reads its answer as `read` says, bounded in time, size and
/// number of events.
async fn send(s: &Session, http: &HttpClient, req: HttpRequest, read: Read) -> Raw {
    let limits = http.limits();
    let mut raw = Raw::unanswered(Exchange {
        request: req.record(limits.evidence_bytes),
        response: None,
        error: None,
    });
    let started = Instant::now();
    // A request that met no answer at all (no connection, no status within
    // the timeout) is sent once more before it counts as unsent: on a loaded
    // machine one such miss is the machine's, and a rule must not be judged
    // on one run and left unjudged on the next. These requests are pings,
    // lists, notifications for requests never sent, GETs, and DELETEs of a
    // session of the rule's own.
    let sent = match http.send_streaming(&req).await {
        Err(err) if err.is_transient() => http
            .send_streaming(&req)
            .await
            .map_err(|again| format!("{again} (sent twice; the first time: {err})")),
        sent => sent.map_err(|err| err.to_string()),
    };
    let resp = match sent {
        Ok(resp) => resp,
        Err(err) => {
            raw.exchange.error = Some(err);
            return raw;
        }
    };
    let header = |name: &str| {
        resp.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    raw.status = Some(resp.status);
    raw.content_type = header("content-type");
    raw.session_id = header(H_SESSION_ID);
    raw.sse = is_event_stream(&resp.headers);
    let headers = redact_headers(resp.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())));
    let now = tokio::time::Instant::now();
    let (hard, mut until) = match &read {
        Read::Answer { hard, .. } => (now + *hard, now + *hard),
        Read::Window(window) => (now + *window, now + *window),
    };
    let mut shown = String::new();
    let mut error = None;
    if raw.sse {
        let mut reader = SseReader::new(resp, limits);
        loop {
            match tokio::time::timeout_at(until, reader.next_event()).await {
                Err(_) => {
                    raw.end = End::Open;
                    break;
                }
                Ok(Ok(None)) => {
                    raw.end = End::Closed;
                    break;
                }
                Ok(Err(err)) => {
                    raw.end = End::Failed;
                    error = Some(err.to_string());
                    break;
                }
                Ok(Ok(Some(event))) => {
                    if shown.len() < limits.evidence_bytes {
                        if let Some(id) = &event.id {
                            shown.push_str(&format!("id: {id}\n"));
                        }
                        shown.push_str(&format!("data: {}\n\n", event.data));
                    }
                    let message = serde_json::from_str::<Value>(&event.data).ok();
                    if let Read::Answer { id, linger, .. } = &read
                        && raw.answer.is_none()
                        && message
                            .as_ref()
                            .is_some_and(|m| is_response(m) && m.get("id") == Some(id))
                    {
                        raw.answer = Some(raw.events.len());
                        until = (tokio::time::Instant::now() + *linger).min(hard);
                    }
                    raw.events.push(Event {
                        id: event.id,
                        data: event.data,
                        message,
                    });
                    if raw.events.len() >= MAX_EVENTS {
                        raw.end = End::Open;
                        break;
                    }
                }
            }
        }
        raw.retry = reader.retry_ms();
        raw.body_len = raw.events.len();
    } else {
        let mut body = resp.body;
        let mut bytes = BytesMut::new();
        raw.end = loop {
            match tokio::time::timeout_at(hard, body.next()).await {
                Err(_) => break End::Open,
                Ok(None) => break End::Closed,
                Ok(Some(Err(err))) => {
                    error = Some(err.to_string());
                    break End::Failed;
                }
                Ok(Some(Ok(chunk))) => {
                    if bytes.len() + chunk.len() > limits.max_body_bytes {
                        error = Some(format!(
                            "the body exceeds protocheck's {}-byte limit",
                            limits.max_body_bytes
                        ));
                        break End::Failed;
                    }
                    bytes.extend_from_slice(&chunk);
                }
            }
        };
        raw.body_len = bytes.len();
        raw.body = serde_json::from_slice(&bytes).ok();
        if raw.body.is_some() {
            s.client.record_rtt(started.elapsed());
        }
        shown = excerpt(&bytes, limits.evidence_bytes).0;
    }
    let (body, truncated) = excerpt(shown.as_bytes(), limits.evidence_bytes);
    raw.exchange.response = Some(ResponseRecord {
        status: raw.status,
        headers,
        body,
        truncated,
        elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    });
    raw.exchange.error = error;
    raw
}

/// How long a stream is watched for what may not come (its end after the
/// response, an event on a GET stream): a multiple of the run's round trips,
/// between [`LINGER_FLOOR`] and two seconds. A stream that ends ends the
/// watch sooner.
fn linger(s: &Session) -> Duration {
    s.client.window(LINGER_FLOOR, Duration::from_secs(2))
}

/// The least a stream is watched. Nothing is sent on an SSE stream the
/// client could use as a barrier, and no answer on another stream is
/// ordered with its events (transports, "Multiple Connections"): only its
/// end says nothing more will come, and a server need not end a GET stream,
/// so a floor stays.
const LINGER_FLOOR: Duration = Duration::from_millis(150);

/// How long a stream that carried its response is read on for its end: a
/// multiple of the run's round trips, between [`END_FLOOR`] and two seconds.
/// The end is what a correct server sends (MCP25-HTP-006), so a stream that
/// ends ends the wait at once and the floor costs a correct server nothing;
/// cut short, it would warn a loaded server that ends its streams a little
/// late (the Python SDK behind authorization, under the interop panel's
/// load, once in about thirty runs at the [`LINGER_FLOOR`] of 150 ms).
fn end_linger(s: &Session) -> Duration {
    s.client.window(END_FLOOR, Duration::from_secs(2))
}

/// The least a stream that carried its response is read on for its end.
const END_FLOOR: Duration = Duration::from_millis(500);

/// A `ping` with a progress token, POSTed in `session` and read up to its
/// response and then until the stream ends (or [`end_linger`] passes). A
/// progress token invites a server to answer over SSE.
async fn post_ping(s: &Session, session: Option<&str>) -> Result<(Raw, Value), Judgement> {
    let (http, url) = target(s)?;
    let n = s.client.next_id();
    let id = json!(n);
    let token = json!(format!("pc-htp-{n}"));
    let body = frame(&id, "ping", json!({"_meta": {"progressToken": token}}));
    let req = shaped(s, url, ::http::Method::POST, Some(&body), session);
    let read = Read::Answer {
        id: id.clone(),
        hard: s.client.timeout(),
        linger: end_linger(s),
    };
    let raw = send(s, http, req, read).await;
    let answered = raw.answer.is_some() || raw.body.as_ref().is_some_and(is_response);
    s.client.record_token(token, answered);
    Ok((raw, id))
}

/// A GET on the endpoint in `session`, with `Last-Event-ID` when given.
async fn get(s: &Session, session: Option<&str>, last: Option<&str>, read: Read) -> Raw {
    let Ok((http, url)) = target(s) else {
        return send_nothing(s);
    };
    let mut req = shaped(s, url, ::http::Method::GET, None, session);
    if let Some(last) = last {
        req = req.header(H_LAST_EVENT_ID, last);
    }
    send(s, http, req, read).await
}

/// The answer to a request that could not be sent (not an HTTP target).
fn send_nothing(s: &Session) -> Raw {
    Raw::unanswered(Exchange {
        request: crate::suite::RequestRecord {
            line: "GET".into(),
            headers: Vec::new(),
            body: String::new(),
        },
        response: None,
        error: Some(format!("not an HTTP target ({})", s.transport().as_str())),
    })
}

/// A POST stream and, when its connection closed after an event id but
/// before the response, the resumption protocheck made to find it.
#[derive(Debug, Clone)]
struct PostStream {
    post: Raw,
    resumed: Option<Raw>,
}

impl PostStream {
    /// The response arrived on the POST stream or the resumed one.
    fn answered(&self) -> bool {
        self.post.answer.is_some() || self.resumed.as_ref().is_some_and(|r| r.answer.is_some())
    }

    /// The connection closed before the response came on it.
    fn closed_early(&self) -> bool {
        self.post.sse && self.post.answer.is_none() && self.post.end != End::Open
    }

    fn judge(&self, j: Judgement) -> Judgement {
        let j = j.with(&self.post.exchange);
        match &self.resumed {
            Some(r) => j.with(&r.exchange),
            None => j,
        }
    }
}

/// Two `ping`s POSTed on the run's connection, each read as [`post_ping`]
/// does; a stream closed early after an event id is resumed once with GET
/// and `Last-Event-ID`, after the `retry` delay (at most
/// [`MAX_RETRY_WAIT`]). Ok with no stream when the server answered both
/// with JSON: the skip for the stream rules.
async fn post_streams(s: &Session) -> Result<Vec<PostStream>, Judgement> {
    let session = s.main.session_id();
    let mut streams = Vec::new();
    let mut json_only = Vec::new();
    for _ in 0..2 {
        let (post, id) = post_ping(s, session.as_deref()).await?;
        if !post.sse {
            json_only.push(post);
            continue;
        }
        let mut stream = PostStream {
            post,
            resumed: None,
        };
        if stream.closed_early()
            && let Some(last) = stream.post.last_id().map(str::to_owned)
        {
            let wait = stream
                .post
                .retry
                .map_or(Duration::ZERO, Duration::from_millis)
                .min(MAX_RETRY_WAIT);
            tokio::time::sleep(wait).await;
            let hard = s
                .client
                .window(Duration::from_secs(2), Duration::from_secs(10));
            let read = Read::Answer {
                id,
                hard,
                linger: end_linger(s),
            };
            stream.resumed = Some(get(s, session.as_deref(), Some(&last), read).await);
        }
        streams.push(stream);
    }
    if streams.is_empty() {
        // Answers that are not 2xx say nothing of how the server streams.
        let served = json_only
            .iter()
            .all(|raw| raw.status.is_some_and(|st| (200..300).contains(&st)));
        let mut j = Judgement::skip(format!(
            "{}: the server answered the `ping`s protocheck sent (with a progress token) with \
             {}, not an SSE stream",
            if served {
                "not applicable"
            } else {
                "not verified"
            },
            json_only
                .iter()
                .map(Raw::describe)
                .collect::<Vec<_>>()
                .join(" and ")
        ));
        for raw in &json_only {
            j = j.with(&raw.exchange);
        }
        return Err(j);
    }
    Ok(streams)
}

/// A connection of the rule's own, initialized; with the session id it got.
pub(crate) async fn own_session(
    s: &Session,
) -> Result<(super::client::Connection, Option<String>), Judgement> {
    let conn = s.fresh().await?;
    let init = conn.initialize(PROTOCOL_VERSION).await;
    if init.result().is_none() {
        let j = Judgement::skip(format!(
            "not verified: a second `initialize` was answered {}",
            init.describe()
        ))
        .reply(&init);
        conn.close().await;
        return Err(j);
    }
    conn.initialized().await;
    let sid = conn.session_id();
    Ok((conn, sid))
}

/// The rule data shared by every HTP rule.
const fn rule(
    id: &'static str,
    title: &'static str,
    keyword: Keyword,
    on_failure: Outcome,
    spec_ref: &'static str,
    check: super::rule::Check,
) -> Mcp25Rule {
    Mcp25Rule::new(id, title, keyword, on_failure, spec_ref, "HTP", check).only_on(Transport::Http)
}

/// The skip of a session rule on a server without sessions.
fn no_sessions() -> Judgement {
    Judgement::skip(
        "not applicable: its `initialize` answer carried no MCP-Session-Id (judged as a server \
         that does not use sessions)",
    )
}
