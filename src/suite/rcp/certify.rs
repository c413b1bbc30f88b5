//! Certification in the `spec` profile (protocheck decision 9), the honesty of
//! the declared level (§14, decision 8), and the verdict.
//!
//! - L0: no L0 rule fails (skips only where decisions 3 and 4 put them, or
//!   where a check had nothing to probe).
//! - L1: L0, and every L1 rule passes: each is one of §14.2's items.
//! - L2: L1, at least one L2 feature advertised, and every advertised feature
//!   passes its checks; a feature whose checks could not run at all is
//!   "unverified" and neither counts nor blocks.
//!
//! Rules outside the levels never change the certified level; they are
//! counted as spec violations (decision 10).

use super::l2::Feature;
use super::{l0, l1, l2, outside};
use crate::suite::{Counts, Finding, Outcome, Rule, SpecLevel};
use std::collections::BTreeMap;

pub const DECLARATION_HONEST: Rule = Rule {
    id: "RCP-CERT-001",
    title: "the declared `_meta.conformance` is not above the certified level",
    level: SpecLevel::Must,
    on_failure: Outcome::Fail,
    spec_ref: "RCP/1 §14; protocheck decision 8",
    group: "certification",
    help: crate::suite::Help {
        probe: "At the end of the run protocheck certifies a level from the findings (L0 from \
                §14.1's rules and a handshake it saw succeed, L1 from every L1 item, L2 from the \
                advertised L2 features) and compares it with the level `_meta.conformance` \
                declares; a declared level above the certified one fails.",
        failure: "The server declares L1 or L2 while an item of that level is missing or failing: \
                  a retrieval mode not advertised, `filter` or `citations` absent, or an \
                  advertised L2 feature broken. The finding lists what the next level needs. \
                  Without a valid declaration the rule is skipped and RCP-L0-014 fails.",
        fix: "Fix the items the finding lists for the declared level, or declare in \
              `_meta.conformance` the level protocheck certifies; declaring a lower level than \
              the server meets is always allowed.",
    },
};

/// The rules of the certification group.
pub static RULES: &[Rule] = &[DECLARATION_HONEST];

/// A conformance level, ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    None,
    L0,
    L1,
    L2,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::L0 => "L0",
            Self::L1 => "L1",
            Self::L2 => "L2",
        }
    }

    /// A declared level: exactly "L0", "L1" or "L2" (case-sensitive, §4.6).
    pub fn declared(s: &str) -> Option<Self> {
        match s {
            "L0" => Some(Self::L0),
            "L1" => Some(Self::L1),
            "L2" => Some(Self::L2),
            _ => None,
        }
    }
}

/// What the findings certify.
#[derive(Debug, Clone, PartialEq)]
pub struct Certification {
    pub level: Level,
    /// What the level above the certified one is missing, one line per item.
    pub missing_for_next: Vec<String>,
    /// Advertised L2 features protocheck could not exercise, each "<feature>:
    /// advertised, not exercised: <why, and what would exercise it>".
    pub unverified: Vec<String>,
    /// The server was already initialized and no run saw its handshake
    /// succeed: no level, and the declaration cannot be judged (decision 3).
    pub handshake_unobserved: bool,
    /// When every item the level above the certified one lacks was not
    /// verified (none failed, none is missing): the server's answers could
    /// not show whether the item holds (hits without `meta`, so no filter
    /// result can be checked). The level is not granted on what was not
    /// exercised; `missing_for_next` says why and what the server would
    /// need to return for it to be judged. The value is the highest level
    /// the findings neither prove nor disprove (L2 when every advertised L2
    /// feature holds), which a declaration may name without overclaiming.
    pub not_verified: Option<Level>,
}

impl Certification {
    /// How the declared level compares with the certified one. A declared
    /// level that only items not verified keep from being certified is
    /// neither proved nor disproved, so it is not called an overclaim.
    pub fn honesty(&self, declared: Option<&str>) -> Honesty {
        if self.handshake_unobserved {
            return Honesty::Unverified;
        }
        match Honesty::judge(declared, self.level) {
            Honesty::Overclaimed
                if declared
                    .and_then(Level::declared)
                    .zip(self.not_verified)
                    .is_some_and(|(d, open)| d <= open) =>
            {
                Honesty::LevelNotVerified
            }
            other => other,
        }
    }
}

