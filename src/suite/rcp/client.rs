//! A recording RCP/1 client over HTTP (spec §5: `POST <base>/<method>`) and
//! stdio (NDJSON, one compact object per line). Every request and what came back
//! is kept as an [`Exchange`] so a finding can show its evidence.
//!
//! This file holds the client's state and the requests both wires share;
//! `http` and `stdio` hold what only one wire does, and `reply` how an
//! answer is read.

use crate::suite::context::{Endpoint, EngineError, RunContext};
use crate::suite::{Exchange, RequestRecord, ResponseRecord};
use crate::transport::sse::is_event_stream;
use crate::transport::stdio::StdioChild;
use crate::transport::{TransportError, excerpt};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

mod http;
pub use http::join_method;
mod reply;
mod stdio;

pub(crate) use http::Connections;
use http::HttpWire;
use reply::parse_body;

/// Over stdio, "not answered" can only be seen as silence, so a notification
/// is followed by a `ping` as a barrier (see [`RcpClient::send_unanswered`]).
/// This is the least time the barrier's reply is awaited (and what any wait
/// that ends by a deadline starts from before a round trip is measured): the
/// fixed wait protocheck used before it had a barrier. The reference harness
/// waits 0.5 s after each notification.
pub(crate) const STDIO_NOTIFICATION_WAIT: Duration = Duration::from_millis(300);

/// How long the public harness waits for an answer to a notification over
/// stdio (its `notify`: `select` with a 0.5 s timeout).
const HARNESS_NOTIFICATION_WAIT: Duration = Duration::from_millis(500);

/// The barrier's reply is awaited this many p95 round trips of the run (at
/// least [`STDIO_NOTIFICATION_WAIT`], at most the request timeout): a slow
/// server still answers within it, and one that never answers `ping` costs
/// no more than a bounded wait.
const BARRIER_RTT_MULTIPLIER: u32 = 8;

/// After the barrier's reply, a server that answers out of order (it handles
/// frames concurrently) may still write the notification's answer: it is
/// awaited for this many p95 round trips, between [`TAIL_FLOOR`] and
/// [`TAIL_CEILING`]. An answer comes about one handling time after the
/// `ping`'s; four p95s leave room for a noisy machine.
const TAIL_RTT_MULTIPLIER: u32 = 4;
/// The least tail: a fast local child's p95 is well under a millisecond, and
/// scheduling noise on a busy machine is a few.
const TAIL_FLOOR: Duration = Duration::from_millis(10);
/// The longest tail: the old fixed wait, which caught every answer it ever saw.
const TAIL_CEILING: Duration = STDIO_NOTIFICATION_WAIT;

/// The pause between the writes of a split frame: long enough that the parts
/// arrive in separate reads.
pub(crate) const SPLIT_PAUSE: Duration = Duration::from_millis(50);
/// The pause between the writes of a slow partial line: a writer that stalls
/// mid-line, longer than a split's pause.
pub(crate) const SLOW_PAUSE: Duration = Duration::from_millis(120);

/// Most unexpected lines read while waiting for the reply to a split frame.
const MAX_STRAYS: usize = 8;

/// How long an exited child's stderr is waited for, to quote it in the failure.
const STDERR_SETTLE: Duration = Duration::from_millis(250);

/// The HTTP header that carries a session token (protocheck decision 5, spec §5).
pub(crate) const SESSION_HEADER: &str = "rcp-session";

/// Most server notifications kept for the rules that judge them; later ones
/// are counted but not kept.
const MAX_OBSERVED: usize = 256;

/// A notification the server sent (`notifications/progress`, `…/log`, or any
/// frame with a `method` and no `id`), with what protocheck had asked for when
/// it arrived, so a rule can tell a solicited notification from one the
/// client never opted into (spec §7.1).
#[derive(Debug, Clone)]
pub(crate) struct Observed {
    pub frame: Value,
    /// The notification as evidence.
    pub exchange: Exchange,
    /// The method of the request whose answer was awaited.
    pub during: String,
    /// The `_meta.progressToken` of that request, if it carried one.
    pub token: Option<Value>,
    /// Whether any request so far had opted into logs (`_meta.logLevel`, or the
    /// `log` capability of `initialize`).
    pub log_opted_in: bool,
    /// Whether it arrived inside an HTTP event stream (else on stdout).
    pub in_stream: bool,
}

