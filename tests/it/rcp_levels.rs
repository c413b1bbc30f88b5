//! The RCP `spec` profile end to end over real HTTP on loopback: the correct
//! reference server certifies L2 with a consistent declaration; each fault
//! switch breaks exactly its rule, and the certified level drops as decision 9
//! says (an L0 fault to none, L1 to L0, L2 to L1, a rule outside the levels
//! not at all, only counted); a correct server that offers less certifies
//! less and the verdict names what the next level needs.

use crate::common;

use common::suite::{dump, loopback, rcp_at, run};
use protocheck::reference::rcp::{RcpReferenceConfig, RcpVariants};
use protocheck::suite::runner::{Endpoint, EngineError};
use protocheck::suite::{
    Finding, Outcome, Rule, RunOptions, SuiteChoice, Verdict, VerdictDetail, rcp,
};
use url::Url;

async fn start(config: RcpReferenceConfig) -> Url {
    rcp_at(config).await
}

async fn check(url: &Url, options: RunOptions) -> (Result<Verdict, EngineError>, Vec<Finding>) {
    run(
        SuiteChoice::Rcp,
        &Endpoint::Http(url.clone()),
        &loopback(options),
    )
    .await
}

fn writes() -> RunOptions {
    RunOptions {
        allow_writes: Some(true),
        ..RunOptions::default()
    }
}

fn outcome(findings: &[Finding], id: &str) -> Outcome {
    let matching: Vec<&Finding> = findings.iter().filter(|f| f.rule_id == id).collect();
    assert_eq!(
        matching.len(),
        1,
        "{id} must be reported once:\n{}",
        dump(findings)
    );
    matching[0].outcome
}

struct Rcp<'a> {
    certified: &'a str,
    declared: Option<&'a str>,
    honest: Option<bool>,
    honesty: &'a str,
    missing: &'a [String],
    violations: u32,
}

fn rcp(verdict: &Verdict) -> Rcp<'_> {
    match &verdict.detail {
        VerdictDetail::Rcp {
            certified_level,
            declared_level,
            honest,
            report,
            ..
        } => Rcp {
            certified: certified_level,
            declared: declared_level.as_deref(),
            honest: *honest,
            honesty: &report.honesty,
            missing: &report.missing_for_next,
            violations: report.violations_outside_levels,
        },
        other => panic!("not an RCP verdict: {other:?}"),
    }
}

/// Rules that apply to stdio only; over HTTP they are skipped.
const STDIO_ONLY: [&str; 1] = ["RCP-OUT-002"];

#[tokio::test]
async fn the_correct_reference_server_certifies_l2_and_declares_it() {
    let url = start(RcpReferenceConfig::default()).await;
    let (verdict, findings) = check(&url, writes()).await;
    let verdict = verdict.expect("verdict");
    let report = dump(&findings);
    for rule in rcp::rules() {
        let expected = if STDIO_ONLY.contains(&rule.id) {
            Outcome::Skip
        } else {
            Outcome::Pass
        };
        assert_eq!(
            outcome(&findings, rule.id),
            expected,
            "{}:\n{report}",
            rule.id
        );
    }
    assert_eq!(findings.len(), rcp::rules().len());
    let v = rcp(&verdict);
    assert_eq!(
        (v.certified, v.declared, v.honest, v.honesty),
        ("L2", Some("L2"), Some(true), "consistent")
    );
    assert!(v.missing.is_empty());
    assert_eq!(v.violations, 0);
    assert!(verdict.passed);
    assert_eq!(verdict.summary, "L2");
    let VerdictDetail::Rcp { report, .. } = &verdict.detail else {
        unreachable!()
    };
    let levels = &report.levels;
    // RCP-L0-014, the declaration, is judged outside the levels (§14's preamble).
    assert_eq!(levels["L0"].pass, 30);
    assert_eq!(levels["L1"].pass, 9);
    assert_eq!(levels["L2"].pass, 11);
    assert_eq!((levels["outside"].pass, levels["outside"].skip), (8, 1));
}

