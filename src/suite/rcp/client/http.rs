//! The HTTP wire (spec §5): the `POST <base>/<method>` of every request, and
//! a request that asks for an event stream (§5.2), read frame by frame.
//!
//! How requests travel (protocheck decision: the handshake is kept on one
//! connection). §5.2 "Sessions": "HTTP is request-scoped, so `initialize`
//! state does not persist across connections by default." A server may
//! therefore keep its handshake per connection, and a client that
//! initializes must then go on using that connection. The `spec` profile sends
//! every request of a run on one HTTP/1.1 connection, one after the other;
//! when that connection ends (the server closes it, or protocheck gives up on
//! an answer), the next request opens another, and its evidence says why.
//! When the connection that carried a successful `initialize` (and that the
//! server kept open after answering it) ends, protocheck sends `initialize`
//! again on the new one before anything else, unless a session token carries
//! the session: the spec's client would do the same. A server that closes
//! every connection after one answer is request-scoped, and gets no such
//! re-initialization. The `reference` profile opens a connection per request
//! and asks the server to close it (`Connection: close`), as the public
//! harness's `urllib` does.

use super::{Body, Failure, RcpClient, Reply, SESSION_HEADER, Streamed, Wire};
use crate::suite::{Exchange, RequestRecord};
use crate::transport::http::{USER_AGENT, redact_url};
use crate::transport::raw::{RawConnection, RawRequest, RawResponse};
use crate::transport::sse::{SseReader, is_event_stream};
use crate::transport::{
    HttpClient, HttpResponse, StreamingResponse, TransportError, excerpt, redact_headers,
};
use ::http::{HeaderMap, HeaderName, HeaderValue};
use base64::Engine as _;
use bytes::Bytes;
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use url::Url;

/// How the requests of an HTTP run travel (see the module's head).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Connections {
    /// One connection as long as it lasts; the `spec` profile.
    Kept,
    /// A new connection for each request, closed after it; the `reference`
    /// profile, as the harness's `urllib` sends.
    PerRequest,
}

/// Where the last successful `initialize` was answered.
#[derive(Debug, Clone)]
struct Handshake {
    /// The connection's number (1 for the run's first).
    connection: usize,
    /// The server kept that connection open after answering.
    kept: bool,
    /// The params it was sent with, to send again on a new connection.
    params: Value,
}

/// The HTTP wire's state: the base URL, the guarded client, and the
/// connection requests travel on.
pub(super) struct HttpWire {
    base: Url,
    http: HttpClient,
    policy: Connections,
    conn: Option<RawConnection>,
    /// Connections opened so far: the current one's number.
    opened: usize,
    /// Why each connection ended (index = number - 1), once it has.
    ended: Vec<Option<String>>,
    handshake: Option<Handshake>,
    /// The connection the last request was sent on, and whether it was the
    /// first request on it.
    last: (usize, bool),
    /// A lane of requests side by side with the run's own connection (see
    /// [`RcpClient::call_all`]): its connections are its own, so its
    /// evidence names no connection of the run's.
    lane: bool,
}

impl HttpWire {
    pub(super) fn new(base: Url, http: HttpClient, policy: Connections) -> Self {
        Self {
            base,
            http,
            policy,
            conn: None,
            opened: 0,
            ended: Vec::new(),
            handshake: None,
            last: (0, false),
            lane: false,
        }
    }

    /// A wire of its own for requests side by side with this one's: the
    /// same target and policy, no connection yet, no handshake (the
    /// session travels with its token, or the server keeps none per
    /// connection).
    pub(super) fn lane(&self) -> Self {
        Self {
            lane: true,
            ..Self::new(self.base.clone(), self.http.clone(), self.policy)
        }
    }

    /// Notes that `initialize` (sent with `params`) just succeeded on the
    /// connection of the last request.
    pub(super) fn handshake_succeeded(&mut self, params: Value) {
        let kept = self.conn.as_ref().is_some_and(|c| c.closed().is_none());
        self.handshake = Some(Handshake {
            connection: self.last.0,
            kept,
            params,
        });
    }

    /// The params to initialize a new connection with, when the connection
    /// that carried the handshake (kept open by the server) has ended and
    /// none has been opened since.
    pub(super) fn resume_params(&self) -> Option<Value> {
        if self.policy != Connections::Kept {
            return None;
        }
        let handshake = self.handshake.as_ref()?;
        let open = self.conn.as_ref().is_some_and(|c| c.closed().is_none());
        (handshake.kept && !open && self.opened == handshake.connection)
            .then(|| handshake.params.clone())
    }

