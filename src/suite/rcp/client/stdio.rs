//! The stdio wire: writing NDJSON frames to the child, reading the line that
//! answers a request while setting aside notifications and late replies, the
//! split-frame probe (spec §5.1), and turning a dead child into evidence.

use super::{
    Failure, MAX_STRAYS, RcpClient, Reply, SPLIT_PAUSE, STDERR_SETTLE, STDIO_NOTIFICATION_WAIT,
    Wire, parse_body,
};
use crate::suite::{Exchange, RequestRecord, ResponseRecord};
use crate::transport::{TransportError, excerpt};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

impl RcpClient {
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

    pub(super) fn stdin_record(&self, frame: &str) -> RequestRecord {
        RequestRecord {
            line: "stdin".to_owned(),
            headers: Vec::new(),
            body: excerpt(frame.as_bytes(), self.evidence_bytes).0,
        }
    }

    pub(super) async fn stdio_write(&mut self, frame: &str) -> Result<(), TransportError> {
        match &mut self.wire {
            Wire::Stdio { child } => child.write_line(frame).await,
            Wire::Http { .. } => Err(TransportError::Protocol("not a stdio target".into())),
        }
    }

    /// Reads the next line that can be an answer, within `wait`: notifications
    /// the server sends meanwhile (`notifications/log`, `…/progress`: a `method`
    /// and no `id`) and replies to retired ids are skipped (§9 client behaviour;
    /// the harness's one-line-per-request assumption, Q7, is not made here).
    pub(super) async fn stdio_read_reply(
        &mut self,
        wait: Duration,
    ) -> Result<String, TransportError> {
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

    pub(super) fn stdio_reply(
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
    pub(super) async fn stdio_failure(
        &mut self,
        request: RequestRecord,
        error: TransportError,
    ) -> Failure {
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
}
