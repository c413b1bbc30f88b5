//! A client for MCP 2025-11-25, built for probing, over Streamable HTTP and
//! stdio. A [`Client`] opens [`Connection`]s: each is one MCP session (one
//! child process on stdio; one `Mcp-Session-Id`, if the server issues one,
//! over HTTP). A connection sends conforming requests, notifications and raw
//! frames that a rule bends on purpose, and every answer is a [`Reply`] that
//! keeps what a rule needs together with bounded, redacted evidence.
//!
//! `http` holds what only the HTTP wire does, `stdio` what only the stdio
//! wire does, and `reply` how an answer is read.

mod http;
mod reply;
mod stdio;

pub use crate::transport::stdio::Shutdown;
pub use reply::{Reply, Seen, scope_refused};
pub use stdio::StdoutLines;

use crate::suite::context::Endpoint;
use crate::suite::permits::Permits;
use crate::suite::rtt::RttRecord;
use crate::transport::{HttpClient, Limits, TransportError};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;
use url::Url;

/// The revision this client speaks.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// The transport a connection speaks over; rules scoped to one are skipped
/// on the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    Http,
    Stdio,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Http => "Streamable HTTP",
            Self::Stdio => "stdio",
        }
    }
}

/// The client identity protocheck sends in `initialize`.
pub fn client_info() -> Value {
    json!({"name": "protocheck", "version": env!("CARGO_PKG_VERSION")})
}

/// What a frame sent waits for.
#[derive(Debug, Clone, PartialEq)]
pub enum Awaiting {
    /// The response carrying this id (or, for an unreadable request, a
    /// response whose id is null).
    Id(Value),
    /// The first response of any id, or an array (the answer to a batch).
    Any,
    /// Nothing, or an answer of any id: a notification, which must not be
    /// answered, or a frame that a server may rightly leave unanswered.
    /// On stdio a `ping` sent after it is the barrier that proves silence.
    Nothing,
}

/// Opens connections to one target; clones share the id counter, the
/// concurrency limit and the round-trip record.
#[derive(Clone)]
pub struct Client {
    endpoint: Endpoint,
    http: HttpClient,
    timeout: Duration,
    permits: Permits,
    next_id: Arc<AtomicI64>,
    rtt: RttRecord,
    log: Arc<std::sync::Mutex<Log>>,
    /// The run's bearer token, sent on every request of a connection opened
    /// with [`Client::connect`].
    bearer: Option<String>,
    /// The serial number of the next connection opened.
    next_connection: Arc<AtomicU64>,
}

/// The session a server's message came in: over HTTP the `Mcp-Session-Id`
/// of the connection it came on, else that connection itself (a stdio
/// child, or an HTTP connection without a session id). A subscription
/// belongs to the session that made it (MCP25-LIF-008).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionOf {
    Id(String),
    Connection(u64),
}

/// What became of a request cancelled once it was proven in progress (a
/// progress notification for its token came first).
#[derive(Debug, Clone)]
pub struct CancelProbe {
    /// The request's exchange: its notifications, and its answer if one came.
    pub reply: Reply,
    /// Whether the cancellation was sent.
    pub cancelled: bool,
    /// How long after the cancellation the answer came, if it came.
    pub answered_after: Option<Duration>,
    /// Over HTTP, how long after the cancellation the server ended the
    /// request's SSE stream without the answer, if it did: the watch ends
    /// there.
    pub ended_after: Option<Duration>,
}

/// The credentials a connection sends over HTTP.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Credentials {
    /// The run's bearer token, if it has one.
    #[default]
    Run,
    /// None at all.
    Nothing,
    /// This token in the `Authorization` header.
    Bearer(String),
    /// This token in the `access_token` query parameter, and no header.
    Query(String),
}

/// A wait for what may not come lasts twice the run's fastest round trip
/// and this many times what its slower answers (95th percentile) take
/// beyond it (see [`RttRecord::window`]): a server answers a `ping` barrier
/// after about one answer's worth of work, and eight leave room for a
/// loaded machine.
const WINDOW_MULTIPLIER: u32 = 8;

/// How long protocheck gives a tool's own work: a tool may run for as long
/// as its business takes (server-everything's long-running operation takes
/// 10 s by default), and a run's length must not be set by it. The
/// lifecycle's "Timeouts" asks a sender to set a timeout on every request
/// and, past it, to cancel the request and stop waiting; the spec names no
/// figure. A fixed figure, not one that follows the machine's load, so that
/// the same tool is cut, or not, on every run; and far above what a tool
/// that does not wait on purpose takes on a loaded machine: 1 s was tried,
/// and the Python SDK's `echo` behind authorization once took 1.3 s on the
/// 2-core machine running a CI run beside the interop panel, was cut, and
/// its server's TOL verdicts changed in one run of ten; 3 s was tried, and
/// server-everything's `get-env` and `get-structured-content` were cut at
/// 4.2 s (3 s and three slower round trips) on a run of the 2025-11-25
/// panel beside other tests.
const TOOL_BUDGET: Duration = Duration::from_secs(5);

