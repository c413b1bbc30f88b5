//! The RCP/1 suite, in two profiles:
//!
//! - `spec` (the default, decision 1): judges against the spec and its
//!   schema. L0 (§14.1), L1 (§14.2) and L2 (§14.3) are certified as decision 9
//!   says, the MUSTs outside the levels are reported as spec violations
//!   (decision 10), and the declared level is compared with the certified one.
//! - `reference` (decision 2): reproduces the public harness's 30 checks, its
//!   certification and its honesty verdict, and says where the `spec` profile
//!   would judge the server differently.
//!
//! Both hold one conversation with the target, over HTTP or stdio.

pub(crate) mod certify;
pub(crate) mod client;
pub(crate) mod conversation;
mod coverage;
pub use coverage::COVERAGE;
pub mod harness;
pub mod l0;
pub mod l1;
pub mod l2;
pub mod outside;
pub(crate) mod shape;

use super::context::{Endpoint, EngineError, Reporter, RunContext};
use super::{LevelReport, Rule, SuiteId, Verdict, VerdictDetail};
use certify::{Honesty, Level};
use client::RcpClient;
use conversation::{Check, Conversation};

pub use certify::DECLARATION_HONEST;
pub use client::join_method;

/// Version of protocheck's RCP rules; stored with every run (results are versioned).
pub const SUITE_VERSION: &str = "0.3.0";

/// The protocol revision this suite judges against.
pub const SPEC_REVISION: &str = "RCP/1 1.0";

/// The default profile: the spec and its schema are the authority.
pub const PROFILE_SPEC: &str = "spec";
/// The profile that reproduces the public harness.
pub const PROFILE_REFERENCE: &str = "reference";

/// Every rule of the `spec` profile: L0, L1, L2, outside the levels, and the
/// honesty of the declaration.
pub fn rules() -> Vec<&'static Rule> {
    l0::RULES
        .iter()
        .chain(l1::RULES)
        .chain(l2::RULES)
        .chain(outside::RULES)
        .chain(certify::RULES)
        .collect()
}

/// Runs the suite against `endpoint`, emitting each finding as it is produced.
pub async fn run(
    endpoint: &Endpoint,
    ctx: &RunContext,
    reporter: &mut Reporter,
) -> Result<Verdict, EngineError> {
    match ctx.options.profile.as_deref() {
        None | Some(PROFILE_SPEC) => {}
        Some(PROFILE_REFERENCE) => return harness::run(endpoint, ctx, reporter).await,
        Some(other) => {
            return Err(EngineError::Unsupported(format!(
                "the RCP profile `{other}` is unknown; use `spec` or `reference`"
            )));
        }
    }
    run_spec(endpoint, ctx, reporter).await
}

/// The `spec` profile; the `reference` profile also runs it, unseen, to
/// compare with the harness from facts of the same run.
pub(crate) async fn run_spec(
    endpoint: &Endpoint,
    ctx: &RunContext,
    reporter: &mut Reporter,
) -> Result<Verdict, EngineError> {
    let options = outside::Options {
        allow_writes: ctx.options.writes_allowed(),
    };
    let mut client = RcpClient::connect(endpoint, ctx).await?;
    let history = ctx.handshake_history.clone();
    let outcome = converse(&mut client, reporter, options, history).await;
    let spoke = client.spoke_jsonrpc();
    client.close().await;
    let (report, advertised) = outcome?;

    let cert = certify::certify(reporter.findings(), &advertised);
    let declared = report.declared.as_deref();
    let honesty = cert.honesty(declared);
    let failed_outside = certify::failed_outside_ids(reporter.findings());
    reporter
        .emit(honesty_finding(&cert, declared, honesty, &failed_outside))
        .await?;

    let findings = reporter.findings();
    let violations = certify::violations_outside(findings);
    Ok(Verdict {
        suite: SuiteId::Rcp,
        suite_version: SUITE_VERSION.to_owned(),
        spec_revision: SPEC_REVISION.to_owned(),
        // Decision 8: a certified level and an honest declaration pass the
        // run; a failed MUST outside the levels does not lower the level but
        // fails the run (`certify::OUTSIDE_THE_LEVELS`).
        passed: cert.level != Level::None && honesty.honest() && failed_outside.is_empty(),
        summary: with_not_exercised(
            with_not_verified(
                certify::summary(cert.level, declared, honesty, violations),
                cert.level,
                cert.not_verified,
            ),
            &cert.unverified,
        ),
        counts: reporter.counts(),
        detail: VerdictDetail::Rcp {
            profile: PROFILE_SPEC.to_owned(),
            certified_level: cert.level.as_str().to_owned(),
            declared_level: report.declared.clone(),
            honest: honesty.compared(),
            protocol_observed: spoke,
            report: Box::new(LevelReport {
                honesty: honesty.as_str().to_owned(),
                missing_for_next: cert.missing_for_next,
                violations_outside_levels: violations,
                levels: certify::by_level(findings),
                profile_differences: Vec::new(),
                not_exercised: cert.unverified.clone(),
            }),
        },
    })
}

