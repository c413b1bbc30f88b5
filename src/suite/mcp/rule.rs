//! What a rule is: its data (id, title, keyword, outcome on failure, spec
//! link), the properties the engine reads before judging it, and its check.
//! Every rule file builds its rules from here; this file knows no rule file.

use super::client::{McpClient, Watches};
use super::session::{Judgement, Session};
use crate::suite::{Outcome, Rule, SpecLevel};
use futures::future::BoxFuture;
use url::Url;

/// The rule every other rule requires unless it says otherwise: without an
/// answer to `server/discover` nothing else can be judged.
pub(crate) const DISCOVER_ID: &str = "MCP-DSC-001";

/// The exact RFC 2119 keyword of a rule. [`SpecLevel`] has no negative forms,
/// so `MUST NOT` maps to `Must` there and the keyword is kept here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Keyword {
    #[serde(rename = "MUST")]
    Must,
    #[serde(rename = "MUST_NOT")]
    MustNot,
    #[serde(rename = "SHOULD")]
    Should,
    #[serde(rename = "SHOULD_NOT")]
    ShouldNot,
    #[serde(rename = "MAY")]
    May,
}

impl Keyword {
    pub const fn level(self) -> SpecLevel {
        match self {
            Self::Must | Self::MustNot => SpecLevel::Must,
            Self::Should | Self::ShouldNot => SpecLevel::Should,
            Self::May => SpecLevel::May,
        }
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Must => "MUST",
            Self::MustNot => "MUST_NOT",
            Self::Should => "SHOULD",
            Self::ShouldNot => "SHOULD_NOT",
            Self::May => "MAY",
        }
    }
}

/// When a rule is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// In catalogue order, with its own probes.
    Probe,
    /// After every probe rule, over every reply seen during the run.
    RunWide,
}

/// Whether a rule applies over stdio (transports, "stdio"): the JSON-RPC,
/// discovery, result, error, caching, schema and deprecation rules do; the
/// rules about HTTP (headers, status codes, sessions, connections, Origin,
/// TLS, GET and DELETE streams, HTTP authorization) do not, and are skipped
/// over stdio with the reason kept here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverStdio {
    /// Judged over both transports (an HTTP-only part of it, such as a
    /// status code, is simply not judged over stdio).
    Applies,
    /// Streamable HTTP only; the text says what of HTTP the rule judges.
    HttpOnly(&'static str),
}

/// A rule's check: reads the session's probes, sends its own, and judges.
pub(crate) type Check = for<'a> fn(&'a Session) -> BoxFuture<'a, Judgement>;

/// Starts the watches a rule's check awaits (see [`Session::watch`]) on the
/// run's endpoint URL. It needs no [`Session`]: the engine starts them as soon
/// as the opening probes tell which rules apply, before the survey.
pub(crate) type StartWatches = fn(&Watches, &McpClient, &Url);

/// One rule: data and its check.
#[derive(Clone, Copy)]
pub struct McpRule {
    pub rule: Rule,
    pub keyword: Keyword,
    /// Rules whose failure makes this one unverifiable.
    pub(crate) requires: &'static [&'static str],
    pub(crate) phase: Phase,
    /// Judged on a server that speaks only a legacy revision (DEP, REG).
    pub(crate) on_legacy: bool,
    /// The spec limits the rule to servers that support only 2026-07-28: the
    /// engine skips it, with that reason, for a dual-era server (§15
    /// amendment "Era scoping is consistent").
    pub(crate) modern_only: bool,
    /// The rule judges the endpoint's URL and TLS certificate, which need no
    /// authorized request: a server refusing the run's requests with 401 is
    /// still judged on it, and it is the rule that fails when the TLS
    /// handshake does (every other rule is then unverified).
    pub(crate) judges_tls: bool,
    /// The rule finds a server that answers a request by what came before it
    /// on its connection. Such rules are judged before every other one, and
    /// when one fails, only the `pool_independent` rules are judged.
    pub(crate) finds_connection_state: bool,
    /// The rule's verdict cannot depend on which pooled connection carried a
    /// probe: it rests on the answer to `server/discover` (which any
    /// connection may carry first), on the endpoint's URL and certificate, or
    /// on dedicated connections whose every request protocheck orders itself.
    pub(crate) pool_independent: bool,
    /// The rule's check awaits watches (a GET or DELETE read for a window):
    /// this starts them. The engine calls it as soon as the opening probes
    /// tell that the rule applies, so that the watches run while the survey
    /// and the other rules are; a check whose watches were not started early
    /// starts them itself.
    pub(crate) watches: Option<StartWatches>,
    /// Whether the rule is judged over stdio.
    pub over_stdio: OverStdio,
    /// The requirement the rule enforces, as the spec states it at
    /// `rule.spec_ref` (the rule's title unless set with [`McpRule::says`]):
    /// every fail, warn and info finding cites it with that link.
    pub sentence: &'static str,
    pub(crate) check: Check,
}