/// The answer to a request sent with `Accept: text/event-stream` (spec §5.2).
#[derive(Debug, Clone)]
pub(crate) struct Streamed {
    pub reply: Reply,
    /// The response was an event stream (`Content-Type: text/event-stream`); on
    /// stdio, always false.
    pub event_stream: bool,
    /// Notifications received before the reply (stream frames, or stdout lines).
    pub notifications: Vec<Value>,
    /// What was wrong with the stream itself, in words.
    pub problems: Vec<String>,
}

enum Wire {
    Http(Box<HttpWire>),
    Stdio { child: Box<StdioChild> },
}

/// What came back for one request.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    /// No bytes (HTTP only: stdio readers skip blank lines).
    Empty,
    Json(Value),
    /// Bytes that do not parse as JSON.
    NotJson,
    /// More bytes than protocheck reads (`Limits::max_body_bytes` over HTTP,
    /// `stdio_max_line_bytes` on stdio): the target answered, with too much.
    /// The rule whose probe provoked it judges it, as any wrong answer; the
    /// run-wide rules never see it (nothing of it was read).
    TooLarge {
        limit: usize,
    },
}

/// A request's answer with its evidence.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    /// The method the request named (the HTTP path's last part).
    pub method: String,
    /// The id the request carried, `None` for a frame without one.
    pub request_id: Option<Value>,
    pub exchange: Exchange,
    /// HTTP status; `None` on stdio.
    pub status: Option<u16>,
    pub body: Body,
    /// Whether the run-wide rules judge this answer as a JSON-RPC reply: false
    /// for answers to notifications (their own rules judge them), and for an
    /// empty body or a non-2xx status without JSON over HTTP (an HTTP-level
    /// answer, spec §5 status mapping, judged by the rule that sent the request).
    pub framed: bool,
    /// The request was a batch (an array of frames), so is the reply (spec §11).
    pub batch: bool,
    /// Over HTTP, when the request went on another connection than the one
    /// `initialize` succeeded on: that, in words (see `client::http`).
    pub connection_note: Option<String>,
}

/// A request that got no answer at all.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub exchange: Exchange,
    pub error: TransportError,
}

/// The outcome of sending a notification.
#[derive(Debug, Clone)]
pub(crate) enum Notified {
    /// Not answered: HTTP 2xx with an empty body, or no line on stdio in time.
    Silent(Exchange, Quiet),
    Answered(Reply),
}

/// How a silence was observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quiet {
    /// Over HTTP: the response carried no JSON-RPC body (its exchange says how).
    Http,
    /// Over stdio: no line came before the reply to the barrier `ping`, nor
    /// in the short wait after it.
    BeforeBarrier,
    /// Over stdio: no line came within the bounded wait, and the barrier
    /// `ping` got no reply either.
    NoBarrier,
    /// Over stdio, read as the harness reads: no line within its 0.5 s.
    HarnessWait,
}

impl Quiet {
    /// The silence in words, for a finding (over stdio).
    pub fn words(self) -> &'static str {
        match self {
            Self::Http => "no JSON-RPC body",
            Self::BeforeBarrier => {
                "no line before the reply to a `ping` sent after it, nor shortly after that reply"
            }
            Self::NoBarrier => {
                "no line within the wait; a `ping` sent after it got no reply either"
            }
            Self::HarnessWait => "no line within the harness's 0.5 s wait",
        }
    }
}

/// The recording client. One per run; requests are sent one at a time.
pub(crate) struct RcpClient {
    wire: Wire,
    session: Option<String>,
    timeout: Duration,
    evidence_bytes: usize,
    /// Whether anything at all has come back from the target yet.
    answered: bool,
    /// Ids already answered or given up on: a late or repeated reply carrying one
    /// of them is skipped instead of being taken for the answer to a later request.
    retired_ids: Vec<Value>,
    replies: Vec<Reply>,
    next_id: u64,
    /// A stdio pipe failed (EOF, broken pipe): the child is gone for good.
    broken: bool,
    /// Server notifications received so far (bounded), and how many in all.
    observed: Vec<Observed>,
    observed_total: usize,
    /// The method and progress token of the request being answered.
    awaiting: (String, Option<Value>),
    /// A request has opted into logs: `_meta.logLevel`, or the `log`
    /// capability of `initialize` (spec §17.1).
    log_opted_in: bool,
    /// The exchanges of notifications sent over HTTP, for the status rule.
    notification_exchanges: Vec<Exchange>,
    limits: crate::transport::Limits,
    /// The round trips of the stdio exchanges so far.
    rtt: crate::suite::rtt::RttRecord,
    /// How many barrier `ping`s were sent (their ids and nonces count them).
    barriers: u64,
    /// Replies are read as the public harness reads them (the `reference`
    /// profile): over stdio one line per request, whatever it is, and a
    /// fixed 0.5 s wait after a notification, with no barrier.
    harness_reading: bool,
    /// Most requests in flight at once (`RunContext::target_concurrency`),
    /// for [`call_all`](Self::call_all).
    width: usize,
    /// The wires of the requests [`call_all`](Self::call_all) sends side by
    /// side, kept between calls so that their connections are reused.
    lanes: Vec<HttpWire>,
    /// The server keeps its initialized state for the whole process, or
    /// keeps none (decisions 3 and 4): no request depends on the connection
    /// it goes on.
    shared_state: bool,
    /// A place for each request in flight over HTTP, `width` in all, shared
    /// with the run's lanes.
    in_flight: std::sync::Arc<tokio::sync::Semaphore>,
    /// A request of this client's got no answer within the request timeout.
    timed_out: bool,
    /// A request sent side by side got no answer in time: the server may
    /// serve one connection at a time (one that keeps the run's kept-alive
    /// connection open holds every other back), so every later request
    /// goes on the run's connection, one at a time, as before requests went
    /// side by side.
    crowded: bool,
    /// The command a stdio target was started with, for a second session
    /// ([`fresh_session`](Self::fresh_session)).
    stdio_command: Option<String>,
}