#[tokio::test]
async fn writes_are_off_unless_the_run_allows_them() {
    let url = start(RcpReferenceConfig::default()).await;
    let (verdict, findings) = check(&url, RunOptions::default()).await;
    let verdict = verdict.expect("verdict");
    for id in ["RCP-OUT-007", "RCP-OUT-008"] {
        let f = findings.iter().find(|f| f.rule_id == id).expect("finding");
        assert_eq!(f.outcome, Outcome::Skip);
        assert!(f.message.contains("`allow_writes` is off"), "{}", f.message);
    }
    assert_eq!(
        rcp(&verdict).certified,
        "L2",
        "writes are outside the levels"
    );
    assert!(verdict.passed);
}

/// The level a fault of a rule in `group` leaves certified.
fn level_under_fault(rule: &Rule) -> &'static str {
    // Already initialized at start, and this run has no history of a
    // handshake: no level (decision 3 as narrowed).
    if rule.id == rcp::l0::PER_SESSION_INIT.id {
        return "none";
    }
    match (rule.group, rule.on_failure) {
        ("L0", Outcome::Fail) => "none",
        ("L1", _) => "L0",
        ("L2", _) => "L1",
        _ => "L2",
    }
}

#[tokio::test]
async fn every_rule_fails_under_its_fault_and_the_level_drops_as_the_rules_say() {
    let honesty = rcp::DECLARATION_HONEST.id;
    let mut servers = Vec::new();
    for rule in rcp::rules() {
        if rule.id == honesty || STDIO_ONLY.contains(&rule.id) {
            continue;
        }
        let config =
            RcpReferenceConfig::new([rule.id]).unwrap_or_else(|e| panic!("{}: {e}", rule.id));
        servers.push((rule, start(config).await));
    }
    let runs = servers
        .iter()
        .map(|(rule, url)| async move { (*rule, check(url, writes()).await) });
    for (rule, (verdict, findings)) in futures::future::join_all(runs).await {
        let verdict = verdict.unwrap_or_else(|e| panic!("{}: no verdict: {e}", rule.id));
        let report = dump(&findings);
        let broken = findings
            .iter()
            .find(|f| f.rule_id == rule.id)
            .unwrap_or_else(|| panic!("{} not reported under its fault:\n{report}", rule.id));
        assert_eq!(
            broken.outcome, rule.on_failure,
            "{} under its fault:\n{report}",
            rule.id
        );
        assert!(
            !broken.evidence.is_empty(),
            "{} failed without evidence:\n{report}",
            rule.id
        );
        for f in &findings {
            if f.rule_id != rule.id && f.rule_id != honesty {
                assert_ne!(
                    f.outcome,
                    Outcome::Fail,
                    "fault {} also failed {}:\n{report}",
                    rule.id,
                    f.rule_id
                );
            }
        }
        let v = rcp(&verdict);
        let level = level_under_fault(rule);
        assert_eq!(v.certified, level, "{}:\n{report}", rule.id);
        // §14.5: a failed MUST outside the levels keeps the level and
        // fails the run; a SHOULD outside them only counts.
        let outside_must = rule.group == "outside" && rule.on_failure == Outcome::Fail;
        if rule.group == "outside" {
            assert_eq!(v.violations, 1, "{}", rule.id);
            assert_eq!(
                verdict.passed, !outside_must,
                "{}: only a failed MUST outside the levels fails the run",
                rule.id
            );
            assert_eq!(verdict.summary, "L2 · 1 spec violation", "{}", rule.id);
            if outside_must {
                let cert = findings
                    .iter()
                    .find(|f| f.rule_id == honesty)
                    .unwrap_or_else(|| panic!("{}: no {honesty}", rule.id));
                assert!(
                    cert.message.contains(rule.id) && cert.message.contains("§14.5"),
                    "{}: {honesty} names the MUST and the rule: {}",
                    rule.id,
                    cert.message
                );
            }
        } else {
            assert_eq!(v.violations, 0, "{}:\n{report}", rule.id);
        }
        // The declaration (L2) is above any lower level: OVERCLAIMED, and the
        // run fails; a missing declaration is not an overclaim but fails L0.
        let expected_honesty = match (rule.id, level) {
            ("RCP-L0-014" | "RCP-L0-027", _) => Outcome::Skip,
            (_, "L2") => Outcome::Pass,
            _ => Outcome::Fail,
        };
        assert_eq!(
            outcome(&findings, honesty),
            expected_honesty,
            "{}:\n{report}",
            rule.id
        );
        assert_eq!(
            verdict.passed,
            level != "none" && expected_honesty != Outcome::Fail && !outside_must,
            "{}",
            rule.id
        );
        if level != "L2" {
            assert!(
                !v.missing.is_empty(),
                "{}: the next level's needs are named",
                rule.id
            );
        }
    }
}

