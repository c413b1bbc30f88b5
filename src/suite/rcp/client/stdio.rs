//! The stdio wire: writing NDJSON frames to the child, reading the line that
//! answers a request while setting aside notifications and late replies, the
//! `ping` barrier that proves a notification went unanswered, the
//! split-frame probe (spec §5.1), and turning a dead child into evidence.

use super::{
    BARRIER_RTT_MULTIPLIER, Failure, HARNESS_NOTIFICATION_WAIT, MAX_STRAYS, Notified, Quiet,
    RcpClient, Reply, STDERR_SETTLE, STDIO_NOTIFICATION_WAIT, TAIL_CEILING, TAIL_FLOOR,
    TAIL_RTT_MULTIPLIER, Wire, oversized, parse_body,
};
use crate::suite::rtt::RttRecord;
use crate::suite::{Exchange, RequestRecord, ResponseRecord};
use crate::transport::{TransportError, excerpt};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// What came first after a notification and its barrier `ping`.
enum First {
    /// The barrier's reply: nothing answered the notification before it.
    Barrier,
    /// Something else: the notification's answer.
    Answer(Answer),
    /// Nothing within the wait, not even the barrier's reply.
    Nothing,
    Failed(TransportError),
}

/// A line that answered a frame which must not be answered.
enum Answer {
    Line(String),
    /// A line over protocheck's line limit (not read).
    Oversized(usize),
}

impl RcpClient {
    /// Over stdio, sends a frame that must not be answered, then a `ping` as a
    /// barrier, and reports whether a line answered the frame. RCP allows a
    /// `ping` at any time, before `initialize` too: the spec digest's
    /// "**`ping`**. … Callable any time." and L0 rule 1, "answer `info` and
    /// `ping` at any time" (rcp-1.0.md §3, §7). A server handles its stdin in
    /// order, so any line before the `ping`'s reply answers the frame (as the
    /// fixed wait used to see it), and the reply itself proves the silence
    /// without waiting it out. After that reply a short tail, scaled to the
    /// run's round trips, catches a server that answers out of order. A server
    /// that never answers the `ping` costs a wait bounded by the round trips,
    /// with the old fixed wait as its floor.
    ///
    /// The barrier is protocheck's, not a probe: its reply joins no
    /// [`replies`](Self::replies) list, no rule judges it, and its id is
    /// retired so a late reply is never taken for a later request's.
    pub(super) async fn stdio_unanswered(
        &mut self,
        method: &str,
        frame: String,
    ) -> Result<Notified, Failure> {
        let started = Instant::now();
        let request = self.stdin_record(&frame);
        if let Err(error) = self.stdio_write(&frame).await {
            return Err(self.stdio_failure(request, error).await);
        }
        if self.harness_reading {
            return self.harness_unanswered(method, request, started).await;
        }
        self.barriers += 1;
        // A string id that no server could take for a number: id-mangling
        // faults (numbers echoed as strings, numeric-looking strings as
        // numbers) leave it recognisable.
        let token = format!("protocheck-barrier-{}", self.barriers);
        let ping =
            json!({"jsonrpc": "2.0", "id": token, "method": "ping", "params": {"nonce": token}});
        let written = self.stdio_write(&ping.to_string()).await;
        let sent_at = Instant::now();
        let deadline = sent_at
            + stdio_wait(
                &self.rtt,
                BARRIER_RTT_MULTIPLIER,
                STDIO_NOTIFICATION_WAIT,
                self.timeout,
            );
        let first = match written {
            Err(error) => First::Failed(error),
            Ok(()) => self.until_barrier(&token, deadline).await,
        };
        let (answer, quiet) = match first {
            First::Barrier => {
                self.rtt.record(sent_at.elapsed());
                self.retired_ids.push(json!(token));
                let tail = stdio_wait(&self.rtt, TAIL_RTT_MULTIPLIER, TAIL_FLOOR, TAIL_CEILING);
                let answer = match self.stdio_read_reply(tail).await {
                    Ok(line) => Ok(Some(Answer::Line(line))),
                    Err(TransportError::TooLarge { limit }) => Ok(Some(Answer::Oversized(limit))),
                    Err(TransportError::Timeout(_)) => Ok(None),
                    Err(error) => Err(error),
                };
                (answer, Quiet::BeforeBarrier)
            }
            First::Answer(answer) => {
                // Read on to the barrier's reply, so that more lines answering
                // the frame are not taken for the reply to the next request.
                for _ in 0..MAX_STRAYS {
                    if !matches!(self.until_barrier(&token, deadline).await, First::Answer(_)) {
                        break;
                    }
                }
                self.retired_ids.push(json!(token));
                (Ok(Some(answer)), Quiet::BeforeBarrier)
            }
            First::Nothing => {
                self.retired_ids.push(json!(token));
                (Ok(None), Quiet::NoBarrier)
            }
            First::Failed(error) => {
                self.retired_ids.push(json!(token));
                (Err(error), Quiet::NoBarrier)
            }
        };
        match answer {
            Ok(Some(answer)) => {
                self.answered = true;
                let reply = match answer {
                    Answer::Line(line) => self.stdio_reply(method, None, request, &line, started),
                    Answer::Oversized(limit) => {
                        let error = TransportError::TooLarge { limit };
                        let exchange = Exchange {
                            request,
                            response: None,
                            error: Some(error.to_string()),
                        };
                        oversized(method, None, exchange, limit)
                    }
                };
                Ok(Notified::Answered(Reply {
                    framed: false,
                    ..reply
                }))
            }
            Ok(None) => Ok(Notified::Silent(
                Exchange {
                    request,
                    response: None,
                    error: None,
                },
                quiet,
            )),
            Err(error) => Err(self.stdio_failure(request, error).await),
        }
    }

