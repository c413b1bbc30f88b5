//! What every check shares: the [`Session`] (the client, the run's main
//! connection, its `initialize` and the run's options) and the
//! [`Judgement`] a check gives.

use super::client::{Client, Connection, Reply, Transport};
use crate::suite::Exchange;
use serde_json::Value;

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
    /// The calls of read-only tools with a progress token that the progress
    /// rules judge (MCP25-UTL-004…006), made once per run.
    pub(crate) progress_calls: tokio::sync::OnceCell<Vec<Reply>>,
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
