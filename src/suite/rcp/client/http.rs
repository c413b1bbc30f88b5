//! The HTTP wire (spec §5): the `POST <base>/<method>` of every request, and
//! a request that asks for an event stream (§5.2), read frame by frame.

use super::{Body, Failure, RcpClient, Reply, SESSION_HEADER, Streamed, Wire};
use crate::suite::detect::join_method;
use crate::suite::{Exchange, ResponseRecord};
use crate::transport::sse::{SseReader, is_event_stream};
use crate::transport::{HttpClient, HttpRequest, HttpResponse, TransportError, excerpt};
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use url::Url;

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

/// `POST <base>/<method>` with the JSON-RPC body (spec §5), carrying the session
/// token when there is one.
pub(super) async fn post(
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