#[tokio::test]
async fn an_l0_server_without_filter_is_named_what_l1_needs_and_overclaims_l2() {
    let config = RcpReferenceConfig {
        withheld: ["filter".to_owned()].into(),
        ..RcpReferenceConfig::default()
    };
    let url = start(config).await;
    let (verdict, findings) = check(&url, RunOptions::default()).await;
    let verdict = verdict.expect("verdict");
    for id in ["RCP-L1-004", "RCP-L1-005"] {
        let f = findings.iter().find(|f| f.rule_id == id).expect("finding");
        assert_eq!(f.outcome, Outcome::Skip);
        assert_eq!(
            f.message,
            "L1 needs `filter` (spec §14.2); `filter` is not advertised"
        );
    }
    let v = rcp(&verdict);
    assert_eq!((v.certified, v.honesty), ("L0", "OVERCLAIMED"));
    assert_eq!(v.missing, ["L1 needs `filter`, spec §14.2; not advertised"]);
    assert_eq!(verdict.summary, "L0 · OVERCLAIMED (declared L2)");
    assert!(
        !verdict.passed,
        "an overclaim fails the run with no failed check"
    );
    let honesty = findings
        .iter()
        .find(|f| f.rule_id == "RCP-CERT-001")
        .expect("honesty");
    assert_eq!(honesty.outcome, Outcome::Fail);
    assert!(
        honesty
            .message
            .contains("L1 needs `filter`, spec §14.2; not advertised"),
        "{}",
        honesty.message
    );
    assert!(
        findings
            .iter()
            .filter(|f| f.rule_id != "RCP-CERT-001")
            .all(|f| f.outcome != Outcome::Fail),
        "{}",
        dump(&findings)
    );
}

/// Every L2 feature of the reference server, to withhold.
const L2_FEATURES: [&str; 10] = [
    "rerank",
    "multiVector",
    "sparseEmbed",
    "transform",
    "graph",
    "streaming",
    "pagination",
    "log",
    "retrieve.deterministic",
    "retrieve.snapshots",
];

#[tokio::test]
async fn l2_needs_an_advertised_feature_and_an_honest_l1_server_passes() {
    let config = RcpReferenceConfig {
        withheld: L2_FEATURES.iter().map(|s| s.to_string()).collect(),
        declared: Some("L1".to_owned()),
        ..RcpReferenceConfig::default()
    };
    let url = start(config).await;
    let (verdict, findings) = check(&url, RunOptions::default()).await;
    let verdict = verdict.expect("verdict");
    let v = rcp(&verdict);
    assert_eq!(
        (v.certified, v.declared, v.honesty),
        ("L1", Some("L1"), "consistent")
    );
    assert_eq!(v.missing.len(), 1);
    assert!(
        v.missing[0].starts_with("L2 needs at least one of `rerank`"),
        "{:?}",
        v.missing
    );
    assert!(
        v.missing[0].ends_with("none is advertised"),
        "{:?}",
        v.missing
    );
    assert!(verdict.passed, "{}", dump(&findings));
    for rule in rcp::l2::RULES {
        assert_eq!(outcome(&findings, rule.id), Outcome::Skip, "{}", rule.id);
    }
}

#[tokio::test]
async fn a_lower_declaration_than_certified_is_consistent() {
    let config = RcpReferenceConfig {
        declared: Some("L0".to_owned()),
        ..RcpReferenceConfig::default()
    };
    let url = start(config).await;
    let verdict = check(&url, RunOptions::default()).await.0.expect("verdict");
    let v = rcp(&verdict);
    assert_eq!(
        (v.certified, v.declared, v.honest),
        ("L2", Some("L0"), Some(true))
    );
    assert!(verdict.passed);

    // "l2" is not a level (comparison is case-sensitive): RCP-L0-014, a MUST
    // outside the levels (§14's preamble), fails, so the run fails with its
    // level kept, and there is no valid declaration to overclaim.
    let config = RcpReferenceConfig {
        declared: Some("l2".to_owned()),
        ..RcpReferenceConfig::default()
    };
    let url = start(config).await;
    let (verdict, findings) = check(&url, RunOptions::default()).await;
    let verdict = verdict.expect("verdict");
    let v = rcp(&verdict);
    assert_eq!((v.certified, v.honesty, v.honest), ("L2", "invalid", None));
    assert_eq!(outcome(&findings, "RCP-L0-014"), Outcome::Fail);
    assert_eq!(verdict.summary, "L2 · 1 spec violation");
    assert!(!verdict.passed);
}