    /// The harness's `notify` over stdio: no barrier; whatever line comes
    /// within its fixed wait (0.5 s, `select`) is the answer, and one line is
    /// read, as its `readline` reads it.
    async fn harness_unanswered(
        &mut self,
        method: &str,
        request: RequestRecord,
        started: Instant,
    ) -> Result<Notified, Failure> {
        match self.stdio_read_reply(HARNESS_NOTIFICATION_WAIT).await {
            Ok(line) => {
                self.answered = true;
                let reply = self.stdio_reply(method, None, request, &line, started);
                Ok(Notified::Answered(Reply {
                    framed: false,
                    ..reply
                }))
            }
            Err(TransportError::TooLarge { limit }) => {
                self.answered = true;
                let error = TransportError::TooLarge { limit };
                let exchange = Exchange {
                    request,
                    response: None,
                    error: Some(error.to_string()),
                };
                Ok(Notified::Answered(oversized(method, None, exchange, limit)))
            }
            Err(TransportError::Timeout(_)) => Ok(Notified::Silent(
                Exchange {
                    request,
                    response: None,
                    error: None,
                },
                Quiet::HarnessWait,
            )),
            Err(error) => Err(self.stdio_failure(request, error).await),
        }
    }

    /// Reads the next line (notifications and retired ids skipped) before
    /// `deadline`, telling the barrier's reply from any other line.
    async fn until_barrier(&mut self, token: &str, deadline: Instant) -> First {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.stdio_read_reply(wait).await {
            Ok(line) if is_barrier_reply(&line, token) => First::Barrier,
            Ok(line) => First::Answer(Answer::Line(line)),
            Err(TransportError::TooLarge { limit }) => First::Answer(Answer::Oversized(limit)),
            Err(TransportError::Timeout(_)) => First::Nothing,
            Err(error) => First::Failed(error),
        }
    }

