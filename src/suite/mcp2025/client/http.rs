//! The Streamable HTTP wire: every frame is a POST to the endpoint accepting
//! both JSON and an event stream; after `initialize` each request carries
//! `MCP-Protocol-Version` and the `Mcp-Session-Id` the server issued. An SSE
//! answer is read frame by frame up to the response the request awaits.

use super::{Auth, Awaiting, CancelPlan, CancelProbe, Connection, Patience, Reply, State};
use crate::suite::ResponseRecord;
use crate::suite::mcp::client::clip;
use crate::suite::mcp::wire::{ACCEPT_BOTH, H_LAST_EVENT_ID, H_PROTOCOL_VERSION, H_SESSION_ID};
use crate::transport::sse::{SseReader, is_event_stream};
use crate::transport::{HttpClient, HttpRequest, StreamingResponse, TransportError, excerpt};
use crate::transport::{Limits, redact_headers};
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use serde_json::Value;
use std::time::{Duration, Instant};
use url::Url;

/// Most SSE events read from one answer before it is cut.
const MAX_EVENTS: usize = 64;
/// Most times a POST stream closed before its answer is polled with a GET.
const MAX_POLLS: usize = 3;
/// The longest a poll waits for the `retry` delay the server asked for.
const MAX_POLL_WAIT: Duration = Duration::from_secs(2);

/// How an SSE answer ended: whether the server closed it, the last event id
/// and the `retry` delay it set.
#[derive(Debug, Default)]
struct StreamEnd {
    closed: bool,
    last_id: Option<String>,
    retry_ms: Option<u64>,
}

/// Adds the session's headers to `req`.
fn with_session(mut req: HttpRequest, state: &State) -> HttpRequest {
    if let Some(version) = &state.version {
        req = req.header(H_PROTOCOL_VERSION, version.clone());
    }
    if let Some(sid) = &state.session_id {
        req = req.header(H_SESSION_ID, sid.clone());
    }
    match &state.auth {
        Some(Auth::Header(token)) => req = req.header("authorization", format!("Bearer {token}")),
        Some(Auth::Query(token)) => {
            req.url.query_pairs_mut().append_pair("access_token", token);
        }
        None => {}
    }
    req
}

/// The evidence of `req`, with a token sent in the query string hidden.
fn record_of(req: &HttpRequest, state: &State, max_body: usize) -> crate::suite::RequestRecord {
    let mut record = req.record(max_body);
    if let Some(Auth::Query(token)) = &state.auth
        && !token.is_empty()
    {
        let encoded: String = url::form_urlencoded::byte_serialize(token.as_bytes()).collect();
        record.line = record
            .line
            .replace(&encoded, "[redacted]")
            .replace(token.as_str(), "[redacted]");
    }
    record
}

