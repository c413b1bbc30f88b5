//! What every check shares: the [`Session`] (the client, the run's main
//! connection, its `initialize` and the run's options) and the
//! [`Judgement`] a check gives.

use super::client::{Client, Connection, Patience, Reply, SessionOf, Transport};
use crate::suite::Exchange;
use crate::suite::mcp::client::clip;
use crate::suite::mcp::survey::placeholder_arguments;
use serde_json::{Value, json};
use std::any::{Any, TypeId};
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// Most exchanges kept as evidence for one finding.
const MAX_EVIDENCE: usize = 4;

/// A check's verdict on one rule, before it becomes a
/// [`Finding`](crate::suite::Finding).
#[derive(Debug, Clone)]
pub struct Judgement {
    pub(crate) kind: Kind,
    pub(crate) message: String,
    pub(crate) evidence: Vec<Exchange>,
    /// The read limit (in bytes) an answer given as evidence ran over: what
    /// protocheck did not read it cannot judge, so the engine makes a
    /// failure of this judgement "not verified" (see
    /// [`Judgement::within_limits`]).
    pub(crate) over_limit: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Pass,
    /// The rule's outcome on failure (`fail`, `warn` or `info`).
    Fail,
    /// A `warn` whatever the rule's outcome on failure: for a part of a rule
    /// that the spec words as SHOULD.
    Warn,
    /// An `info` whatever the rule's outcome on failure: for what is
    /// reported but counts against no grade.
    Info,
    Skip,
}

impl Judgement {
    fn of(kind: Kind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            evidence: Vec::new(),
            over_limit: None,
        }
    }

    pub(crate) fn pass(message: impl Into<String>) -> Self {
        Self::of(Kind::Pass, message)
    }

    pub(crate) fn fail(message: impl Into<String>) -> Self {
        Self::of(Kind::Fail, message)
    }

    pub(crate) fn warn(message: impl Into<String>) -> Self {
        Self::of(Kind::Warn, message)
    }

    pub(crate) fn info(message: impl Into<String>) -> Self {
        Self::of(Kind::Info, message)
    }

    pub(crate) fn skip(reason: impl Into<String>) -> Self {
        Self::of(Kind::Skip, reason)
    }

    /// Adds an exchange as evidence.
    pub(crate) fn with(mut self, exchange: &Exchange) -> Self {
        if self.evidence.len() < MAX_EVIDENCE {
            self.evidence.push(exchange.clone());
        }
        self
    }

    /// Adds the exchange of a reply as evidence.
    pub(crate) fn reply(mut self, reply: &Reply) -> Self {
        if let Some(crate::transport::TransportError::TooLarge { limit }) = &reply.error {
            self.over_limit = Some(*limit);
        }
        self.with(&reply.exchange)
    }

    /// This judgement, unless it finds fault on an answer protocheck did not
    /// read whole: then "not verified", with the limit. protocheck's own
    /// limit is never the server's failure (a valid result of megabytes is
    /// a valid result).
    pub(crate) fn within_limits(self) -> Self {
        match (self.kind, self.over_limit) {
            (Kind::Fail | Kind::Warn | Kind::Info, Some(limit)) => Self {
                kind: Kind::Skip,
                message: crate::suite::mcp::client::over_limit_message(limit, &self.message),
                ..self
            },
            _ => self,
        }
    }
}

