//! CI gates: whether a verdict is good enough to ship, and the baseline of
//! known failures.
//!
//! Exit codes of `check` (and of any client that applies a gate): 0 the
//! target passes the gate, 1 it fails it, 2 a usage or network error (a flag
//! that does not apply, an unreadable baseline, an unreachable target).
//!
//! What a gate requires:
//!
//! - Without `min_level` or `min_grade`, the verdict's own pass/fail: RCP
//!   (`spec` profile) a certified level and an honest declaration, RCP
//!   (`reference` profile) no failed check and an honest declaration, MCP no
//!   failing rule (grade `compliant` or `strict`).
//! - `min_level` (RCP only): the certified level is at least this one.
//! - `min_grade` (MCP only): the grade is at least this one
//!   (`non-compliant` < `compliant` < `strict`).
//! - OVERCLAIMED (an RCP declaration above the certified level) always fails,
//!   whatever else is asked, and cannot be baselined.
//!
//! A baseline (`expected_failures`) lists rules known to fail (or warn). It
//! changes the gate in three ways:
//!
//! - **Forgiven**: a listed rule that fails or warns counts as passing when
//!   the gate computes the level, the grade or the pass/fail above. Without
//!   that, a baselined MUST failure would still make the MCP grade
//!   `non-compliant` (the grade counts every failure, `mcp-2026-07-28.md`
//!   §15.2) and a baselined L1 failure would still cap the RCP level at L0
//!   (decision 9), so `--min-grade`/`--min-level` would fail on exactly the
//!   failures the baseline accepts and the baseline would be useless. The
//!   level is recomputed with the suite's own certification over the
//!   findings, with the forgiven rules read as passing.
//! - **New failures fail**: with a baseline, every rule that fails and is not
//!   listed fails the gate, even one the verdict tolerates (an RCP rule
//!   outside the levels, an L2 check above the required level): the point of
//!   a baseline is that nothing new slips in. A new *warning* fails only
//!   through the grade (`--min-grade strict`).
//! - **Stale entries fail**: a listed rule that now passes (or only informs)
//!   fails the gate, so the list cannot rot. A listed rule that was skipped
//!   or not reported at all (another suite's rule) is neither forgiven nor
//!   stale.

use crate::suite::{self, Finding, Outcome, SuiteId, Verdict, VerdictDetail};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

/// An RCP conformance level a gate can require.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, clap::ValueEnum,
)]
pub enum Level {
    #[value(name = "L0")]
    L0,
    #[value(name = "L1")]
    L1,
    #[value(name = "L2")]
    L2,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::L0 => "L0",
            Self::L1 => "L1",
            Self::L2 => "L2",
        }
    }

    /// A certified level as verdicts spell it; `none` is below every level.
    fn certified(s: &str) -> Option<Self> {
        match s {
            "L0" => Some(Self::L0),
            "L1" => Some(Self::L1),
            "L2" => Some(Self::L2),
            _ => None,
        }
    }
}

/// An MCP grade a gate can require (`non-compliant` is never a requirement).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Grade {
    Compliant,
    Strict,
}

impl Grade {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Compliant => "compliant",
            Self::Strict => "strict",
        }
    }
}

/// What a target must achieve. `Default` is the verdict's own pass/fail.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gate {
    pub min_level: Option<Level>,
    pub min_grade: Option<Grade>,
    /// The baseline: `None` without one. `Some` of an empty set is a
    /// baseline too (every failure is new).
    pub expected_failures: Option<BTreeSet<String>>,
}

/// The gate's answer, embedded in reports.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateResult {
    pub passed: bool,
    /// Why the gate failed, one line each; empty when it passed.
    pub reasons: Vec<String>,
    /// Rules that failed and are not in the baseline (empty without one).
    pub unexpected_failures: Vec<String>,
    /// Baselined rules that failed or warned, and were forgiven.
    pub expected_failures: Vec<String>,
    /// Baselined rules that no longer fail or warn.
    pub stale: Vec<String>,
}

/// The rule whose failure is an overclaim; it can never be baselined.
const OVERCLAIM_RULE: &str = "RCP-CERT-001";

/// Largest baseline file read: a list of rule ids is a few kilobytes.
const MAX_BASELINE_BYTES: u64 = 1024 * 1024;