    /// Over stdio, sends the request after two blank lines and in several
    /// writes, cut at the byte offsets `cuts` gives for the frame, with a
    /// pause after each write but the last: a reader must tolerate blank lines
    /// and buffer until the newline (spec §5.1). A cut may fall inside a
    /// multi-byte UTF-8 character: the bytes are written as they are. Returns
    /// the reply to this request (or, when none came, the first line the
    /// server wrote instead) and the other lines the server wrote meanwhile,
    /// which are read off so later requests stay paired with their replies.
    pub async fn call_split(
        &mut self,
        id: Value,
        method: &str,
        params: Value,
        cuts: fn(&str) -> Vec<usize>,
        pause: Duration,
    ) -> Result<(Reply, Vec<String>), Failure> {
        self.note_request(method, &params);
        let frame =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let started = Instant::now();
        let request = self.stdin_record(&frame);
        let segments = split_bytes(format!("\n\n{frame}\n").as_bytes(), 2, &cuts(&frame));
        let written = match &mut self.wire {
            Wire::Stdio { child } => {
                let mut result = Ok(());
                for (n, segment) in segments.iter().enumerate() {
                    if n > 0 {
                        tokio::time::sleep(pause).await;
                    }
                    result = child.write_raw(segment).await;
                    if result.is_err() {
                        break;
                    }
                }
                result
            }
            Wire::Http(_) => Err(TransportError::Protocol("not a stdio target".into())),
        };
        if let Err(error) = written {
            self.retired_ids.push(id);
            return Err(self.stdio_failure(request, error).await);
        }
        let mut strays: Vec<String> = Vec::new();
        let answer = loop {
            // Once the server has written something else, more of it is
            // waited for only as long as a barrier's reply would be (a few
            // round trips of this server, at least the old fixed wait).
            let wait = if strays.is_empty() {
                self.timeout
            } else {
                stdio_wait(
                    &self.rtt,
                    BARRIER_RTT_MULTIPLIER,
                    STDIO_NOTIFICATION_WAIT,
                    self.timeout,
                )
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
            Err(error @ TransportError::TooLarge { limit }) => {
                self.answered = true;
                let exchange = Exchange {
                    request,
                    response: None,
                    error: Some(error.to_string()),
                };
                let reply = oversized(method, Some(id), exchange, limit);
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
            Wire::Http(_) => Err(TransportError::Protocol("not a stdio target".into())),
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
            // The harness reads one line per request, whatever it is: a
            // notification the server wrote first is its "reply".
            if self.harness_reading {
                return Ok(line);
            }
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
            connection_note: None,
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

/// Whether `line` is the reply to the barrier `ping` named `token`: its id, or
/// the nonce of its result, is the token (either is enough, so a server that
/// drops the nonce or mangles the id is still recognised).
fn is_barrier_reply(line: &str, token: &str) -> bool {
    let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(line) else {
        return false;
    };
    let id = obj.get("id").and_then(Value::as_str);
    let nonce = obj
        .get("result")
        .and_then(|r| r.get("nonce"))
        .and_then(Value::as_str);
    id == Some(token) || nonce == Some(token)
}

/// A stdio wait: `multiplier` times the run's p95 round trip, between
/// `floor` and `ceiling`. Unlike a watch window ([`RttRecord::window`]) it is
/// the floor before any round trip was measured, and the floor wins over a
/// lower ceiling, so a short request timeout never makes a wait shorter than
/// its floor.
fn stdio_wait(rtt: &RttRecord, multiplier: u32, floor: Duration, ceiling: Duration) -> Duration {
    rtt.scaled(multiplier)
        .map_or(floor, |scaled| scaled.min(ceiling).max(floor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_barrier_reply_is_known_by_its_id_or_its_nonce() {
        let token = "protocheck-barrier-3";
        let ok = r#"{"jsonrpc":"2.0","id":"protocheck-barrier-3","result":{"nonce":"protocheck-barrier-3"}}"#;
        assert!(is_barrier_reply(ok, token));
        let no_nonce = r#"{"jsonrpc":"2.0","id":"protocheck-barrier-3","result":{}}"#;
        assert!(is_barrier_reply(no_nonce, token));
        let other_id = r#"{"jsonrpc":"2.0","id":null,"result":{"nonce":"protocheck-barrier-3"}}"#;
        assert!(is_barrier_reply(other_id, token));
        let gated = r#"{"jsonrpc":"2.0","id":"protocheck-barrier-3","error":{"code":-32001}}"#;
        assert!(is_barrier_reply(gated, token));
        let answer = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600}}"#;
        assert!(!is_barrier_reply(answer, token));
        assert!(!is_barrier_reply(
            r#"{"jsonrpc":"2.0","id":"protocheck-barrier-2","result":{}}"#,
            token
        ));
        assert!(!is_barrier_reply("not json", token));
    }

    #[test]
    fn stdio_waits_scale_with_the_p95_and_the_floor_wins() {
        const MS: Duration = Duration::from_millis(1);
        let rtt = RttRecord::default();
        assert_eq!(
            stdio_wait(&rtt, 4, MS * 10, MS * 300),
            MS * 10,
            "no sample: the floor"
        );
        rtt.record(MS * 5);
        assert_eq!(stdio_wait(&rtt, 4, MS * 10, MS * 300), MS * 20);
        rtt.record(MS * 500);
        assert_eq!(stdio_wait(&rtt, 4, MS * 10, MS * 300), MS * 300, "capped");
        assert_eq!(
            stdio_wait(&rtt, 4, MS * 300, MS * 100),
            MS * 300,
            "the floor wins"
        );
    }
}

/// `bytes` cut at `offset` + each of `cuts` (offsets into the frame that
/// starts at `offset`), in order; cuts out of range or not increasing are
/// dropped, so every byte is written exactly once.
fn split_bytes(bytes: &[u8], offset: usize, cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut segments = Vec::new();
    let mut start = 0;
    for cut in cuts {
        let at = offset + cut;
        if at > start && at < bytes.len() {
            segments.push(bytes[start..at].to_vec());
            start = at;
        }
    }
    segments.push(bytes[start..].to_vec());
    segments
}

#[cfg(test)]
mod split_tests {
    use super::split_bytes;

    #[test]
    fn every_byte_is_written_once_in_order() {
        let bytes = "\n\nab\u{e9}c\n".as_bytes();
        let parts = split_bytes(bytes, 2, &[1, 3, 3, 99]);
        assert_eq!(parts.len(), 3);
        assert_eq!(parts.concat(), bytes);
        // The cut at frame byte 3 falls between the two bytes of "é".
        assert_eq!(parts[1], vec![b'b', 0xc3]);
    }
}