/// One judgement of several a rule made over the forms or items it sent:
/// the worst kind wins (fail, then warn, skip, info), its messages joined
/// with the evidence of each; when all passed, their messages joined.
pub(crate) fn worst_of(judged: Vec<Judgement>) -> Judgement {
    let worst = [Kind::Fail, Kind::Warn, Kind::Skip, Kind::Info]
        .into_iter()
        .find(|k| judged.iter().any(|j| j.kind == *k))
        .unwrap_or(Kind::Pass);
    let picked: Vec<Judgement> = judged.into_iter().filter(|j| j.kind == worst).collect();
    let message = picked
        .iter()
        .map(|j| j.message.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    let over_limit = picked.iter().find_map(|j| j.over_limit);
    let mut out = Judgement {
        over_limit,
        ..Judgement::of(worst, message)
    };
    for exchange in picked.iter().flat_map(|j| j.evidence.iter()) {
        out = out.with(exchange);
    }
    out
}

/// Everything the checks share.
pub struct Session {
    pub(crate) client: Client,
    /// The run's connection, initialized (when `initialize` succeeded).
    pub(crate) main: Connection,
    /// The answer to the main connection's `initialize`.
    pub(crate) init: Reply,
    /// The answer to its `notifications/initialized`, when one was sent.
    pub(crate) initialized: Option<Reply>,
    /// The answers to `initialize` asking for versions no server supports,
    /// each on a new connection: sent once, judged by several rules.
    pub(crate) unknown_versions: tokio::sync::OnceCell<Vec<(String, Reply)>>,
    /// The run lets protocheck call any tool, not only those annotated
    /// `readOnlyHint: true` (digest §15 D14).
    pub(crate) allow_tool_calls: bool,
    /// What several rules read and one probe gathers, once per run.
    pub(crate) shared: Shared,
    /// A token with less scope than the run's, given with the run (AUT-007).
    pub(crate) limited_token: Option<crate::suite::BearerToken>,
    /// The requests of [`Session::passive_probe`], sent once per run.
    /// With the read after each answer: at most [`AFTER_WINDOW`].
    pub(crate) progress_calls: tokio::sync::OnceCell<(Vec<Reply>, Duration)>,
    /// The rules that could send a request while MCP25-LOG-002 holds the
    /// run's session at `debug`, counted down as each is judged.
    pub(crate) before_debug: Countdown,
    /// The resource URIs protocheck asked to subscribe to (MCP25-RES-008),
    /// each with the session that asked: an update about one of them, or a
    /// sub-resource of one, in that session is solicited (MCP25-LIF-008),
    /// during the subscription or just after it ends.
    pub(crate) subscribed: std::sync::Mutex<Vec<(String, SessionOf)>>,
}

/// A count of rules still to judge, and a wait for none to be left. The
/// engine counts a rule down once it is judged (skipped or not); a rule
/// that must see none of them in flight waits for [`Countdown::zero`].
#[derive(Debug)]
pub(crate) struct Countdown(tokio::sync::watch::Sender<usize>);

impl Default for Countdown {
    /// Nothing to wait for.
    fn default() -> Self {
        Self::new(0)
    }
}

impl Countdown {
    pub(crate) fn new(n: usize) -> Self {
        Self(tokio::sync::watch::Sender::new(n))
    }

    /// One rule of the count is judged.
    pub(crate) fn judged(&self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }

    /// Waits until every rule of the count is judged.
    pub(crate) async fn zero(&self) {
        // The sender lives in `self`, so the wait cannot end on a closed
        // channel before the count reaches zero.
        let _ = self.0.subscribe().wait_for(|n| *n == 0).await;
    }
}

/// Values gathered once per run and read by several rules (a survey of the
/// tools, the answers to their calls), one per type.
#[derive(Default)]
pub(crate) struct Shared(std::sync::Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>);

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Shared")
    }
}

impl Session {
    pub(crate) fn transport(&self) -> Transport {
        self.client.transport()
    }

    /// The `InitializeResult`, when `initialize` was answered with one.
    pub(crate) fn init_result(&self) -> Option<&Value> {
        self.init.result()
    }

    /// `InitializeResult.capabilities`, or null.
    pub(crate) fn capabilities(&self) -> &Value {
        self.init_result()
            .and_then(|r| r.get("capabilities"))
            .unwrap_or(&Value::Null)
    }

    /// Whether the server advertises the capability `name` (an object value).
    pub(crate) fn advertises(&self, name: &str) -> bool {
        self.capabilities().get(name).is_some_and(Value::is_object)
    }

    /// The version the server answered `initialize` with.
    pub(crate) fn negotiated(&self) -> Option<&str> {
        self.init_result()?.get("protocolVersion")?.as_str()
    }

    /// `initialize` asking for each of `versions`, once per run, each on a
    /// new connection closed right after. The connections are independent,
    /// so they are opened together: on stdio each is a child that may take a
    /// while to start.
    pub(crate) async fn unknown_version_probes(&self, versions: &[&str]) -> &[(String, Reply)] {
        self.unknown_versions
            .get_or_init(|| {
                futures::future::join_all(versions.iter().map(|version| async move {
                    let reply = match self.client.connect().await {
                        Ok(conn) => {
                            let reply = conn.initialize(version).await;
                            conn.close().await;
                            reply
                        }
                        Err(e) => Reply::unsent("initialize", e),
                    };
                    ((*version).to_owned(), reply)
                }))
            })
            .await
    }