impl Gate {
    /// Whether the flags can apply to a run of `requested` (`None`: the suite
    /// is detected), checked before the run: both flags together never can,
    /// since each judges one suite.
    pub fn applies_to_suite(&self, requested: Option<SuiteId>) -> Result<(), String> {
        match (requested, self.min_level, self.min_grade) {
            (_, Some(_), Some(_)) => Err(
                "--min-level (RCP) and --min-grade (MCP) judge different suites; give one"
                    .to_owned(),
            ),
            (Some(SuiteId::Mcp), Some(_), None) => {
                Err("--min-level applies to RCP; use --min-grade with --suite mcp".to_owned())
            }
            (Some(SuiteId::Rcp), None, Some(_)) => {
                Err("--min-grade applies to MCP; use --min-level with --suite rcp".to_owned())
            }
            _ => Ok(()),
        }
    }

    /// Whether the level and grade flags fit `verdict`'s suite; the message
    /// says which flag to use instead. A client refuses with exit 2.
    pub fn applies_to(&self, verdict: &Verdict) -> Result<(), String> {
        match &verdict.detail {
            VerdictDetail::Mcp { .. } if self.min_level.is_some() =>
            {
                Err(
                    "--min-level applies to RCP verdicts; this is an MCP verdict (use --min-grade compliant|strict)"
                        .to_owned(),
                )
            }
            VerdictDetail::Rcp { .. } if self.min_grade.is_some() => Err(
                "--min-grade applies to MCP verdicts; this is an RCP verdict (use --min-level L0|L1|L2)"
                    .to_owned(),
            ),
            _ => Ok(()),
        }
    }

    /// Judges `verdict` and its `findings` (see the module documentation).
    /// A flag that does not apply to the verdict fails the gate with that
    /// reason; check [`Gate::applies_to`] first to treat it as a usage error.
    pub fn evaluate(&self, verdict: &Verdict, findings: &[Finding]) -> GateResult {
        let mut result = GateResult::default();
        if let Err(e) = self.applies_to(verdict) {
            result.reasons.push(e);
            return result;
        }
        let outcomes = last_outcomes(findings);
        let mut forgiven: BTreeSet<&str> = BTreeSet::new();
        if let Some(baseline) = &self.expected_failures {
            for (rule, outcome) in &outcomes {
                let listed = baseline.contains(*rule);
                match outcome {
                    Outcome::Fail | Outcome::Warn if listed => {
                        forgiven.insert(rule);
                        result.expected_failures.push((*rule).to_owned());
                    }
                    Outcome::Fail => result.unexpected_failures.push((*rule).to_owned()),
                    Outcome::Pass | Outcome::Info if listed => {
                        result.stale.push((*rule).to_owned());
                    }
                    _ => {}
                }
            }
        }
        let adjusted: Vec<Finding>;
        let judged = if forgiven.is_empty() {
            findings
        } else {
            adjusted = findings
                .iter()
                .map(|f| {
                    let mut f = f.clone();
                    if forgiven.contains(f.rule_id.as_str()) {
                        f.outcome = Outcome::Pass;
                    }
                    f
                })
                .collect();
            &adjusted
        };
        let reasons = &mut result.reasons;
        match &verdict.detail {
            VerdictDetail::Rcp {
                profile,
                certified_level,
                declared_level,
                honest,
                ..
            } => {
                let level = if forgiven.is_empty() {
                    certified_level.clone()
                } else {
                    recertify(profile, judged).to_owned()
                };
                let shown = if level == *certified_level {
                    format!("certified {level}")
                } else {
                    format!("{level} with the baseline (certified {certified_level})")
                };
                if *honest == Some(false) {
                    reasons.push(format!(
                        "OVERCLAIMED: declared {} but certified {certified_level}; an overclaim always fails the gate",
                        declared_level.as_deref().unwrap_or("?")
                    ));
                }
                match self.min_level {
                    Some(min) => {
                        if Level::certified(&level).is_none_or(|l| l < min) {
                            reasons.push(format!(
                                "level {shown}, below the required {}",
                                min.as_str()
                            ));
                        }
                    }
                    None => {
                        // The verdict's rule less its honesty half (judged above).
                        let passed = if profile == suite::rcp::PROFILE_REFERENCE {
                            // The harness's exit rule: no failed check.
                            !judged.iter().any(|f| f.outcome == Outcome::Fail)
                        } else {
                            Level::certified(&level).is_some()
                        };
                        if !passed {
                            reasons
                                .push(format!("the verdict fails ({}; {shown})", verdict.summary));
                        }
                    }
                }
            }
            // A verdict of several revisions has the lowest of their grades,
            // which is the grade of all their findings together.
            VerdictDetail::Mcp { grade, .. } => {
                // Regraded as the suite grades: forgiving failures never
                // turns a run whose core rules were not judged into a grade.
                let effective = if forgiven.is_empty() {
                    grade.clone()
                } else {
                    suite::grade::grade(judged).grade.to_owned()
                };
                let mut shown = if effective == *grade {
                    format!("grade {grade}")
                } else {
                    format!("grade {effective} with the baseline ({grade} without)")
                };
                // Several revisions: each one's grade beside the lowest.
                if let Some(each) = verdict.grades_by_revision() {
                    shown.push_str(&if effective == *grade {
                        format!(", the lowest of {each}")
                    } else {
                        format!("; without the baseline {each}")
                    });
                }
                let rank = |g: &str| match g {
                    "strict" => 2,
                    "compliant" => 1,
                    _ => 0,
                };
                let required = self.min_grade.unwrap_or(Grade::Compliant);
                let needed = match required {
                    Grade::Compliant => 1,
                    Grade::Strict => 2,
                };
                if rank(&effective) < needed {
                    if self.min_grade.is_some() {
                        reasons.push(format!("{shown}, below the required {}", required.as_str()));
                    } else if effective != *grade {
                        reasons.push(format!("the verdict fails ({shown})"));
                    } else {
                        reasons.push(format!("the verdict fails ({})", verdict.summary));
                    }
                }
            }
        }
        if !result.unexpected_failures.is_empty() {
            result.reasons.push(format!(
                "failing and not in the baseline: {}",
                result.unexpected_failures.join(", ")
            ));
        }
        if !result.stale.is_empty() {
            result.reasons.push(format!(
                "in the baseline but no longer failing (remove them from the list): {}",
                result.stale.join(", ")
            ));
        }
        result.passed = result.reasons.is_empty();
        result
    }
}