/// POSTs `text` and reads the answer.
pub(super) async fn post(
    conn: &Connection,
    http: &HttpClient,
    url: &Url,
    state: &State,
    label: &str,
    text: String,
    (awaiting, patience): (&Awaiting, Patience),
) -> Reply {
    let timeout = patience.answer_wait(conn.client.timeout);
    let linger = patience.linger;
    let paced = super::measures_pace(label, &text);
    let req = HttpRequest::post_raw(url.clone(), "application/json", Bytes::from(text))
        .header("accept", ACCEPT_BOTH)
        .timeout(timeout);
    let req = with_session(req, state);
    let limits = http.limits();
    let record = record_of(&req, state, limits.evidence_bytes);
    let started = Instant::now();
    let mut reply = Reply::new(
        label,
        crate::suite::Exchange {
            request: record,
            response: None,
            error: None,
        },
    );
    let resp = match http.send_streaming(&req).await {
        Ok(resp) => resp,
        Err(err) => {
            reply.exchange.error = Some(err.to_string());
            reply.error = Some(err);
            return reply;
        }
    };
    reply.session_id = header(&resp, H_SESSION_ID);
    let headers = read_head(&mut reply, &resp);
    let deadline = tokio::time::Instant::from_std(resp.started) + timeout;
    let mut end = StreamEnd::default();
    let (mut body, mut truncated) = if reply.sse {
        read_sse(
            resp,
            limits,
            (awaiting, linger),
            (deadline, timeout),
            &mut reply,
            &mut end,
        )
        .await
    } else {
        read_body(resp, limits, deadline, &mut reply).await
    };
    // Transports, "Sending Messages to the Server": the server MAY close the
    // connection without terminating the SSE stream (e.g. after sending an
    // event ID), and the client SHOULD then poll the stream by reconnecting;
    // "Resumability and Redelivery": it resumes with a GET carrying
    // `Last-Event-ID`. A stream the server closed before the answer is
    // polled so, as a client following the specification would.
    let mut polls = 0;
    while reply.sse
        && reply.message.is_none()
        && reply.error.is_none()
        && *awaiting != Awaiting::Nothing
        && end.closed
        && polls < MAX_POLLS
    {
        // An id is sent back only as a plain header value of bounded length.
        let Some(last) = end
            .last_id
            .take()
            .filter(|id| id.len() <= 256 && id.bytes().all(|b| (0x20..0x7f).contains(&b)))
        else {
            break;
        };
        polls += 1;
        let wait = Duration::from_millis(end.retry_ms.unwrap_or(0)).min(MAX_POLL_WAIT);
        tokio::time::sleep(wait).await;
        let mut req = HttpRequest::get(url.clone())
            .header("accept", "text/event-stream")
            .timeout(timeout);
        req = with_session(req, state);
        // The answer to `initialize` names the session the stream belongs to.
        if state.session_id.is_none()
            && let Some(sid) = &reply.session_id
        {
            req = req.header(H_SESSION_ID, sid.clone());
        }
        req = req.header(H_LAST_EVENT_ID, last.clone());
        let Ok(resp) = http.send_streaming(&req).await else {
            break;
        };
        if !is_event_stream(&resp.headers) {
            break;
        }
        let deadline = tokio::time::Instant::from_std(resp.started) + timeout;
        end = StreamEnd::default();
        let (more, cut) = read_sse(
            resp,
            limits,
            (awaiting, linger),
            (deadline, timeout),
            &mut reply,
            &mut end,
        )
        .await;
        if body.len() < limits.evidence_bytes {
            body.push_str(&format!(
                "[stream closed; resumed with GET Last-Event-ID: {}]\n{more}",
                clip(&last, 64)
            ));
        }
        truncated |= cut;
    }
    // A polled answer waited on the server's `retry`: not a round trip.
    if reply.message.is_some() && polls == 0 && paced {
        conn.client.rtt.record(started.elapsed());
    }
    reply.exchange.response = Some(ResponseRecord {
        status: reply.status,
        headers,
        body,
        truncated,
        elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    });
    if let Some(err) = &reply.error {
        reply.exchange.error = Some(err.to_string());
    }
    reply
}

/// Reads a body that is not an event stream, within the size cap and the deadline.
async fn read_body(
    mut resp: StreamingResponse,
    limits: &Limits,
    deadline: tokio::time::Instant,
    reply: &mut Reply,
) -> (String, bool) {
    let limit = limits.max_body_bytes;
    let mut body = BytesMut::new();
    loop {
        match tokio::time::timeout_at(deadline, resp.body.next()).await {
            Err(_) => {
                let waited = deadline
                    .saturating_duration_since(tokio::time::Instant::from_std(resp.started));
                reply.error = Some(TransportError::Timeout(waited));
                break;
            }
            Ok(None) => break,
            Ok(Some(Err(err))) => {
                reply.error = Some(err);
                break;
            }
            Ok(Some(Ok(chunk))) => {
                if body.len() + chunk.len() > limit {
                    reply.error = Some(TransportError::TooLarge { limit });
                    break;
                }
                body.extend_from_slice(&chunk);
            }
        }
    }
    reply.body_len = body.len();
    reply.invalid_utf8 = std::str::from_utf8(&body).is_err();
    if !body.is_empty() && reply.error.is_none() {
        match serde_json::from_slice::<Value>(&body) {
            Ok(value) => reply.message = Some(value),
            Err(_) => reply.not_json = true,
        }
    }
    excerpt(&body, limits.evidence_bytes)
}