    /// The value of type `T` of this run: the first rule to ask gathers it
    /// with `init`, the others wait for it and read the same value.
    pub(crate) async fn shared<T, F, Fut>(&self, init: F) -> Arc<T>
    where
        T: Send + Sync + 'static,
        F: FnOnce() -> Fut,
        Fut: Future<Output = T>,
    {
        let cell = {
            let mut map = self
                .shared
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            map.entry(TypeId::of::<T>())
                .or_insert_with(|| Arc::new(tokio::sync::OnceCell::<Arc<T>>::new()))
                .clone()
        };
        // The entry of `TypeId::of::<T>()` always holds a cell of `Arc<T>`;
        // should it not, the value is gathered for this caller alone.
        let cell = cell
            .downcast::<tokio::sync::OnceCell<Arc<T>>>()
            .unwrap_or_else(|_| Arc::new(tokio::sync::OnceCell::new()));
        cell.get_or_init(|| async { Arc::new(init().await) })
            .await
            .clone()
    }

    /// The value of type `T` of this run if a rule has gathered it already
    /// (see [`shared`](Self::shared)); never gathers it.
    pub(crate) fn gathered<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let map = self
            .shared
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        map.get(&TypeId::of::<T>())?
            .clone()
            .downcast::<tokio::sync::OnceCell<Arc<T>>>()
            .ok()?
            .get()
            .cloned()
    }

    /// Whether protocheck may call `tool` (a `tools/list` item): the run
    /// allows tool calls, or the tool is annotated `readOnlyHint: true`
    /// (digest, D14).
    pub(crate) fn may_call(&self, tool: &Value) -> bool {
        may_call(self.allow_tool_calls, tool)
    }

    /// The run's survey of the server's tools, made by the first rule that
    /// asks (whether or not `tools` is declared) and read by every other.
    pub(crate) async fn tools(&self) -> Arc<ToolSurvey> {
        self.shared(|| async {
            ToolSurvey::new(
                walk(self, "tools/list", "tools").await,
                self.allow_tool_calls,
            )
        })
        .await
    }

    /// The tools of the run's survey with its pages; `Err` with a skip when
    /// a page of `tools/list` was not answered with a result.
    pub(crate) async fn list_tools(&self) -> Result<(Vec<Value>, Vec<Reply>), Judgement> {
        let survey = self.tools().await;
        let tools = survey.readable()?;
        Ok((tools.to_vec(), survey.listing.pages.clone()))
    }

    /// A new connection of the rule's own (a new child on stdio), or the
    /// judgement that says why none could be opened.
    pub(crate) async fn fresh(&self) -> Result<Connection, Judgement> {
        self.client
            .connect()
            .await
            .map_err(|e| Judgement::skip(format!("not verified: a new connection failed: {e}")))
    }
}

/// Whether a connection still serves after a probe that may have stopped
/// it, told by a `ping` sent after the probe compared with one sent before
/// it: a server whose `ping` is broken (MCP25-UTL-001 judges that) still
/// serves when it answers the second as it answered the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Serving {
    Yes,
    /// It answered before and no longer does; why, in a finding's words.
    No(String),
    /// Nothing can tell; why.
    Unknown(String),
}

/// Compares the `ping` sent `before` a probe with the one sent `after` it.
pub(crate) fn serving(before: &Reply, after: &Reply) -> Serving {
    let responded = |r: &Reply| {
        r.message
            .as_ref()
            .and_then(Value::as_object)
            .is_some_and(|m| m.contains_key("result") || m.contains_key("error"))
    };
    if before.result().is_some() {
        return if after.result().is_some() {
            Serving::Yes
        } else {
            Serving::No(format!(
                "`ping` was answered with a result before it and {} after it",
                after.describe()
            ))
        };
    }
    if !responded(before) {
        return Serving::Unknown(format!(
            "`ping` was answered {} even before it, so no later request can tell whether the \
             server still serves",
            before.describe()
        ));
    }
    if !responded(after) {
        return Serving::No(format!(
            "`ping` was answered {} before it and {} after it",
            before.describe(),
            after.describe()
        ));
    }
    if after.error_code() == before.error_code() {
        Serving::Yes
    } else {
        Serving::Unknown(format!(
            "`ping` was answered {} before it and {} after it",
            before.describe(),
            after.describe()
        ))
    }
}

