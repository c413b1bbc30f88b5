//! What every check shares: the [`Session`] (the client, the run's main
//! connection, its `initialize` and the run's options) and the
//! [`Judgement`] a check gives.

use super::client::{Client, Connection, Reply, Transport};
use crate::suite::Exchange;
use crate::suite::mcp::survey::placeholder_arguments;
use serde_json::{Value, json};
use std::any::{Any, TypeId};
use std::collections::HashMap;
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
    pub(crate) fn reply(self, reply: &Reply) -> Self {
        self.with(&reply.exchange)
    }
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
    pub(crate) progress_calls: tokio::sync::OnceCell<Vec<Reply>>,
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
    /// new connection closed right after.
    pub(crate) async fn unknown_version_probes(&self, versions: &[&str]) -> &[(String, Reply)] {
        self.unknown_versions
            .get_or_init(|| async {
                let mut replies = Vec::new();
                for version in versions {
                    let reply = match self.client.connect().await {
                        Ok(conn) => {
                            let reply = conn.initialize(version).await;
                            conn.close().await;
                            reply
                        }
                        Err(e) => Reply::unsent("initialize", e),
                    };
                    replies.push(((*version).to_owned(), reply));
                }
                replies
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

    /// Whether protocheck may call `tool` (a `tools/list` item): the run
    /// allows tool calls, or the tool is annotated `readOnlyHint: true`
    /// (digest, D14).
    pub(crate) fn may_call(&self, tool: &Value) -> bool {
        self.allow_tool_calls
            || tool.pointer("/annotations/readOnlyHint") == Some(&Value::Bool(true))
    }

    /// Every tool of `tools/list`, its pages walked (at most `MAX_PAGES`),
    /// with the replies read; `Err` with a skip when the list cannot be read.
    pub(crate) async fn list_tools(&self) -> Result<(Vec<Value>, Vec<Reply>), Judgement> {
        const MAX_PAGES: usize = 10;
        let mut tools = Vec::new();
        let mut replies = Vec::new();
        let mut cursor: Option<Value> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => serde_json::json!({"cursor": c}),
                None => serde_json::json!({}),
            };
            let reply = self.main.request("tools/list", params).await;
            let Some(result) = reply.result() else {
                return Err(Judgement::skip(format!(
                    "not verified: `tools/list` was answered {}",
                    reply.describe()
                ))
                .reply(&reply));
            };
            if let Some(items) = result.get("tools").and_then(Value::as_array) {
                tools.extend(items.iter().cloned());
            }
            cursor = result.get("nextCursor").filter(|c| c.is_string()).cloned();
            replies.push(reply);
            if cursor.is_none() {
                break;
            }
        }
        Ok((tools, replies))
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

/// How long protocheck reads on, after the answer to a request with a
/// progress token, for progress that should no longer come.
pub(crate) const AFTER_WINDOW: Duration = Duration::from_secs(1);
/// Most read-only tools called with a progress token in one run.
const MAX_PROGRESS_CALLS: usize = 3;
/// Most `tools/list` pages read to find them.
const MAX_TOOL_PAGES: usize = 5;

/// The listings a server advertises, each read once by the passive probe:
/// the capability, and the method.
const LISTINGS: &[(&str, &str)] = &[
    ("tools", "tools/list"),
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
    /// digest D14), each called with placeholder arguments and a progress
    /// token of its own, until one sent two progress notifications or
    /// three were called. After each answer to a request with a progress
    /// token, the rest of its stream (stdout on stdio) is read for
    /// [`AFTER_WINDOW`], for progress that comes too late.
    pub(crate) async fn passive_probe(&self) -> &[Reply] {
        self.progress_calls
            .get_or_init(|| async {
                let mut calls = Vec::new();
                let mut tools = Vec::new();
                for (capability, method) in LISTINGS {
                    if !self.advertises(capability) {
                        continue;
                    }
                    if *method == "tools/list" {
                        tools = self.read_only_tools().await;
                        continue;
                    }
                    self.main.request(method, json!({})).await;
                }
                let token = json!(format!("pc-progress-{}", self.client.next_id()));
                calls.push(
                    self.main
                        .request_lingering(
                            "ping",
                            json!({"_meta": {"progressToken": token}}),
                            AFTER_WINDOW,
                        )
                        .await,
                );
                for tool in tools.into_iter().take(MAX_PROGRESS_CALLS) {
                    let Some(name) = tool.get("name").and_then(Value::as_str) else {
                        continue;
                    };
                    let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
                    let token = json!(format!("pc-progress-{}", self.client.next_id()));
                    let params = json!({
                        "name": name,
                        "arguments": placeholder_arguments(&schema),
                        "_meta": {"progressToken": token},
                    });
                    let reply = self
                        .main
                        .request_lingering("tools/call", params, AFTER_WINDOW)
                        .await;
                    let seen = reply
                        .notifications
                        .iter()
                        .filter(|n| n.pointer("/params/progressToken") == Some(&token))
                        .count();
                    calls.push(reply);
                    if seen >= 2 {
                        break;
                    }
                }
                calls
            })
            .await
    }

    /// The tools of `tools/list` annotated read-only, in listed order (its
    /// pages walked, at most [`MAX_TOOL_PAGES`]).
    async fn read_only_tools(&self) -> Vec<Value> {
        let mut tools = Vec::new();
        let mut cursor: Option<Value> = None;
        for _ in 0..MAX_TOOL_PAGES {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let reply = self.main.request("tools/list", params).await;
            let Some(result) = reply.result() else {
                break;
            };
            tools.extend(
                result
                    .get("tools")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|t| t.pointer("/annotations/readOnlyHint") == Some(&Value::Bool(true)))
                    .cloned(),
            );
            cursor = result.get("nextCursor").filter(|c| c.is_string()).cloned();
            if cursor.is_none() {
                break;
            }
        }
        tools
    }
}
