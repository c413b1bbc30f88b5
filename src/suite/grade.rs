//! The MCP grade, and the rule that a grade needs its core rules judged.
//!
//! `mcp-2026-07-28.md` §15.2 grades a run `non-compliant` when a rule whose
//! failure is `fail` failed, `compliant` when only warnings remain, and
//! `strict` when nothing warned. Read alone, that certifies a server of which
//! protocheck saw nothing: a server that answers every request with 401 fails
//! no rule, because every rule but the authorization ones is "not verified".
//! A grade certifies only what was exercised, so both MCP engines (and the
//! CI gate, which regrades with a baseline) grade through [`grade`]: when a
//! core family of rules was not verified at all, the verdict is `not judged`
//! with the reason, never `strict` or `compliant`. A failure is still a
//! failure: a run that failed a rule is `non-compliant` whatever else it
//! could not verify, since that finding is a fact about the server.

use super::{Counts, Finding, Outcome};

/// The grade of a run whose core rules were not judged.
pub use super::NOT_JUDGED;

/// The rule families without which no grade is given, per rule-id prefix
/// (one prefix per MCP suite): for 2026-07-28 discovery, the request
/// headers, statelessness and errors; for 2025-11-25 the lifecycle
/// (`initialize`), JSON-RPC and the HTTP transport. Everything else a
/// server does rests on these.
const CORE: &[(&str, &[&str])] = &[
    ("MCP-", &["DSC", "HDR", "STL", "ERR"]),
    ("MCP25-", &["LIF", "RPC", "HTP"]),
];

/// A grade and what goes with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graded {
    /// `strict`, `compliant`, `non-compliant` or [`NOT_JUDGED`].
    pub grade: &'static str,
    /// Whether the run passes: no failing rule, and a grade given.
    pub passed: bool,
    /// One line for people: `strict`, `compliant (2 warnings)`,
    /// `non-compliant: 3 failing`, or `not judged: …` with the reason.
    pub summary: String,
    /// Why no grade was given, in a few words (`authorization required`);
    /// `None` when a grade was given.
    pub withheld: Option<String>,
}

/// Grades `findings` (the run's, one outcome per rule).
pub fn grade(findings: &[Finding]) -> Graded {
    let counts = Counts::of(findings);
    let failing = counts.fail;
    if failing > 0 {
        return Graded {
            grade: "non-compliant",
            passed: false,
            summary: format!(
                "non-compliant: {failing} failing{}",
                left_unjudged(findings)
            ),
            withheld: None,
        };
    }
    if let Some(unjudged) = unjudged_core(findings) {
        let judged = counts.total() - counts.skip;
        let summary = format!(
            "not judged: {} ({judged} of {} rules judged; the core rules {} were not verified: \
             {}){}",
            unjudged.short,
            counts.total(),
            unjudged.families.join(", "),
            unjudged.detail,
            left_unjudged(findings),
        );
        return Graded {
            grade: NOT_JUDGED,
            passed: false,
            summary,
            withheld: Some(unjudged.short),
        };
    }
    let (grade, summary) = if counts.warn > 0 {
        (
            "compliant",
            format!(
                "compliant ({} warning{})",
                counts.warn,
                if counts.warn == 1 { "" } else { "s" }
            ),
        )
    } else {
        ("strict", "strict".to_owned())
    };
    let summary = format!("{summary}{}", left_unjudged(findings));
    Graded {
        grade,
        passed: true,
        summary,
        withheld: None,
    }
}