/// Each rule's last outcome, in the order rules first appear.
fn last_outcomes(findings: &[Finding]) -> Vec<(&str, Outcome)> {
    let mut out: Vec<(&str, Outcome)> = Vec::new();
    for f in findings {
        match out.iter_mut().find(|(id, _)| *id == f.rule_id) {
            Some(entry) => entry.1 = f.outcome,
            None => out.push((f.rule_id.as_str(), f.outcome)),
        }
    }
    out
}

/// The certified level of `findings` under `profile`, as the suite computes it.
fn recertify(profile: &str, findings: &[Finding]) -> &'static str {
    if profile == suite::rcp::PROFILE_REFERENCE {
        suite::rcp::harness::certify(findings).as_str()
    } else {
        // Every feature is passed as advertised: one that is not advertised
        // has only skipped rules, which certify reads as "unverified" (it
        // neither counts for L2 nor blocks it), exactly as when it is left out.
        let all: Vec<&suite::rcp::l2::Feature> = suite::rcp::l2::FEATURES.iter().collect();
        suite::rcp::certify::certify(findings, &all).level.as_str()
    }
}

/// Reads a baseline: a JSON (`.json`) or YAML list of rule ids. Unknown ids
/// and the overclaim rule are refused, so a typo cannot silently excuse nothing.
pub fn load_expected_failures(path: &Path) -> Result<BTreeSet<String>, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    if meta.len() > MAX_BASELINE_BYTES {
        return Err(format!(
            "{shown} is larger than {MAX_BASELINE_BYTES} bytes; a baseline is a list of rule ids"
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let ids: Vec<String> = if is_json {
        serde_json::from_str(&text)
            .map_err(|e| format!("{shown} is not a JSON list of rule ids: {e}"))?
    } else if text
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        // An empty (or comments-only) YAML file: everything has been fixed.
        Vec::new()
    } else {
        serde_saphyr::from_str(&text)
            .map_err(|e| format!("{shown} is not a YAML list of rule ids: {e}"))?
    };
    parse_ids(ids).map_err(|e| format!("{shown}: {e}"))
}

fn parse_ids(ids: Vec<String>) -> Result<BTreeSet<String>, String> {
    let mut set = BTreeSet::new();
    let mut unknown = Vec::new();
    for id in ids {
        let id = id.trim().to_owned();
        if id == OVERCLAIM_RULE {
            return Err(format!(
                "{OVERCLAIM_RULE} cannot be listed: an overclaimed level always fails the gate"
            ));
        }
        if suite::index::rule(&id).is_none() {
            unknown.push(id);
        } else {
            set.insert(id);
        }
    }
    if !unknown.is_empty() {
        let shown: Vec<String> = unknown
            .iter()
            .take(10)
            .map(|id| format!("`{}`", id.chars().take(64).collect::<String>()))
            .collect();
        return Err(format!("unknown rule ids: {}", shown.join(", ")));
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::Counts;

    fn finding(id: &str, outcome: Outcome) -> Finding {
        Finding {
            rule_id: id.to_owned(),
            outcome,
            message: String::new(),
            evidence: Vec::new(),
            duration_ms: 0,
        }
    }

    fn mcp(findings: &[Finding]) -> Verdict {
        let graded = suite::grade::grade(findings);
        Verdict {
            suite: SuiteId::Mcp,
            suite_version: "t".into(),
            spec_revision: "t".into(),
            passed: graded.passed,
            summary: graded.summary,
            counts: Counts::of(findings),
            detail: VerdictDetail::mcp_graded(graded.grade, graded.withheld),
        }
    }

    fn baseline(ids: &[&str]) -> Option<BTreeSet<String>> {
        Some(ids.iter().map(|s| (*s).to_owned()).collect())
    }

    #[test]
    fn a_baselined_failure_does_not_lower_the_grade_and_a_new_one_fails() {
        let findings = [
            finding("MCP-HDR-001", Outcome::Fail),
            finding("MCP-HDR-002", Outcome::Warn),
            finding("MCP-HDR-003", Outcome::Pass),
        ];
        let v = mcp(&findings);
        let gate = Gate {
            min_grade: Some(Grade::Strict),
            expected_failures: baseline(&["MCP-HDR-001", "MCP-HDR-002"]),
            ..Gate::default()
        };
        let r = gate.evaluate(&v, &findings);
        assert!(r.passed, "{r:?}");
        assert_eq!(r.expected_failures, ["MCP-HDR-001", "MCP-HDR-002"]);

        let gate = Gate {
            expected_failures: baseline(&["MCP-HDR-002"]),
            ..Gate::default()
        };
        let r = gate.evaluate(&v, &findings);
        assert!(!r.passed);
        assert_eq!(r.unexpected_failures, ["MCP-HDR-001"]);

        let gate = Gate {
            expected_failures: baseline(&["MCP-HDR-001", "MCP-HDR-003"]),
            ..Gate::default()
        };
        let r = gate.evaluate(&v, &findings);
        assert!(!r.passed);
        assert_eq!(r.stale, ["MCP-HDR-003"]);
        assert!(r.reasons.iter().any(|x| x.contains("no longer failing")));
    }

    #[test]
    fn a_baseline_never_grades_a_run_whose_core_rules_were_not_judged() {
        let unverified = |id: &str| Finding {
            message: "not verified: authorization required: HTTP 401".into(),
            ..finding(id, Outcome::Skip)
        };
        let findings = [
            finding("MCP-AUT-001", Outcome::Fail),
            unverified("MCP-DSC-001"),
            unverified("MCP-HDR-001"),
        ];
        let v = mcp(&findings);
        assert_eq!(v.mcp_grade(), Some("non-compliant"));
        let gate = Gate {
            expected_failures: baseline(&["MCP-AUT-001"]),
            ..Gate::default()
        };
        let r = gate.evaluate(&v, &findings);
        assert!(!r.passed, "{r:?}");
        assert!(
            r.reasons.iter().any(|x| x.contains("grade not judged")),
            "{r:?}"
        );
    }

    #[test]
    fn level_flags_are_refused_on_the_wrong_suite() {
        let findings = [finding("MCP-HDR-003", Outcome::Pass)];
        let gate = Gate {
            min_level: Some(Level::L1),
            ..Gate::default()
        };
        assert!(gate.applies_to(&mcp(&findings)).is_err());
        assert!(!gate.evaluate(&mcp(&findings), &findings).passed);
    }

    #[test]
    fn baselines_refuse_unknown_ids_and_the_overclaim_rule() {
        assert!(parse_ids(vec!["MCP-HDR-001".into()]).is_ok());
        let e = parse_ids(vec!["MCP-NOPE-1".into()]).unwrap_err();
        assert!(e.contains("`MCP-NOPE-1`"), "{e}");
        assert!(parse_ids(vec![OVERCLAIM_RULE.into()]).is_err());
    }
}
