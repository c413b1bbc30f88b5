//! Sending over stdio (transports, "stdio"): one child process per run,
//! started, bounded and ended by [`StdioChild`] as for every stdio suite. A
//! probe's body is written as one line; the answer is the line whose
//! JSON-RPC id matches. Notifications and the server's own requests read
//! meanwhile are set aside in the [`Reply`] (a request is refused at once,
//! since protocheck declares no client capability); responses to other ids
//! are stray frames. A probe's HTTP headers are not sent: there are none on
//! stdio, and the rules about them do not run over it. A [`Reply`] over stdio
//! has no HTTP status, media type or stream, and says so (`stdio`).
//!
//! One exchange runs at a time: the child reads its stdin in order, and the
//! lines of two answers awaited at once would have to be sorted by id anyway.

use super::{Probe, Reply, clip};
use crate::suite::{Exchange, RequestRecord, ResponseRecord};
use crate::transport::stdio::StdioChild;
use crate::transport::{TransportError, excerpt};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// Most lines read while one answer is awaited.
const MAX_LINES: usize = 256;
/// Most frames of each kind set aside in one reply.
const MAX_SET_ASIDE: usize = 64;
/// Most ids remembered as answered or given up on.
const MAX_RETIRED: usize = 1024;

/// The child of a stdio run, shared by every clone of the run's client.
pub(crate) struct StdioLink {
    inner: Mutex<Inner>,
}

struct Inner {
    child: Option<StdioChild>,
    /// Ids answered or given up on: a late reply carrying one is skipped.
    retired: Vec<Value>,
}

impl Inner {
    fn retire(&mut self, id: Value) {
        if self.retired.len() >= MAX_RETIRED {
            self.retired.remove(0);
        }
        self.retired.push(id);
    }
}

/// What the server refuses a request it sent with: protocheck serves no
/// client feature (and a 2026-07-28 server sends no request at all).
fn refusal(request: &Value) -> String {
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    json!({"jsonrpc": "2.0", "id": id,
           "error": {"code": -32601, "message": "protocheck serves no client features"}})
    .to_string()
}

/// Whether a response's id answers the request's: equal, or the same
/// number written as a string (`"7"` for `7`). No 2026-07-28 rule judges the
/// id's JSON type, and a server that changes it must not make every request
/// wait out its timeout.
fn same_id(response: Option<&Value>, request: Option<&Value>) -> bool {
    match (response, request) {
        (Some(a), Some(b)) if a == b => true,
        (Some(Value::String(a)), Some(Value::Number(b)))
        | (Some(Value::Number(b)), Some(Value::String(a))) => *a == b.to_string(),
        _ => false,
    }
}

fn push_bounded(list: &mut Vec<Value>, frame: Value) {
    if list.len() < MAX_SET_ASIDE {
        list.push(frame);
    }
}

impl StdioLink {
    pub(crate) fn new(child: StdioChild) -> Self {
        Self {
            inner: Mutex::new(Inner {
                child: Some(child),
                retired: Vec::new(),
            }),
        }
    }

    /// Ends the child (stdin closed, then killed if it lingers).
    pub(crate) async fn close(&self) {
        let child = self.inner.lock().await.child.take();
        if let Some(child) = child {
            child.close().await;
        }
    }