/// Reads an event stream up to the frame that answers what is awaited;
/// notifications and server requests before it are kept.
async fn read_sse(
    resp: StreamingResponse,
    limits: &Limits,
    (awaiting, linger): (&Awaiting, Option<Duration>),
    (deadline, timeout): (tokio::time::Instant, Duration),
    reply: &mut Reply,
    end: &mut StreamEnd,
) -> (String, bool) {
    let mut shown = String::new();
    let mut reader = SseReader::new(resp, limits);
    // Once the answer came: until when the rest of the stream is read.
    let mut after: Option<tokio::time::Instant> = None;
    loop {
        let until = after.map_or(deadline, |a| a.min(deadline));
        let event = match tokio::time::timeout_at(until, reader.next_event()).await {
            Err(_) if after.is_some() => break,
            Err(_) => {
                if *awaiting != Awaiting::Nothing {
                    reply.error = Some(TransportError::Timeout(timeout));
                }
                break;
            }
            Ok(Ok(None)) => {
                end.closed = true;
                break;
            }
            Ok(Err(err)) => {
                reply.invalid_utf8 = err.to_string().contains("not valid UTF-8");
                reply.error = Some(err);
                break;
            }
            Ok(Ok(Some(event))) => event,
        };
        reply.body_len += 1;
        if event.id.is_some() {
            end.last_id.clone_from(&event.id);
        }
        if shown.len() < limits.evidence_bytes {
            if let Some(name) = &event.event {
                shown.push_str(&format!("event: {name}\n"));
            }
            if let Some(id) = &event.id {
                shown.push_str(&format!("id: {id}\n"));
            }
            shown.push_str(&format!("data: {}\n\n", event.data));
        }
        if reply.body_len > MAX_EVENTS {
            break;
        }
        // An event with empty data primes reconnection (streamable HTTP,
        // "Sending Messages" 6): it carries no message.
        if event.data.trim().is_empty() {
            continue;
        }
        let Ok(frame) = serde_json::from_str::<Value>(&event.data) else {
            reply.not_json = true;
            continue;
        };
        match classify(&frame) {
            Kind::Notification if after.is_some() => reply.after.push(frame),
            Kind::Notification => reply.notifications.push(frame),
            Kind::Request => reply.server_requests.push(frame),
            Kind::Response(_) if after.is_some() => {}
            Kind::Response(id) => {
                if accepts(awaiting, id.as_ref()) {
                    reply.message = Some(frame);
                    match linger {
                        Some(window) => after = Some(tokio::time::Instant::now() + window),
                        None => break,
                    }
                }
            }
            Kind::Batch => {
                if *awaiting == Awaiting::Any {
                    reply.message = Some(frame);
                    break;
                }
            }
            Kind::Other => {}
        }
    }
    end.retry_ms = reader.retry_ms();
    let (text, cut) = excerpt(shown.as_bytes(), limits.evidence_bytes);
    (text, cut || shown.len() > limits.evidence_bytes)
}

