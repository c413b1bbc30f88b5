//! The MCP 2025-11-25 suite: the initialize-based revision, over Streamable
//! HTTP and stdio.
//!
//! Each rule of `docs/spec/mcp-2025-11-25-rules.md` is an [`Mcp25Rule`]: its
//! id, title, keyword, outcome on failure and spec link as data, beside the
//! check that judges it, in one file per group (`lif.rs`, `rpc.rs`, …).
//!
//! A run opens one connection (a child process on stdio), sends
//! `initialize` and `notifications/initialized`, then judges every rule.
//! A rule whose requirement failed is skipped with "not verified: <rule>
//! failed"; a rule about a capability the server does not advertise, or
//! written for the other transport, is skipped with that reason. Rules that
//! need a session of their own (a request before `initialize`, another
//! version asked for) open a new connection.
//!
//! The files form layers, lowest first, and import only downwards: `client`;
//! `session` and `rule`; the rule files; `catalogue`; `engine`; and this
//! file, which only declares and re-exports.

pub mod client;
mod engine;

mod catalogue;
mod coverage;
pub use coverage::COVERAGE;
mod rule;
mod session;
mod shapes;

pub(crate) mod aut;
pub(crate) mod cpl;
pub(crate) mod htp;
pub(crate) mod lif;
pub(crate) mod log;
pub(crate) mod prm;
pub(crate) mod res;
pub(crate) mod rpc;
pub(crate) mod stdio_rules;
pub(crate) mod tol;
mod tol_call;
pub(crate) mod tsk;
mod uri;
pub(crate) mod utl;

use super::Verdict;
use super::context::{Endpoint, EngineError, Reporter, RunContext};

pub use catalogue::{catalogue, rule, rules};
pub use engine::{DEFAULT_MAX_CONCURRENCY, Mcp25Settings, SPEC_REVISION, SUITE_VERSION};
pub use rule::Mcp25Rule;
pub use session::Session;

/// Runs the MCP 2025-11-25 suite against `endpoint` (HTTP or stdio) with the
/// default settings.
pub async fn run(
    endpoint: &Endpoint,
    ctx: &RunContext,
    reporter: &mut Reporter,
) -> Result<Verdict, EngineError> {
    run_with(endpoint, ctx, reporter, &Mcp25Settings::for_run(ctx)).await
}

/// Runs the suite with explicit settings.
pub async fn run_with(
    endpoint: &Endpoint,
    ctx: &RunContext,
    reporter: &mut Reporter,
    settings: &Mcp25Settings,
) -> Result<Verdict, EngineError> {
    engine::run(endpoint, ctx, reporter, settings).await
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
            assert!(r.rule.id.starts_with("MCP25-"), "{}", r.rule.id);
            assert_eq!(&r.rule.id[6..9], r.rule.group, "{}", r.rule.id);
            assert!(
                r.rule
                    .spec_ref
                    .starts_with("https://modelcontextprotocol.io/specification/2025-11-25"),
                "{}",
                r.rule.id
            );
            for req in r.requires {
                assert!(rule(req).is_some(), "{} requires unknown {req}", r.rule.id);
            }
        }
    }
}
