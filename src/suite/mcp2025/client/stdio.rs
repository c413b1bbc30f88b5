//! The stdio wire: newline-delimited JSON-RPC to a child process (transports,
//! "stdio"). One exchange at a time per child: a frame is written, then lines
//! are read until the one answering it, while notifications, the server's own
//! requests and late replies are set aside. A frame that must not be answered
//! is followed by a `ping` (allowed at any time, basic/utilities/ping) as a
//! barrier: a server handles its stdin in order, so a line before the
//! `ping`'s reply answers the frame, and the reply itself proves the silence.

use super::http::{Kind, accepts, classify};
use super::{Awaiting, CancelPlan, CancelProbe, Client, Patience, Reply};
use crate::suite::{Exchange, RequestRecord, ResponseRecord};
use crate::transport::stdio::{Shutdown, StdioChild};
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
    /// How stdout was framed, for the stdio transport's rules.
    lines: StdoutLines,
    /// Lines that do not parse alone, held while they may be one message
    /// spread over several lines.
    pending: Vec<String>,
    /// Whether the child has written a line yet: until it has, it may still
    /// be starting (an interpreter loading its modules), see [`startup`].
    heard: bool,
}

/// Most lines one message spread over several lines may take before the
/// lines held are taken for noise.
const MAX_SPLIT_LINES: usize = 256;
/// Most bytes held while a message spread over several lines is assembled.
const MAX_SPLIT_BYTES: usize = 1024 * 1024;
/// Most lines kept of each kind in [`StdoutLines`].
const MAX_KEPT: usize = 16;

/// How a server framed what it wrote on stdout (transports, "stdio": one
/// message per line, nothing else).
#[derive(Debug, Clone, Default)]
pub struct StdoutLines {
    /// Non-empty lines read.
    pub read: usize,
    /// Messages that only parsed once several lines were joined: how many
    /// lines each took, and an excerpt of the first line.
    pub split: Vec<(usize, String)>,
    pub split_count: usize,
    /// Lines that are no JSON-RPC message (not JSON, or JSON that is no
    /// request, notification, response or batch of them): excerpts.
    pub stray: Vec<String>,
    pub stray_count: usize,
    /// Empty lines (skipped when reading).
    pub blank: usize,
}

impl StdoutLines {
    /// Adds what another connection's child wrote.
    pub fn absorb(&mut self, other: StdoutLines) {
        self.read += other.read;
        self.split_count += other.split_count;
        self.stray_count += other.stray_count;
        self.blank += other.blank;
        for s in other.split {
            if self.split.len() < MAX_KEPT {
                self.split.push(s);
            }
        }
        for s in other.stray {
            if self.stray.len() < MAX_KEPT {
                self.stray.push(s);
            }
        }
    }

    fn note_split(&mut self, lines: usize, first: &str) {
        self.split_count += 1;
        if self.split.len() < MAX_KEPT {
            self.split.push((lines, excerpt(first.as_bytes(), 200).0));
        }
    }

