//! What a rule is: its data (id, title, keyword, outcome on failure, spec
//! link), what the engine reads before judging it (the rules it requires,
//! the transport and capability it is scoped to), and its check.

use super::client::Transport;
use super::session::{Judgement, Session};
use crate::suite::mcp::Keyword;
use crate::suite::{Outcome, Rule};
use futures::future::BoxFuture;

/// The rule every other rule requires unless it says otherwise: without an
/// answer to `initialize` nothing else can be judged.
pub(crate) const INITIALIZE_ID: &str = "MCP25-LIF-001";

/// When a rule is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// With its own probes, as soon as what it requires is judged.
    Probe,
    /// After every probe rule, over every answer and notification the run saw.
    RunWide,
}

/// A rule's check: reads the session, sends its own probes, and judges.
/// Checks share the session, so independent rules run side by side.
pub(crate) type Check = for<'a> fn(&'a Session) -> BoxFuture<'a, Judgement>;

/// One rule: data and its check.
#[derive(Clone, Copy)]
pub struct Mcp25Rule {
    pub rule: Rule,
    pub keyword: Keyword,
    /// Rules whose failure makes this one unverifiable.
    pub(crate) requires: &'static [&'static str],
    /// The transport the requirement is written for; skipped on the other.
    pub(crate) transport: Option<Transport>,
    /// The server capability the rule needs advertised in `initialize`.
    pub(crate) capability: Option<&'static str>,
    pub(crate) phase: Phase,
    /// The requirement, in protocheck's words: every fail, warn and info
    /// finding cites it with the rule's link.
    pub sentence: &'static str,
    pub(crate) check: Check,
}

impl std::fmt::Debug for Mcp25Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mcp25Rule")
            .field("id", &self.rule.id)
            .field("keyword", &self.keyword)
            .finish_non_exhaustive()
    }
}

/// Link into the published 2025-11-25 specification.
macro_rules! spec {
    ($path:literal) => {
        concat!(
            "https://modelcontextprotocol.io/specification/2025-11-25",
            $path
        )
    };
}
pub(crate) use spec;

impl Mcp25Rule {
    /// A rule that needs `initialize` to have been answered.
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
            requires: &[INITIALIZE_ID],
            transport: None,
            capability: None,
            phase: Phase::Probe,
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

    /// The requirement in protocheck's words (cited in every non-pass).
    pub(crate) const fn says(mut self, sentence: &'static str) -> Self {
        self.sentence = sentence;
        self
    }

    /// The rule judges what the whole run saw, after every probe rule.
    pub(crate) const fn run_wide(mut self) -> Self {
        self.phase = Phase::RunWide;
        self
    }

    /// The requirement is written for one transport only.
    pub(crate) const fn only_on(mut self, transport: Transport) -> Self {
        self.transport = Some(transport);
        self
    }

    /// The rule judges a feature the server must advertise first: the
    /// engine skips it, with that reason, on a server that does not. The
    /// groups that judge server features (tools, resources, prompts,
    /// completion, logging, tasks) scope their rules with it.
    pub(crate) const fn needs_capability(mut self, name: &'static str) -> Self {
        self.capability = Some(name);
        self
    }

    /// The rules that must pass before this one can be judged.
    pub fn requirements(&self) -> &'static [&'static str] {
        self.requires
    }

    /// The transport the requirement is written for, if only one.
    pub fn transport(&self) -> Option<Transport> {
        self.transport
    }

    /// The capability the server must advertise for the rule to be judged.
    pub fn capability(&self) -> Option<&'static str> {
        self.capability
    }
}