/// The last finding of `rule`, if it was reported.
fn finding_of<'a>(findings: &'a [Finding], rule: &Rule) -> Option<&'a Finding> {
    findings.iter().rev().find(|f| f.rule_id == rule.id)
}

fn outcome_of(findings: &[Finding], rule: &Rule) -> Option<Outcome> {
    finding_of(findings, rule).map(|f| f.outcome)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FeatureStatus {
    Passed,
    Failed,
    Unverified,
}

fn feature_status(findings: &[Finding], feature: &Feature) -> FeatureStatus {
    let outcomes: Vec<Option<Outcome>> = feature
        .rules
        .iter()
        .map(|r| outcome_of(findings, r))
        .collect();
    if outcomes
        .iter()
        .any(|o| matches!(o, Some(Outcome::Fail | Outcome::Warn)))
    {
        FeatureStatus::Failed
    } else if outcomes.contains(&Some(Outcome::Pass)) {
        FeatureStatus::Passed
    } else {
        FeatureStatus::Unverified
    }
}

/// Why a level item does not hold, in the words of decision 9.
fn why_missing(finding: Option<&Finding>, rule: &Rule) -> String {
    match finding {
        None => format!("{} was not reported", rule.id),
        Some(f) if f.outcome == Outcome::Skip && f.message.contains("not advertised") => {
            "not advertised".to_owned()
        }
        Some(f) if f.outcome == Outcome::Skip => match f.message.strip_prefix("not verified: ") {
            Some(why) => format!("not verified: {why}"),
            None => format!("not verified ({})", f.message),
        },
        Some(_) => format!("{} failed", rule.id),
    }
}

/// How a level is certified, and what a MUST outside the levels costs, in
/// the words the verdict's explanation uses (protocheck decision, from
/// §14.5: "A level is certified only when every applicable MUST at that
/// level and all lower levels passes", and "The exit code is non-zero on any
/// failed MUST or any overclaim"). The MUSTs *at* a level are those §14.1
/// lists for L0 and the items of §14.2 and §14.3, read with the MUSTs they
/// refer to. Every other MUST of the spec (the declaration of §14's
/// preamble, the HTTP path and body method match, stdio framing, silence on
/// notifications over HTTP, result shapes) is outside the levels: its
/// failure never lowers the level, and it fails the run.
pub const OUTSIDE_THE_LEVELS: &str = "A level is certified from the MUSTs §14.1 lists and the items of §14.2 and \
     §14.3 (§14.5: \"every applicable MUST at that level and all lower levels\"); a failed MUST outside those \
     lists (the declaration of §14 included) never lowers the level, and fails the run, as any failed MUST does \
     (§14.5: \"non-zero on any failed MUST or any overclaim\").";

/// Whether `rule` is judged outside the levels (see [`OUTSIDE_THE_LEVELS`]).
pub fn is_outside(rule: &Rule) -> bool {
    rule.group == "outside"
}

/// Every rule judged outside the levels: the `outside` catalogue and the
/// declaration.
fn outside_rules() -> impl Iterator<Item = &'static Rule> {
    outside::RULES
        .iter()
        .chain(l0::RULES.iter().filter(|r| is_outside(r)))
}