/// What the target's authorization left unjudged, for the verdict: the rules
/// whose every probe met 403 `insufficient_scope` (or a 401 challenge on
/// some methods only) and those judged without some of their probes, with
/// the advice that would let them be judged. Empty when there are none. The
/// grade itself follows the usual reading (a rule not verified is no failure;
/// a core family wholly unverified withholds the grade).
fn left_unjudged(findings: &[Finding]) -> String {
    let mut unjudged = Vec::new();
    let mut in_part = Vec::new();
    let mut scope = false;
    for f in findings {
        let Some(by_scope) = left_by_authorization(&f.message) else {
            continue;
        };
        scope |= by_scope;
        if f.outcome == Outcome::Skip && f.message.starts_with("not verified:") {
            unjudged.push(f.rule_id.as_str());
        } else {
            in_part.push(f.rule_id.as_str());
        }
    }
    if unjudged.is_empty() && in_part.is_empty() {
        return String::new();
    }
    let mut parts = Vec::new();
    if !unjudged.is_empty() {
        parts.push(format!("left {} unjudged", unjudged.join(", ")));
    }
    if !in_part.is_empty() {
        parts.push(format!(
            "judged {} on part of their probes",
            in_part.join(", ")
        ));
    }
    let (cause, advice) = if scope {
        (
            "the token's scope",
            "a token whose scope reaches every method the server serves would let them be judged",
        )
    } else {
        (
            "the server's authorization",
            "a token (`--bearer-token`) that reaches every method would let them be judged",
        )
    };
    format!("; {cause} {}: {advice}", parts.join(" and "))
}

/// Core families that were not verified, and why.
struct Unjudged {
    short: String,
    detail: String,
    families: Vec<String>,
}

/// The family of a rule id (`MCP-HDR-001` → (`MCP-`, `HDR`)).
fn family(rule_id: &str) -> Option<(&str, &str)> {
    let (prefix, rest) = rule_id.split_once('-')?;
    let (family, _) = rest.split_once('-')?;
    Some((&rule_id[..prefix.len() + 1], family))
}

/// The core families of which no rule was judged while at least one was
/// "not verified". A family whose rules were all "not applicable" (the HTTP
/// header rules over stdio, say) does not apply to this run and is no
/// reason to withhold a grade; one absent from the findings neither.
fn unjudged_core(findings: &[Finding]) -> Option<Unjudged> {
    let mut families = Vec::new();
    let mut first_reason: Option<&str> = None;
    for (prefix, core) in CORE {
        for name in *core {
            let mut members = findings
                .iter()
                .filter(|f| family(&f.rule_id) == Some((prefix, name)))
                .peekable();
            if members.peek().is_none() {
                continue;
            }
            let mut reason = None;
            let mut judged = false;
            for f in members {
                if f.outcome != Outcome::Skip {
                    judged = true;
                    break;
                }
                if reason.is_none() && f.message.starts_with("not verified:") {
                    reason = Some(f.message.as_str());
                }
            }
            if let (false, Some(reason)) = (judged, reason) {
                families.push(format!("{prefix}{name}"));
                first_reason.get_or_insert(reason);
            }
        }
    }
    let reason = first_reason?.trim_start_matches("not verified:").trim();
    // Messages name their cause in a first clause ("authorization
    // required: the server answered …"); that clause is the short reason.
    let (short, detail) = reason.split_once(": ").unwrap_or((reason, reason));
    Some(Unjudged {
        short: short.to_owned(),
        detail: detail.to_owned(),
        families,
    })
}

/// The first words of a finding about probes the token's scope did not
/// reach; [`left_by_authorization`] reads findings by them.
pub const LACKS_SCOPE: &str = "the token lacks the scope for ";
/// The last words of a finding about probes refused with a 401 challenge.
pub const NEEDS_AUTHORIZATION: &str = "authorization (HTTP 401)";