impl RcpClient {
    /// Opens the transport: nothing is sent yet over HTTP; a stdio child is spawned.
    pub async fn connect(endpoint: &Endpoint, ctx: &RunContext) -> Result<Self, EngineError> {
        Self::connect_with(endpoint, ctx, Connections::Kept).await
    }

    /// [`connect`](Self::connect), with requests over HTTP travelling as
    /// `connections` says.
    pub async fn connect_with(
        endpoint: &Endpoint,
        ctx: &RunContext,
        connections: Connections,
    ) -> Result<Self, EngineError> {
        let limits = ctx.http.limits();
        let wire = match endpoint {
            Endpoint::Http(url) => Wire::Http(Box::new(HttpWire::new(
                url.clone(),
                ctx.http.clone(),
                connections,
            ))),
            Endpoint::Stdio(command) => {
                let child =
                    StdioChild::spawn(command, limits).map_err(EngineError::from_transport)?;
                Wire::Stdio {
                    child: Box::new(child),
                }
            }
        };
        Ok(Self {
            wire,
            session: None,
            timeout: ctx.options.request_timeout(),
            evidence_bytes: limits.evidence_bytes,
            answered: false,
            retired_ids: Vec::new(),
            replies: Vec::new(),
            next_id: 0,
            broken: false,
            observed: Vec::new(),
            observed_total: 0,
            awaiting: (String::new(), None),
            log_opted_in: false,
            notification_exchanges: Vec::new(),
            limits: limits.clone(),
            rtt: crate::suite::rtt::RttRecord::default(),
            barriers: 0,
            harness_reading: connections == Connections::PerRequest,
            width: ctx.target_concurrency.max(1),
            lanes: Vec::new(),
            shared_state: false,
            in_flight: std::sync::Arc::new(tokio::sync::Semaphore::new(
                ctx.target_concurrency.max(1),
            )),
            timed_out: false,
            crowded: false,
            stdio_command: match endpoint {
                Endpoint::Stdio(command) => Some(command.clone()),
                Endpoint::Http(_) => None,
            },
        })
    }

    /// A client for a second session with the same target, sharing nothing
    /// with this one's: over HTTP a connection of its own and no session
    /// token, over stdio a second process of the same command. Its request
    /// ids start at `base`.
    pub fn fresh_session(&self, base: u64) -> Result<Self, TransportError> {
        let wire = match &self.wire {
            Wire::Http(wire) => Wire::Http(Box::new(wire.lane())),
            Wire::Stdio { .. } => {
                let Some(command) = &self.stdio_command else {
                    return Err(TransportError::Protocol(
                        "the stdio command is not known".into(),
                    ));
                };
                Wire::Stdio {
                    child: Box::new(StdioChild::spawn(command, &self.limits)?),
                }
            }
        };
        Ok(Self {
            wire,
            session: None,
            timeout: self.timeout,
            evidence_bytes: self.evidence_bytes,
            answered: false,
            retired_ids: Vec::new(),
            replies: Vec::new(),
            next_id: base,
            broken: false,
            observed: Vec::new(),
            observed_total: 0,
            awaiting: (String::new(), None),
            log_opted_in: false,
            notification_exchanges: Vec::new(),
            limits: self.limits.clone(),
            rtt: crate::suite::rtt::RttRecord::default(),
            barriers: 0,
            harness_reading: false,
            width: self.width,
            lanes: Vec::new(),
            shared_state: false,
            in_flight: std::sync::Arc::clone(&self.in_flight),
            timed_out: false,
            crowded: false,
            stdio_command: None,
        })
    }