    /// Why connection `n` ended, in words ("it is still open" when it has not).
    fn ended_words(&self, n: usize) -> String {
        match self.ended.get(n.wrapping_sub(1)).cloned().flatten() {
            Some(why) => why,
            None => "it is still open".to_owned(),
        }
    }

    /// When the last request went on another connection than the one
    /// `initialize` succeeded on: that, in words, for a finding that reads
    /// -32001 (NotInitialized) in its answer.
    pub(super) fn moved(&self) -> Option<String> {
        let handshake = self.handshake.as_ref()?;
        if self.last.0 == handshake.connection || self.policy != Connections::Kept {
            return None;
        }
        Some(format!(
            "sent on connection {} of the run, not on connection {}, where `initialize` \
             had succeeded ({}); §5.2: \"`initialize` state does not persist across \
             connections by default\"",
            self.last.0,
            handshake.connection,
            self.ended_words(handshake.connection)
        ))
    }

    /// The connection to send on: the open one, or a new one.
    async fn connection(&mut self) -> Result<&mut RawConnection, TransportError> {
        let reusable = self.policy == Connections::Kept
            && self.conn.as_ref().is_some_and(|c| c.closed().is_none());
        if !reusable {
            if let Some(old) = self.conn.take() {
                let why = old
                    .closed()
                    .unwrap_or("protocheck opens a connection per request")
                    .to_owned();
                self.end(why);
            }
            let conn = RawConnection::open(&self.http, &self.base).await?;
            self.opened += 1;
            self.ended.push(None);
            self.conn = Some(conn);
        }
        self.conn
            .as_mut()
            .ok_or_else(|| TransportError::Io("no connection".into()))
    }

    fn end(&mut self, why: String) {
        if let Some(slot) = self.ended.get_mut(self.opened.wrapping_sub(1))
            && slot.is_none()
        {
            *slot = Some(why);
        }
    }

    /// Sends `frame` as `POST <base>/<method>` and reads the answer whole
    /// (an event stream up to its final response, see [`final_frame_in`]).
    pub(super) async fn post(
        &mut self,
        session: Option<&str>,
        timeout: Duration,
        method: &str,
        frame: String,
        accept: Option<&str>,
        evidence_bytes: usize,
    ) -> (Exchange, Result<HttpResponse, TransportError>) {
        let url = join_method(&self.base, method);
        let mut headers: Vec<(String, String)> = vec![
            ("Content-Type".into(), "application/json".into()),
            ("User-Agent".into(), USER_AGENT.into()),
        ];
        if let Some(accept) = accept {
            headers.push(("Accept".into(), accept.into()));
        }
        if let Some(token) = session {
            headers.push((SESSION_HEADER.into(), token.into()));
        }
        // Credentials in the URL travel as Basic authentication, as the
        // pooled client sends them; evidence redacts the header.
        if !self.base.username().is_empty() {
            let pair = format!(
                "{}:{}",
                self.base.username(),
                self.base.password().unwrap_or("")
            );
            let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
            headers.push(("Authorization".into(), format!("Basic {encoded}")));
        }
        if self.policy == Connections::PerRequest {
            headers.push(("Connection".into(), "close".into()));
        }
        let mut path = url.path().to_owned();
        if let Some(q) = url.query() {
            path.push('?');
            path.push_str(q);
        }
        let body = Bytes::from(frame);
        let request = RawRequest {
            method: "POST",
            headers,
            body: body.clone(),
        };
        let mut result = self.send_once(&path, &request, timeout).await;
        // A kept connection the server closed while it was idle fails the
        // next request before any byte comes back: that request reached no
        // handler, so it is sent once more, on a new connection.
        if let Err(TransportError::Io(_)) = &result
            && let Some(conn) = &self.conn
            && !conn.answer_started()
            && conn.requests > 1
        {
            self.end("the server closed it while it was idle".to_owned());
            if let Some(old) = self.conn.as_mut() {
                old.set_timeout(Duration::ZERO);
            }
            self.conn = None;
            result = self.send_once(&path, &request, timeout).await;
        }
        // The target's rate limiter answered and closed the connection: the
        // request is sent again on a new one once the wait is over (the
        // throttle bounds the waits by the run's deadline).
        while let Err(TransportError::RateLimited {
            resend_after: Some(wait),
            ..
        }) = &result
        {
            self.end("the target's rate limiter closed it".to_owned());
            self.conn = None;
            tokio::time::sleep(*wait).await;
            result = self.send_once(&path, &request, timeout).await;
        }
        let (connection, first) = self.last;
        let mut line = format!("POST {}", redact_url(&url));
        if self.policy == Connections::Kept && first && connection > 1 && !self.lane {
            line.push_str(&format!(
                " (on a new connection, the run's number {connection}: connection {} ended: {})",
                connection - 1,
                self.ended_words(connection - 1)
            ));
        }
        let record = RequestRecord {
            line,
            headers: redact_headers(
                request
                    .headers
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.as_bytes())),
            ),
            body: excerpt(&body, evidence_bytes).0,
        };
        match result {
            Ok(raw) => {
                let response = as_response(raw);
                let exchange = Exchange {
                    request: record,
                    response: Some(response.record(evidence_bytes)),
                    error: None,
                };
                (exchange, Ok(response))
            }
            Err(error) => {
                if let Some(conn) = &self.conn
                    && let Some(why) = conn.closed()
                {
                    let why = why.to_owned();
                    self.end(why);
                }
                let exchange = Exchange {
                    request: record,
                    response: None,
                    error: Some(error.to_string()),
                };
                (exchange, Err(error))
            }
        }
    }

    async fn send_once(
        &mut self,
        path: &str,
        request: &RawRequest,
        timeout: Duration,
    ) -> Result<RawResponse, TransportError> {
        let conn = self.connection().await?;
        conn.set_timeout(timeout);
        let first = conn.requests == 0;
        let result = Box::pin(conn.send_to(path, request, &final_frame_in)).await;
        self.last = (self.opened, first);
        if let Some(why) = self.conn.as_ref().and_then(|c| c.closed()) {
            let why = why.to_owned();
            self.end(why);
        }
        result
    }
}

