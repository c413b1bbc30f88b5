//! The stdio wire: newline-delimited JSON-RPC to a child process (transports,
//! "stdio"). One exchange at a time per child: a frame is written, then lines
//! are read until the one answering it, while notifications, the server's own
//! requests and late replies are set aside. A frame that must not be answered
//! is followed by a `ping` (allowed at any time, basic/utilities/ping) as a
//! barrier: a server handles its stdin in order, so a line before the
//! `ping`'s reply answers the frame, and the reply itself proves the silence.

use super::http::{Kind, accepts, classify};
use super::{Awaiting, Client, Reply};
use crate::suite::{Exchange, RequestRecord, ResponseRecord};
use crate::transport::stdio::StdioChild;
use crate::transport::{Limits, TransportError, excerpt};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// The least time a barrier's reply is awaited.
const BARRIER_FLOOR: Duration = Duration::from_millis(300);
/// Most lines of stdout noise kept.
const MAX_NOISE: usize = 64;
/// Most lines set aside while one answer is awaited.
const MAX_LINES: usize = 256;
/// How long an exited child's stderr is waited for, to quote it.
const STDERR_SETTLE: Duration = Duration::from_millis(250);

pub(super) struct Pipe {
    inner: Mutex<Inner>,
    evidence_bytes: usize,
}

struct Inner {
    child: Option<StdioChild>,
    /// Lines on stdout that are not JSON (the server MUST NOT write them).
    noise: Vec<String>,
    /// Ids answered or given up on: a late reply carrying one is skipped.
    retired: Vec<Value>,
    barriers: u64,
}

impl Pipe {
    pub(super) fn spawn(command: &str, limits: &Limits) -> Result<Self, TransportError> {
        let child = StdioChild::spawn(command, limits)?;
        Ok(Self {
            inner: Mutex::new(Inner {
                child: Some(child),
                noise: Vec::new(),
                retired: Vec::new(),
                barriers: 0,
            }),
            evidence_bytes: limits.evidence_bytes,
        })
    }

    pub(super) async fn noise(&self) -> Vec<String> {
        self.inner.lock().await.noise.clone()
    }

    pub(super) async fn retire(&self, ids: &[Value]) {
        self.inner.lock().await.retired.extend(ids.iter().cloned());
    }

    /// The notifications and requests the server writes within `window`,
    /// nothing being sent; its requests are answered as during an exchange.
    pub(super) async fn listen(&self, window: Duration) -> Vec<Value> {
        let mut inner = self.inner.lock().await;
        let deadline = Instant::now() + window;
        let mut frames = Vec::new();
        for _ in 0..MAX_LINES {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let Some(child) = inner.child.as_mut() else {
                break;
            };
            let Ok(line) = child.read_line(remaining).await else {
                break;
            };
            let Ok(frame) = serde_json::from_str::<Value>(&line) else {
                inner.note_noise(&line);
                continue;
            };
            match classify(&frame) {
                Kind::Request => {
                    inner.answer_server(&frame).await;
                    frames.push(frame);
                }
                Kind::Notification => frames.push(frame),
                _ => {}
            }
        }
        frames
    }

    pub(super) async fn close(self) {
        if let Some(child) = self.inner.into_inner().child {
            child.close().await;
        }
    }

    pub(super) async fn exchange(
        &self,
        client: &Client,
        label: &str,
        text: String,
        awaiting: &Awaiting,
    ) -> Reply {
        let mut inner = self.inner.lock().await;
        let started = Instant::now();
        let request = RequestRecord {
            line: "stdin".to_owned(),
            headers: Vec::new(),
            body: excerpt(text.as_bytes(), self.evidence_bytes).0,
        };
        let mut reply = Reply::new(
            label,
            Exchange {
                request,
                response: None,
                error: None,
            },
        );
        if let Err(err) = inner.write(&text).await {
            let err = inner.explain(err).await;
            reply.exchange.error = Some(err.to_string());
            reply.error = Some(err);
            return reply;
        }
        let (waited, wait, barrier) = if *awaiting == Awaiting::Nothing {
            inner.barriers += 1;
            let token = json!(format!("protocheck-barrier-{}", inner.barriers));
            let ping = json!({"jsonrpc": "2.0", "id": token, "method": "ping"});
            if let Err(err) = inner.write(&ping.to_string()).await {
                let err = inner.explain(err).await;
                reply.exchange.error = Some(err.to_string());
                reply.error = Some(err);
                return reply;
            }
            let wait = client.window(BARRIER_FLOOR, client.timeout);
            (Awaiting::Id(token.clone()), wait, Some(token))
        } else {
            (awaiting.clone(), client.timeout, None)
        };
        let answer = inner
            .read_answer(&mut reply, &waited, wait, barrier.as_ref())
            .await;
        if let Awaiting::Id(id) = awaiting {
            inner.retired.push(id.clone());
        }
        if let Some(token) = barrier {
            inner.retired.push(token);
        }
        match answer {
            Ok(Some(line)) => {
                if barrier_free(awaiting) {
                    client.rtt.record(started.elapsed());
                }
                let (body, truncated) = excerpt(line.as_bytes(), self.evidence_bytes);
                reply.message = serde_json::from_str(&line).ok();
                // The line was read lossily: a replacement character stands
                // where the bytes were not UTF-8 (protocheck never sends one
                // for a server to echo).
                reply.invalid_utf8 = line.contains('\u{FFFD}');
                reply.exchange.response = Some(ResponseRecord {
                    status: None,
                    headers: Vec::new(),
                    body,
                    truncated,
                    elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                });
            }
            Ok(None) => {}
            Err(err) => {
                let err = inner.explain(err).await;
                reply.exchange.error = Some(err.to_string());
                reply.error = Some(err);
            }
        }
        reply
    }
}