/// POSTs a request and reads its answer; once a progress notification for
/// the plan's token comes on its stream, POSTs the cancellation and reads
/// on for the plan's watch.
pub(super) async fn post_then_cancel(
    conn: &Connection,
    http: &HttpClient,
    url: &Url,
    state: &State,
    label: &str,
    text: String,
    plan: &CancelPlan,
) -> CancelProbe {
    let timeout = conn.client.timeout;
    let req = HttpRequest::post_raw(url.clone(), "application/json", Bytes::from(text))
        .header("accept", ACCEPT_BOTH)
        .timeout(timeout + plan.watch);
    let req = with_session(req, state);
    let limits = http.limits();
    let started = Instant::now();
    let mut reply = Reply::new(
        label,
        crate::suite::Exchange {
            request: record_of(&req, state, limits.evidence_bytes),
            response: None,
            error: None,
        },
    );
    let mut probe = CancelProbe {
        reply: reply.clone(),
        cancelled: false,
        answered_after: None,
        ended_after: None,
    };
    let resp = match http.send_streaming(&req).await {
        Ok(resp) => resp,
        Err(err) => {
            reply.exchange.error = Some(err.to_string());
            reply.error = Some(err);
            probe.reply = reply;
            return probe;
        }
    };
    let headers = read_head(&mut reply, &resp);
    let mut deadline = tokio::time::Instant::from_std(resp.started) + timeout;
    let (body, truncated) = if reply.sse {
        let mut shown = String::new();
        let mut cancelled_at: Option<Instant> = None;
        let mut progressed = 0;
        let mut reader = SseReader::new(resp, limits);
        while reply.body_len <= MAX_EVENTS {
            let event = match tokio::time::timeout_at(deadline, reader.next_event()).await {
                Err(_) => {
                    if cancelled_at.is_none() {
                        reply.error = Some(TransportError::Timeout(timeout));
                    }
                    break;
                }
                Ok(Ok(None)) => {
                    probe.ended_after = cancelled_at.map(|at| at.elapsed());
                    break;
                }
                Ok(Err(err)) => {
                    reply.error = Some(err);
                    break;
                }
                Ok(Ok(Some(event))) => event,
            };
            reply.body_len += 1;
            if shown.len() < limits.evidence_bytes {
                shown.push_str(&format!("data: {}\n\n", event.data));
            }
            let Ok(frame) = serde_json::from_str::<Value>(&event.data) else {
                continue;
            };
            match classify(&frame) {
                Kind::Notification => {
                    if cancelled_at.is_none() && plan.cancel_due(&frame, &mut progressed) {
                        post(
                            conn,
                            http,
                            url,
                            state,
                            "notifications/cancelled",
                            plan.cancel.clone(),
                            (&Awaiting::Nothing, Patience::default()),
                        )
                        .await;
                        cancelled_at = Some(Instant::now());
                        probe.cancelled = true;
                        shown.push_str("(protocheck sent notifications/cancelled here)\n\n");
                        deadline = tokio::time::Instant::now() + plan.watch;
                    }
                    reply.notifications.push(frame);
                }
                Kind::Request => reply.server_requests.push(frame),
                Kind::Response(id) if id.as_ref() == Some(&plan.id) => {
                    reply.message = Some(frame);
                    probe.answered_after = cancelled_at.map(|at| at.elapsed());
                    break;
                }
                _ => {}
            }
        }
        let (text, cut) = excerpt(shown.as_bytes(), limits.evidence_bytes);
        (text, cut || shown.len() > limits.evidence_bytes)
    } else {
        read_body(resp, limits, deadline, &mut reply).await
    };
    reply.exchange.response = Some(ResponseRecord {
        status: reply.status,
        headers,
        body,
        truncated,
        elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    });
    if let Some(err) = &reply.error {
        reply.exchange.error = Some(err.to_string());
    }
    probe.reply = reply;
    probe
}

/// protocheck's answer to a request the server sent: `ping` gets an empty
/// result (any party answers it); anything else method-not-found, since
/// protocheck declares no client capability.
pub(super) fn refusal(request: &Value) -> String {
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let answer = if request.get("method").and_then(Value::as_str) == Some("ping") {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}})
    } else {
        serde_json::json!({"jsonrpc": "2.0", "id": id,
               "error": {"code": -32601, "message": "protocheck serves no client features"}})
    };
    answer.to_string()
}

/// The kinds of frames a server sends.
pub(super) enum Kind {
    Notification,
    Request,
    /// A response, with its id when it has one that is not null.
    Response(Option<Value>),
    Batch,
    Other,
}

