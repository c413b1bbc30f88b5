//! Sending over the pooled HTTP client: the whole answer to a probe, read
//! as JSON or as an SSE stream within bounds and logged for the run-wide rules
//! when the probe was valid, and the bare GET or DELETE on the endpoint.

use super::{EchoSearch, McpClient, Probe, Reply, Seen, clip};
use crate::suite::mcp::wire;
use crate::suite::{Exchange, ResponseRecord};
use crate::transport::sse::{SseReader, is_event_stream};
use crate::transport::{TransportError, excerpt, redact_headers};
use bytes::BytesMut;
use futures::StreamExt;
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The longest the client waits after a final response on an SSE stream for
/// the stream to end. The spec says the final response SHOULD terminate the
/// stream (streamable-http, "Receiving Messages"); a short grace avoids
/// waiting on a server that keeps it open. The grace is derived from the
/// run's round-trip times ([`McpClient::adaptive_window`]) up to this, the
/// fixed grace protocheck used before, so a slow target loses no time it had.
pub const STREAM_END_GRACE: Duration = Duration::from_millis(1500);
/// Most replies kept for the run-wide rules.
const MAX_SEEN: usize = 600;
/// Most JSON-RPC frames kept from one SSE stream.
const MAX_FRAMES: usize = 64;

impl McpClient {
    /// Sends a probe and reads the whole answer, JSON or SSE, within bounds.
    ///
    /// Over HTTP, a probe that met no answer at all (no connection, or no
    /// status within the timeout) is sent once more, with the same id, when
    /// sending it twice changes nothing ([`Probe::may_be_sent_twice`]): on a
    /// loaded machine one such miss is the machine's, and the rule that
    /// reads the answer must not be decided by it on one run and not on the
    /// next.
    pub async fn send(&self, probe: &Probe) -> Reply {
        let reply = self.send_inner(probe, false, None).await;
        let unanswered = self.stdio.is_none()
            && reply.status.is_none()
            && reply
                .transport_error
                .as_ref()
                .is_some_and(TransportError::is_transient);
        if unanswered && self.may_be_sent_twice(probe) {
            return self.send_inner(probe, false, None).await;
        }
        reply
    }

    /// Sends a long-lived request (`subscriptions/listen`) and reads its stream
    /// until its first notification, or for a window derived from the run's
    /// round-trip times of at most `ceiling`, then closes it (closing is the
    /// cancellation).
    pub async fn listen(&self, probe: &Probe, ceiling: Duration) -> Reply {
        self.send_inner(probe, true, Some(ceiling)).await
    }

    async fn send_inner(&self, probe: &Probe, listen: bool, ceiling: Option<Duration>) -> Reply {
        let _permit = self.permits.acquire().await;
        if let Some(link) = &self.stdio {
            let window = listen.then(|| self.adaptive_window(ceiling.unwrap_or(self.timeout)));
            let evidence_bytes = self.http.limits().evidence_bytes;
            let (reply, rtt) = link
                .exchange(probe, self.timeout, window, evidence_bytes)
                .await;
            if let Some(rtt) = rtt {
                self.rtt.record(rtt);
            }
            self.log_answer(probe, &reply, listen).await;
            return reply;
        }
        let req = self.http_request(probe);
        // The request's distinctive header values (the User-Agent the HTTP
        // client adds among them), looked for in the answer before any of
        // it is redacted or cut.
        let mut echoes = EchoSearch::new(
            req.headers
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_str()))
                .chain(std::iter::once(("user-agent", self.http.user_agent()))),
            req.body.as_deref().unwrap_or_default(),
        );
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
        echoes.headers(headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())));
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
            event_ids: Vec::new(),
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
            stdio: false,
            echoes: Vec::new(),
        };
        let (shown_body, truncated) = if sse {
            self.read_sse(
                resp,
                probe,
                (listen, ceiling),
                started,
                &mut reply,
                &mut echoes,
            )
            .await
        } else {
            let read = self.read_json(resp, &mut reply, &mut echoes).await;
            if reply.transport_error.is_none() {
                self.rtt.record(started.elapsed());
            }
            read
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
        reply.echoes = echoes.found();
        self.log_answer(probe, &reply, listen).await;
        reply
    }

    /// Logs `reply` for the run-wide rules when it answers a valid modern
    /// request (see [`super::Intent`]), whichever way it was sent; `listen`: the
    /// request was a `subscriptions/listen`.
    pub(super) async fn log_answer(&self, probe: &Probe, reply: &Reply, listen: bool) {
        if probe.legacy || probe.notification || !probe.intent.is_valid() {
            return;
        }
        // Over stdio there is no bearer token to carry.
        let authorized = self.stdio.is_none()
            && self.bearer.is_some()
            && probe.header("authorization").is_none();
        let order = probe.id().and_then(wire::as_integer).unwrap_or(i64::MAX);
        self.log(reply, order, listen, authorized).await;
    }

    async fn log(&self, reply: &Reply, order: i64, listen: bool, authorized: bool) {
        let mut seen = self.seen.lock().await;
        // A reply is logged when something answered: an HTTP status, or
        // over stdio a line with the request's id.
        let answered = reply.status.is_some() || (reply.stdio && reply.message.is_some());
        if seen.len() >= MAX_SEEN || !answered {
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
            stdio: reply.stdio,
            refusal: wire::http_refusal(reply.status, reply.message.as_ref()),
            echoes: reply.echoes.clone(),
        });
    }

    /// Reads a non-SSE body within the size cap and the request timeout.
    async fn read_json(
        &self,
        mut resp: crate::transport::StreamingResponse,
        reply: &mut Reply,
        echoes: &mut EchoSearch,
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
        // Every byte read, as far as protocheck's size cap.
        echoes.body(&body);
        // The media type is judged by RES-005; the body is read as JSON whatever
        // it claims, so that one wrong header does not hide every other finding.
        reply.message = serde_json::from_slice::<Value>(&body)
            .ok()
            .filter(Value::is_object);
        excerpt(&body, self.http.limits().evidence_bytes)
    }

    /// Reads an SSE response: frames until the one answering the probe's id
    /// (its arrival, counted from `started`, is a round-trip time), then
    /// waits briefly for the stream to end. A listen stream is read for a
    /// window of at most its ceiling and then closed.
    async fn read_sse(
        &self,
        resp: crate::transport::StreamingResponse,
        probe: &Probe,
        (listen, ceiling): (bool, Option<Duration>),
        started: Instant,
        reply: &mut Reply,
        echoes: &mut EchoSearch,
    ) -> (String, bool) {
        let limits = self.http.limits();
        let evidence_bytes = limits.evidence_bytes;
        let mut shown = String::new();
        let mut reader = SseReader::new(resp, limits);
        let id = probe.id().cloned();
        let budget = ceiling.map_or(self.timeout, |c| self.adaptive_window(c));
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
            echoes.body(event.data.as_bytes());
            if let Some(name) = &event.event {
                echoes.body(name.as_bytes());
            }
            if let Some(event_id) = &event.id
                && reply.event_ids.len() < super::reply::MAX_EVENT_IDS
            {
                reply.event_ids.push(clip(event_id, 200));
            }
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
                self.rtt.record(started.elapsed());
                if listen || self.open_stream_seen.load(Ordering::Relaxed) {
                    break;
                }
                // The final response SHOULD terminate the stream: give it a moment.
                let grace = self.adaptive_window(STREAM_END_GRACE);
                match tokio::time::timeout(grace, reader.next_event()).await {
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
}