impl Session {
    /// A new connection of the rule's own, initialized at 2025-11-25 (the
    /// answer holds a result, `notifications/initialized` sent), for a probe
    /// that may end the session; or the judgement that says why there is none.
    pub(crate) async fn initialized_connection(&self) -> Result<Connection, Judgement> {
        let conn = self.fresh().await?;
        let init = conn.initialize(super::client::PROTOCOL_VERSION).await;
        if init.result().is_none() {
            conn.close().await;
            return Err(Judgement::skip(format!(
                "not verified: `initialize` on a new connection was answered {}",
                init.describe()
            ))
            .reply(&init));
        }
        conn.initialized().await;
        Ok(conn)
    }
}

/// The longest protocheck reads on, after the answer to a request with a
/// progress token, for progress that should no longer come.
pub(crate) const AFTER_WINDOW: Duration = Duration::from_secs(1);
/// The least it reads on. Over HTTP the end of the answer's SSE stream ends
/// the read at once, and on stdio a barrier `ping` proves that everything
/// the server wrote while handling the request has come; but progress can
/// also come from a timer or a task of the server's that outlives the answer
/// (a fault of the reference server sends it 20 ms after), and no message
/// of the protocol signals that such work has ended, so a floor stays.
const AFTER_FLOOR: Duration = Duration::from_millis(200);
/// Most read-only tools called with a progress token in one run.
const MAX_PROGRESS_CALLS: usize = 3;

/// The listings besides `tools/list` (which the run's tool survey reads) a
/// server advertises, each read once by the passive probe: the capability,
/// and the method.
const LISTINGS: &[(&str, &str)] = &[
    ("resources", "resources/list"),
    ("resources", "resources/templates/list"),
    ("prompts", "prompts/list"),
];

impl Session {
    /// What the passive rules (those that judge every message of the run)
    /// observe even when no other rule provoked it, sent once per run and
    /// awaited by each of them: the first page of every listing the server
    /// advertises (side-effect free); a `ping` with a progress token (any
    /// request may carry one); and read-only tools (annotated
    /// `readOnlyHint: true`, the only ones protocheck calls on its own,
    /// digest D14), at most three, each called with placeholder arguments
    /// and a progress token of its own; the replies are kept up to the
    /// first call that sent two progress notifications (they go side by
    /// side with the `ping`, so all of them are sent). After each answer to
    /// a request with a progress token, the rest of its stream is read (for
    /// at most [`Self::after_window`]), on stdio stdout up to the reply to a
    /// barrier `ping` and for that window past it, for progress that comes
    /// too late.
    pub(crate) async fn passive_probe(&self) -> &[Reply] {
        &self.probed().await.0
    }

    /// Whether [`Self::passive_probe`] goes out beside the rules from the
    /// start of the run: when the server negotiated this revision (on
    /// stdio too: the pipe carries several requests at once).
    pub(crate) fn probes_early(&self) -> bool {
        self.negotiated() == Some(super::client::PROTOCOL_VERSION)
    }

    /// How long [`Self::passive_probe`] read on after each answer: a
    /// multiple of the run's round trips, from [`AFTER_FLOOR`] to
    /// [`AFTER_WINDOW`].
    pub(crate) async fn after_window(&self) -> Duration {
        self.probed().await.1
    }