fn barrier_free(awaiting: &Awaiting) -> bool {
    *awaiting != Awaiting::Nothing
}

impl Inner {
    fn note_noise(&mut self, line: &str) {
        if self.noise.len() < MAX_NOISE {
            self.noise.push(excerpt(line.as_bytes(), 512).0);
        }
    }

    async fn write(&mut self, line: &str) -> Result<(), TransportError> {
        match &mut self.child {
            Some(child) => child.write_line(line).await,
            None => Err(TransportError::Io("the server is closed".into())),
        }
    }

    /// Reads lines until the answer `awaiting` waits for, within `wait`.
    /// With a `barrier`, `awaiting` is the barrier's id: a response line
    /// that comes before the barrier's reply is the answer (to the frame
    /// that must not be answered); the barrier's reply means silence.
    async fn read_answer(
        &mut self,
        reply: &mut Reply,
        awaiting: &Awaiting,
        wait: Duration,
        barrier: Option<&Value>,
    ) -> Result<Option<String>, TransportError> {
        let deadline = Instant::now() + wait;
        let mut answer = None;
        // Responses of ids nobody waits for: when the wait ends and exactly
        // one came, it is taken as the answer (a server that mangles ids
        // must not hang the run; MCP25-RPC-001 judges the id).
        let mut strays: Vec<String> = Vec::new();
        for _ in 0..MAX_LINES {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let Some(child) = self.child.as_mut() else {
                return Err(TransportError::Io("the server is closed".into()));
            };
            let line = match child.read_line(remaining).await {
                Ok(line) => line,
                Err(TransportError::Timeout(_)) if barrier.is_some() => return Ok(answer),
                Err(TransportError::Timeout(_)) if strays.len() == 1 => return Ok(strays.pop()),
                Err(TransportError::Timeout(_)) => return Err(TransportError::Timeout(wait)),
                Err(err) => return Err(err),
            };
            let Ok(frame) = serde_json::from_str::<Value>(&line) else {
                self.note_noise(&line);
                continue;
            };
            match classify(&frame) {
                Kind::Notification => reply.notifications.push(frame),
                Kind::Request => {
                    self.answer_server(&frame).await;
                    reply.server_requests.push(frame);
                }
                Kind::Response(id) => {
                    if let Some(id) = &id
                        && self.retired.contains(id)
                    {
                        continue;
                    }
                    match barrier {
                        Some(token) if id.as_ref() == Some(token) => return Ok(answer),
                        Some(_) => {
                            // The first line answering the notification is
                            // the evidence; read on to the barrier's reply.
                            answer.get_or_insert(line);
                        }
                        None if accepts(awaiting, id.as_ref()) => return Ok(Some(line)),
                        // Two are enough to know there was more than one.
                        None if strays.len() < 2 => strays.push(line),
                        None => {}
                    }
                }
                Kind::Batch if barrier.is_some() => {
                    answer.get_or_insert(line);
                }
                Kind::Batch if *awaiting == Awaiting::Any => return Ok(Some(line)),
                Kind::Batch | Kind::Other => {}
            }
        }
        Ok(answer)
    }

    /// Answers a request the server sent: `ping` with an empty result (any
    /// party answers it, basic/utilities/ping), anything else with
    /// method-not-found, since protocheck declares no client capability.
    async fn answer_server(&mut self, frame: &Value) {
        let _ = self.write(&super::http::refusal(frame)).await;
    }

    /// A pipe error, with the child's exit status and the end of its stderr.
    async fn explain(&mut self, err: TransportError) -> TransportError {
        let (Some(child), TransportError::Io(msg)) = (self.child.as_mut(), &err) else {
            return err;
        };
        let Some(status) = child.exit_status(STDERR_SETTLE).await else {
            return err;
        };
        let tail = child.settled_stderr_tail(STDERR_SETTLE).await;
        let tail = excerpt(tail.trim().as_bytes(), 1024).0;
        if tail.is_empty() {
            TransportError::Io(format!("{msg} ({status})"))
        } else {
            TransportError::Io(format!("{msg} ({status}); its stderr ended with: {tail}"))
        }
    }
}