#[tokio::test]
async fn the_verdict_serialises_the_level_report() {
    let url = start(RcpReferenceConfig::new(["RCP-L2-001"]).expect("fault")).await;
    let verdict = check(&url, RunOptions::default()).await.0.expect("verdict");
    let json = serde_json::to_value(&verdict).expect("json");
    assert_eq!(json["kind"], "rcp");
    assert_eq!(json["certified_level"], "L1");
    assert_eq!(json["declared_level"], "L2");
    assert_eq!(json["honesty"], "OVERCLAIMED");
    assert_eq!(json["honest"], false);
    assert_eq!(json["violations_outside_levels"], 0);
    assert_eq!(json["levels"]["L2"]["fail"], 1);
    assert_eq!(json["levels"]["L1"]["pass"], 9);
    let missing = json["missing_for_next"][0].as_str().expect("a line");
    assert!(
        missing.contains("`rerank` is advertised and RCP-L2-001 failed"),
        "{missing}"
    );
    // Stored verdicts from before these fields still read.
    let mut old = json.clone();
    for key in [
        "honesty",
        "missing_for_next",
        "violations_outside_levels",
        "levels",
    ] {
        old.as_object_mut().expect("object").remove(key);
    }
    old.as_object_mut()
        .expect("object")
        .remove("protocol_observed");
    let back: Verdict = serde_json::from_value(old.clone()).expect("an older verdict still parses");
    assert_eq!(back.summary, verdict.summary);
    // Before `honest` could be null it was always a boolean, and before
    // `protocol_observed` existed a verdict recorded the protocol anyway.
    for stored in [true, false] {
        old["honest"] = serde_json::Value::Bool(stored);
        let back: Verdict = serde_json::from_value(old.clone()).expect("a boolean `honest` reads");
        let VerdictDetail::Rcp { honest, .. } = &back.detail else {
            panic!("not RCP")
        };
        assert_eq!(*honest, Some(stored));
        assert!(back.detail.protocol_observed());
    }
    assert_eq!(json["protocol_observed"], true);
}

/// A reference server behaving in `variants` (ways the spec also allows).
fn variant(variants: &[&str]) -> RcpReferenceConfig {
    RcpReferenceConfig {
        variants: RcpVariants::parse(variants).expect("variants"),
        ..RcpReferenceConfig::default()
    }
}

/// No rule fails, the level is L2 and the run passes.
fn assert_l2(what: &str, verdict: &Verdict, findings: &[Finding]) {
    let report = dump(findings);
    let failed: Vec<&str> = findings
        .iter()
        .filter(|f| matches!(f.outcome, Outcome::Fail | Outcome::Warn))
        .map(|f| f.rule_id.as_str())
        .collect();
    assert!(failed.is_empty(), "{what}: {failed:?} failed:\n{report}");
    assert_eq!(rcp(verdict).certified, "L2", "{what}:\n{report}");
    assert!(verdict.passed, "{what}:\n{report}");
}

fn finding<'a>(findings: &'a [Finding], id: &str) -> &'a Finding {
    findings
        .iter()
        .find(|f| f.rule_id == id)
        .unwrap_or_else(|| panic!("{id} not reported:\n{}", dump(findings)))
}

/// A server behaving in `variants` (a way the spec allows, which the default
/// reference server does not take) passes `rule`, whose finding contains
/// `words`, and certifies L2 with no failed rule.
async fn another_reading_certifies_l2(variants: &[&str], rule: &str, words: &str) {
    let url = start(variant(variants)).await;
    let (verdict, findings) = check(&url, writes()).await;
    let what = variants.join(" ");
    let verdict = verdict.unwrap_or_else(|e| panic!("{what}: no verdict: {e}"));
    let f = finding(&findings, rule);
    assert_eq!(f.outcome, Outcome::Pass, "{what}: {rule}: {}", f.message);
    assert!(f.message.contains(words), "{what}: {rule}: {}", f.message);
    assert_l2(&what, &verdict, &findings);
}