    /// Writes `probe` and reads its answer within `timeout`. With a `listen`
    /// window, reading stops at the first notification (the subscription's
    /// acknowledgement) or when the window ends, and the subscription is then
    /// cancelled with `notifications/cancelled`, as a stdio client ends one.
    pub(crate) async fn exchange(
        &self,
        probe: &Probe,
        timeout: Duration,
        listen: Option<Duration>,
        evidence_bytes: usize,
    ) -> (Reply, Option<Duration>) {
        let text = probe.body.to_string();
        let exchange = Exchange {
            request: RequestRecord {
                line: "stdin".to_owned(),
                headers: Vec::new(),
                body: excerpt(text.as_bytes(), evidence_bytes).0,
            },
            response: None,
            error: None,
        };
        let mut reply = Reply::over_stdio(probe, exchange);
        let mut inner = self.inner.lock().await;
        let started = Instant::now();
        let Some(child) = inner.child.as_mut() else {
            reply.fail_with(TransportError::Io("the server is closed".into()));
            return (reply, None);
        };
        if let Err(err) = child.write_line(&text).await {
            reply.fail_with(err);
            return (reply, None);
        }
        // A notification is not answered; 2026-07-28 removed `ping`, so no
        // barrier follows it.
        if probe.notification {
            return (reply, None);
        }
        let id = probe.id().cloned();
        let deadline = started + listen.unwrap_or(timeout);
        let mut answer: Option<String> = None;
        for _ in 0..MAX_LINES {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let Some(child) = inner.child.as_mut() else {
                break;
            };
            let line = match child.read_line(remaining).await {
                Ok(line) => line,
                Err(TransportError::Timeout(_)) if listen.is_some() => break,
                Err(TransportError::Timeout(_)) => {
                    reply.fail_with(TransportError::Timeout(timeout));
                    break;
                }
                Err(err) => {
                    reply.fail_with(err);
                    break;
                }
            };
            let Ok(frame) = serde_json::from_str::<Value>(&line) else {
                push_bounded(&mut reply.stray_frames, Value::String(clip(&line, 200)));
                continue;
            };
            let has_method = frame.get("method").is_some();
            let frame_id = frame.get("id").filter(|v| !v.is_null()).cloned();
            if has_method && frame_id.is_some() {
                let _ = match inner.child.as_mut() {
                    Some(child) => child.write_line(&refusal(&frame)).await,
                    None => Ok(()),
                };
                push_bounded(&mut reply.server_requests, frame);
            } else if has_method {
                push_bounded(&mut reply.notifications, frame);
                if listen.is_some() {
                    break;
                }
            } else if frame_id.is_some() && same_id(frame_id.as_ref(), id.as_ref()) {
                reply.message = frame.is_object().then_some(frame);
                answer = Some(line);
                break;
            } else if frame_id.as_ref().is_some_and(|i| inner.retired.contains(i)) {
                continue;
            } else {
                push_bounded(&mut reply.stray_frames, frame);
            }
        }
        let elapsed = started.elapsed();
        if let Some(id) = id.clone() {
            inner.retire(id);
        }
        if listen.is_some()
            && answer.is_none()
            && let (Some(id), Some(child)) = (id, inner.child.as_mut())
        {
            let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                "params": {"requestId": id}});
            let _ = child.write_line(&cancel.to_string()).await;
        }
        drop(inner);
        let shown = answer
            .as_deref()
            .map(str::as_bytes)
            .or_else(|| reply.notifications.is_empty().then_some(&b""[..]));
        let (body, truncated) = match shown {
            Some(bytes) => excerpt(bytes, evidence_bytes),
            None => excerpt(
                serde_json::to_string(&reply.notifications)
                    .unwrap_or_default()
                    .as_bytes(),
                evidence_bytes,
            ),
        };
        reply.body_len = answer.as_ref().map_or(0, String::len);
        if answer.is_some() || !reply.notifications.is_empty() {
            reply.exchange.response = Some(ResponseRecord {
                status: None,
                headers: Vec::new(),
                body,
                truncated,
                elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            });
        }
        let rtt = answer.is_some().then_some(elapsed);
        (reply, rtt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_answers_its_request_in_either_json_type_and_no_other() {
        assert!(same_id(Some(&json!(7)), Some(&json!(7))));
        assert!(same_id(Some(&json!("7")), Some(&json!(7))));
        assert!(same_id(Some(&json!(7)), Some(&json!("7"))));
        assert!(!same_id(Some(&json!(8)), Some(&json!(7))));
        assert!(!same_id(Some(&json!("07")), Some(&json!(7))));
        assert!(!same_id(None, Some(&json!(7))));
        assert!(!same_id(Some(&json!(null)), None));
    }
}
