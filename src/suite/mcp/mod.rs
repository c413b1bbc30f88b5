//! The MCP suite: revision 2026-07-28 over Streamable HTTP and stdio (the
//! rules that judge HTTP are skipped over stdio, a property of each rule).
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
//!
//! The files form layers, lowest first, and import only downwards
//! (`tests/it/architecture.rs` finds any cycle): `wire` and `client` (the
//! protocol and its HTTP client) and `origin` (the look-alike Origins both
//! revisions send); the surveys, which need only the client and
//! the endpoint's URL (`era`, `survey`, `aut_survey`, `reg_survey`); `session`
//! (the [`Session`] every check reads and the `Judgement` it gives) and `rule`
//! ([`McpRule`] and its properties); the rule files; `catalogue`; `engine`;
//! and this file, which only declares and re-exports.

pub mod client;
mod engine;
mod era;
pub(crate) mod origin;
pub(crate) mod survey;
pub mod wire;

pub(crate) mod aut_survey;
mod catalogue;
mod coverage;
pub use coverage::COVERAGE;
mod reg_survey;
mod rule;
mod session;

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

use super::Verdict;
use super::context::{Endpoint, EngineError, Reporter, RunContext};

pub use catalogue::{catalogue, rule, rules};
pub use engine::{DEFAULT_MAX_CONCURRENCY, McpSettings, SPEC_REVISION, SUITE_VERSION};
pub(crate) use era::ColdStart;
pub use rule::{Keyword, McpRule, OverStdio};
pub use session::Session;

/// Runs the MCP suite against `endpoint` with the run's settings.
pub async fn run(
    endpoint: &Endpoint,
    ctx: &RunContext,
    reporter: &mut Reporter,
) -> Result<Verdict, EngineError> {
    run_with(endpoint, ctx, reporter, &McpSettings::for_run(ctx)).await
}

/// Runs the MCP suite with explicit settings.
pub async fn run_with(
    endpoint: &Endpoint,
    ctx: &RunContext,
    reporter: &mut Reporter,
    settings: &McpSettings,
) -> Result<Verdict, EngineError> {
    match endpoint {
        Endpoint::Http(url) => engine::run(url.clone(), ctx, reporter, settings, None).await,
        Endpoint::Stdio(command) => engine::run_stdio(command, ctx, reporter).await,
    }
}

/// Sends the first request of an MCP 2026-07-28 run against `url` (see
/// [`ColdStart`]), before the run asks the server which revision it speaks.
pub(crate) async fn cold_start(url: &url::Url, ctx: &RunContext) -> Result<ColdStart, EngineError> {
    let client = engine::client_for(url, ctx, &McpSettings::for_run(ctx))?;
    ColdStart::send(client).await
}

/// Runs the MCP suite with the default settings over HTTP, going on from the
/// run's first request, already sent.
pub(crate) async fn run_after(
    url: &url::Url,
    ctx: &RunContext,
    reporter: &mut Reporter,
    cold: ColdStart,
) -> Result<Verdict, EngineError> {
    engine::run(
        url.clone(),
        ctx,
        reporter,
        &McpSettings::for_run(ctx),
        Some(cold),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn the_properties_the_engine_reads_are_set_where_it_needs_them() {
        let tls: Vec<&str> = catalogue()
            .iter()
            .filter(|r| r.judges_tls)
            .map(|r| r.rule.id)
            .collect();
        assert_eq!(tls, ["MCP-SEC-002"]);
        let connection: Vec<&str> = catalogue()
            .iter()
            .filter(|r| r.finds_connection_state)
            .map(|r| r.rule.id)
            .collect();
        assert_eq!(connection, ["MCP-STL-003", "MCP-STL-004", "MCP-STL-008"]);
        let independent: Vec<&str> = catalogue()
            .iter()
            .filter(|r| r.pool_independent)
            .map(|r| r.rule.id)
            .collect();
        assert_eq!(
            independent,
            [
                "MCP-DSC-001",
                "MCP-DSC-002",
                "MCP-DSC-003",
                "MCP-DSC-004",
                "MCP-STL-003",
                "MCP-STL-004",
                "MCP-STL-008",
                "MCP-SEC-002",
            ]
        );
        let watching: Vec<&str> = catalogue()
            .iter()
            .filter(|r| r.watches.is_some())
            .map(|r| r.rule.id)
            .collect();
        assert_eq!(watching, ["MCP-STL-005", "MCP-STL-006", "MCP-DEP-004"]);
    }

    #[test]
    fn the_rules_that_judge_http_are_skipped_over_stdio_with_the_transport_named() {
        let http_only: Vec<&str> = catalogue()
            .iter()
            .filter(|r| !r.runs_over_stdio())
            .map(|r| r.rule.id)
            .collect();
        assert_eq!(http_only.len(), 37, "{http_only:?}");
        for r in catalogue() {
            match r.stdio_skip_reason() {
                Some(reason) => {
                    assert!(
                        reason.contains("applies to Streamable HTTP only ("),
                        "{}: {reason}",
                        r.rule.id
                    );
                    assert!(!r.runs_over_stdio());
                }
                None => assert!(r.runs_over_stdio()),
            }
        }
        // Every HDR and AUT rule judges HTTP; discovery, results, errors,
        // caching and schemas do not.
        for r in catalogue() {
            match r.rule.group {
                "HDR" | "AUT" => assert!(!r.runs_over_stdio(), "{}", r.rule.id),
                "DSC" | "ERR" | "CAC" | "SCH" => assert!(r.runs_over_stdio(), "{}", r.rule.id),
                _ => {}
            }
        }
    }

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
