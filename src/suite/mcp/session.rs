//! What every check shares: the [`Session`] (the client, the run's options
//! and what the opening probes and the surveys found) and the [`Judgement`] a
//! check gives. It knows the surveys, never a rule file. Checks read the
//! session side by side; what a survey finds later in the run is taken once,
//! by the first check that asks, and shared.

use super::aut_survey::AuthSurvey;
use super::client::{BareReply, McpClient, Probe, Reply, Watches};
use super::era::{Era, LegacySession};
use super::reg_survey::{RegistryDoc, RegistryError};
use super::survey::{self, Reads, Survey, ToolCall, call_tools};
use super::wire::{self, AuthRefusal};
use crate::suite::{Exchange, RunOptions};
use serde_json::Value;
use tokio::sync::OnceCell;
use url::Url;

/// Most exchanges kept as evidence for one finding.
const MAX_EVIDENCE: usize = 4;

/// A check's verdict on one rule, before it becomes a
/// [`Finding`](crate::suite::Finding).
#[derive(Debug, Clone)]
pub struct Judgement {
    pub(crate) kind: Kind,
    pub(crate) message: String,
    pub(crate) evidence: Vec<Exchange>,
    /// The read limit (in bytes) an answer given as evidence ran over (see
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
    Skip,
}

impl Judgement {
    pub(crate) fn pass(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Pass,
            message: message.into(),
            evidence: Vec::new(),
            over_limit: None,
        }
    }

    pub(crate) fn fail(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Fail,
            message: message.into(),
            evidence: Vec::new(),
            over_limit: None,
        }
    }

    pub(crate) fn warn(message: impl Into<String>) -> Self {
        Self {
            kind: Kind::Warn,
            message: message.into(),
            evidence: Vec::new(),
            over_limit: None,
        }
    }

    pub(crate) fn skip(reason: impl Into<String>) -> Self {
        Self {
            kind: Kind::Skip,
            message: reason.into(),
            evidence: Vec::new(),
            over_limit: None,
        }
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
        if let Some(crate::transport::TransportError::TooLarge { limit }) = &reply.transport_error {
            self.over_limit = Some(*limit);
        }
        self.with(&reply.exchange)
    }

    /// This judgement, unless it finds fault on an answer protocheck did not
    /// read whole: then "not verified", with the limit (protocheck's own
    /// limit is never the server's failure).
    pub(crate) fn within_limits(self) -> Self {
        match (self.kind, self.over_limit) {
            (Kind::Fail | Kind::Warn, Some(limit)) => Self {
                kind: Kind::Skip,
                message: super::client::over_limit_message(limit, &self.message),
                ..self
            },
            _ => self,
        }
    }
}

/// A rule's probes that the target's authorization refused before looking at
/// them ([`super::aut_survey::auth_refusal`]: 403 `insufficient_scope`, or 401 with a
/// Bearer challenge). Such a probe is no evidence either way: the rule is
/// judged on the probes that were answered, and when none was, it is not
/// verified, naming the methods left unjudged.
#[derive(Debug, Default)]
pub(crate) struct Unreached {
    refused: Vec<(String, AuthRefusal)>,
}

impl Unreached {
    /// Whether `reply` (to a `method` request) is such a refusal; records it.
    pub(crate) fn refused(&mut self, method: &str, reply: &Reply) -> bool {
        if reply.stdio {
            return false;
        }
        let headers = reply
            .exchange
            .response
            .as_ref()
            .map_or(&[][..], |r| r.headers.as_slice());
        match super::aut_survey::auth_refusal(reply.status, headers) {
            Some(refusal) => {
                self.refused.push((method.to_owned(), refusal));
                true
            }
            None => false,
        }
    }

    /// The rule, when every probe was refused: "not verified: the token lacks
    /// the scope for `tools/call` (`mcp:tools` asked)".
    pub(crate) fn skip(&self) -> Judgement {
        Judgement::skip(format!(
            "not verified: {}",
            wire::unreached_text(&self.refused)
        ))
    }