/// §5.2: "zero or more `notifications/progress` frames".
#[tokio::test]
async fn an_event_stream_without_progress_frames_certifies_l2() {
    another_reading_certifies_l2(&["no-progress"], "RCP-L2-006", "0 progress frame").await;
}

/// §5.2: the server "MAY respond with `text/event-stream`".
#[tokio::test]
async fn a_buffered_reply_to_a_request_accepting_an_event_stream_certifies_l2() {
    another_reading_certifies_l2(&["buffered-streams"], "RCP-L2-006", "buffered").await;
}

/// §17.1: servers "SHOULD emit logs only when the client advertised the
/// `log` capability".
#[tokio::test]
async fn a_server_logging_only_to_clients_with_the_log_capability_certifies_l2() {
    another_reading_certifies_l2(&["log-needs-capability"], "RCP-L2-009", "notifications/log")
        .await;
}

/// §12's table says -32016 where §7.7.1 says -32010.
#[tokio::test]
async fn conflict_for_an_unavailable_snapshot_certifies_l2() {
    another_reading_certifies_l2(&["snapshot-conflict"], "RCP-L2-011", "-32016").await;
}

/// §12: -32015 NotFound, "A referenced entity does not exist", for a pinned
/// `indexVersion` the server never issued.
#[tokio::test]
async fn not_found_for_a_never_issued_snapshot_certifies_l2() {
    another_reading_certifies_l2(&["snapshot-not-found"], "RCP-L2-011", "-32015 (NotFound").await;
}

/// §10: a `nextCursor` may lead to an empty last page.
#[tokio::test]
async fn an_empty_last_page_certifies_l2() {
    another_reading_certifies_l2(&["empty-last-page"], "RCP-L2-008", "last page was empty").await;
}

/// §8: a server advertises its own operators; its hits show `meta.year`.
#[tokio::test]
async fn a_filter_with_only_ordered_operators_certifies_l2() {
    another_reading_certifies_l2(&["filter-operators=gt,gte,lt,lte"], "RCP-L1-004", "year").await;
}

/// §8 does not define an empty `in`, which the SDKs' validator refuses: it is
/// never probed, even when the hits show no metadata and `exists` is not
/// advertised. Without metadata no filter result can be checked, so L1 is
/// "not verified", which neither fails a rule nor calls the declaration an
/// overclaim.
#[tokio::test]
async fn a_server_refusing_an_empty_in_list_is_not_failed() {
    let variants = [
        "no-hit-meta",
        "reject-empty-set",
        "filter-operators=eq,ne,gt,gte,lt,lte,in,nin,contains",
    ];
    let url = start(variant(&variants)).await;
    let (verdict, findings) = check(&url, writes()).await;
    let verdict = verdict.expect("verdict");
    assert_l1_not_verified(&verdict, &findings);
    let f = finding(&findings, "RCP-L1-004");
    assert!(
        f.message.contains("no document can satisfy"),
        "{}",
        f.message
    );
    // With metadata, the same server certifies L2.
    another_reading_certifies_l2(&variants[1..], "RCP-L1-004", "`in` on").await;
}

/// A server whose hits carry no `meta` (§7.7 makes it optional): RCP-L1-004
/// is not verified, with what the server would need to return, so L1 is not
/// granted; no rule fails and the declared level is not judged.
fn assert_l1_not_verified(verdict: &Verdict, findings: &[Finding]) {
    let report = dump(findings);
    let f = finding(findings, "RCP-L1-004");
    assert_eq!(f.outcome, Outcome::Skip, "{}", f.message);
    assert!(
        f.message.starts_with("not verified:") && f.message.contains("must carry `meta`"),
        "{}",
        f.message
    );
    let failed: Vec<&str> = findings
        .iter()
        .filter(|f| matches!(f.outcome, Outcome::Fail | Outcome::Warn))
        .map(|f| f.rule_id.as_str())
        .collect();
    assert!(failed.is_empty(), "{failed:?} failed:\n{report}");
    let r = rcp(verdict);
    assert_eq!(r.certified, "L0", "{report}");
    assert_eq!(r.honesty, "not verified", "{report}");
    assert_eq!(r.honest, None);
    assert!(
        r.missing
            .iter()
            .any(|m| m.starts_with("L1 needs `filter`, spec §14.2; not verified:")),
        "{:?}",
        r.missing
    );
    assert!(
        verdict.summary.contains("L1 not verified"),
        "{}",
        verdict.summary
    );
    assert!(verdict.passed, "{report}");
}