    async fn probed(&self) -> &(Vec<Reply>, Duration) {
        self.progress_calls
            .get_or_init(|| async {
                let mut calls = Vec::new();
                // The listings are independent of one another: side by side.
                let listings = LISTINGS
                    .iter()
                    .filter(|(capability, _)| self.advertises(capability))
                    .map(|(_, method)| self.main.request(method, json!({})));
                let tools = async {
                    if self.advertises("tools") {
                        let survey = self.tools().await;
                        survey
                            .read_only()
                            .filter(|t| !needs_task(t))
                            .cloned()
                            .collect()
                    } else {
                        Vec::new()
                    }
                };
                let (_, tools): (_, Vec<Value>) =
                    tokio::join!(futures::future::join_all(listings), tools);
                // Set once the listings have measured the target's pace.
                let after = self.client.window(AFTER_FLOOR, AFTER_WINDOW);
                let ping = async {
                    let token = json!(format!("pc-progress-{}", self.client.next_id()));
                    self.main
                        .request_lingering(
                            "ping",
                            json!({"_meta": {"progressToken": token}}),
                            after,
                        )
                        .await
                };
                let call = |tool: Value| async move {
                    let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                    let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
                    let token = json!(format!("pc-progress-{}", self.client.next_id()));
                    let params = json!({
                        "name": name,
                        "arguments": placeholder_arguments(&schema),
                        "_meta": {"progressToken": token},
                    });
                    // Within the tool budget: progress that comes in it is
                    // what this probe needs.
                    let patience = Patience {
                        linger: Some(after),
                        budget: Some(self.client.tool_budget()),
                    };
                    let reply = self
                        .main
                        .request_patiently("tools/call", params, patience)
                        .await;
                    let seen = reply
                        .notifications
                        .iter()
                        .filter(|n| n.pointer("/params/progressToken") == Some(&token))
                        .count();
                    (reply, seen)
                };
                let picked: Vec<Value> = tools
                    .into_iter()
                    .take(MAX_PROGRESS_CALLS)
                    .filter(|t| t.get("name").and_then(Value::as_str).is_some())
                    .collect();
                // The calls are kept up to the first that sent two progress
                // notifications. The `ping` and every call go side by side
                // (each call is read-only and within the tool budget; the
                // ones past that first are sent all the same, on every run).
                let (ping, called) = tokio::join!(
                    ping,
                    futures::future::join_all(picked.into_iter().map(call))
                );
                calls.push(ping);
                for (reply, seen) in called {
                    calls.push(reply);
                    if seen >= 2 {
                        break;
                    }
                }
                (calls, after)
            })
            .await
    }
}

/// Most pages of one list protocheck reads.
pub(crate) const MAX_PAGES: usize = 20;
/// Most items of one list protocheck keeps.
pub(crate) const MAX_ITEMS: usize = 1000;

/// One list method walked page by page, following `nextCursor`.
#[derive(Debug, Clone)]
pub(crate) struct Listing {
    /// The answer to each page asked for, the first page first.
    pub(crate) pages: Vec<Reply>,
    /// The items of every page answered with a well-formed result.
    pub(crate) items: Vec<Value>,
    /// Why the walk ended before the list did, when it did.
    pub(crate) stopped: Option<String>,
}

impl Listing {
    /// The first page's answer (every walk asks for one).
    pub(crate) fn first(&self) -> Option<&Reply> {
        self.pages.first()
    }
}

/// `text` in backquotes, cut for a message.
fn quoted(text: &str) -> String {
    format!("`{}`", clip(text, 80))
}