    /// What a judgement on the other probes adds: "" when nothing was
    /// refused, else "; not judged: the token lacks the scope for …".
    pub(crate) fn note(&self) -> String {
        if self.refused.is_empty() {
            String::new()
        } else {
            format!("; not judged: {}", wire::unreached_text(&self.refused))
        }
    }
}

/// Everything the checks share: the client, the options, and the probes made
/// before the rules (cold request, era, survey).
pub struct Session {
    pub(crate) client: McpClient,
    pub(crate) options: RunOptions,
    pub(crate) url: Url,
    pub(crate) era: Era,
    /// `tools/list` sent as the very first request of the run, on a new connection.
    pub(crate) cold: Reply,
    /// The `server/discover` probe.
    pub(crate) discover: Reply,
    /// The legacy `initialize` probe.
    pub(crate) initialize: Reply,
    /// Over stdio, when `initialize` went as its first line to a child
    /// spawned for it (the run's child, opened with `server/discover`,
    /// refused it): how the run's child answered. `None` over HTTP and when
    /// the run's child's answer stands.
    pub(crate) initialize_fresh: Option<String>,
    pub(crate) survey: Survey,
    /// The survey's reads, made by the first to ask (see [`Session::reads`]).
    pub(crate) reads: OnceCell<Reads>,
    /// The survey's tool calls, made by the first to ask (see
    /// [`Session::tool_calls`]).
    pub(crate) tool_calls: OnceCell<Vec<ToolCall>>,
    /// A legacy session for the DEP rules on a legacy-only server, opened
    /// by the first rule that needs it (`None` inside: it could not be).
    pub(crate) legacy: OnceCell<Option<LegacySession>>,
    /// The run's server.json, read by the first REG rule.
    pub(crate) registry: OnceCell<Result<RegistryDoc, RegistryError>>,
    /// What the authorization probes found (AUT rules), taken by the first
    /// AUT rule.
    pub(crate) auth: OnceCell<AuthSurvey>,
    /// The watches of the run, started early by the engine or by the check
    /// that awaits them.
    pub(crate) watches: Watches,
    /// The family probes sent plainly and with a made-up `Mcp-Session-Id`,
    /// made once by the first STL rule to ask (MCP-STL-001 and -002 read them).
    pub(crate) sessioned: OnceCell<Sessioned>,
    /// Each method family sent first on a new connection, then again on it
    /// after other requests, made once by the first connection rule to ask
    /// (MCP-STL-003 and -004 read them).
    pub(crate) cold_warm: OnceCell<Vec<ColdWarm>>,
}

/// An answer with what set it apart: the made-up id its request carried, or
/// what the request was.
pub(crate) type Tagged = (String, Reply);

/// The family probes ([`Session::family_probes`]) sent side by side: as
/// they are, and carrying each made-up `Mcp-Session-Id`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sessioned {
    /// Per family probe: its method, the plain answer, and the answer to
    /// the same request carrying each made-up id (that id, the answer): one
    /// shaped as a UUID (what 2025-era servers mint and their clients send
    /// back), one opaque text.
    pub pairs: Vec<(String, Reply, Vec<Tagged>)>,
    /// The answers to a notification POST (`notifications/cancelled` of an
    /// id never used) carrying each made-up id: responses too, on which no
    /// id may come back.
    pub notified: Vec<Tagged>,
    /// MCP-STL-001's own requests that a conforming server refuses (an
    /// unknown method, a missing `Mcp-Method`, an unsupported version, a
    /// foreign `Origin`), each sent without and with the UUID-shaped id:
    /// what each is and its answer. Error answers are responses too.
    pub refused: Vec<Tagged>,
}