    pub fn is_http(&self) -> bool {
        matches!(self.wire, Wire::Http(_))
    }

    /// Whether any request has been answered (with anything) yet: a transport
    /// failure before that means the target is unreachable, not non-conformant.
    pub fn has_answered(&self) -> bool {
        self.answered
    }

    /// Whether the target is known to be gone (a stdio child closed stdout or
    /// its stdin pipe broke).
    pub fn is_closed(&self) -> bool {
        match &self.wire {
            Wire::Http(_) => false,
            Wire::Stdio { child } => self.broken || child.is_closed(),
        }
    }

    /// Sends later requests with this session token (decision 5).
    pub fn set_session(&mut self, token: Option<String>) {
        self.session = token;
    }

    /// Notes that the server keeps its initialized state for the whole
    /// process, or keeps none (decisions 3 and 4), so that a request may go
    /// on any connection.
    pub fn set_shared_state(&mut self, shared: bool) {
        self.shared_state = shared;
    }

    /// Whether [`call_all`](Self::call_all) sends side by side: over HTTP,
    /// on the `spec` profile's kept connections, when no request depends on
    /// the connection it goes on, because the session travels with its
    /// token (decision 5) or the server keeps its initialized state for the
    /// whole process or for none (decisions 3 and 4). A server that keeps
    /// the handshake per connection (§5.2: "`initialize` state does not
    /// persist across connections by default") gets every request on the
    /// run's one connection; the `reference` profile sends one request at a
    /// time, as the public harness does.
    pub fn side_by_side(&self) -> bool {
        self.side_by_side_on(false)
    }

    /// [`side_by_side`](Self::side_by_side), or, with `any_connection` (the
    /// caller knows the answers do not depend on the connection: before
    /// `initialize`), whenever the wire is HTTP and the profile is `spec`.
    pub fn side_by_side_on(&self, any_connection: bool) -> bool {
        let kept = matches!(&self.wire, Wire::Http(_)) && !self.harness_reading;
        let free = any_connection || self.session.is_some() || self.shared_state;
        kept && free && self.width > 1 && !self.crowded
    }

    /// A client for a lane of the conversation that goes on side by side
    /// with this one's (see `Conversation::lanes`): a wire of its own, the
    /// session's token, request ids after `base`
    /// ([`reserve_ids`](Self::reserve_ids)), the same bound on requests in
    /// flight, and nothing yet seen; `None` when requests may not go side by
    /// side ([`side_by_side_on`](Self::side_by_side_on)).
    pub fn lane_client(&self, base: u64, any_connection: bool) -> Option<Self> {
        let Wire::Http(wire) = &self.wire else {
            return None;
        };
        self.side_by_side_on(any_connection).then(|| Self {
            wire: Wire::Http(Box::new(wire.lane())),
            session: self.session.clone(),
            timeout: self.timeout,
            evidence_bytes: self.evidence_bytes,
            answered: self.answered,
            retired_ids: Vec::new(),
            replies: Vec::new(),
            next_id: base,
            broken: false,
            observed: Vec::new(),
            observed_total: 0,
            awaiting: (String::new(), None),
            log_opted_in: self.log_opted_in,
            notification_exchanges: Vec::new(),
            limits: self.limits.clone(),
            rtt: crate::suite::rtt::RttRecord::default(),
            barriers: 0,
            harness_reading: false,
            width: self.width,
            lanes: Vec::new(),
            // Where any connection serves, it serves the lane's own
            // requests alike.
            shared_state: self.shared_state || any_connection,
            in_flight: std::sync::Arc::clone(&self.in_flight),
            timed_out: false,
            crowded: false,
            stdio_command: None,
        })
    }

    /// Whether a request of this client's got no answer within the request
    /// timeout.
    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    /// Sends every later request on the run's connection, one at a time
    /// (see the `crowded` field).
    pub fn crowd(&mut self) {
        self.crowded = true;
    }