/// Walks `method` on the main connection, whose result lists its items
/// under `key`: every page, at most [`MAX_PAGES`] and [`MAX_ITEMS`],
/// stopping at an error, a page without the array, a missing or repeated
/// cursor.
pub(crate) async fn walk(s: &Session, method: &'static str, key: &str) -> Listing {
    let mut listing = Listing {
        pages: Vec::new(),
        items: Vec::new(),
        stopped: None,
    };
    let mut cursors = HashSet::new();
    let mut cursor: Option<String> = None;
    while listing.pages.len() < MAX_PAGES {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let reply = s.main.request(method, params).await;
        let items = reply
            .result()
            .and_then(|r| r.get(key))
            .and_then(Value::as_array)
            .cloned();
        let next = reply
            .result()
            .and_then(|r| r.get("nextCursor"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let page = listing.pages.len() + 1;
        match items {
            Some(items) => {
                let room = MAX_ITEMS.saturating_sub(listing.items.len());
                listing.items.extend(items.into_iter().take(room));
            }
            None if page > 1 => {
                listing.stopped = Some(format!(
                    "page {page} (cursor {}) was answered {}",
                    quoted(cursor.as_deref().unwrap_or_default()),
                    reply.describe()
                ));
            }
            None => {}
        }
        let ended = reply
            .result()
            .and_then(|r| r.get(key))
            .is_none_or(|i| !i.is_array());
        listing.pages.push(reply);
        if ended || listing.stopped.is_some() {
            break;
        }
        let Some(next) = next else { break };
        if !cursors.insert(next.clone()) {
            listing.stopped = Some(format!(
                "page {page} offered the cursor {} again",
                quoted(&next)
            ));
            break;
        }
        if listing.items.len() >= MAX_ITEMS {
            listing.stopped = Some(format!("protocheck reads at most {MAX_ITEMS} items"));
            break;
        }
        cursor = Some(next);
    }
    if listing.pages.len() >= MAX_PAGES && listing.stopped.is_none() {
        let more = listing
            .pages
            .last()
            .and_then(Reply::result)
            .is_some_and(|r| r.get("nextCursor").is_some());
        if more {
            listing.stopped = Some(format!("protocheck reads at most {MAX_PAGES} pages"));
        }
    }
    listing
}

/// Whether `tool` is annotated `readOnlyHint: true`: the only tools
/// protocheck calls on its own (digest, D14).
fn read_only(tool: &Value) -> bool {
    tool.pointer("/annotations/readOnlyHint") == Some(&Value::Bool(true))
}

/// Whether `tool` runs only as a task (`execution.taskSupport` is
/// "required"): tasks, "Tool-Level Negotiation", says a client MUST invoke
/// it as a task and a server MUST refuse a plain `tools/call` of it with
/// -32601. protocheck calls such a tool plainly only where MCP25-TSK-005
/// probes that refusal; every other probe leaves it out, whether or not the
/// server declares `tasks.requests.tools.call` (without it a client may not
/// ask for a task at all, and the tool says it refuses a plain call).
pub(crate) fn needs_task(tool: &Value) -> bool {
    tool.pointer("/execution/taskSupport")
        .and_then(Value::as_str)
        == Some("required")
}

/// Whether protocheck may call `tool`: the run allows tool calls
/// (`allow`), or the tool is read-only.
fn may_call(allow: bool, tool: &Value) -> bool {
    allow || read_only(tool)
}

/// The run's one survey of the server's tools: `tools/list` walked once
/// (see [`walk`]), and which of the tools protocheck may call. Every rule
/// that lists or calls tools reads it, so a run asks for each page once.
#[derive(Debug)]
pub(crate) struct ToolSurvey {
    pub(crate) listing: Listing,
    allow_calls: bool,
}

impl ToolSurvey {
    pub(crate) fn new(listing: Listing, allow_calls: bool) -> Self {
        Self {
            listing,
            allow_calls,
        }
    }

    /// Every tool listed, in listed order.
    pub(crate) fn items(&self) -> &[Value] {
        &self.listing.items
    }

    /// The listed tools, or, when a page of `tools/list` was not answered
    /// with a result, the skip of a rule that needs the whole list.
    pub(crate) fn readable(&self) -> Result<&[Value], Judgement> {
        match self.listing.pages.iter().find(|p| p.result().is_none()) {
            Some(refused) => Err(Judgement::skip(format!(
                "not verified: `tools/list` was answered {}",
                refused.describe()
            ))
            .reply(refused)),
            None => Ok(self.items()),
        }
    }

    /// Whether protocheck may call `tool` in this run.
    pub(crate) fn may_call(&self, tool: &Value) -> bool {
        may_call(self.allow_calls, tool)
    }

    /// The listed tools annotated read-only, in listed order.
    pub(crate) fn read_only(&self) -> impl Iterator<Item = &Value> {
        self.items().iter().filter(|t| read_only(t))
    }

    /// The listed tools protocheck may call with a plain `tools/call`, each
    /// name once (the first listed), in listed order: a tool without a
    /// string name, or one that runs only as a task ([`needs_task`]), is not
    /// callable.
    pub(crate) fn callable(&self) -> Vec<&Value> {
        let mut seen = HashSet::new();
        self.items()
            .iter()
            .filter(|t| self.may_call(t) && !needs_task(t))
            .filter(|t| {
                t.get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|name| seen.insert(name))
            })
            .collect()
    }
}

/// A reply to a POST whose body was `label`, with nothing come back yet: for
/// tests that set what came back, or judge what was sent.
#[cfg(test)]
pub(crate) fn unanswered(label: &str) -> Reply {
    Reply::new(
        label,
        Exchange {
            request: crate::suite::RequestRecord {
                line: "POST".into(),
                headers: Vec::new(),
                body: label.to_owned(),
            },
            response: None,
            error: None,
        },
    )
}

#[cfg(test)]
impl Session {
    /// A session over HTTP to a port nothing listens on, whose `initialize`
    /// was answered with `capabilities`: for tests of what rules decide
    /// before they send anything.
    pub(crate) async fn offline(capabilities: Value) -> Session {
        use crate::suite::context::Endpoint;
        use crate::transport::{AddressPolicy, HttpClient, Limits};
        let http = HttpClient::new(AddressPolicy::AllowPrivate, Limits::default()).expect("client");
        let url = url::Url::parse("http://127.0.0.1:9/mcp").expect("url");
        let client = Client::new(
            Endpoint::Http(url),
            http,
            Limits::default().request_timeout,
            1,
        );
        let main = client.connect().await.expect("no traffic over HTTP");
        let mut init = unanswered("initialize");
        init.message = Some(json!({"jsonrpc": "2.0", "id": 1, "result": {
            "protocolVersion": super::client::PROTOCOL_VERSION,
            "capabilities": capabilities,
            "serverInfo": {"name": "t", "version": "1"}
        }}));
        Session {
            client,
            main,
            init,
            initialized: None,
            unknown_versions: Default::default(),
            allow_tool_calls: false,
            shared: Default::default(),
            limited_token: None,
            progress_calls: Default::default(),
            before_debug: Default::default(),
            subscribed: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn what_no_rule_gathered_is_not_gathered_by_looking() {
        let s = Session::offline(json!({})).await;
        assert!(s.gathered::<u32>().is_none());
        assert_eq!(*s.shared(|| async { 7_u32 }).await, 7);
        assert_eq!(s.gathered::<u32>().as_deref(), Some(&7));
        assert!(s.gathered::<i64>().is_none());
    }

    fn survey(allow: bool, tools: &[Value]) -> ToolSurvey {
        ToolSurvey::new(
            Listing {
                pages: Vec::new(),
                items: tools.to_vec(),
                stopped: None,
            },
            allow,
        )
    }

    /// The names of the tools of `survey(allow, tools)` protocheck may call.
    fn callable_names(allow: bool, tools: &[Value]) -> Vec<String> {
        survey(allow, tools)
            .callable()
            .iter()
            .filter_map(|t| Some(t.get("name")?.as_str()?.to_owned()))
            .collect()
    }

    #[test]
    fn only_read_only_tools_are_called_unless_the_run_allows_it() {
        let tools = [
            json!({"name": "read", "annotations": {"readOnlyHint": true}}),
            json!({"name": "write", "annotations": {"readOnlyHint": false}}),
            json!({"name": "plain"}),
            json!({"name": "read", "annotations": {"readOnlyHint": true}}),
            json!({"annotations": {"readOnlyHint": true}}),
        ];
        let names = |allow| callable_names(allow, &tools);
        assert_eq!(names(false), ["read"]);
        assert_eq!(names(true), ["read", "write", "plain"]);
        let survey = survey(true, &tools);
        assert_eq!(
            survey.read_only().count(),
            3,
            "read-only whatever the run allows"
        );
        assert!(survey.may_call(&tools[1]));
        assert!(!super::may_call(false, &tools[1]));
    }

    #[test]
    fn a_tool_that_runs_only_as_a_task_is_never_called_plainly() {
        let tools = [
            json!({"name": "report", "execution": {"taskSupport": "required"},
                   "annotations": {"readOnlyHint": true}}),
            json!({"name": "maybe", "execution": {"taskSupport": "optional"},
                   "annotations": {"readOnlyHint": true}}),
            json!({"name": "never", "execution": {"taskSupport": "forbidden"}}),
        ];
        let names = |allow| callable_names(allow, &tools);
        assert_eq!(names(false), ["maybe"]);
        assert_eq!(names(true), ["maybe", "never"]);
        assert!(super::needs_task(&tools[0]));
        assert!(!super::needs_task(&tools[1]));
    }
}