/// One request sent as the first on a new connection, then other requests
/// on that connection, then the same request again (a `subscriptions/listen`,
/// which holds its connection open, goes first on one new connection and
/// last on others that carried the other requests first).
#[derive(Debug, Clone)]
pub(crate) struct ColdWarm {
    /// What was sent, for findings (`resources/read of memo://x`).
    pub what: String,
    /// The connections, `local → peer`.
    pub address: String,
    /// The answer to the request sent first on a new connection.
    pub cold: Option<Reply>,
    /// The last warm-up of the first round (the list of its family).
    pub warmed: Option<Reply>,
    /// The request again after a `server/discover` and its family's list.
    pub warm: Option<Reply>,
    /// The last warm-up carrying another protocol version (a legacy
    /// `initialize`).
    pub versioned: Option<Reply>,
    /// The request again after the warm-ups carrying another version.
    pub again: Option<Reply>,
    /// Why a connection carried fewer requests than sent (a skip reason).
    pub lost: Option<String>,
}

impl Session {
    /// Runs a rule's independent probes and gives their outcomes in the
    /// order listed. Over HTTP they go side by side (the client's request
    /// permits bound the target's load); over stdio one after another, so
    /// that the child reads its requests in the same order on every run.
    pub(crate) async fn each<F: std::future::Future>(&self, probes: Vec<F>) -> Vec<F::Output> {
        use futures::StreamExt;
        let at_once = if self.client.is_stdio() {
            1
        } else {
            probes.len().max(1)
        };
        futures::stream::iter(probes)
            .buffered(at_once)
            .collect()
            .await
    }

    /// The survey's reads of what its lists named ([`Survey::read`]), made
    /// once by the first to ask: over HTTP the engine asks as the connection
    /// rules start (plain reads declaring nothing, beside them), over stdio
    /// before any rule. The rules that judge them await them, and the
    /// run-wide rules, which read them in the run's log.
    pub(crate) async fn reads(&self) -> &Reads {
        self.reads
            .get_or_init(|| self.survey.read(&self.client))
            .await
    }

    /// The calls of the tools the survey chose ([`Survey::callable`]), made
    /// once by the first to ask: over HTTP the engine asks as the rules
    /// start, so that the calls (a list's worth of round trips when a tool
    /// asks for input) run beside the rules; over stdio before any rule, so
    /// that the child reads its requests in the same order on every run.
    /// The run-wide rules read them (in the run's log) after every other
    /// rule, the rules that judge them await them.
    pub(crate) async fn tool_calls(&self) -> &[ToolCall] {
        self.tool_calls
            .get_or_init(|| call_tools(&self.client, &self.survey.callable))
            .await
    }

    /// The answer to `method` on `url`, read as far as its first event or
    /// the end of a window derived from the run's round-trip times: the
    /// watch started earlier, or one started now.
    pub(crate) async fn watch(&self, method: http::Method, url: &Url) -> BareReply {
        self.watches.start(&self.client, method, url).await
    }

    pub(crate) fn discover_result(&self) -> Option<&Value> {
        self.discover.result()
    }

    /// `DiscoverResult.capabilities`, or null.
    pub(crate) fn capabilities(&self) -> &Value {
        &self.survey.capabilities
    }

    /// Whether the server advertises the capability `name` (an object value).
    pub(crate) fn advertises(&self, name: &str) -> bool {
        self.capabilities().get(name).is_some_and(Value::is_object)
    }

    /// `supportedVersions` as strings, when discover gave them.
    pub(crate) fn supported_versions(&self) -> Option<Vec<String>> {
        let list = self
            .discover_result()?
            .get("supportedVersions")?
            .as_array()?;
        Some(
            list.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
        )
    }

    /// One conforming request for each method the server serves
    /// ([`survey::family_probes`]); send each with [`survey::send_family`].
    pub(crate) fn family_probes(&self) -> Vec<Probe> {
        survey::family_probes(&self.client, &self.survey)
    }

    /// Whether protocheck may run `tool` with placeholder arguments: it is
    /// annotated read-only, or the run allows tool calls (DESIGN "no side effects").
    pub(crate) fn may_call(&self, tool: &Value) -> bool {
        survey::may_call(tool, self.options.allow_tool_calls)
    }
}