/// How long a child whose session is over has to exit once its stdin is
/// closed, before SIGTERM, as the lifecycle's "Shutdown" describes: a
/// window of the run's round trips, from [`CLOSE_FLOOR`] to
/// [`CLOSE_CEILING`]. The exit is awaited, so a server that ends on end of
/// input ends the wait at once; the window bounds only how long a server
/// that keeps running (on a timer of its own, say) holds the run's end.
/// Nothing is judged here (MCP25-STD-003 judges the exit on a child of its
/// own, with a grace of seconds), so a short window moves no verdict.
const CLOSE_FLOOR: Duration = Duration::from_millis(100);
const CLOSE_CEILING: Duration = Duration::from_secs(1);
/// How long such a child has after SIGTERM before it is killed.
const CLOSE_TERM_GRACE: Duration = Duration::from_secs(1);

/// Most replies and notifications kept for the run-wide rules.
const MAX_LOGGED: usize = 600;

/// What the run-wide rules judge: the answers to the run's conforming
/// requests and every notification the server sent.
#[derive(Debug, Default)]
struct Log {
    replies: Vec<Seen>,
    /// Each with the session it came in.
    notifications: Vec<(Value, SessionOf)>,
    /// Exchanges whose answer was not valid UTF-8.
    not_utf8: Vec<crate::suite::Exchange>,
    /// Every `notifications/progress`, with when it came.
    progress: Vec<Progress>,
    /// The progress tokens protocheck sent, and whether each request was answered.
    tokens: Vec<(Value, bool)>,
    /// Requests the server sent, with the exchange they came in.
    requests: Vec<(Value, crate::suite::Exchange)>,
    /// Every `notifications/message`, with the exchange it came in.
    log_messages: Vec<(Value, crate::suite::Exchange)>,
    /// How the stdout of the children closed so far was framed.
    stdout: StdoutLines,
    /// protocheck's answers to the server's own requests, POSTed over HTTP,
    /// with what each got back (MCP25-HTP-002 reads their status).
    posted_answers: Vec<Reply>,
    /// Every `MCP-Session-Id` an `initialize` of the run was answered with:
    /// the id when it is visible ASCII, the header as read, the exchange.
    issued: Vec<Issued>,
}

/// One `MCP-Session-Id` an `initialize` answer carried.
#[derive(Debug, Clone)]
pub struct Issued {
    /// The id, when the header held visible ASCII only.
    pub id: Option<String>,
    /// The header's value as read (bytes outside ASCII replaced).
    pub header: String,
    pub exchange: crate::suite::Exchange,
}

/// A `notifications/progress` the server sent, and the progress token of
/// the request whose answer was awaited when it came (none for a frame bent
/// on purpose, or for what came while nothing was awaited).
#[derive(Debug, Clone)]
pub struct Progress {
    pub notification: Value,
    pub during: Option<Value>,
    pub exchange: crate::suite::Exchange,
}

/// Whether the answer to `text`, sent as `label`, measures the target's
/// pace. A tool call's answer waits on the tool's work (a tool may run for
/// seconds by design), and a request with a progress token asks the server
/// to report work as it goes (progress is for long-running requests,
/// basic/utilities/progress): neither says how fast the target answers, so
/// neither is recorded as a round trip.
fn measures_pace(label: &str, text: &str) -> bool {
    label != "tools/call"
        && serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| v.pointer("/params/_meta/progressToken").cloned())
            .is_none()
}

impl Client {
    pub fn new(
        endpoint: Endpoint,
        http: HttpClient,
        timeout: Duration,
        max_concurrency: usize,
    ) -> Self {
        Self {
            endpoint,
            http,
            timeout,
            // First come, first served, not by urgency (see
            // `suite::permits`). Served by urgency, a rule's first request
            // waits behind every request of rules already answered, and
            // behind tool calls held to their budget. Under the interop
            // panel's load, served so, server-everything's MCP25-UTL-001 (a
            // `ping` answered within 5 s) failed on one run of ten, and
            // sdk-auth-token's MCP25-HTP-006 warned on one (inferred, not
            // proven, to be the order: both passed on every run before). MCP25-LOG-002, which
            // once rested on this order on servers without session ids,
            // waits for every other rule there instead.
            permits: Permits::first_come(max_concurrency),
            next_id: Arc::new(AtomicI64::new(1)),
            rtt: RttRecord::default(),
            log: Arc::default(),
            bearer: None,
            next_connection: Arc::default(),
        }
    }

    /// Sends `token` (the run's bearer token) on every request of the
    /// connections opened with [`Client::connect`].
    pub fn with_bearer(mut self, token: Option<&crate::suite::BearerToken>) -> Self {
        self.bearer = token.map(|t| t.expose().to_owned());
        self
    }

    /// The run's bearer token, for a probe that sends it another way.
    pub(crate) fn bearer(&self) -> Option<String> {
        self.bearer.clone()
    }