    /// Takes in what a lane's client sent and saw, after what this one has:
    /// the run-wide rules judge every reply and notification of the run.
    pub fn absorb(&mut self, lane: Self) {
        self.answered |= lane.answered;
        self.retired_ids.extend(lane.retired_ids);
        self.replies.extend(lane.replies);
        let room = MAX_OBSERVED.saturating_sub(self.observed.len());
        self.observed.extend(lane.observed.into_iter().take(room));
        self.observed_total += lane.observed_total;
        self.log_opted_in |= lane.log_opted_in;
        let room = MAX_OBSERVED.saturating_sub(self.notification_exchanges.len());
        self.notification_exchanges
            .extend(lane.notification_exchanges.into_iter().take(room));
    }

    /// Sets `count` ids aside for a lane, which numbers its requests after
    /// the returned base (see [`lane_client`](Self::lane_client)).
    pub fn reserve_ids(&mut self, count: u64) -> u64 {
        let base = self.next_id;
        self.next_id += count;
        base
    }

    /// A fresh numeric request id.
    pub fn next_id(&mut self) -> Value {
        self.next_id += 1;
        json!(self.next_id)
    }

    /// Every reply received for a request (not for notifications), in order.
    pub fn replies(&self) -> &[Reply] {
        &self.replies
    }

    /// Whether any request was answered with a well-formed JSON-RPC 2.0
    /// response: what tells an RCP server from a URL that only answers with
    /// HTTP errors or pages (see `VerdictDetail::Rcp::protocol_observed`).
    pub fn spoke_jsonrpc(&self) -> bool {
        self.replies.iter().any(Reply::is_jsonrpc_response)
    }

    /// Every server notification received so far (bounded).
    pub fn observed(&self) -> &[Observed] {
        &self.observed
    }

    /// How many server notifications were received, kept or not.
    pub fn observed_total(&self) -> usize {
        self.observed_total
    }

    /// The HTTP exchanges of the notifications sent so far.
    pub fn notification_exchanges(&self) -> &[Exchange] {
        &self.notification_exchanges
    }

    fn observe(&mut self, frame: Value, in_stream: bool) {
        self.observed_total += 1;
        if self.observed.len() < MAX_OBSERVED {
            let (during, token) = self.awaiting.clone();
            let (body, truncated) = excerpt(frame.to_string().as_bytes(), self.evidence_bytes);
            let exchange = Exchange {
                request: RequestRecord {
                    line: format!("(while awaiting the reply to `{during}`)"),
                    headers: Vec::new(),
                    body: String::new(),
                },
                response: Some(ResponseRecord {
                    status: None,
                    headers: Vec::new(),
                    body,
                    truncated,
                    elapsed_ms: 0,
                }),
                error: None,
            };
            self.observed.push(Observed {
                frame,
                exchange,
                during,
                token,
                log_opted_in: self.log_opted_in,
                in_stream,
            });
        }
    }

    /// Notes what a request asks for before it is sent (see [`Observed`]).
    /// A client opts into logs with `_meta.logLevel` on a request, or with the
    /// `log` capability of its `initialize` (spec §7.1, §17.1).
    fn note_request(&mut self, method: &str, params: &Value) {
        let meta = params.get("_meta");
        let token = meta.and_then(|m| m.get("progressToken")).cloned();
        let log_capability = method == "initialize"
            && params
                .get("capabilities")
                .and_then(|c| c.get("log"))
                .is_some_and(|l| !l.is_null());
        if log_capability || meta.and_then(|m| m.get("logLevel")).is_some() {
            self.log_opted_in = true;
        }
        self.awaiting = (method.to_owned(), token);
    }

    /// Sends `{"jsonrpc":"2.0","id":id,"method":method,"params":params}`.
    pub async fn call(&mut self, id: Value, method: &str, params: Value) -> Result<Reply, Failure> {
        self.call_at(method, id, method, params).await
    }

    /// Like [`call`](Self::call), but over HTTP the path names `path_method`,
    /// which may differ from the body's method (spec §5.2 requires -32600 then).
    pub async fn call_at(
        &mut self,
        path_method: &str,
        id: Value,
        method: &str,
        params: Value,
    ) -> Result<Reply, Failure> {
        self.note_request(method, &params);
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let result = self
            .send_frame(path_method, Some(id.clone()), frame.to_string(), false)
            .await;
        self.retired_ids.push(id);
        result
    }