/// Certifies the level the findings prove, given the L2 features advertised.
pub fn certify(findings: &[Finding], advertised: &[&Feature]) -> Certification {
    let l0_failed: Vec<&Rule> = l0::RULES
        .iter()
        .filter(|r| !is_outside(r))
        .filter(|r| outcome_of(findings, r) == Some(Outcome::Fail))
        .collect();
    let mut l1_missing: Vec<String> = Vec::new();
    // L1 lacks only items that were not verified: none failed, none skipped
    // for any other reason.
    let mut l1_only_unverified = true;
    for rule in l1::RULES {
        let finding = finding_of(findings, rule);
        if finding.map(|f| f.outcome) == Some(Outcome::Pass) {
            continue;
        }
        l1_only_unverified &= finding
            .is_some_and(|f| f.outcome == Outcome::Skip && f.message.starts_with("not verified"));
        let item = l1::item_name(rule.id).unwrap_or(rule.title);
        let line = format!(
            "L1 needs {item}, spec §14.2; {}",
            why_missing(finding, rule)
        );
        // Two rules of one item (filter) not advertised say it once.
        if !l1_missing.contains(&line) {
            l1_missing.push(line);
        }
    }
    let statuses: Vec<(&Feature, FeatureStatus)> = advertised
        .iter()
        .map(|f| (*f, feature_status(findings, f)))
        .collect();
    let unverified: Vec<String> = statuses
        .iter()
        .filter(|(_, s)| *s == FeatureStatus::Unverified)
        .map(|(f, _)| {
            let reason = f
                .rules
                .iter()
                .filter_map(|r| finding_of(findings, r))
                .map(|x| x.message.clone())
                .next()
                .unwrap_or_default();
            // The finding says "advertised, not exercised: <why; what would
            // exercise it>"; a reason worded otherwise (the target went away)
            // is prefixed the same way.
            if reason.starts_with("advertised, not exercised") {
                format!("{}: {reason}", f.name)
            } else {
                format!("{}: advertised, not exercised: {reason}", f.name)
            }
        })
        .collect();
    let mut l2_missing: Vec<String> = statuses
        .iter()
        .filter(|(_, s)| *s == FeatureStatus::Failed)
        .map(|(f, _)| {
            let failed: Vec<&str> = f
                .rules
                .iter()
                .filter(|r| matches!(outcome_of(findings, r), Some(Outcome::Fail | Outcome::Warn)))
                .map(|r| r.id)
                .collect();
            format!(
                "L2 needs every advertised feature to pass, spec §14.3; {} is advertised and {} failed",
                f.name,
                failed.join(", ")
            )
        })
        .collect();
    let passed = statuses
        .iter()
        .filter(|(_, s)| *s == FeatureStatus::Passed)
        .count();
    if passed == 0 && l2_missing.is_empty() {
        let names: Vec<&str> = l2::FEATURES.iter().map(|f| f.name).collect();
        let why = if advertised.is_empty() {
            "none is advertised".to_owned()
        } else {
            "none of those advertised could be verified".to_owned()
        };
        l2_missing.push(format!(
            "L2 needs at least one of {}, spec §14.3; {why}",
            names.join(", ")
        ));
    }

    // Spec §14.1 rule 1: an L0 server MUST "Answer `initialize` with
    // negotiated `protocolVersion` ≥ 1". A level is certified only when this
    // run saw that (RCP-L0-011 passes), or, for a long-lived server that was
    // already initialized, when an earlier run of the same target did
    // (RCP-L0-011 is `info`, decision 3 as narrowed). Anything else — a
    // handshake never seen to succeed, a target gone before it — certifies
    // nothing, even when no L0 rule failed.
    let handshake = finding_of(findings, &l0::INITIALIZE_NEGOTIATES);
    let handshake_seen = matches!(
        handshake.map(|f| f.outcome),
        Some(Outcome::Pass | Outcome::Info)
    );
    let handshake_unobserved = !handshake_seen
        && handshake.is_some_and(|f| {
            f.outcome == Outcome::Skip && f.message.starts_with(l0::HANDSHAKE_NOT_OBSERVED)
        });
    let mut not_verified = None;
    let (level, missing_for_next) = if !l0_failed.is_empty() {
        let lines = l0_failed
            .iter()
            .map(|r| format!("L0 needs {} ({}), {}; it failed", r.id, r.title, r.spec_ref))
            .collect();
        (Level::None, lines)
    } else if !handshake_seen {
        let rule = &l0::INITIALIZE_NEGOTIATES;
        let why = match handshake {
            Some(_) if handshake_unobserved => {
                "the handshake was not observed: restart the server and run again".to_owned()
            }
            Some(f) => format!("not verified ({})", f.message),
            None => format!("{} was not reported", rule.id),
        };
        let line = format!(
            "L0 needs {} ({}), {}; {why}",
            rule.id, rule.title, rule.spec_ref
        );
        (Level::None, vec![line])
    } else if !l1_missing.is_empty() {
        // L2 is not disproved either when every advertised feature holds.
        let highest = if l2_missing.is_empty() {
            Level::L2
        } else {
            Level::L1
        };
        not_verified = l1_only_unverified.then_some(highest);
        (Level::L0, l1_missing)
    } else if !l2_missing.is_empty() {
        (Level::L1, l2_missing)
    } else {
        (Level::L2, Vec::new())
    };
    Certification {
        level,
        missing_for_next,
        unverified,
        handshake_unobserved,
        not_verified,
    }
}