    fn note_stray(&mut self, line: &str) {
        self.stray_count += 1;
        if self.stray.len() < MAX_KEPT {
            self.stray.push(excerpt(line.as_bytes(), 200).0);
        }
    }
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
                lines: StdoutLines::default(),
                pending: Vec::new(),
                heard: false,
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
            let Some((frame, _)) = inner.frame_of(line) else {
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

    /// The notifications and requests the server writes before the reply to
    /// a `ping` written now (a barrier: the server handles its stdin in
    /// order, so the reply comes after everything it wrote in answer to
    /// what came before), then within `grace` (see
    /// [`Connection::listen_past_barrier`](super::Connection::listen_past_barrier));
    /// its requests are answered as during an exchange. Also whether the
    /// barrier was answered: without its reply the read ended at the
    /// request timeout.
    pub(super) async fn listen_past_barrier(
        &self,
        client: &Client,
        grace: Duration,
    ) -> (Vec<Value>, bool) {
        let mut inner = self.inner.lock().await;
        inner.barriers += 1;
        let token = json!(format!("protocheck-barrier-{}", inner.barriers));
        let ping = json!({"jsonrpc": "2.0", "id": token, "method": "ping"});
        let mut frames = Vec::new();
        if inner.write(&ping.to_string()).await.is_err() {
            return (frames, false);
        }
        let fresh = !inner.heard;
        let mut deadline = Instant::now() + startup(fresh, client.timeout, client);
        let mut answered = false;
        for _ in 0..MAX_LINES {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let Some(child) = inner.child.as_mut() else {
                break;
            };
            let Ok(line) = child.read_line(remaining).await else {
                break;
            };
            let Some((frame, _)) = inner.frame_of(line) else {
                continue;
            };
            match classify(&frame) {
                Kind::Request => {
                    inner.answer_server(&frame).await;
                    frames.push(frame);
                }
                Kind::Notification => frames.push(frame),
                Kind::Response(Some(id)) if id == token && !answered => {
                    answered = true;
                    deadline = Instant::now() + grace;
                }
                _ => {}
            }
        }
        inner.retired.push(token);
        (frames, answered)
    }

    pub(super) async fn close(self) {
        if let Some(child) = self.inner.into_inner().child {
            child.close().await;
        }
    }

    /// How stdout was framed so far (lines still held count as stray).
    pub(super) async fn lines(&self) -> StdoutLines {
        let inner = self.inner.lock().await;
        let mut lines = inner.lines.clone();
        for line in &inner.pending {
            lines.note_stray(line);
        }
        if let Some(child) = &inner.child {
            lines.blank = child.blank_lines();
        }
        lines
    }

    /// Ends the child as the lifecycle describes (stdin closed, then
    /// signals), saying how it ended, with how stdout was framed.
    pub(super) async fn shut_down(
        self,
        grace: Duration,
        term_grace: Duration,
    ) -> (Option<Shutdown>, StdoutLines) {
        let lines = self.lines().await;
        let shutdown = match self.inner.into_inner().child {
            Some(child) => Some(child.shut_down(grace, term_grace).await),
            None => None,
        };
        (shutdown, lines)
    }

    /// Writes a request and reads its answer; once a progress notification
    /// for the plan's token comes, writes the cancellation and reads on for
    /// the plan's watch.
    pub(super) async fn request_then_cancel(
        &self,
        client: &Client,
        label: &str,
        text: String,
        plan: &CancelPlan,
    ) -> CancelProbe {
        let mut inner = self.inner.lock().await;
        let started = Instant::now();
        let mut reply = Reply::new(
            label,
            Exchange {
                request: RequestRecord {
                    line: "stdin".to_owned(),
                    headers: Vec::new(),
                    body: excerpt(text.as_bytes(), self.evidence_bytes).0,
                },
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
        if let Err(err) = inner.write(&text).await {
            let err = inner.explain(err).await;
            reply.exchange.error = Some(err.to_string());
            reply.error = Some(err);
            probe.reply = reply;
            return probe;
        }
        let mut deadline = started + client.timeout;
        let mut cancelled_at: Option<Instant> = None;
        for _ in 0..MAX_LINES {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let Some(child) = inner.child.as_mut() else {
                break;
            };
            let line = match child.read_line(remaining).await {
                Ok(line) => line,
                Err(TransportError::Timeout(_)) if cancelled_at.is_some() => break,
                Err(err) => {
                    let err = inner.explain(err).await;
                    reply.exchange.error = Some(err.to_string());
                    reply.error = Some(err);
                    break;
                }
            };
            let Some((frame, line)) = inner.frame_of(line) else {
                continue;
            };
            match classify(&frame) {
                Kind::Notification => {
                    if cancelled_at.is_none() && plan.is_progress(&frame) {
                        if let Err(err) = inner.write(&plan.cancel).await {
                            reply.error = Some(err);
                            break;
                        }
                        cancelled_at = Some(Instant::now());
                        probe.cancelled = true;
                        deadline = Instant::now() + plan.watch;
                    }
                    reply.notifications.push(frame);
                }
                Kind::Request => {
                    inner.answer_server(&frame).await;
                    reply.server_requests.push(frame);
                }
                Kind::Response(id) if id.as_ref() == Some(&plan.id) => {
                    let (body, truncated) = excerpt(line.as_bytes(), self.evidence_bytes);
                    reply.message = Some(frame);
                    reply.exchange.response = Some(ResponseRecord {
                        status: None,
                        headers: Vec::new(),
                        body,
                        truncated,
                        elapsed_ms: u64::try_from(started.elapsed().as_millis())
                            .unwrap_or(u64::MAX),
                    });
                    probe.answered_after = cancelled_at.map(|at| at.elapsed());
                    break;
                }
                _ => {}
            }
        }
        inner.retired.push(plan.id.clone());
        probe.reply = reply;
        probe
    }

    pub(super) async fn exchange(
        &self,
        client: &Client,
        label: &str,
        text: String,
        awaiting: &Awaiting,
        patience: Patience,
    ) -> Reply {
        let mut inner = self.inner.lock().await;
        let started = Instant::now();
        // The first answer of a new child includes its start-up.
        let fresh = !inner.heard;
        let paced = super::measures_pace(label, &text);
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
            let wait = startup(fresh, client.window(BARRIER_FLOOR, client.timeout), client);
            (Awaiting::Id(token.clone()), wait, Some(token))
        } else {
            (awaiting.clone(), patience.answer_wait(client.timeout), None)
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
                if barrier_free(awaiting) && !fresh && paced {
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

/// How long a barrier's reply is awaited: `wait`, derived from the run's
/// round trips, or, on a child that has written nothing yet, the request
/// timeout. A child's first answer comes after its start-up (an interpreter
/// may take seconds to load), which says nothing of how fast it answers:
/// that time is neither taken for silence nor recorded as a round trip.
fn startup(fresh: bool, wait: Duration, client: &Client) -> Duration {
    if fresh {
        wait.max(client.timeout)
    } else {
        wait
    }
}

impl Inner {
    /// The frame a stdout line carries, with its text: the line itself, or,
    /// for a message spread over several lines, the lines joined (that
    /// message is still read, and recorded as split). `None` while lines
    /// are held, and for a line that is no JSON.
    fn frame_of(&mut self, line: String) -> Option<(Value, String)> {
        self.lines.read += 1;
        self.heard = true;
        let alone = serde_json::from_str::<Value>(&line).ok();
        // While lines are held, only a line that is a whole message on its
        // own ends them: an inner line such as `{}` is part of them.
        if let Some(frame) = alone.as_ref().filter(|f| {
            self.pending.is_empty() || (f.is_object() && !matches!(classify(f), Kind::Other))
        }) {
            self.flush_pending();
            if matches!(classify(frame), Kind::Other) {
                self.lines.note_stray(&line);
            }
            return alone.map(|f| (f, line));
        }
        if self.pending.is_empty() {
            let start = line.trim_start();
            if start.starts_with('{') || start.starts_with('[') {
                self.pending.push(line);
            } else {
                self.lines.note_stray(&line);
                self.note_noise(&line);
            }
            return None;
        }
        self.pending.push(line);
        let joined = self.pending.join("\n");
        if let Ok(frame) = serde_json::from_str::<Value>(&joined) {
            let first = self.pending.first().cloned().unwrap_or_default();
            self.lines.note_split(self.pending.len(), &first);
            self.pending.clear();
            return Some((frame, joined));
        }
        if self.pending.len() > MAX_SPLIT_LINES || joined.len() > MAX_SPLIT_BYTES {
            self.flush_pending();
        }
        None
    }

    /// The lines held are no message after all.
    fn flush_pending(&mut self) {
        for line in std::mem::take(&mut self.pending) {
            self.lines.note_stray(&line);
            self.note_noise(&line);
        }
    }

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
            let Some((frame, line)) = self.frame_of(line) else {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn inner() -> Inner {
        Inner {
            child: None,
            noise: Vec::new(),
            retired: Vec::new(),
            barriers: 0,
            lines: StdoutLines::default(),
            pending: Vec::new(),
            heard: false,
        }
    }

    fn feed(inner: &mut Inner, text: &str) -> Vec<Value> {
        text.lines()
            .filter_map(|l| inner.frame_of(l.to_owned()))
            .map(|(frame, _)| frame)
            .collect()
    }

    /// A server that starts in a second, then answers every request with
    /// an empty result: a script in `dir`.
    fn slow_starter(dir: &std::path::Path) -> String {
        let script = dir.join("slow.sh");
        std::fs::write(
            &script,
            "sleep 1\nexec sed -u 's/.*\"id\":\\([^,}]*\\).*/{\"jsonrpc\":\"2.0\",\"id\":\\1,\"result\":{}}/'\n",
        )
        .expect("write the script");
        format!("sh {}", script.display())
    }

    /// A client of the stdio server `command`, one request in flight.
    fn stdio_client(command: String) -> Client {
        use crate::suite::context::Endpoint;
        use crate::transport::{AddressPolicy, HttpClient};
        let http = HttpClient::new(AddressPolicy::AllowPrivate, Limits::default()).expect("client");
        Client::new(
            Endpoint::Stdio(command),
            http,
            Limits::default().request_timeout,
            1,
        )
    }

    #[tokio::test]
    async fn a_new_childs_start_up_is_neither_silence_nor_a_round_trip() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let client = stdio_client(slow_starter(dir.path()));
        // The run so far was fast: a barrier's window is its floor.
        client.record_rtt(Duration::from_millis(1));
        let first = client.connect().await.expect("spawn");
        let frame = json!({"jsonrpc": "2.0", "id": "early", "method": "ping"});
        let reply = first
            .send_frame("ping", frame.to_string(), Awaiting::Nothing)
            .await;
        first.close().await;
        assert_eq!(
            reply.message.as_ref().and_then(|m| m.get("id")),
            Some(&json!("early")),
            "the answer that came after the start-up is the answer: {reply:?}"
        );
        let second = client.connect().await.expect("spawn");
        let reply = second.request("ping", json!({})).await;
        second.close().await;
        assert!(reply.result().is_some(), "{reply:?}");
        assert_eq!(
            client.rtt.percentile(100.0),
            Some(Duration::from_millis(1)),
            "a child's first answer is no round trip of the run"
        );
    }

    /// A server that writes a log notification before its answer to every
    /// request: a script in `dir`.
    fn chatty(dir: &std::path::Path) -> String {
        let script = dir.join("chatty.sh");
        std::fs::write(
            &script,
            "exec sed -u 's/.*\"id\":\\([^,}]*\\).*/{\"jsonrpc\":\"2.0\",\"method\":\"notifications\\/message\",\"params\":{\"level\":\"info\",\"data\":\"before\"}}\\n{\"jsonrpc\":\"2.0\",\"id\":\\1,\"result\":{}}/'\n",
        )
        .expect("write the script");
        format!("sh {}", script.display())
    }

    #[tokio::test]
    async fn what_comes_before_a_barriers_reply_is_heard() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let client = stdio_client(chatty(dir.path()));
        let conn = client.connect().await.expect("spawn");
        let reply = conn.request("ping", json!({})).await;
        assert!(reply.result().is_some(), "{reply:?}");
        let (frames, answered) = conn.listen_past_barrier(Duration::from_millis(1)).await;
        conn.close().await;
        assert!(answered, "the barrier `ping` was answered");
        assert_eq!(frames.len(), 1, "{frames:?}");
        assert_eq!(frames[0]["params"]["data"], "before");
    }

    #[test]
    fn one_message_per_line_is_read_as_is() {
        let mut inner = inner();
        let frames = feed(
            &mut inner,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}",
        );
        assert_eq!(frames.len(), 2);
        assert_eq!(inner.lines.read, 2);
        assert_eq!(inner.lines.split_count + inner.lines.stray_count, 0);
    }

    #[test]
    fn a_pretty_printed_message_is_read_and_recorded_as_split() {
        let mut inner = inner();
        let pretty = serde_json::to_string_pretty(
            &json!({"jsonrpc": "2.0", "id": 1, "result": {"items": [1, {}]}}),
        )
        .expect("json");
        let frames = feed(
            &mut inner,
            &format!("{pretty}\n{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{}}}}"),
        );
        assert_eq!(frames.len(), 2, "{frames:?}");
        assert_eq!(frames[0]["id"], 1);
        assert_eq!(inner.lines.split_count, 1);
        assert_eq!(inner.lines.stray_count, 0);
    }

    #[test]
    fn banners_and_non_messages_are_stray() {
        let mut inner = inner();
        let frames = feed(
            &mut inner,
            "server starting\n{\"status\":\"ready\"}\n{ not json\n{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}",
        );
        // The unfinished `{` line is given up when a whole message follows.
        assert_eq!(frames.len(), 2);
        assert_eq!(inner.lines.stray_count, 3, "{:?}", inner.lines.stray);
        assert_eq!(inner.lines.split_count, 0);
    }
}