impl std::fmt::Debug for McpRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpRule")
            .field("id", &self.rule.id)
            .field("keyword", &self.keyword)
            .finish_non_exhaustive()
    }
}

/// Link into the published 2026-07-28 specification.
macro_rules! spec {
    ($path:literal) => {
        concat!(
            "https://modelcontextprotocol.io/specification/2026-07-28",
            $path
        )
    };
}
pub(crate) use spec;

impl McpRule {
    /// A probe rule that needs `server/discover` to have answered.
    pub(crate) const fn new(
        id: &'static str,
        title: &'static str,
        keyword: Keyword,
        on_failure: Outcome,
        spec_ref: &'static str,
        group: &'static str,
        check: Check,
    ) -> Self {
        Self {
            rule: Rule {
                id,
                title,
                level: keyword.level(),
                on_failure,
                spec_ref,
                group,
                help: crate::suite::Help::NONE,
            },
            keyword,
            requires: &[DISCOVER_ID],
            phase: Phase::Probe,
            on_legacy: false,
            modern_only: false,
            judges_tls: false,
            finds_connection_state: false,
            pool_independent: false,
            watches: None,
            over_stdio: OverStdio::Applies,
            sentence: title,
            check,
        }
    }

    pub(crate) const fn requires(mut self, ids: &'static [&'static str]) -> Self {
        self.requires = ids;
        self
    }

    /// The rule page's help (see [`crate::suite::Help`]): how protocheck
    /// probes the rule, what a failure usually means, how to fix it.
    pub(crate) const fn help(
        mut self,
        probe: &'static str,
        failure: &'static str,
        fix: &'static str,
    ) -> Self {
        self.rule = self.rule.help(probe, failure, fix);
        self
    }

    pub(crate) const fn run_wide(mut self) -> Self {
        self.phase = Phase::RunWide;
        self
    }

    pub(crate) const fn on_legacy(mut self) -> Self {
        self.on_legacy = true;
        self
    }

    /// The spec's own sentence for this rule (quoted in every non-pass).
    pub(crate) const fn says(mut self, sentence: &'static str) -> Self {
        self.sentence = sentence;
        self
    }

    /// The rule applies to servers that support only 2026-07-28.
    pub(crate) const fn modern_only(mut self) -> Self {
        self.modern_only = true;
        self
    }

    /// The rule judges the endpoint's URL and TLS certificate.
    pub(crate) const fn judges_tls(mut self) -> Self {
        self.judges_tls = true;
        self
    }

    /// The rule finds a server answering by its connection's history.
    pub(crate) const fn finds_connection_state(mut self) -> Self {
        self.finds_connection_state = true;
        self
    }

    /// The rule is judged whichever pooled connection carries its probes.
    pub(crate) const fn pool_independent(mut self) -> Self {
        self.pool_independent = true;
        self
    }

    /// The rule's check awaits the watches `start` starts.
    pub(crate) const fn watches(mut self, start: StartWatches) -> Self {
        self.watches = Some(start);
        self
    }

    /// The rule judges Streamable HTTP only (`what`: the part of HTTP it
    /// judges); over stdio it is skipped with that reason.
    pub(crate) const fn http_only(mut self, what: &'static str) -> Self {
        self.over_stdio = OverStdio::HttpOnly(what);
        self
    }

    /// Whether the rule is judged over stdio.
    pub fn runs_over_stdio(&self) -> bool {
        matches!(self.over_stdio, OverStdio::Applies)
    }

    /// Why the rule is skipped over stdio, when it is: "applies to
    /// Streamable HTTP only (…)".
    pub fn stdio_skip_reason(&self) -> Option<String> {
        match self.over_stdio {
            OverStdio::Applies => None,
            OverStdio::HttpOnly(what) => Some(format!(
                "not applicable over stdio: applies to Streamable HTTP only ({what})"
            )),
        }
    }

    /// Whether the spec limits this rule to servers that support only 2026-07-28.
    pub fn is_modern_only(&self) -> bool {
        self.modern_only
    }

    /// The rules that must pass before this one can be judged.
    pub fn requirements(&self) -> &'static [&'static str] {
        self.requires
    }
}