/// Findings per level group: `L0`, `L1`, `L2` and `outside`.
pub fn by_level(findings: &[Finding]) -> BTreeMap<String, Counts> {
    let mut map = BTreeMap::new();
    let every = l0::RULES
        .iter()
        .chain(l1::RULES)
        .chain(l2::RULES)
        .chain(outside::RULES);
    for group in ["L0", "L1", "L2", "outside"] {
        let ids: Vec<&str> = every
            .clone()
            .filter(|r| r.group == group)
            .map(|r| r.id)
            .collect();
        let counts = Counts::of(
            findings
                .iter()
                .filter(|f| ids.contains(&f.rule_id.as_str())),
        );
        map.insert(group.to_owned(), counts);
    }
    map
}

/// Violations of MUSTs (fail) and SHOULDs (warn) outside the levels.
pub fn violations_outside(findings: &[Finding]) -> u32 {
    count_outside(findings, &[Outcome::Fail, Outcome::Warn])
}

/// The ids of the failed MUSTs outside the levels, in catalogue order: each
/// fails the run (see [`OUTSIDE_THE_LEVELS`]).
pub fn failed_outside_ids(findings: &[Finding]) -> Vec<String> {
    outside_rules()
        .filter(|r| outcome_of(findings, r) == Some(Outcome::Fail))
        .map(|r| r.id.to_owned())
        .collect()
}

fn count_outside(findings: &[Finding], outcomes: &[Outcome]) -> u32 {
    let n = findings
        .iter()
        .filter(|f| outside_rules().any(|r| r.id == f.rule_id))
        .filter(|f| outcomes.contains(&f.outcome))
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// How the declared level compares with the certified one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Honesty {
    Consistent,
    Overclaimed,
    /// No `_meta.conformance`.
    Undeclared,
    /// A value that is not "L0", "L1" or "L2".
    Invalid,
    /// No level could be established because the handshake was never seen
    /// to succeed (decision 3): the declaration is neither proved nor
    /// disproved, so it is not called an overclaim.
    Unverified,
    /// The declared level is above the certified one only by items that
    /// were not verified ([`Certification::not_verified`]): neither proved
    /// nor disproved.
    LevelNotVerified,
}

impl Honesty {
    pub fn judge(declared: Option<&str>, certified: Level) -> Self {
        match declared.map(Level::declared) {
            None => Self::Undeclared,
            Some(None) => Self::Invalid,
            Some(Some(d)) if d > certified => Self::Overclaimed,
            Some(Some(_)) => Self::Consistent,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Consistent => "consistent",
            Self::Overclaimed => "OVERCLAIMED",
            Self::Undeclared => "undeclared",
            Self::Invalid => "invalid",
            Self::Unverified => "unverified",
            Self::LevelNotVerified => "not verified",
        }
    }

    /// Only a valid declaration above the certified level is dishonest; a
    /// missing or invalid one fails RCP-L0-014 instead.
    pub fn honest(self) -> bool {
        self != Self::Overclaimed
    }

    /// The verdict's `honest`: a claim only where a valid declaration was
    /// compared with the certified level, `None` where nothing was.
    pub fn compared(self) -> Option<bool> {
        match self {
            Self::Consistent => Some(true),
            Self::Overclaimed => Some(false),
            Self::Undeclared | Self::Invalid | Self::Unverified | Self::LevelNotVerified => None,
        }
    }
}