    fn log(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The answers to the conforming requests of the run so far, in the
    /// order of their ids.
    pub fn seen(&self) -> Vec<Seen> {
        let mut seen = self.log().replies.clone();
        seen.sort_by_key(|s| s.id.as_ref().and_then(Value::as_i64).unwrap_or(i64::MAX));
        seen
    }

    /// Every notification the server sent during the run so far.
    pub fn notifications(&self) -> Vec<Value> {
        self.log()
            .notifications
            .iter()
            .map(|(note, _)| note.clone())
            .collect()
    }

    /// Every notification the server sent during the run so far, with the
    /// session it came in.
    pub fn notifications_by_session(&self) -> Vec<(Value, SessionOf)> {
        self.log().notifications.clone()
    }

    /// The exchanges of the run so far whose answer was not valid UTF-8.
    pub fn not_utf8(&self) -> Vec<crate::suite::Exchange> {
        self.log().not_utf8.clone()
    }

    /// Every request the server sent during the run so far (protocheck
    /// answered each), with the exchange it came in.
    pub fn server_requests(&self) -> Vec<(Value, crate::suite::Exchange)> {
        self.log().requests.clone()
    }

    /// Every `notifications/message` (log message) of the run so far, with
    /// the exchange it came in.
    pub fn log_messages(&self) -> Vec<(Value, crate::suite::Exchange)> {
        self.log().log_messages.clone()
    }

    /// How the stdout of every child closed so far was framed (stdio only).
    pub fn stdout_lines(&self) -> StdoutLines {
        self.log().stdout.clone()
    }

    /// Every `notifications/progress` of the run so far.
    pub fn progress(&self) -> Vec<Progress> {
        self.log().progress.clone()
    }

    /// The progress tokens protocheck sent so far, each with whether its
    /// request was answered.
    pub fn tokens(&self) -> Vec<(Value, bool)> {
        self.log().tokens.clone()
    }

    /// Every `MCP-Session-Id` the run's `initialize` answers carried so far.
    pub fn issued(&self) -> Vec<Issued> {
        self.log().issued.clone()
    }

    /// protocheck's answers to the server's own requests POSTed so far
    /// (over HTTP), each with what the server answered the POST.
    pub fn posted_answers(&self) -> Vec<Reply> {
        self.log().posted_answers.clone()
    }

    /// Records what a run-wide rule judges of `reply`: the answer itself
    /// when `id` is the id of a conforming request, its notifications
    /// (progress with the request's `token`), and whether it was UTF-8
    /// (whatever the frame that provoked it).
    fn record(&self, id: Option<Value>, token: Option<Value>, reply: &Reply, from: SessionOf) {
        let mut log = self.log();
        if reply.invalid_utf8 && log.not_utf8.len() < MAX_LOGGED {
            log.not_utf8.push(reply.exchange.clone());
        }
        for request in &reply.server_requests {
            if log.requests.len() < MAX_LOGGED {
                log.requests.push((request.clone(), reply.exchange.clone()));
            }
        }
        for note in &reply.notifications {
            if log.notifications.len() < MAX_LOGGED {
                log.notifications.push((note.clone(), from.clone()));
            }
            if note.get("method").and_then(Value::as_str) == Some("notifications/message")
                && log.log_messages.len() < MAX_LOGGED
            {
                log.log_messages
                    .push((note.clone(), reply.exchange.clone()));
            }
            if note.get("method").and_then(Value::as_str) == Some("notifications/progress")
                && log.progress.len() < MAX_LOGGED
            {
                log.progress.push(Progress {
                    notification: note.clone(),
                    during: token.clone(),
                    exchange: reply.exchange.clone(),
                });
            }
        }
        // What came after the answer is tied to no request awaited.
        for note in &reply.after {
            if log.notifications.len() < MAX_LOGGED {
                log.notifications.push((note.clone(), from.clone()));
            }
            if note.get("method").and_then(Value::as_str) == Some("notifications/progress")
                && log.progress.len() < MAX_LOGGED
            {
                log.progress.push(Progress {
                    notification: note.clone(),
                    during: None,
                    exchange: reply.exchange.clone(),
                });
            }
        }
        if let Some(token) = token
            && log.tokens.len() < MAX_LOGGED
        {
            log.tokens.push((token, reply.message.is_some()));
        }
        // An HTTP refusal whose body is no JSON-RPC message (a 401 with an
        // OAuth error, a proxy's 404) is judged by the rules about its
        // status, not by the JSON-RPC message rules that read this log.
        if let Some(id) = id
            && log.replies.len() < MAX_LOGGED
            && reply.message.is_some()
            && !crate::suite::mcp::wire::http_refusal(reply.status, reply.message.as_ref())
        {
            log.replies.push(Seen {
                method: reply.method.clone(),
                id: Some(id),
                message: reply.message.clone(),
                exchange: reply.exchange.clone(),
            });
        }
    }

    pub fn transport(&self) -> Transport {
        match self.endpoint {
            Endpoint::Http(_) => Transport::Http,
            Endpoint::Stdio(_) => Transport::Stdio,
        }
    }

    pub fn limits(&self) -> &Limits {
        self.http.limits()
    }

    /// The HTTP client of the run (its address policy applies to every
    /// URL a target names).
    pub fn http(&self) -> &HttpClient {
        &self.http
    }

    /// The target's URL over HTTP.
    pub fn url(&self) -> Option<&Url> {
        match &self.endpoint {
            Endpoint::Http(url) => Some(url),
            Endpoint::Stdio(_) => None,
        }
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// A fresh request id, unique within the run (so within every session).
    pub fn next_id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The budget on the wire of a tool call ([`Connection::request_within`]):
    /// [`TOOL_BUDGET`] for the tool's work and three 95th-percentile round
    /// trips of the run's, at most the request timeout. On a loaded machine
    /// every answer slows alike, and a tool that answers at once must still
    /// fit: one round trip was too little (server-everything's `get-env`
    /// was cut at 4.6 s on a 2-core machine running the whole test suite,
    /// and its TOL verdicts changed from run to run).
    pub(crate) fn tool_budget(&self) -> Duration {
        // Rounded to 100 ms, so that findings name the same budget run to run.
        let step = Duration::from_millis(100);
        let wire = self.rtt.scaled(3).unwrap_or_default() + step / 2;
        let wire = step * (wire.as_millis() / step.as_millis()) as u32;
        (TOOL_BUDGET + wire).min(self.timeout)
    }

    /// How long to wait for something that may not come: a multiple of the
    /// run's round-trip times, at least `floor`, at most `ceiling`.
    pub(crate) fn window(&self, floor: Duration, ceiling: Duration) -> Duration {
        self.rtt
            .window(WINDOW_MULTIPLIER, floor, ceiling.min(self.timeout))
    }

    /// The HTTP client and endpoint URL of an HTTP target (`None` on
    /// stdio): for rules that shape a request the connection would not send
    /// (a header left out or bent, `Last-Event-ID`) and read its stream
    /// themselves.
    pub(crate) fn http_target(&self) -> Option<(&HttpClient, &Url)> {
        match &self.endpoint {
            Endpoint::Http(url) => Some((&self.http, url)),
            Endpoint::Stdio(_) => None,
        }
    }

    /// Records a progress token protocheck sent on a request a rule shaped
    /// itself, and whether that request was answered: the progress rules
    /// know every token protocheck gave.
    pub(crate) fn record_token(&self, token: Value, answered: bool) {
        let mut log = self.log();
        if log.tokens.len() < MAX_LOGGED {
            log.tokens.push((token, answered));
        }
    }

    /// Records a round trip of a request a rule sent itself, so that the
    /// run's waits follow the target's pace.
    pub(crate) fn record_rtt(&self, rtt: Duration) {
        self.rtt.record(rtt);
    }

    /// Opens a new connection: nothing is sent over HTTP; a child is
    /// spawned on stdio.
    pub async fn connect(&self) -> Result<Connection, TransportError> {
        self.connect_as(Credentials::Run).await
    }

    /// Opens a new connection that sends `credentials` (over HTTP; stdio
    /// sends none).
    pub async fn connect_as(&self, credentials: Credentials) -> Result<Connection, TransportError> {
        let auth = match credentials {
            Credentials::Run => self.bearer.clone().map(Auth::Header),
            Credentials::Nothing => None,
            Credentials::Bearer(token) => Some(Auth::Header(token)),
            Credentials::Query(token) => Some(Auth::Query(token)),
        };
        let wire = match &self.endpoint {
            Endpoint::Http(url) => Wire::Http {
                http: self.http.clone(),
                url: url.clone(),
            },
            Endpoint::Stdio(command) => {
                Wire::Stdio(Box::new(stdio::Pipe::spawn(command, self.limits())?))
            }
        };
        Ok(Connection {
            client: self.clone(),
            serial: self.next_connection.fetch_add(1, Ordering::Relaxed),
            wire,
            state: std::sync::Mutex::new(State {
                auth,
                ..State::default()
            }),
        })
    }
}

enum Wire {
    Http { http: HttpClient, url: Url },
    Stdio(Box<stdio::Pipe>),
}

/// The methods [`Connection::request`] may send twice: they read, and
/// change nothing on the server; and `initialize`, which at worst leaves
/// the server a session no one uses (the first got no answer at all).
const RESENDABLE_METHODS: [&str; 8] = [
    "initialize",
    "ping",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "resources/read",
    "prompts/get",
];

/// How long an exchange waits, besides for the answer it awaits.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Patience {
    /// Read on after the answer for at most this long (see
    /// [`Connection::request_lingering`]).
    pub(crate) linger: Option<Duration>,
    /// Wait for the answer for at most this long on the wire, instead of
    /// the request timeout (see [`Connection::request_within`]).
    pub(crate) budget: Option<Duration>,
}

impl Patience {
    /// How long to wait for the answer, given the request timeout: a budget
    /// shortens the wait, never lengthens it.
    fn answer_wait(self, timeout: Duration) -> Duration {
        self.budget.map_or(timeout, |b| b.min(timeout))
    }
}

/// How [`Connection::request_then_cancel`] cancels.
struct CancelPlan {
    id: Value,
    token: Value,
    /// The `notifications/cancelled` frame.
    cancel: String,
    watch: Duration,
}

/// How many progress notifications for its token a request sends before
/// protocheck cancels it. Two, not one: the cancelled request is proven in
/// progress by the first, and the second gives its token the pair of values
/// MCP25-UTL-005 compares, whatever the run's pace (with one, whether a
/// second crossed the cancellation decided that rule's pass or skip).
pub(crate) const PROGRESS_BEFORE_CANCEL: usize = 2;

impl CancelPlan {
    /// Whether `frame` is progress for the plan's token.
    fn is_progress(&self, frame: &Value) -> bool {
        frame.get("method").and_then(Value::as_str) == Some("notifications/progress")
            && frame.pointer("/params/progressToken") == Some(&self.token)
    }