pub(super) fn classify(frame: &Value) -> Kind {
    let Some(obj) = frame.as_object() else {
        return if frame.is_array() {
            Kind::Batch
        } else {
            Kind::Other
        };
    };
    let id = obj.get("id").filter(|v| !v.is_null()).cloned();
    if obj.contains_key("method") {
        return if obj.contains_key("id") {
            Kind::Request
        } else {
            Kind::Notification
        };
    }
    if obj.contains_key("result") || obj.contains_key("error") {
        return Kind::Response(id);
    }
    Kind::Other
}

/// Whether a response with `id` is the answer `awaiting` waits for: its id,
/// the same id in another JSON type (`7` answered as `"7"`: MCP25-RPC-001
/// judges that answer, so it must not be left unread), or a null id (the
/// answer to a request whose id could not be read).
pub(super) fn accepts(awaiting: &Awaiting, id: Option<&Value>) -> bool {
    match awaiting {
        Awaiting::Any => true,
        Awaiting::Id(want) => id.is_none_or(|got| got == want || loosely_same(want, got)),
        Awaiting::Nothing => true,
    }
}

/// Whether two ids read the same once their JSON type is set aside: a
/// number and a string holding it, or two numbers of equal value (`7`, `7.0`).
pub(super) fn loosely_same(a: &Value, b: &Value) -> bool {
    let text = |v: &Value| match v {
        Value::Number(n) => n.as_f64().map(|f| f.to_string()),
        Value::String(s) => s.trim().parse::<f64>().ok().map(|f| f.to_string()),
        _ => None,
    };
    match (text(a), text(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// A GET or DELETE on the endpoint with the session's headers, read up to
/// the first event or the end of `window` after the headers.
pub(super) async fn bare(
    conn: &Connection,
    http: &HttpClient,
    url: &Url,
    state: &State,
    method: ::http::Method,
    window: Duration,
    past_priming: bool,
) -> Reply {
    let req = HttpRequest {
        method: method.clone(),
        ..HttpRequest::get(url.clone())
    }
    .header("accept", "text/event-stream")
    .timeout(conn.client.timeout);
    let req = with_session(req, state);
    let limits = http.limits();
    let started = Instant::now();
    let mut reply = Reply::new(
        method.as_str(),
        crate::suite::Exchange {
            request: record_of(&req, state, limits.evidence_bytes),
            response: None,
            error: None,
        },
    );
    let resp = match http.send_streaming(&req).await {
        Ok(resp) => resp,
        Err(err) => {
            reply.exchange.error = Some(err.to_string());
            reply.error = Some(err);
            return reply;
        }
    };
    conn.client.rtt.record(started.elapsed());
    let headers = read_head(&mut reply, &resp);
    let deadline = tokio::time::Instant::now() + window;
    let mut shown = String::new();
    if reply.sse {
        let mut reader = SseReader::new(resp, limits);
        while let Ok(Ok(Some(event))) = tokio::time::timeout_at(deadline, reader.next_event()).await
        {
            shown.push_str(&format!(
                "data: {}\n\n",
                clip(&event.data, limits.evidence_bytes)
            ));
            reply.body_len += 1;
            if let Ok(frame) = serde_json::from_str::<Value>(&event.data) {
                reply.message = Some(frame);
            }
            // A priming event (empty data) carries no message: read on to
            // the first that does, when asked to.
            let priming = event.data.trim().is_empty();
            if !(past_priming && priming) || reply.body_len > MAX_EVENTS {
                break;
            }
        }
    } else {
        let mut body = resp.body;
        let mut bytes = BytesMut::new();
        while bytes.len() < limits.evidence_bytes {
            match tokio::time::timeout_at(deadline, body.next()).await {
                Ok(Some(Ok(chunk))) => bytes.extend_from_slice(&chunk),
                _ => break,
            }
        }
        reply.body_len = bytes.len();
        shown = excerpt(&bytes, limits.evidence_bytes).0;
    }
    let (body, truncated) = excerpt(shown.as_bytes(), limits.evidence_bytes);
    reply.exchange.response = Some(ResponseRecord {
        status: reply.status,
        headers,
        body,
        truncated,
        elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    });
    reply
}

/// An HTTP `GET` stream held open while `during` runs and for at most
/// `window` from when the stream opened: the messages the server sent on it,
/// with the GET's own reply as evidence. `during` starts once the response
/// head is in (or at once, when no stream opened), so that what it provokes
/// can travel on the stream.
pub(super) async fn watch<F>(
    conn: &Connection,
    http: &HttpClient,
    url: &Url,
    state: &State,
    window: Duration,
    during: F,
) -> (Reply, Vec<Value>, Reply)
where
    F: std::future::Future<Output = Reply>,
{
    let req = HttpRequest::get(url.clone())
        .header("accept", "text/event-stream")
        .timeout(conn.client.timeout);
    let req = with_session(req, state);
    let limits = http.limits();
    let started = Instant::now();
    let mut reply = Reply::new(
        "GET",
        crate::suite::Exchange {
            request: req.record(limits.evidence_bytes),
            response: None,
            error: None,
        },
    );
    let resp = {
        // Only the sending counts against the run's limit: the stream then
        // waits on `during`, which needs a permit of its own.
        let _permit = conn.client.permits.acquire().await;
        http.send_streaming(&req).await
    };
    let resp = match resp {
        Ok(resp) => resp,
        Err(err) => {
            reply.exchange.error = Some(err.to_string());
            reply.error = Some(err);
            return (reply, Vec::new(), during.await);
        }
    };
    let headers = read_head(&mut reply, &resp);
    let deadline = tokio::time::Instant::now() + window;
    let mut frames = Vec::new();
    let mut shown = String::new();
    let during_reply = if reply.sse && (200..300).contains(&resp.status) {
        let mut reader = SseReader::new(resp, limits);
        let reading = async {
            let mut events = 0;
            while events < MAX_EVENTS {
                match tokio::time::timeout_at(deadline, reader.next_event()).await {
                    Ok(Ok(Some(event))) => {
                        events += 1;
                        if event.data.is_empty() {
                            continue;
                        }
                        if shown.len() < limits.evidence_bytes {
                            shown.push_str(&format!(
                                "data: {}\n\n",
                                clip(&event.data, limits.evidence_bytes)
                            ));
                        }
                        if let Ok(frame) = serde_json::from_str::<Value>(&event.data) {
                            frames.push(frame);
                        }
                    }
                    _ => break,
                }
            }
        };
        let (_, during_reply) = tokio::join!(reading, during);
        during_reply
    } else {
        drop(resp);
        during.await
    };
    reply.body_len = frames.len();
    (reply.notifications, reply.server_requests) =
        frames.iter().cloned().partition(|f| f.get("id").is_none());
    let (body, truncated) = excerpt(shown.as_bytes(), limits.evidence_bytes);
    reply.exchange.response = Some(ResponseRecord {
        status: reply.status,
        headers,
        body,
        truncated,
        elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    });
    (reply, frames, during_reply)
}

/// A response header as text, when it is present and text.
fn header(resp: &StreamingResponse, name: &str) -> Option<String> {
    resp.headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// Records the head of `resp` in `reply` (status, media type, whether it is
/// an event stream) and returns its headers, credentials redacted, for the
/// evidence.
fn read_head(reply: &mut Reply, resp: &StreamingResponse) -> Vec<(String, String)> {
    reply.status = Some(resp.status);
    reply.content_type = header(resp, "content-type");
    reply.sse = is_event_stream(&resp.headers);
    redact_headers(resp.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_id_answered_in_another_json_type_is_still_its_answer() {
        let want = Awaiting::Id(json!(7));
        assert!(accepts(&want, Some(&json!(7))));
        assert!(accepts(&want, Some(&json!("7"))));
        assert!(accepts(&want, Some(&json!(7.0))));
        assert!(accepts(&want, None));
        assert!(!accepts(&want, Some(&json!(8))));
        assert!(!accepts(&want, Some(&json!("pc-7"))));
        assert!(!accepts(&Awaiting::Id(json!("pc-7")), Some(&json!(7))));
        assert!(!loosely_same(&json!(null), &json!(null)));
    }
}