    /// Sends `calls` (an id, a method and params each), requests that do
    /// not depend on one another, and returns their answers in the order
    /// given. When [`side_by_side`](Self::side_by_side), they go on up to
    /// `width` connections of their own at once, call `i` on lane
    /// `i % width` and each lane's share one after another, so that the same
    /// requests share a connection on every run; one after another on the
    /// run's wire otherwise. What is kept of them (replies, retired ids) is
    /// kept in the order given, as if they had gone one after another.
    pub async fn call_all(
        &mut self,
        calls: Vec<(Value, String, Value)>,
    ) -> Vec<Result<Reply, Failure>> {
        let Wire::Http(wire) = &self.wire else {
            return self.call_each(calls).await;
        };
        if calls.len() < 2 || !self.side_by_side() {
            return self.call_each(calls).await;
        }
        let width = self.width.min(calls.len());
        while self.lanes.len() < width {
            self.lanes.push(wire.lane());
        }
        let mut shares: Vec<Vec<(usize, Value, String, Value)>> = vec![Vec::new(); width];
        for (i, (id, method, params)) in calls.into_iter().enumerate() {
            shares[i % width].push((i, id, method, params));
        }
        let session = self.session.clone();
        let session = session.as_deref();
        let (timeout, evidence_bytes) = (self.timeout, self.evidence_bytes);
        let in_flight = &self.in_flight;
        let mut lanes = std::mem::take(&mut self.lanes);
        let sent = futures::future::join_all(lanes.iter_mut().zip(shares).map(
            |(lane, share)| async move {
                let mut sent = Vec::with_capacity(share.len());
                for (i, id, method, params) in share {
                    // The semaphore is never closed.
                    let _place = in_flight.acquire().await.ok();
                    let frame =
                        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
                    let (exchange, result) = Box::pin(lane.post(
                        session,
                        timeout,
                        &method,
                        frame.to_string(),
                        None,
                        evidence_bytes,
                    ))
                    .await;
                    sent.push((i, id, method, params, exchange, result));
                }
                sent
            },
        ))
        .await;
        self.lanes = lanes;
        let mut sent: Vec<_> = sent.into_iter().flatten().collect();
        sent.sort_by_key(|(i, ..)| *i);
        let crowded = sent
            .iter()
            .any(|(.., result)| matches!(result, Err(TransportError::Timeout(_))));
        if crowded {
            // Nothing kept of them: they go again, one after another, on the
            // run's connection (see `crowded`).
            self.crowd();
            self.lanes.clear();
            let calls = sent
                .into_iter()
                .map(|(_, _, method, params, ..)| (self.next_id(), method, params))
                .collect();
            return self.call_each(calls).await;
        }
        let mut out = Vec::with_capacity(sent.len());
        for (_, id, method, params, exchange, result) in sent {
            self.note_request(&method, &params);
            self.retired_ids.push(id.clone());
            let reply = http_outcome(&method, Some(id), exchange, result, false);
            if let Ok(reply) = &reply {
                self.answered = true;
                self.replies.push(reply.clone());
            }
            out.push(reply);
        }
        out
    }

    /// [`call_all`](Self::call_all)'s calls one after another.
    async fn call_each(
        &mut self,
        calls: Vec<(Value, String, Value)>,
    ) -> Vec<Result<Reply, Failure>> {
        let mut out = Vec::with_capacity(calls.len());
        for (id, method, params) in calls {
            out.push(self.call(id, &method, params).await);
        }
        out
    }

    /// Sends bytes that may not be JSON at all (the parse-error probe); over HTTP
    /// the path names `path_method`.
    pub async fn send_raw(&mut self, path_method: &str, body: &str) -> Result<Reply, Failure> {
        self.send_frame(path_method, None, body.to_owned(), false)
            .await
    }

    /// Sends a notification (a frame without `id`) and reports whether it was answered.
    pub async fn notify(&mut self, method: &str, params: Value) -> Result<Notified, Failure> {
        let frame = json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string();
        self.send_unanswered(method, frame).await
    }

    /// Sends a batch (spec §11); over HTTP the path names `path_method`, the
    /// first member's method, since the binding has one path per POST.
    pub async fn send_batch(
        &mut self,
        path_method: &str,
        frames: Vec<Value>,
    ) -> Result<Reply, Failure> {
        let ids: Vec<Value> = frames.iter().filter_map(|f| f.get("id").cloned()).collect();
        let result = self
            .send_frame(path_method, None, Value::Array(frames).to_string(), true)
            .await;
        self.retired_ids.extend(ids);
        result
    }