/// No query returns more than maxK = 3 hits: pagination is still exercised,
/// with pages of fewer hits.
#[tokio::test]
async fn pagination_is_exercised_when_no_query_returns_more_than_three_hits() {
    another_reading_certifies_l2(&["max-k=3"], "RCP-L2-008", "pages of k = 2").await;
}

/// A spec contradiction is named in the finding, with the code the server used.
#[tokio::test]
async fn either_code_for_an_unavailable_snapshot_passes_and_the_finding_names_the_contradiction() {
    for (variants, code) in [(&[][..], "-32010"), (&["snapshot-conflict"][..], "-32016")] {
        let url = start(variant(variants)).await;
        let (verdict, findings) = check(&url, RunOptions::default()).await;
        let f = finding(&findings, "RCP-L2-011");
        assert_eq!(f.outcome, Outcome::Pass, "{}", f.message);
        assert!(f.message.contains(code), "{}", f.message);
        assert!(
            f.message.contains("§7.7.1") && f.message.contains("§12"),
            "{}",
            f.message
        );
        assert_l2(code, &verdict.expect("verdict"), &findings);
    }
}

/// The filter rule still fails a server that ignores filters, whichever
/// operators it advertises and whether or not its hits show metadata.
#[tokio::test]
async fn an_ignored_filter_fails_with_any_advertised_operators() {
    for variants in [
        &["filter-operators=gt,gte,lt,lte"][..],
        &["filter-operators=eq"][..],
        &["filter-operators=in,nin"][..],
        &[
            "no-hit-meta",
            "reject-empty-set",
            "filter-operators=eq,ne,gt,gte,lt,lte,in,nin,contains",
        ][..],
        &["no-hit-meta", "filter-operators=gt,lt"][..],
    ] {
        let mut config = variant(variants);
        config.faults = ["RCP-L1-004".to_owned()].into();
        let url = start(config).await;
        let (verdict, findings) = check(&url, RunOptions::default()).await;
        let f = finding(&findings, "RCP-L1-004");
        assert_eq!(f.outcome, Outcome::Fail, "{variants:?}: {}", f.message);
        assert!(!f.evidence.is_empty());
        assert_eq!(rcp(&verdict.expect("verdict")).certified, "L0");
        // Without the fault, the same server reaches L2, or, when its hits
        // carry no metadata, L1 is not verified.
        let url = start(variant(variants)).await;
        let (verdict, findings) = check(&url, RunOptions::default()).await;
        if variants.contains(&"no-hit-meta") {
            assert_l1_not_verified(&verdict.expect("verdict"), &findings);
        } else {
            assert_l2(&variants.join(" "), &verdict.expect("verdict"), &findings);
        }
    }
}