/// Whether a finding's message says the target's authorization left (part
/// of) the rule unjudged: `Some(true)` for the token's scope, `Some(false)`
/// for a 401 on some methods only; `None` otherwise (the run-wide "not
/// verified: authorization required" of a server refusing everything is not
/// one: it says so in the verdict itself).
pub fn left_by_authorization(message: &str) -> Option<bool> {
    if message.contains(LACKS_SCOPE) {
        Some(true)
    } else if message.contains(&format!("` needs {NEEDS_AUTHORIZATION}"))
        || message.contains(&format!("` need {NEEDS_AUTHORIZATION}"))
    {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(id: &str, outcome: Outcome, message: &str) -> Finding {
        Finding {
            rule_id: id.into(),
            outcome,
            message: message.into(),
            evidence: Vec::new(),
            duration_ms: 0,
        }
    }

    const AUTH: &str = "not verified: authorization required: the server answered HTTP 401";

    #[test]
    fn the_verdict_names_the_rules_the_tokens_scope_left_unjudged() {
        let findings = [
            f(
                "MCP-HDR-001",
                Outcome::Pass,
                "x; not judged: the token lacks the scope for `tools/call` (`mcp:tools` asked)",
            ),
            f(
                "MCP-HDR-008",
                Outcome::Skip,
                "not verified: the token lacks the scope for `tools/call` (`mcp:tools` asked)",
            ),
            f("MCP-HDR-004", Outcome::Pass, "ok"),
        ];
        let g = grade(&findings);
        assert_eq!(g.grade, "strict");
        assert_eq!(
            g.summary,
            "strict; the token's scope left MCP-HDR-008 unjudged and judged MCP-HDR-001 on part \
             of their probes: a token whose scope reaches every method the server serves would \
             let them be judged"
        );
        // The run-wide "authorization required" is the grade's own reason.
        let g = grade(&[f("MCP-HDR-004", Outcome::Skip, AUTH)]);
        assert!(!g.summary.contains("token's scope"), "{}", g.summary);
    }

    #[test]
    fn a_run_that_verified_no_core_family_is_not_graded() {
        let findings = [
            f("MCP-AUT-001", Outcome::Pass, "ok"),
            f("MCP-DSC-001", Outcome::Skip, AUTH),
            f("MCP-HDR-001", Outcome::Skip, AUTH),
            f("MCP-STL-001", Outcome::Skip, AUTH),
            f("MCP-ERR-001", Outcome::Skip, AUTH),
        ];
        let g = grade(&findings);
        assert_eq!(g.grade, NOT_JUDGED);
        assert!(!g.passed);
        assert_eq!(g.withheld.as_deref(), Some("authorization required"));
        assert!(g.summary.starts_with("not judged: authorization required"));
        assert_eq!(
            g.summary,
            "not judged: authorization required (1 of 5 rules judged; the core rules MCP-DSC, \
             MCP-HDR, MCP-STL, MCP-ERR were not verified: the server answered HTTP 401)"
        );
    }

    #[test]
    fn a_failure_is_graded_whatever_was_not_verified() {
        let findings = [
            f("MCP-AUT-001", Outcome::Fail, "no metadata"),
            f("MCP-DSC-001", Outcome::Skip, AUTH),
        ];
        assert_eq!(grade(&findings).grade, "non-compliant");
    }

    #[test]
    fn families_that_do_not_apply_or_were_judged_in_part_keep_the_grade() {
        let findings = [
            f("MCP-DSC-001", Outcome::Pass, "ok"),
            f(
                "MCP-HDR-001",
                Outcome::Skip,
                "not applicable over stdio: HTTP only",
            ),
            f("MCP-STL-003", Outcome::Pass, "ok"),
            f(
                "MCP-STL-004",
                Outcome::Skip,
                "not verified: MCP-STL-003 failed",
            ),
            f("MCP-ERR-001", Outcome::Warn, "hm"),
        ];
        let g = grade(&findings);
        assert_eq!((g.grade, g.passed), ("compliant", true));
        assert_eq!(g.summary, "compliant (1 warning)");
        assert_eq!(grade(&findings[..1]).grade, "strict");
    }

    #[test]
    fn each_suite_has_its_own_core() {
        let findings = [
            f("MCP25-LIF-001", Outcome::Skip, AUTH),
            f("MCP25-RPC-001", Outcome::Skip, AUTH),
            f("MCP25-AUT-001", Outcome::Pass, "ok"),
        ];
        let g = grade(&findings);
        assert_eq!(g.grade, NOT_JUDGED);
        assert!(g.summary.contains("MCP25-LIF, MCP25-RPC"));
    }
}