/// The whole conversation, in the order lifecycle demands: L0 opens it, L1
/// and L2 run on the initialized session, the probes outside the levels that
/// need the session follow, L0 closes it (`shutdown`), and the rules judged
/// over every exchange come last.
async fn converse(
    client: &mut RcpClient,
    reporter: &mut Reporter,
    options: outside::Options,
    history: super::context::HistoryLookup,
) -> Result<(l0::L0Report, Vec<&'static l2::Feature>), EngineError> {
    let mut conv = Conversation::new(client, reporter);
    conv.history = history;
    let report = l0::open(&mut conv).await?;
    let init = report.init.as_ref();
    let facts = l1::run(&mut conv, init).await?;
    let advertised = l2::run(&mut conv, init, &facts).await?;
    outside::probe(&mut conv, init, options).await?;
    l0::close(&mut conv).await?;
    outside::judge(&mut conv).await?;
    Ok((report, advertised))
}

/// The summary line, naming the level above the certified one when what it
/// lacks could not be verified: `L0 · L1 not verified`.
fn with_not_verified(summary: String, certified: Level, not_verified: Option<Level>) -> String {
    let next = match certified {
        Level::None => Level::L0,
        Level::L0 => Level::L1,
        Level::L1 | Level::L2 => Level::L2,
    };
    match not_verified {
        Some(_) => format!("{summary} · {} not verified", next.as_str()),
        None => summary,
    }
}

/// The summary line, naming the advertised features protocheck could not
/// exercise: `L2 · not exercised: `log``. Each line of `unverified` starts
/// with the feature's name and ": ".
fn with_not_exercised(summary: String, unverified: &[String]) -> String {
    if unverified.is_empty() {
        return summary;
    }
    let names: Vec<&str> = unverified
        .iter()
        .map(|line| {
            line.split_once(": ")
                .map_or(line.as_str(), |(name, _)| name)
        })
        .collect();
    format!("{summary} · not exercised: {}", names.join(", "))
}

/// RCP-CERT-001: the declaration against the certified level, with what the
/// next level needs.
fn honesty_finding(
    cert: &certify::Certification,
    declared: Option<&str>,
    honesty: Honesty,
    failed_outside: &[String],
) -> crate::suite::Finding {
    let finding = honesty_judgement(cert, declared, honesty);
    if failed_outside.is_empty() {
        return finding;
    }
    let s = if failed_outside.len() == 1 { "" } else { "s" };
    let message = format!(
        "{} The run does not pass: {} MUST{s} outside the levels failed ({}). {}",
        finding.message,
        failed_outside.len(),
        failed_outside.join(", "),
        certify::OUTSIDE_THE_LEVELS
    );
    crate::suite::Finding { message, ..finding }
}

fn honesty_judgement(
    cert: &certify::Certification,
    declared: Option<&str>,
    honesty: Honesty,
) -> crate::suite::Finding {
    let check = Check::new(&DECLARATION_HONEST);
    let certified = cert.level.as_str();
    let next = if cert.missing_for_next.is_empty() {
        String::new()
    } else {
        format!(
            " The next level up needs: {}.",
            cert.missing_for_next.join("; ")
        )
    };
    let unverified = if cert.unverified.is_empty() {
        String::new()
    } else {
        format!(" {}.", cert.unverified.join("; "))
    };
    match (honesty, declared) {
        (Honesty::Overclaimed, Some(d)) => check.finding(
            DECLARATION_HONEST.on_failure,
            format!(
                "OVERCLAIMED: the server declares {d} but certifies {certified}; a declared level MUST NOT be above \
                 what the server proves (§14; decision 8).{next}{unverified}"
            ),
        ),
        (Honesty::Unverified, _) => check.finding(
            crate::suite::Outcome::Skip,
            format!(
                "not judged: {}, so no level could be established and the declaration is neither proved nor \
                 disproved: restart the server and run again (protocheck decision 3).{next}",
                l0::HANDSHAKE_NOT_OBSERVED
            ),
        ),
        (Honesty::LevelNotVerified, Some(d)) => check.finding(
            crate::suite::Outcome::Skip,
            format!(
                "not verified: the server declares {d} and certifies {certified}, and what {d} lacks was not \
                 verified (the server's answers could not show whether it holds), so the declaration is neither \
                 proved nor disproved; a level is granted only on what was exercised.{next}{unverified}"
            ),
        ),
        (Honesty::Consistent, Some(d)) => check.finding(
            crate::suite::Outcome::Pass,
            format!("declares {d} and certifies {certified}: consistent.{next}{unverified}"),
        ),
        _ => check.finding(
            crate::suite::Outcome::Skip,
            format!(
                "not verified: {} failed (no valid `_meta.conformance` to compare); certified {certified}.{next}{unverified}",
                l0::DECLARES_LEVEL.id
            ),
        ),
    }
}