    /// Sends a frame that must not be answered (a notification, or a batch of
    /// only notifications) and reports whether it was. Over stdio a `ping`
    /// follows it as a barrier (see `stdio_unanswered`).
    pub async fn send_unanswered(
        &mut self,
        method: &str,
        frame: String,
    ) -> Result<Notified, Failure> {
        match &self.wire {
            Wire::Http(_) => {
                let Some((exchange, resp, moved)) =
                    Box::pin(self.http_post(method, frame, None)).await
                else {
                    return Err(not_http(method));
                };
                if self.notification_exchanges.len() < MAX_OBSERVED {
                    self.notification_exchanges.push(exchange.clone());
                }
                let resp = match resp {
                    Ok(resp) => resp,
                    Err(TransportError::TooLarge { limit }) => {
                        self.answered = true;
                        return Ok(Notified::Answered(Reply {
                            connection_note: moved,
                            ..oversized(method, None, exchange, limit)
                        }));
                    }
                    Err(error) => return Err(Failure { exchange, error }),
                };
                self.answered = true;
                // Decision 6: a JSON-RPC body is an answer. Anything else (204,
                // an empty 2xx, or an HTTP-level status without JSON) is silence
                // at the JSON-RPC layer; its status is judged by RCP-OUT-003.
                let body = parse_body(&resp.body);
                if !matches!(body, Body::Json(_)) {
                    return Ok(Notified::Silent(exchange, Quiet::Http));
                }
                Ok(Notified::Answered(Reply {
                    method: method.to_owned(),
                    request_id: None,
                    exchange,
                    status: Some(resp.status),
                    body,
                    framed: false,
                    batch: false,
                    connection_note: moved,
                }))
            }
            Wire::Stdio { .. } => self.stdio_unanswered(method, frame).await,
        }
    }

    async fn send_frame(
        &mut self,
        method: &str,
        id: Option<Value>,
        frame: String,
        batch: bool,
    ) -> Result<Reply, Failure> {
        let reply = match &self.wire {
            Wire::Http(_) => {
                let Some((exchange, resp, moved)) =
                    Box::pin(self.http_post(method, frame, None)).await
                else {
                    return Err(not_http(method));
                };
                Reply {
                    connection_note: moved,
                    ..http_outcome(method, id, exchange, resp, batch)?
                }
            }
            Wire::Stdio { .. } => {
                let started = Instant::now();
                let request = self.stdin_record(&frame);
                if let Err(error) = self.stdio_write(&frame).await {
                    return Err(self.stdio_failure(request, error).await);
                }
                match self.stdio_read_reply(self.timeout).await {
                    Ok(line) => {
                        // The first answer's round trip includes the child's
                        // start-up, which no later wait has to cover.
                        if self.answered {
                            self.rtt.record(started.elapsed());
                        }
                        Reply {
                            batch,
                            ..self.stdio_reply(method, id, request, &line, started)
                        }
                    }
                    Err(error @ TransportError::TooLarge { limit }) => {
                        let exchange = Exchange {
                            request,
                            response: None,
                            error: Some(error.to_string()),
                        };
                        Reply {
                            batch,
                            ..oversized(method, id, exchange, limit)
                        }
                    }
                    Err(error) => return Err(self.stdio_failure(request, error).await),
                }
            }
        };
        self.answered = true;
        self.replies.push(reply.clone());
        Ok(reply)
    }

    /// Ends the conversation: a stdio child gets EOF, then is killed if it lingers.
    pub async fn close(self) {
        if let Wire::Stdio { child } = self.wire {
            child.close().await;
        }
    }
}

/// The failure of a request that found no HTTP wire (the callers matched
/// one first, so this is never sent).
fn not_http(method: &str) -> Failure {
    let error = TransportError::Protocol("not an HTTP target".into());
    Failure {
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
    }
}

/// A request's HTTP answer as a reply.
pub(super) fn http_reply(
    method: &str,
    request_id: Option<Value>,
    exchange: Exchange,
    resp: &crate::transport::HttpResponse,
    batch: bool,
) -> Reply {
    let body = parse_body(&resp.body);
    // An event stream nobody asked for is the streaming rules' concern
    // (RCP-L2-007), not a malformed JSON reply.
    let framed = !matches!(body, Body::Empty)
        && !is_event_stream(&resp.headers)
        && ((200..300).contains(&resp.status) || matches!(body, Body::Json(_)));
    Reply {
        method: method.to_owned(),
        request_id,
        exchange,
        status: Some(resp.status),
        body,
        framed,
        batch,
        connection_note: None,
    }
}

/// What an HTTP request got: its reply (an answer over protocheck's size
/// limit included, see [`oversized`]), or the failure when nothing came back.
/// The `Result` every request of the client returns (its `async fn`s escape
/// the size lint only by being `async`).
#[allow(clippy::result_large_err)]
fn http_outcome(
    method: &str,
    request_id: Option<Value>,
    exchange: Exchange,
    result: Result<crate::transport::HttpResponse, TransportError>,
    batch: bool,
) -> Result<Reply, Failure> {
    match result {
        Ok(resp) => Ok(http_reply(method, request_id, exchange, &resp, batch)),
        Err(TransportError::TooLarge { limit }) => Ok(Reply {
            batch,
            ..oversized(method, request_id, exchange, limit)
        }),
        Err(error) => Err(Failure { exchange, error }),
    }
}

