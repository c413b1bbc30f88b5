//! The MCP suite: revision 2026-07-28 over Streamable HTTP.
//!
//! Each rule of `spec/mcp-rules-79.md` is a [`McpRule`]: its id, title, spec
//! keyword, outcome on failure and spec link as data, beside the check that
//! judges it, in one file per category (`dsc.rs`, `stl.rs`, …). The id appears
//! once in the source, in that data.
//!
//! A run goes: a cold request on a new connection (STL-003), era detection
//! (`server/discover`, then a legacy `initialize`), a survey of what the server
//! advertises, then every rule in catalogue order, then the run-wide rules that
//! judge every reply seen. A rule whose precondition failed is skipped with
//! "not verified: <rule> failed"; a rule about a feature the server does not
//! advertise is skipped with that reason.
//!
//! All 79 rules of `mcp-rules-79.md` are here.

pub mod client;
mod engine;
mod era;
mod survey;
pub mod wire;

pub(crate) mod aut;
pub(crate) mod cac;
pub(crate) mod dep;
pub(crate) mod dsc;
pub(crate) mod err;
pub(crate) mod hdr;
pub(crate) mod reg;
pub(crate) mod res;
pub(crate) mod sch;
pub(crate) mod sec;
pub(crate) mod stl;

use super::runner::{Endpoint, EngineError, Reporter, RunContext};
use super::{Outcome, Rule, SpecLevel, Verdict};
use futures::future::BoxFuture;
use std::sync::LazyLock;

pub use engine::Session;

/// Version of protocheck's MCP rules; stored with each run.
pub const SUITE_VERSION: &str = "0.2.0";
/// The MCP revision the rules judge against.
pub const SPEC_REVISION: &str = wire::PROTOCOL_VERSION;

/// Default limit on concurrent requests to one target.
pub const DEFAULT_MAX_CONCURRENCY: usize = 4;

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

/// A rule's check: reads the session's probes, sends its own, and judges.
pub(crate) type Check = for<'a> fn(&'a mut Session) -> BoxFuture<'a, engine::Judgement>;

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
            },
            keyword,
            requires: &[DISCOVER_ID],
            phase: Phase::Probe,
            on_legacy: false,
            modern_only: false,
            sentence: title,
            check,
        }
    }

    pub(crate) const fn requires(mut self, ids: &'static [&'static str]) -> Self {
        self.requires = ids;
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

    /// Whether the spec limits this rule to servers that support only 2026-07-28.
    pub fn is_modern_only(&self) -> bool {
        self.modern_only
    }

    /// The rules that must pass before this one can be judged.
    pub fn requirements(&self) -> &'static [&'static str] {
        self.requires
    }
}

pub(crate) use dsc::DISCOVER_ID;

/// Every implemented rule, in the order of `mcp-rules-79.md`.
pub fn catalogue() -> &'static [McpRule] {
    static CATALOGUE: LazyLock<Vec<McpRule>> = LazyLock::new(|| {
        [
            dsc::RULES,
            hdr::RULES,
            stl::RULES,
            res::RULES,
            err::RULES,
            cac::RULES,
            sch::RULES,
            aut::RULES,
            sec::RULES,
            dep::RULES,
            reg::RULES,
        ]
        .concat()
    });
    &CATALOGUE
}

/// The rules of [`catalogue`] as plain [`Rule`]s.
pub fn rules() -> &'static [Rule] {
    static RULES: LazyLock<Vec<Rule>> =
        LazyLock::new(|| catalogue().iter().map(|r| r.rule).collect());
    &RULES
}

/// The catalogue entry with this id.
pub fn rule(id: &str) -> Option<&'static McpRule> {
    catalogue().iter().find(|r| r.rule.id == id)
}

/// Tunables of a run that [`crate::suite::RunOptions`] does not carry.
#[derive(Debug, Clone)]
pub struct McpSettings {
    /// Most requests in flight to the target at once.
    pub max_concurrency: usize,
}

impl Default for McpSettings {
    fn default() -> Self {
        Self {
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
        }
    }
}

/// Runs the MCP suite against `endpoint` with the default settings.
pub async fn run(
    endpoint: &Endpoint,
    ctx: &RunContext,
    reporter: &mut Reporter,
) -> Result<Verdict, EngineError> {
    run_with(endpoint, ctx, reporter, &McpSettings::default()).await
}

/// Runs the MCP suite with explicit settings.
pub async fn run_with(
    endpoint: &Endpoint,
    ctx: &RunContext,
    reporter: &mut Reporter,
    settings: &McpSettings,
) -> Result<Verdict, EngineError> {
    let url = match endpoint {
        Endpoint::Http(url) => url.clone(),
        Endpoint::Stdio(_) => {
            return Err(EngineError::Unsupported(
                "the MCP suite speaks Streamable HTTP only for now; give an http(s) URL".into(),
            ));
        }
    };
    engine::run(url, ctx, reporter, settings).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn catalogue_ids_are_unique_and_well_formed() {
        let mut ids = HashSet::new();
        for r in catalogue() {
            assert!(ids.insert(r.rule.id), "duplicate {}", r.rule.id);
            assert!(r.rule.id.starts_with("MCP-"), "{}", r.rule.id);
            assert_eq!(&r.rule.id[4..7], r.rule.group, "{}", r.rule.id);
            assert!(r.rule.spec_ref.starts_with("https://"), "{}", r.rule.id);
            for req in r.requires {
                assert!(rule(req).is_some(), "{} requires unknown {req}", r.rule.id);
            }
        }
    }
}