/// A feature protocheck cannot exercise is said to be "advertised, not
/// exercised", with what would exercise it, and the verdict lists it.
#[tokio::test]
async fn advertised_features_that_could_not_be_exercised_are_listed_in_the_verdict() {
    let without_streaming = RcpReferenceConfig {
        withheld: ["streaming".to_owned()].into(),
        ..RcpReferenceConfig::default()
    };
    for config in [without_streaming, variant(&["buffered-streams"])] {
        let url = start(config).await;
        let (verdict, findings) = check(&url, RunOptions::default()).await;
        let verdict = verdict.expect("verdict");
        let log = finding(&findings, "RCP-L2-009");
        assert_eq!(log.outcome, Outcome::Skip, "{}", log.message);
        assert!(
            log.message.starts_with("advertised, not exercised:"),
            "{}",
            log.message
        );
        assert!(log.message.contains("would exercise it"), "{}", log.message);
        assert_l2("log not exercised", &verdict, &findings);
        let json = serde_json::to_value(&verdict).expect("json");
        let listed = json["not_exercised"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(listed.len(), 1, "{json}");
        let line = listed[0].as_str().unwrap_or_default();
        assert!(
            line.starts_with("`log`: advertised, not exercised"),
            "{line}"
        );
        assert_eq!(verdict.summary, "L2 · not exercised: `log`");
        let honesty = finding(&findings, rcp::DECLARATION_HONEST.id);
        assert!(
            honesty.message.contains("advertised, not exercised"),
            "{}",
            honesty.message
        );
    }
}

/// Over stdio, a server that logs only to clients with the `log` capability
/// and one that sends no progress frame both certify L2.
#[tokio::test]
async fn stdio_servers_that_log_only_with_the_capability_or_send_no_progress_certify_l2() {
    for variants in ["log-needs-capability", "no-progress"] {
        let command = format!(
            "'{}' reference rcp --stdio --variant {variants}",
            env!("CARGO_BIN_EXE_protocheck")
        );
        let (verdict, findings) = run(
            SuiteChoice::Rcp,
            &Endpoint::Stdio(command),
            &loopback(RunOptions::default()),
        )
        .await;
        let verdict = verdict.unwrap_or_else(|e| panic!("{variants}: no verdict: {e}"));
        for id in ["RCP-L2-006", "RCP-L2-009"] {
            assert_eq!(
                finding(&findings, id).outcome,
                Outcome::Pass,
                "{variants}:\n{}",
                dump(&findings)
            );
        }
        assert_l2(variants, &verdict, &findings);
    }
}

/// The rules that accept another reading still fail a broken server that
/// takes it: a frame after the final response of a stream without progress,
/// empty pages that keep handing out cursors, a log level outside §17.1 for
/// a client with the `log` capability, a snapshot served instead of -32016.
#[tokio::test]
async fn faults_fail_their_rule_under_each_other_reading() {
    let cases: [(&[&str], &str, &str); 5] = [
        (
            &["no-progress"],
            "RCP-L2-006",
            "followed the final response",
        ),
        (
            &["empty-last-page"],
            "RCP-L2-008",
            "yet hands out another `nextCursor`",
        ),
        (&["log-needs-capability"], "RCP-L2-009", "verbose"),
        (&["snapshot-conflict"], "RCP-L2-011", "never silently serve"),
        (&["max-k=3"], "RCP-L2-008", "repeats hits"),
    ];
    for (variants, rule, words) in cases {
        let mut config = variant(variants);
        config.faults = [rule.to_owned()].into();
        let url = start(config).await;
        let (verdict, findings) = check(&url, RunOptions::default()).await;
        let report = dump(&findings);
        let f = finding(&findings, rule);
        assert_eq!(f.outcome, Outcome::Fail, "{variants:?}: {report}");
        assert!(f.message.contains(words), "{variants:?}: {}", f.message);
        assert!(!f.evidence.is_empty());
        let failed: Vec<&str> = findings
            .iter()
            .filter(|f| f.outcome == Outcome::Fail && f.rule_id != rcp::DECLARATION_HONEST.id)
            .map(|f| f.rule_id.as_str())
            .collect();
        assert_eq!(failed, [rule], "{variants:?}:\n{report}");
        assert_eq!(rcp(&verdict.expect("verdict")).certified, "L1");
    }
}

/// A session initialized before the run (decision 3) never saw protocheck's
/// `log` capability: a server that logs only to clients advertising it is
/// "advertised, not exercised", not failed.
#[tokio::test]
async fn logs_are_not_exercised_on_a_session_initialized_before_the_run() {
    let mut config = variant(&["log-needs-capability"]);
    config.faults = [rcp::l0::PER_SESSION_INIT.id.to_owned()].into();
    let url = start(config).await;
    let (verdict, findings) = check(&url, RunOptions::default()).await;
    let log = finding(&findings, "RCP-L2-009");
    assert_eq!(log.outcome, Outcome::Skip, "{}", log.message);
    assert!(
        log.message
            .starts_with("advertised, not exercised: no `notifications/log` arrived"),
        "{}",
        log.message
    );
    let json = serde_json::to_value(verdict.expect("verdict")).expect("json");
    assert_eq!(
        json["not_exercised"].as_array().map(Vec::len),
        Some(1),
        "{json}"
    );
}
