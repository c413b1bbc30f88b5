//! RCP/1 suite, `spec` profile (decision 1): the L0 checks and the verdict.
//!
//! This version certifies L0 only. A server that declares L1 or L2 gets an
//! informational finding saying the declaration is not judged yet, rather than
//! a verdict built on checks that do not exist.

pub(crate) mod client;
pub(crate) mod conversation;
pub mod l0;

use super::runner::{Endpoint, EngineError, Reporter, RunContext};
use super::{Outcome, Rule, SuiteId, Verdict, VerdictDetail};
use client::RcpClient;
use conversation::Conversation;

/// Version of protocheck's RCP rules; stored with every run (results are versioned).
pub const SUITE_VERSION: &str = "0.1.0";

/// The protocol revision this suite judges against.
pub const SPEC_REVISION: &str = "RCP/1 1.0";

/// The profile this version implements.
pub const PROFILE_SPEC: &str = "spec";

/// Every rule of the suite.
pub fn rules() -> &'static [Rule] {
    l0::RULES
}

/// Runs the suite against `endpoint`, emitting each finding as it is produced.
pub async fn run(
    endpoint: &Endpoint,
    ctx: &RunContext,
    reporter: &mut Reporter,
) -> Result<Verdict, EngineError> {
    match ctx.options.profile.as_deref() {
        None | Some(PROFILE_SPEC) => {}
        Some("reference") => {
            return Err(EngineError::Unsupported(
                "the RCP `reference` profile (the public harness's 30 checks) is not available in this version \
                 of protocheck yet; run with the `spec` profile"
                    .into(),
            ));
        }
        Some(other) => {
            return Err(EngineError::Unsupported(format!(
                "the RCP profile `{other}` is unknown; use `spec`"
            )));
        }
    }
    let mut client = RcpClient::connect(endpoint, ctx).await?;
    let report = converse(&mut client, reporter).await;
    client.close().await;
    let report = report?;

    let l0_failed = reporter
        .findings()
        .iter()
        .any(|f| f.outcome == Outcome::Fail && l0::RULES.iter().any(|r| r.id == f.rule_id));
    let certified = if l0_failed { "none" } else { "L0" };
    let valid_declared = report
        .declared
        .as_deref()
        .filter(|d| l0::LEVELS.contains(d));
    // Nothing certified while a level is declared is provably an overclaim,
    // whatever the level; L0 certified under a declared L1/L2 is not judged yet.
    let honest = !(certified == "none" && valid_declared.is_some());
    let summary = match (certified, valid_declared) {
        ("L0", Some(higher @ ("L1" | "L2"))) => {
            format!("L0 (L1 and L2 not checked in this suite version; declared {higher})")
        }
        (c, Some(d)) if !honest => format!("{c} · OVERCLAIMED (declared {d})"),
        (c, _) => c.to_owned(),
    };
    Ok(Verdict {
        suite: SuiteId::Rcp,
        suite_version: SUITE_VERSION.to_owned(),
        spec_revision: SPEC_REVISION.to_owned(),
        passed: certified != "none" && honest,
        summary,
        counts: reporter.counts(),
        detail: VerdictDetail::Rcp {
            profile: PROFILE_SPEC.to_owned(),
            certified_level: certified.to_owned(),
            declared_level: report.declared,
            honest,
        },
    })
}

/// The whole conversation, in the order lifecycle demands.
async fn converse(
    client: &mut RcpClient,
    reporter: &mut Reporter,
) -> Result<l0::L0Report, EngineError> {
    let mut conv = Conversation::new(client, reporter);
    let report = l0::open(&mut conv).await?;
    l0::close(&mut conv).await?;
    Ok(report)
}