/// The answer to a request (or a notification) that was over protocheck's
/// size limit. It is an answer, not a failure to reach the target: the target
/// sent it, so the rule whose probe provoked it judges it, and a run whose
/// every answer is too large still gets a verdict rather than an error.
pub(super) fn oversized(
    method: &str,
    request_id: Option<Value>,
    exchange: Exchange,
    limit: usize,
) -> Reply {
    Reply {
        method: method.to_owned(),
        request_id,
        exchange,
        status: None,
        body: Body::TooLarge { limit },
        framed: false,
        batch: false,
        connection_note: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::RunOptions;
    use crate::transport::{AddressPolicy, HttpClient, Limits};
    use axum::extract::{Path, State};
    use tokio::sync::watch;
    use url::Url;

    /// A loopback RCP server whose `hold` is answered only once a `release`
    /// has arrived (or, so that a client that waits for one answer before
    /// sending the next is not stuck for ever, with an error after a few
    /// seconds); every other method gets an empty result.
    async fn hold_and_release() -> Url {
        async fn answer(
            State(released): State<watch::Sender<bool>>,
            Path(method): Path<String>,
            body: axum::Json<Value>,
        ) -> axum::Json<Value> {
            let id = body.get("id").cloned().unwrap_or(Value::Null);
            match method.as_str() {
                "release" => {
                    released.send_replace(true);
                }
                "hold" => {
                    let mut seen = released.subscribe();
                    let wait = seen.wait_for(|released| *released);
                    if tokio::time::timeout(Duration::from_secs(3), wait)
                        .await
                        .is_err()
                    {
                        let error = json!({"code": -32000, "message": "never released"});
                        return axum::Json(json!({"jsonrpc": "2.0", "id": id, "error": error}));
                    }
                }
                _ => {}
            }
            axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": {}}))
        }
        let (released, _) = watch::channel(false);
        let app = axum::Router::new()
            .route("/rcp/{method}", axum::routing::post(answer))
            .with_state(released);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Url::parse(&format!("http://{addr}/rcp")).expect("a URL")
    }

    async fn client_of(url: Url) -> RcpClient {
        let http = HttpClient::new(AddressPolicy::AllowPrivate, Limits::default()).expect("client");
        let ctx = RunContext::new(http, RunOptions::default());
        RcpClient::connect(&Endpoint::Http(url), &ctx)
            .await
            .expect("an HTTP client")
    }

    fn hold_then_release(client: &mut RcpClient) -> Vec<(Value, String, Value)> {
        ["hold", "release"]
            .into_iter()
            .map(|m| (client.next_id(), m.to_owned(), json!({})))
            .collect()
    }

    #[tokio::test]
    async fn requests_of_a_session_with_a_token_go_side_by_side() {
        let mut client = client_of(hold_and_release().await).await;
        client.set_session(Some("a-token".to_owned()));
        assert!(client.side_by_side());
        let calls = hold_then_release(&mut client);
        let answers = client.call_all(calls).await;
        let hold = answers[0].as_ref().expect("`hold` answered");
        assert!(
            hold.result().is_some(),
            "`hold` went out with `release` beside it: {:?}",
            hold.body
        );
        // Kept in the order given, as if sent one after another.
        let methods: Vec<&str> = client.replies().iter().map(|r| r.method.as_str()).collect();
        assert_eq!(methods, ["hold", "release"]);
        assert_eq!(client.replies()[0].request_id, Some(json!(1)));
    }

    #[tokio::test]
    async fn a_session_that_may_live_on_its_connection_gets_one_request_at_a_time() {
        let mut client = client_of(hold_and_release().await).await;
        // No token, and nothing known of how the server keeps its state: the
        // handshake may be the connection's (§5.2), so every request goes on
        // the run's one connection, one after another.
        assert!(!client.side_by_side());
        let calls = hold_then_release(&mut client);
        let answers = client.call_all(calls).await;
        let hold = answers[0].as_ref().expect("`hold` answered");
        assert_eq!(hold.error_code(), Some(-32000), "{:?}", hold.body);
        client.set_shared_state(true);
        assert!(client.side_by_side(), "a process-wide or stateless server");
    }
}