/// Whether an event-stream body read so far holds a JSON-RPC response (a
/// frame with `result` or `error`): the stream may end after it (§5.2 "The
/// stream ends after the final response frame").
fn final_frame_in(body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(body);
    text.split("\n\n").any(|event| {
        let data: String = event
            .lines()
            .filter_map(|l| l.trim_end_matches('\r').strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect::<Vec<_>>()
            .join("\n");
        serde_json::from_str::<Value>(&data).is_ok_and(|v| {
            v.get("method").is_none() && (v.get("result").is_some() || v.get("error").is_some())
        })
    })
}

/// A response read on a dedicated connection, as the pooled client returns one.
fn as_response(raw: RawResponse) -> HttpResponse {
    let mut headers = HeaderMap::new();
    for (name, value) in &raw.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.append(name, value);
        }
    }
    HttpResponse {
        status: raw.status,
        headers,
        body: raw.body,
        elapsed: raw.elapsed,
    }
}

impl RcpClient {
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
        let Wire::Http(_) = &self.wire else {
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
        self.note_request(method, &params);
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.retired_ids.push(id.clone());
        let Some((exchange, result, moved)) = Box::pin(self.http_post(
            method,
            frame.to_string(),
            Some("text/event-stream, application/json"),
        ))
        .await
        else {
            // Unreachable: the wire was matched as HTTP above.
            let error = TransportError::Protocol("not an HTTP target".into());
            return Err(Failure {
                exchange: Exchange {
                    request: RequestRecord {
                        line: format!("POST {method}"),
                        headers: Vec::new(),
                        body: String::new(),
                    },
                    response: None,
                    error: Some(error.to_string()),
                },
                error,
            });
        };
        let response = match result {
            Ok(r) => r,
            Err(TransportError::TooLarge { limit }) => {
                self.answered = true;
                let reply = Reply {
                    connection_note: moved,
                    ..super::oversized(method, Some(id), exchange, limit)
                };
                self.replies.push(reply.clone());
                return Ok(Streamed {
                    reply,
                    event_stream: false,
                    notifications: Vec::new(),
                    problems: Vec::new(),
                });
            }
            Err(error) => return Err(Failure { exchange, error }),
        };
        self.answered = true;
        let status = response.status;
        let event_stream = is_event_stream(&response.headers);
        let mut problems = Vec::new();
        let mut notifications = Vec::new();
        let mut final_frame: Option<Value> = None;
        let mut failure: Option<TransportError> = None;
        if event_stream {
            let streaming = StreamingResponse {
                status,
                headers: response.headers.clone(),
                body: futures::stream::once(std::future::ready(Ok(response.body.clone()))).boxed(),
                started: Instant::now(),
            };
            let mut reader = SseReader::new(streaming, &self.limits);
            loop {
                match reader.next_event().await {
                    Ok(Some(event)) => {
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
        } else if !response.body.iter().all(u8::is_ascii_whitespace) {
            match serde_json::from_slice::<Value>(&response.body) {
                Ok(v) => final_frame = Some(v),
                Err(_) => problems.push("the body is not JSON".to_owned()),
            }
        }
        let exchange = Exchange {
            error: failure.as_ref().map(ToString::to_string),
            ..exchange
        };
        let body = match (final_frame, failure) {
            (Some(v), _) => Body::Json(v),
            // A body or an event over the limit is an answer, with too much.
            (None, Some(TransportError::TooLarge { limit })) => Body::TooLarge { limit },
            (None, Some(error)) => return Err(Failure { exchange, error }),
            (None, None) => Body::Empty,
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
            connection_note: moved,
        };
        self.replies.push(reply.clone());
        Ok(Streamed {
            reply,
            event_stream,
            notifications,
            problems,
        })
    }
}

impl RcpClient {
    /// Sends `frame` over HTTP (`None` on stdio): first, when the
    /// connection that carried the handshake has ended, `initialize` again
    /// on the new one (see the module's head). Returns the exchange, the
    /// answer, and, when the request went on another connection than the
    /// handshake's, that in words.
    pub(super) async fn http_post(
        &mut self,
        method: &str,
        frame: String,
        accept: Option<&str>,
    ) -> Option<(
        Exchange,
        Result<HttpResponse, TransportError>,
        Option<String>,
    )> {
        let Wire::Http(wire) = &mut self.wire else {
            return None;
        };
        // The semaphore is never closed.
        let _place = self.in_flight.clone().acquire_owned().await.ok();
        let session = self.session.clone();
        if method != "initialize"
            && session.is_none()
            && let Some(params) = wire.resume_params()
        {
            let lost = wire.opened;
            let id = json!(format!("protocheck-resume-{}", lost + 1));
            let resume =
                json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params});
            // Boxed: the exchange's future is large, and a run's stack is not.
            let (mut exchange, result) = Box::pin(wire.post(
                None,
                self.timeout,
                "initialize",
                resume.to_string(),
                None,
                self.evidence_bytes,
            ))
            .await;
            exchange.request.line.push_str(&format!(
                " (protocheck initializes again: connection {lost}, where `initialize` had \
                 succeeded, ended; §5.2: \"`initialize` state does not persist across \
                 connections by default\")"
            ));
            if let Ok(resp) = &result
                && succeeded(resp)
            {
                wire.handshake_succeeded(params);
            }
            self.retired_ids.push(id.clone());
            let reply = match result {
                Ok(resp) => Some(super::http_reply(
                    "initialize",
                    Some(id),
                    exchange,
                    &resp,
                    false,
                )),
                Err(TransportError::TooLarge { limit }) => {
                    Some(super::oversized("initialize", Some(id), exchange, limit))
                }
                Err(_) => None,
            };
            if let Some(reply) = reply {
                self.answered = true;
                self.replies.push(reply);
            }
        }
        let Wire::Http(wire) = &mut self.wire else {
            return None;
        };
        let params = (method == "initialize")
            .then(|| serde_json::from_str::<Value>(&frame).ok())
            .flatten()
            .and_then(|f| f.get("params").cloned());
        let (exchange, result) = Box::pin(wire.post(
            session.as_deref(),
            self.timeout,
            method,
            frame,
            accept,
            self.evidence_bytes,
        ))
        .await;
        if let (Some(params), Ok(resp)) = (params, &result)
            && succeeded(resp)
        {
            wire.handshake_succeeded(params);
        }
        let moved = wire.moved();
        if matches!(result, Err(TransportError::Timeout(_))) {
            self.timed_out = true;
        }
        Some((exchange, result, moved))
    }
}

/// Whether an HTTP answer is a successful JSON-RPC response.
fn succeeded(resp: &HttpResponse) -> bool {
    serde_json::from_slice::<Value>(&resp.body)
        .is_ok_and(|v| v.get("result").is_some() && v.get("error").is_none())
}

/// `<base>/<method>`, the RCP HTTP binding's request path (spec §5).
pub fn join_method(base: &url::Url, method: &str) -> url::Url {
    let mut url = base.clone();
    let path = format!("{}/{}", base.path().trim_end_matches('/'), method);
    url.set_path(&path);
    url
}