/// The one-line summary: `L2`, `L1 · OVERCLAIMED (declared L2)`, `L2 · 1 spec violation`.
pub fn summary(
    certified: Level,
    declared: Option<&str>,
    honesty: Honesty,
    violations: u32,
) -> String {
    let mut line = certified.as_str().to_owned();
    if honesty == Honesty::Overclaimed {
        line.push_str(&format!(
            " · OVERCLAIMED (declared {})",
            declared.unwrap_or_default()
        ));
    }
    if honesty == Honesty::Unverified {
        line.push_str(" · handshake not observed");
    }
    if violations > 0 {
        let s = if violations == 1 { "" } else { "s" };
        line.push_str(&format!(" · {violations} spec violation{s}"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(rule: &Rule, outcome: Outcome, message: &str) -> Finding {
        Finding {
            rule_id: rule.id.to_owned(),
            outcome,
            message: message.to_owned(),
            evidence: Vec::new(),
            duration_ms: 0,
        }
    }

    /// Every L0, L1 and L2 rule passing.
    fn all_pass() -> Vec<Finding> {
        l0::RULES
            .iter()
            .chain(l1::RULES)
            .chain(l2::RULES)
            .map(|r| finding(r, Outcome::Pass, "ok"))
            .collect()
    }

    fn set(findings: &mut [Finding], rule: &Rule, outcome: Outcome, message: &str) {
        for f in findings.iter_mut().filter(|f| f.rule_id == rule.id) {
            f.outcome = outcome;
            f.message = message.to_owned();
        }
    }

    fn features(names: &[&str]) -> Vec<&'static Feature> {
        l2::FEATURES
            .iter()
            .filter(|f| names.contains(&f.name))
            .collect()
    }

    #[test]
    fn levels_stack_and_name_what_the_next_one_needs() {
        let all = features(&["`rerank`", "`pagination`"]);
        let findings = all_pass();
        let c = certify(&findings, &all);
        assert_eq!(c.level, Level::L2);
        assert!(c.missing_for_next.is_empty());

        let mut findings = all_pass();
        set(&mut findings, &l2::RERANK, Outcome::Fail, "broken");
        let c = certify(&findings, &all);
        assert_eq!(c.level, Level::L1);
        assert_eq!(c.missing_for_next.len(), 1);
        assert!(
            c.missing_for_next[0].contains("`rerank` is advertised and RCP-L2-001 failed"),
            "{c:?}"
        );

        let mut findings = all_pass();
        set(
            &mut findings,
            &l1::FILTER_RESTRICTS,
            Outcome::Skip,
            "L1 needs `filter` (spec §14.2); `filter` is not advertised",
        );
        set(
            &mut findings,
            &l1::FILTER_VALIDATED,
            Outcome::Skip,
            "L1 needs `filter` (spec §14.2); `filter` is not advertised",
        );
        let c = certify(&findings, &all);
        assert_eq!(c.level, Level::L0);
        assert_eq!(
            c.missing_for_next,
            ["L1 needs `filter`, spec §14.2; not advertised"]
        );

        let mut findings = all_pass();
        set(&mut findings, &l0::UNKNOWN_METHOD, Outcome::Fail, "-32601");
        set(
            &mut findings,
            &l0::PER_SESSION_INIT,
            Outcome::Info,
            "process-wide",
        );
        let c = certify(&findings, &all);
        assert_eq!(c.level, Level::None);
        assert!(
            c.missing_for_next[0].starts_with("L0 needs RCP-L0-017"),
            "{c:?}"
        );
    }

    #[test]
    fn l2_needs_a_verified_feature_and_no_failed_one() {
        let findings = all_pass();
        let c = certify(&findings, &[]);
        assert_eq!(c.level, Level::L1);
        assert!(
            c.missing_for_next[0].contains("none is advertised"),
            "{c:?}"
        );

        let mut findings = all_pass();
        set(
            &mut findings,
            &l2::LOG,
            Outcome::Skip,
            "not verifiable over HTTP",
        );
        let c = certify(&findings, &features(&["`log`"]));
        assert_eq!(c.level, Level::L1);
        assert!(c.missing_for_next[0].contains("could be verified"), "{c:?}");
        assert_eq!(c.unverified.len(), 1);
        let c = certify(&findings, &features(&["`log`", "`rerank`"]));
        assert_eq!(
            c.level,
            Level::L2,
            "an unverified feature does not block L2"
        );

        // A feature with two rules passes when one passes and the other skips.
        let mut findings = all_pass();
        set(
            &mut findings,
            &l2::STREAMING_BUFFERED,
            Outcome::Skip,
            "applies to HTTP only",
        );
        assert_eq!(
            certify(&findings, &features(&["`streaming`"])).level,
            Level::L2
        );
    }

    #[test]
    fn no_level_without_a_handshake_seen_now_or_by_an_earlier_run() {
        let all = features(&["`rerank`"]);
        let mut findings = all_pass();
        let unobserved = format!("{}: no earlier run saw it", l0::HANDSHAKE_NOT_OBSERVED);
        set(
            &mut findings,
            &l0::INITIALIZE_NEGOTIATES,
            Outcome::Skip,
            &unobserved,
        );
        let c = certify(&findings, &all);
        assert_eq!(c.level, Level::None);
        assert!(c.handshake_unobserved);
        assert_eq!(
            c.missing_for_next,
            [format!(
                "L0 needs RCP-L0-011 ({}), {}; the handshake was not observed: restart the server and run again",
                l0::INITIALIZE_NEGOTIATES.title,
                l0::INITIALIZE_NEGOTIATES.spec_ref
            )]
        );
        assert_eq!(
            summary(c.level, Some("L2"), Honesty::Unverified, 0),
            "none · handshake not observed"
        );
        assert!(Honesty::Unverified.honest());

        // The target went away before the handshake: no level either.
        set(
            &mut findings,
            &l0::INITIALIZE_NEGOTIATES,
            Outcome::Skip,
            "not verified: gone",
        );
        let c = certify(&findings, &all);
        assert_eq!((c.level, c.handshake_unobserved), (Level::None, false));

        // An earlier run saw the handshake of this already-initialized server.
        set(
            &mut findings,
            &l0::INITIALIZE_NEGOTIATES,
            Outcome::Info,
            "run x saw it",
        );
        assert_eq!(certify(&findings, &all).level, Level::L2);
    }

    #[test]
    fn a_level_whose_items_were_not_verified_is_not_granted_nor_called_an_overclaim() {
        let all = features(&["`rerank`"]);
        let mut findings = all_pass();
        let why = "not verified: no hit of this run showed a `meta` value; to be judged, hits must carry `meta`";
        set(&mut findings, &l1::FILTER_RESTRICTS, Outcome::Skip, why);
        let c = certify(&findings, &all);
        assert_eq!((c.level, c.not_verified), (Level::L0, Some(Level::L2)));
        assert_eq!(
            c.missing_for_next,
            [format!("L1 needs `filter`, spec §14.2; {why}")]
        );
        assert_eq!(c.honesty(Some("L1")), Honesty::LevelNotVerified);
        assert_eq!(c.honesty(Some("L2")), Honesty::LevelNotVerified);
        // With no L2 feature advertised, L2 is disproved, L1 is not.
        let c = certify(&findings, &[]);
        assert_eq!(c.not_verified, Some(Level::L1));
        assert_eq!(c.honesty(Some("L2")), Honesty::Overclaimed);
        assert_eq!(c.honesty(Some("L0")), Honesty::Consistent);
        assert!(Honesty::LevelNotVerified.honest());
        assert_eq!(Honesty::LevelNotVerified.compared(), None);

        // One item failing as well: L1 is missing, not merely unverified.
        set(&mut findings, &l1::CITATIONS, Outcome::Fail, "no citation");
        let c = certify(&findings, &all);
        assert_eq!((c.level, c.not_verified), (Level::L0, None));
        assert_eq!(c.honesty(Some("L1")), Honesty::Overclaimed);
    }

    #[test]
    fn honesty_compares_declared_and_certified() {
        assert_eq!(Honesty::judge(Some("L2"), Level::L1), Honesty::Overclaimed);
        assert_eq!(Honesty::judge(Some("L1"), Level::L2), Honesty::Consistent);
        assert_eq!(
            Honesty::judge(Some("L0"), Level::None),
            Honesty::Overclaimed
        );
        assert_eq!(Honesty::judge(Some("l2"), Level::L2), Honesty::Invalid);
        assert_eq!(Honesty::judge(None, Level::L0), Honesty::Undeclared);
        // `honest` claims only what a valid declaration was compared for.
        assert_eq!(Honesty::Overclaimed.compared(), Some(false));
        assert_eq!(Honesty::Consistent.compared(), Some(true));
        for nothing_compared in [Honesty::Invalid, Honesty::Undeclared, Honesty::Unverified] {
            assert_eq!(nothing_compared.compared(), None);
        }
        assert_eq!(
            summary(Level::L1, Some("L2"), Honesty::Overclaimed, 2),
            "L1 · OVERCLAIMED (declared L2) · 2 spec violations"
        );
        assert_eq!(
            summary(Level::L2, Some("L2"), Honesty::Consistent, 1),
            "L2 · 1 spec violation"
        );
    }
}