    /// Counts `frame` in `seen` when it is progress for the plan's token;
    /// true when the request is now due to be cancelled.
    fn cancel_due(&self, frame: &Value, seen: &mut usize) -> bool {
        if !self.is_progress(frame) {
            return false;
        }
        *seen += 1;
        *seen == PROGRESS_BEFORE_CANCEL
    }
}

/// What a connection learnt from its `initialize`.
#[derive(Debug, Clone, Default)]
struct State {
    session_id: Option<String>,
    version: Option<String>,
    auth: Option<Auth>,
}

/// Where a connection's token goes.
#[derive(Debug, Clone)]
enum Auth {
    Header(String),
    Query(String),
}

/// One MCP session on one transport.
pub struct Connection {
    client: Client,
    /// Which of the client's connections this is.
    serial: u64,
    wire: Wire,
    state: std::sync::Mutex<State>,
}

impl Connection {
    pub fn transport(&self) -> Transport {
        match self.wire {
            Wire::Http { .. } => Transport::Http,
            Wire::Stdio(_) => Transport::Stdio,
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    fn state(&self) -> State {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The `Mcp-Session-Id` the server issued at `initialize`, if any.
    pub fn session_id(&self) -> Option<String> {
        self.state().session_id
    }

    /// The session this connection speaks in (see [`SessionOf`]).
    pub fn session(&self) -> SessionOf {
        match self.session_id() {
            Some(id) => SessionOf::Id(id),
            None => SessionOf::Connection(self.serial),
        }
    }

    /// Sends `initialize` asking for `version`. When it is answered with a
    /// result, later requests carry the negotiated version (and, over HTTP,
    /// the session id the answer issued).
    pub async fn initialize(&self, version: &str) -> Reply {
        let params = json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": client_info(),
        });
        let reply = self.request("initialize", params).await;
        self.adopt(&reply);
        reply
    }

    /// `initialize` as [`Self::initialize`], but judged only by the rule
    /// that sends it: its answer does not join the run's log (an answer
    /// about credentials is no JSON-RPC answer to judge).
    pub async fn initialize_unlogged(&self, version: &str) -> Reply {
        let params = json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": client_info(),
        });
        let reply = self.request_unlogged("initialize", params).await;
        self.adopt(&reply);
        reply
    }

    /// A conforming request with a fresh id whose answer does not join the
    /// run's log (only its notifications do).
    pub async fn request_unlogged(&self, method: &str, params: Value) -> Reply {
        let id = json!(self.client.next_id());
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_frame(method, frame.to_string(), Awaiting::Id(id))
            .await
    }

    /// What a connection keeps of an `initialize` answered with a result;
    /// the session id it carried joins the run's log.
    fn adopt(&self, reply: &Reply) {
        let header = reply.exchange.response.as_ref().and_then(|r| {
            r.headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(crate::suite::mcp::wire::H_SESSION_ID))
                .map(|(_, v)| v.clone())
        });
        if let Some(header) = header {
            let mut log = self.client.log();
            if log.issued.len() < MAX_LOGGED {
                log.issued.push(Issued {
                    id: reply.session_id.clone(),
                    header,
                    exchange: reply.exchange.clone(),
                });
            }
        }
        if let Some(result) = reply.result() {
            let mut state = self
                .state
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            state.version = result
                .get("protocolVersion")
                .and_then(Value::as_str)
                .map(str::to_owned);
            if reply.session_id.is_some() {
                state.session_id = reply.session_id.clone();
            }
        }
    }

    /// `notifications/initialized`.
    pub async fn initialized(&self) -> Reply {
        self.notify("notifications/initialized", json!({})).await
    }

    /// A conforming request with a fresh id. Over HTTP a request that reads
    /// and changes nothing (`ping`, a list, a read, a get; `initialize`, see
    /// [`RESENDABLE_METHODS`]) and met no answer
    /// at all (no connection, or no status within the timeout) is sent once
    /// more, with a new id: on a loaded machine one such miss is the
    /// machine's, and the rules that read the answer must not be left
    /// unjudged by it on one run and judged on the next.
    pub async fn request(&self, method: &str, params: Value) -> Reply {
        let reply = self
            .request_with_id(json!(self.client.next_id()), method, params.clone())
            .await;
        if !(RESENDABLE_METHODS.contains(&method) && self.unanswered_over_http(&reply)) {
            return reply;
        }
        self.request_with_id(json!(self.client.next_id()), method, params)
            .await
    }

    /// A conforming request with the id given (a string id, say); its answer
    /// joins the run's log like every conforming request's.
    pub async fn request_with_id(&self, id: Value, method: &str, params: Value) -> Reply {
        let token = params.pointer("/_meta/progressToken").cloned();
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let reply = self
            .exchange(method, frame.to_string(), Awaiting::Id(id.clone()), false)
            .await;
        self.client.record(Some(id), token, &reply, self.session());
        reply
    }

    /// A conforming request whose `params` carry `_meta.progressToken`;
    /// once [`PROGRESS_BEFORE_CANCEL`] progress notifications for that token
    /// came, protocheck sends
    /// `notifications/cancelled` for it and watches for an answer for
    /// `watch` more. Without progress the request is simply awaited.
    pub async fn request_then_cancel(
        &self,
        method: &str,
        params: Value,
        watch: Duration,
    ) -> CancelProbe {
        let id = json!(self.client.next_id());
        let token = params.pointer("/_meta/progressToken").cloned();
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "protocheck: cancelled while in progress"}});
        let plan = CancelPlan {
            id: id.clone(),
            token: token.clone().unwrap_or(Value::Null),
            cancel: cancel.to_string(),
            watch,
        };
        let _permit = self.client.permits.acquire().await;
        let probe = match &self.wire {
            Wire::Http { http, url } => {
                let state = self.state();
                http::post_then_cancel(self, http, url, &state, method, frame.to_string(), &plan)
                    .await
            }
            Wire::Stdio(pipe) => {
                pipe.request_then_cancel(&self.client, method, frame.to_string(), &plan)
                    .await
            }
        };
        self.client
            .record(Some(id), token, &probe.reply, self.session());
        probe
    }

    /// A conforming request without `params` (they are optional).
    pub async fn request_with_id_no_params(&self, id: Value, method: &str) -> Reply {
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method});
        let reply = self
            .exchange(method, frame.to_string(), Awaiting::Id(id.clone()), false)
            .await;
        self.client.record(Some(id), None, &reply, self.session());
        reply
    }

    /// Whether `reply`, over HTTP, met no answer at all: no connection, or no
    /// status within the timeout (see [`Self::request`] and
    /// [`Self::notify`], which send such a message once more).
    fn unanswered_over_http(&self, reply: &Reply) -> bool {
        matches!(self.wire, Wire::Http { .. })
            && reply.status.is_none()
            && reply
                .error
                .as_ref()
                .is_some_and(TransportError::is_transient)
    }

    /// A notification; its reply says whether anything answered it.
    pub async fn notify(&self, method: &str, params: Value) -> Reply {
        let frame = json!({"jsonrpc": "2.0", "method": method, "params": params});
        let reply = self
            .send_frame(method, frame.to_string(), Awaiting::Nothing)
            .await;
        // Over HTTP a notification that met no answer at all (no
        // connection, no status within the timeout) is posted once more, as
        // a read-only request is (see `request`): all but
        // `notifications/initialized` change nothing a server keeps.
        if method == "notifications/initialized" || !self.unanswered_over_http(&reply) {
            return reply;
        }
        self.send_frame(method, frame.to_string(), Awaiting::Nothing)
            .await
    }

    /// Sends `text` as it is (malformed JSON, a batch, a request bent on
    /// purpose), waiting for what `awaiting` says. Its answer is judged only
    /// by the rule that sent it: only its notifications join the run's log.
    pub async fn send_frame(&self, label: &str, text: String, awaiting: Awaiting) -> Reply {
        let reply = self.exchange(label, text, awaiting, true).await;
        self.client.record(None, None, &reply, self.session());
        reply
    }

    /// Ids a frame sent by [`send_frame`](Self::send_frame) carried inside
    /// it (a batch): a late answer to one is not taken for another's.
    pub async fn retire(&self, ids: &[Value]) {
        if let Wire::Stdio(pipe) = &self.wire {
            pipe.retire(ids).await;
        }
    }

    /// On stdio, reads what the server writes for `window` without sending
    /// anything: the frames it sent on its own initiative. Nothing over HTTP.
    pub async fn listen(&self, window: Duration) -> Vec<Value> {
        match &self.wire {
            Wire::Http { .. } => Vec::new(),
            Wire::Stdio(pipe) => {
                let frames = pipe.listen(window).await;
                self.record_heard(&frames, "(listening)", window);
                frames
            }
        }
    }

    /// On stdio, writes a `ping` and reads what the server writes up to its
    /// reply, then for `grace`: the frames the server sent on its own
    /// initiative. The `ping` is a barrier (a server handles its stdin in
    /// order, so what it wrote in answer to earlier messages comes before
    /// the reply); `grace` is for what it sends from work of its own that
    /// runs on after its answers, which no message of the protocol signals
    /// the end of. Nothing over HTTP. Returns the frames and whether the
    /// `ping` was answered (without a reply the read ended at the request
    /// timeout).
    pub async fn listen_past_barrier(&self, grace: Duration) -> (Vec<Value>, bool) {
        match &self.wire {
            Wire::Http { .. } => (Vec::new(), false),
            Wire::Stdio(pipe) => {
                let (frames, answered) = pipe.listen_past_barrier(&self.client, grace).await;
                self.record_heard(&frames, "ping (barrier)", grace);
                (frames, answered)
            }
        }
    }

    /// Logs what [`listen`](Self::listen) or
    /// [`listen_past_barrier`](Self::listen_past_barrier) heard, as a reply
    /// of its own (evidence).
    fn record_heard(&self, frames: &[Value], label: &str, window: Duration) {
        let mut heard = Reply::unsent(label, TransportError::Protocol("nothing was sent".into()));
        (heard.server_requests, heard.notifications) =
            frames.iter().cloned().partition(|f| f.get("id").is_some());
        heard.exchange.response = Some(crate::suite::ResponseRecord {
            status: None,
            headers: Vec::new(),
            body: crate::transport::excerpt(
                serde_json::to_string(&frames)
                    .unwrap_or_default()
                    .as_bytes(),
                self.client.limits().evidence_bytes,
            )
            .0,
            truncated: false,
            elapsed_ms: u64::try_from(window.as_millis()).unwrap_or(u64::MAX),
        });
        heard.exchange.error = None;
        self.client.record(None, None, &heard, self.session());
    }

    /// Watches the channel of the server's own messages while `during`
    /// runs: over HTTP a `GET` stream held open for `window` (what it carries
    /// joins the run's log, and its reply is returned as evidence); on stdio
    /// `during`, then stdout up to the reply to a barrier `ping` and for
    /// `window` past it (see [`listen_past_barrier`](Self::listen_past_barrier)).
    /// Returns `during`'s reply.
    pub async fn watch<F>(&self, window: Duration, during: F) -> (Reply, Option<Reply>)
    where
        F: std::future::Future<Output = Reply>,
    {
        match &self.wire {
            Wire::Http { http, url } => {
                let state = self.state();
                let (get, _, reply) = http::watch(self, http, url, &state, window, during).await;
                self.client.record(None, None, &get, self.session());
                (reply, Some(get))
            }
            Wire::Stdio(_) => {
                let reply = during.await;
                self.listen_past_barrier(window).await;
                (reply, None)
            }
        }
    }

    /// Sends `text` and reads its answer. With `strays` (a frame bent on
    /// purpose, whose answer may carry a null id or none of ours), on stdio
    /// no other such frame is in flight beside it, so that such an answer is
    /// its own.
    async fn exchange(&self, label: &str, text: String, awaiting: Awaiting, strays: bool) -> Reply {
        self.exchange_lingering(label, text, awaiting, Patience::default(), strays)
            .await
    }

    /// Sends `text` and reads its answer, within the patience's budget when
    /// it has one; with a linger, reads on after the answer (the rest of an
    /// SSE stream, for that long at most; on stdio up to the reply to a
    /// barrier `ping` and for that long past it), keeping the notifications
    /// that come in [`Reply::after`].
    async fn exchange_lingering(
        &self,
        label: &str,
        text: String,
        awaiting: Awaiting,
        patience: Patience,
        strays: bool,
    ) -> Reply {
        let _permit = self.client.permits.acquire().await;
        match &self.wire {
            Wire::Http { http, url } => {
                let state = self.state();
                let reply =
                    http::post(self, http, url, &state, label, text, (&awaiting, patience)).await;
                // A request of the server's own on the stream is answered, so
                // that the server is not left waiting: protocheck declares no
                // client capability, so with method-not-found.
                for request in &reply.server_requests {
                    let answer = http::refusal(request);
                    let posted = http::post(
                        self,
                        http,
                        url,
                        &state,
                        "answer",
                        answer,
                        (&Awaiting::Nothing, Patience::default()),
                    )
                    .await;
                    let mut log = self.client.log();
                    if log.posted_answers.len() < MAX_LOGGED {
                        log.posted_answers.push(posted);
                    }
                }
                reply
            }
            Wire::Stdio(pipe) => {
                pipe.exchange(&self.client, label, text, &awaiting, patience, strays)
                    .await
            }
        }
    }

    /// A conforming request with a fresh id whose answer is followed by a
    /// read of the rest of its SSE stream (at most `linger`) over HTTP, of
    /// stdout up to a barrier `ping`'s reply and `linger` past it on stdio:
    /// what the server sends about it after answering joins the
    /// run's log as coming after the answer.
    pub async fn request_lingering(&self, method: &str, params: Value, linger: Duration) -> Reply {
        let patience = Patience {
            linger: Some(linger),
            budget: None,
        };
        self.request_patiently(method, params, patience).await
    }

    /// A conforming request with a fresh id whose answer is awaited for at
    /// most `budget` on the wire: from the request sent to the answer read
    /// (protocheck's own queueing for a request permit does not count). A
    /// request still running then is cancelled, as the lifecycle's
    /// "Timeouts" asks of a sender ("When the request has not received a
    /// success or error response within the timeout period, the sender
    /// SHOULD issue a cancellation notification for that request and stop
    /// waiting for a response"): `notifications/cancelled` goes out, and
    /// the reply says so ([`Reply::cut`]). For the work a server does for
    /// as long as it likes: a tool call.
    pub async fn request_within(&self, method: &str, params: Value, budget: Duration) -> Reply {
        let patience = Patience {
            linger: None,
            budget: Some(budget),
        };
        self.request_patiently(method, params, patience).await
    }

    /// [`Self::request_within`] whose answer does not join the run's log,
    /// as [`Self::request_unlogged`]'s (a tool call on a connection of a
    /// rule's own, with a credential of its own).
    pub async fn request_unlogged_within(
        &self,
        method: &str,
        params: Value,
        budget: Duration,
    ) -> Reply {
        let patience = Patience {
            linger: None,
            budget: Some(budget),
        };
        self.exchange_within(method, params, patience).await.1
    }

    /// A conforming request with a fresh id, awaited and read on as
    /// `patience` says (see [`Self::request_lingering`] and
    /// [`Self::request_within`]).
    pub(crate) async fn request_patiently(
        &self,
        method: &str,
        params: Value,
        patience: Patience,
    ) -> Reply {
        let token = params.pointer("/_meta/progressToken").cloned();
        let (id, reply) = self.exchange_within(method, params, patience).await;
        self.client.record(Some(id), token, &reply, self.session());
        reply
    }

    /// Sends a conforming request with a fresh id and reads its answer as
    /// `patience` says, cancelling it when its budget ran out; returns the
    /// id and the reply, which the caller logs or not.
    async fn exchange_within(
        &self,
        method: &str,
        params: Value,
        patience: Patience,
    ) -> (Value, Reply) {
        let id = json!(self.client.next_id());
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut reply = self
            .exchange_lingering(
                method,
                frame.to_string(),
                Awaiting::Id(id.clone()),
                patience,
                false,
            )
            .await;
        if let Some(budget) = patience.budget
            && reply.message.is_none()
            && matches!(reply.error, Some(TransportError::Timeout(_)))
        {
            reply.cut = Some(budget);
            let reason = format!(
                "protocheck: still running after {} ms, its budget",
                budget.as_millis()
            );
            self.notify(
                "notifications/cancelled",
                json!({"requestId": id, "reason": reason}),
            )
            .await;
        }
        (id, reply)
    }

    /// An HTTP `GET` on the endpoint, read up to its first event or for a
    /// window; on stdio, a reply saying there is no such thing.
    pub async fn get_stream(&self, window: Duration) -> Reply {
        self.bare(::http::Method::GET, window).await
    }

    /// An HTTP `GET` on the endpoint, read past priming events (empty data)
    /// up to the first event that carries a message, or for a window; on
    /// stdio, a reply saying there is no such thing.
    pub async fn get_stream_message(&self, window: Duration) -> Reply {
        self.bare_with(::http::Method::GET, window, true).await
    }

    /// An HTTP `DELETE` of the session; on stdio, a reply saying there is no
    /// such thing.
    pub async fn delete(&self) -> Reply {
        self.bare(::http::Method::DELETE, Duration::from_millis(200))
            .await
    }

    async fn bare(&self, method: ::http::Method, window: Duration) -> Reply {
        self.bare_with(method, window, false).await
    }

    async fn bare_with(
        &self,
        method: ::http::Method,
        window: Duration,
        past_priming: bool,
    ) -> Reply {
        match &self.wire {
            Wire::Http { http, url } => {
                let _permit = self.client.permits.acquire().await;
                http::bare(self, http, url, &self.state(), method, window, past_priming).await
            }
            Wire::Stdio(_) => Reply::unsent(
                method.as_str(),
                TransportError::Protocol("not an HTTP target".into()),
            ),
        }
    }

    /// Ends the session as a 2025-11-25 client does: DELETE of the session
    /// over HTTP (when one was issued); on stdio stdin closed, then, for a
    /// child still running after [`CLOSE_FLOOR`] or so, SIGTERM.
    pub async fn close(self) {
        match self.wire {
            Wire::Http { .. } => {
                if self.session_id().is_some() {
                    self.delete().await;
                }
            }
            Wire::Stdio(pipe) => {
                let lines = pipe.lines().await;
                self.client.log().stdout.absorb(lines);
                let grace = self.client.window(CLOSE_FLOOR, CLOSE_CEILING);
                (*pipe).shut_down(grace, CLOSE_TERM_GRACE).await;
            }
        }
    }

    /// On stdio, how the child ended, if it has (never waits); `None` over
    /// HTTP.
    pub async fn exited(&self) -> Option<String> {
        match &self.wire {
            Wire::Http { .. } => None,
            Wire::Stdio(pipe) => pipe.exited().await.map(|status| status.to_string()),
        }
    }

    /// How this connection's child framed its stdout so far (stdio only).
    pub async fn stdout_lines(&self) -> Option<StdoutLines> {
        match &self.wire {
            Wire::Http { .. } => None,
            Wire::Stdio(pipe) => Some(pipe.lines().await),
        }
    }

    /// On stdio, ends the child as the lifecycle describes (closes stdin,
    /// waits `grace`, then SIGTERM and `term_grace`, then SIGKILL) and says
    /// how it ended; `None` over HTTP (nothing is sent).
    pub async fn shut_down(self, grace: Duration, term_grace: Duration) -> Option<Shutdown> {
        match self.wire {
            Wire::Http { .. } => None,
            Wire::Stdio(pipe) => {
                let (shutdown, lines) = (*pipe).shut_down(grace, term_grace).await;
                self.client.log().stdout.absorb(lines);
                shutdown
            }
        }
    }

    /// What the server wrote on stdout that is not JSON (stdio only; empty
    /// over HTTP).
    pub async fn noise(&self) -> Vec<String> {
        match &self.wire {
            Wire::Http { .. } => Vec::new(),
            Wire::Stdio(pipe) => pipe.noise().await,
        }
    }
}
