//! Era routing: `suite: auto` and `suite: mcp` send a server to the suite of
//! the newest MCP revision it speaks (or the one the run asks for), over
//! Streamable HTTP and stdio, and tell MCP from RCP on a child process; with
//! `mcp_revision: all` a run judges a server on every revision it speaks and
//! its verdict has a part per revision.

use crate::common;
use crate::common::suite::{dump, loopback, run};
use protocheck::reference::mcp::{McpReferenceConfig, ReferenceEra, serve_mcp_reference};
use protocheck::reference::mcp2025::{Mcp25ReferenceConfig, serve_mcp25_reference};
use protocheck::store::{Inserted, NewRun, RunEnd};
use protocheck::suite::runner::Endpoint;
use protocheck::suite::{
    Counts, Finding, McpRevision, RunOptions, SuiteChoice, SuiteId, Verdict, VerdictDetail,
};
use std::collections::BTreeSet;
use url::Url;
use uuid::Uuid;

async fn mcp2025_at() -> Url {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        let _ = serve_mcp25_reference(listener, Mcp25ReferenceConfig::new()).await;
    });
    Url::parse(&format!("http://{addr}/mcp")).expect("url")
}

async fn mcp2026_at(era: ReferenceEra) -> Url {
    mcp2026_broken_at(era, &[]).await
}

/// The 2026-07-28 reference playing `era`, with the rules `faults` broken.
async fn mcp2026_broken_at(era: ReferenceEra, faults: &[&str]) -> Url {
    let faults = faults.iter().map(|f| (*f).to_owned()).collect();
    let config = McpReferenceConfig::new(faults)
        .expect("known faults")
        .with_era(era);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        let _ = serve_mcp_reference(listener, config).await;
    });
    Url::parse(&format!("http://{addr}/mcp")).expect("url")
}

fn reference_stdio(args: &str) -> Endpoint {
    Endpoint::Stdio(format!(
        "{} reference {args} --stdio",
        env!("CARGO_BIN_EXE_protocheck")
    ))
}

/// The suite and revision that judged a run, and its grade or level.
async fn judged(
    choice: SuiteChoice,
    endpoint: &Endpoint,
    revision: Option<McpRevision>,
) -> (SuiteId, String, String) {
    let ctx = loopback(RunOptions {
        mcp_revision: revision,
        ..RunOptions::default()
    });
    let (verdict, findings) = run(choice, endpoint, &ctx).await;
    let verdict: Verdict =
        verdict.unwrap_or_else(|e| panic!("{endpoint}: no verdict: {e}\n{}", dump(&findings)));
    let outcome = match &verdict.detail {
        VerdictDetail::Mcp { grade, .. } => grade.clone(),
        VerdictDetail::Rcp {
            certified_level, ..
        } => certified_level.clone(),
    };
    (verdict.suite, verdict.spec_revision, outcome)
}

#[tokio::test]
async fn a_2025_11_25_server_is_judged_on_2025_11_25_by_auto_and_by_mcp() {
    let endpoint = Endpoint::Http(mcp2025_at().await);
    for choice in [SuiteChoice::Auto, SuiteChoice::Mcp] {
        let (suite, revision, grade) = judged(choice, &endpoint, None).await;
        assert_eq!(suite, SuiteId::Mcp, "{choice:?}");
        assert_eq!(revision, "2025-11-25", "{choice:?}");
        assert_eq!(grade, "strict", "{choice:?}");
    }
}

#[tokio::test]
async fn a_2026_07_28_or_dual_era_server_is_judged_on_its_newest_revision() {
    for era in [ReferenceEra::Modern, ReferenceEra::DualEra] {
        let endpoint = Endpoint::Http(mcp2026_at(era).await);
        for choice in [SuiteChoice::Auto, SuiteChoice::Mcp] {
            let (suite, revision, _) = judged(choice, &endpoint, None).await;
            assert_eq!(suite, SuiteId::Mcp, "{era:?} {choice:?}");
            assert_eq!(revision, "2026-07-28", "{era:?} {choice:?}");
        }
    }
}

#[tokio::test]
async fn a_dual_era_server_can_be_judged_on_the_older_revision_when_asked() {
    let endpoint = Endpoint::Http(mcp2026_at(ReferenceEra::DualEra).await);
    let (_, revision, _) =
        judged(SuiteChoice::Mcp, &endpoint, Some(McpRevision::V2025_11_25)).await;
    assert_eq!(revision, "2025-11-25");
}

#[tokio::test]
async fn a_legacy_only_server_is_no_longer_judged_on_rules_that_do_not_apply() {
    // The 2026-07-28 reference playing a 2025-11-25-only server: `mcp` used to
    // answer it with "the 2026-07-28 rules do not apply"; now the 2025-11-25
    // suite judges it.
    let endpoint = Endpoint::Http(mcp2026_at(ReferenceEra::LegacyOnly).await);
    let (suite, revision, _) = judged(SuiteChoice::Mcp, &endpoint, None).await;
    assert_eq!(suite, SuiteId::Mcp);
    assert_eq!(revision, "2025-11-25");
}

#[tokio::test]
async fn over_stdio_auto_tells_mcp_from_rcp() {
    let mcp = reference_stdio("mcp --revision 2025-11-25");
    let (suite, revision, grade) = judged(SuiteChoice::Auto, &mcp, None).await;
    assert_eq!(
        (suite, revision.as_str(), grade.as_str()),
        (SuiteId::Mcp, "2025-11-25", "strict")
    );
    let rcp = reference_stdio("rcp");
    let (suite, _, _) = judged(SuiteChoice::Auto, &rcp, None).await;
    assert_eq!(suite, SuiteId::Rcp);
}

#[tokio::test]
async fn over_stdio_a_2025_11_25_server_asked_for_2026_07_28_is_told_why_those_rules_do_not_apply()
{
    let endpoint = reference_stdio("mcp --revision 2025-11-25");
    let ctx = loopback(RunOptions {
        mcp_revision: Some(McpRevision::V2026_07_28),
        ..RunOptions::default()
    });
    let (verdict, findings) = run(SuiteChoice::Mcp, &endpoint, &ctx).await;
    let verdict = verdict.unwrap_or_else(|e| panic!("no verdict: {e}\n{}", dump(&findings)));
    assert_eq!(
        (verdict.suite, verdict.spec_revision.as_str()),
        (SuiteId::Mcp, "2026-07-28")
    );
    assert!(
        verdict.summary.contains("2025-11-25"),
        "{}",
        verdict.summary
    );
}

#[test]
fn revisions_read_and_write_as_their_names() {
    for (name, revision) in [
        ("newest", McpRevision::Newest),
        ("2026-07-28", McpRevision::V2026_07_28),
        ("2025-11-25", McpRevision::V2025_11_25),
        ("all", McpRevision::All),
    ] {
        assert_eq!(McpRevision::parse(name), Some(revision));
        assert_eq!(
            serde_json::to_value(revision).expect("serialise"),
            serde_json::json!(name)
        );
    }
    assert_eq!(McpRevision::parse("2024-11-05"), None);
    let refused =
        serde_json::from_value::<RunOptions>(serde_json::json!({"mcp_revision": "latest"}));
    assert!(refused.is_err());
}

/// A run with `mcp_revision: all`: its verdict, or a panic with its findings.
async fn judged_on_all(choice: SuiteChoice, endpoint: &Endpoint) -> (Verdict, Vec<Finding>) {
    let ctx = loopback(RunOptions {
        mcp_revision: Some(McpRevision::All),
        ..RunOptions::default()
    });
    let (verdict, findings) = run(choice, endpoint, &ctx).await;
    match verdict {
        Ok(v) => (v, findings),
        Err(e) => panic!("{endpoint}: no verdict: {e}\n{}", dump(&findings)),
    }
}

/// The revision a finding's rule belongs to.
fn revision_of(f: &Finding) -> &'static str {
    if f.rule_id.starts_with("MCP25-") {
        "2025-11-25"
    } else {
        assert!(f.rule_id.starts_with("MCP-"), "{}", f.rule_id);
        "2026-07-28"
    }
}

/// What every verdict of several revisions must be: each part counts the
/// findings of its own suite, and the whole combines the parts faithfully.
fn assert_combines(verdict: &Verdict, findings: &[Finding]) {
    let parts = verdict.revisions();
    let mut sum = Counts::default();
    for part in parts {
        let own: Vec<&Finding> = findings
            .iter()
            .filter(|f| revision_of(f) == part.spec_revision)
            .collect();
        assert!(!own.is_empty(), "{}: no findings", part.spec_revision);
        assert_eq!(
            part.counts,
            Counts::of(own.iter().copied()),
            "{}",
            part.spec_revision
        );
        assert_eq!(part.passed, part.counts.fail == 0, "{}", part.spec_revision);
        assert!(
            verdict
                .summary
                .contains(&format!("{} {}", part.spec_revision, part.summary)),
            "{}",
            verdict.summary
        );
        sum.pass += part.counts.pass;
        sum.fail += part.counts.fail;
        sum.warn += part.counts.warn;
        sum.info += part.counts.info;
        sum.skip += part.counts.skip;
    }
    assert_eq!(verdict.counts, sum);
    assert_eq!(verdict.counts, Counts::of(findings));
    assert_eq!(verdict.passed, parts.iter().all(|p| p.passed));
    let names: Vec<&str> = parts.iter().map(|p| p.spec_revision.as_str()).collect();
    assert_eq!(verdict.spec_revision, names.join(", "));
    let lowest = ["non-compliant", "compliant", "strict"]
        .into_iter()
        .find(|g| parts.iter().any(|p| p.grade == *g));
    assert_eq!(verdict.mcp_grade(), lowest);
}

#[tokio::test]
async fn a_dual_era_server_judged_on_all_gets_a_verdict_per_revision() {
    let endpoint = Endpoint::Http(mcp2026_at(ReferenceEra::DualEra).await);
    for choice in [SuiteChoice::Mcp, SuiteChoice::Auto] {
        let (verdict, findings) = judged_on_all(choice, &endpoint).await;
        let parts: Vec<&str> = verdict
            .revisions()
            .iter()
            .map(|r| r.spec_revision.as_str())
            .collect();
        assert_eq!(parts, ["2026-07-28", "2025-11-25"], "{choice:?}");
        assert_eq!(verdict.suite, SuiteId::Mcp);
        assert_eq!(verdict.spec_revision, "2026-07-28, 2025-11-25");
        assert!(
            matches!(&verdict.detail, VerdictDetail::Mcp { not_judged, .. } if not_judged.is_empty()),
            "{:?}",
            verdict.detail
        );
        assert_combines(&verdict, &findings);
        // Each suite ran whole: its own catalogue, every rule once.
        let of = |revision: &str| {
            findings
                .iter()
                .filter(|f| revision_of(f) == revision)
                .map(|f| f.rule_id.as_str())
                .collect::<BTreeSet<_>>()
                .len()
        };
        assert_eq!(of("2026-07-28"), protocheck::suite::mcp::rules().len());
        assert_eq!(of("2025-11-25"), protocheck::suite::mcp2025::rules().len());
        // The newest part alone is what `newest` gives the same server.
        let ctx = loopback(RunOptions::default());
        let (newest, _) = run(choice, &endpoint, &ctx).await;
        let newest = newest.expect("a verdict");
        let first = &verdict.revisions()[0];
        assert_eq!(
            (first.grade.as_str(), first.counts, &first.summary),
            (
                newest.mcp_grade().expect("an MCP grade"),
                newest.counts,
                &newest.summary
            )
        );
    }
}

#[tokio::test]
async fn a_server_of_one_revision_judged_on_all_is_judged_on_it_and_told_the_other_was_not_spoken()
{
    let older = Endpoint::Http(mcp2025_at().await);
    let newer = Endpoint::Http(mcp2026_at(ReferenceEra::Modern).await);
    for (endpoint, spoken, silent) in [
        (&older, "2025-11-25", "2026-07-28"),
        (&newer, "2026-07-28", "2025-11-25"),
    ] {
        for choice in [SuiteChoice::Mcp, SuiteChoice::Auto] {
            let (verdict, findings) = judged_on_all(choice, endpoint).await;
            let VerdictDetail::Mcp {
                revisions,
                not_judged,
                ..
            } = &verdict.detail
            else {
                panic!("{spoken} {choice:?}: {:?}", verdict.detail);
            };
            assert_eq!(revisions.len(), 1, "{spoken} {choice:?}");
            assert_eq!(revisions[0].spec_revision, spoken);
            assert_eq!(not_judged, &[format!("{silent}: not spoken")]);
            assert_eq!(verdict.spec_revision, spoken);
            assert!(
                verdict.summary.ends_with(&format!("{silent}: not spoken")),
                "{}",
                verdict.summary
            );
            assert!(findings.iter().all(|f| revision_of(f) == spoken));
            assert_combines(&verdict, &findings);
        }
    }
    // The reference 2025-11-25 server is strict, so its one part passes.
    let (verdict, _) = judged_on_all(SuiteChoice::Mcp, &older).await;
    assert!(verdict.passed, "{}", verdict.summary);
    assert_eq!(verdict.mcp_grade(), Some("strict"));
}

#[tokio::test]
async fn a_failing_revision_fails_the_whole_run() {
    let endpoint = Endpoint::Http(mcp2026_broken_at(ReferenceEra::DualEra, &["MCP-HDR-001"]).await);
    let (verdict, findings) = judged_on_all(SuiteChoice::Mcp, &endpoint).await;
    assert_combines(&verdict, &findings);
    let parts = verdict.revisions();
    assert_eq!(parts.len(), 2, "{}", verdict.summary);
    assert_eq!(parts[0].spec_revision, "2026-07-28");
    assert!(!parts[0].passed, "{}", parts[0].summary);
    assert_eq!(parts[0].grade, "non-compliant");
    assert!(
        findings
            .iter()
            .any(|f| f.rule_id == "MCP-HDR-001" && f.outcome == protocheck::suite::Outcome::Fail),
        "{}",
        dump(&findings)
    );
    assert!(!verdict.passed);
    assert_eq!(verdict.mcp_grade(), Some("non-compliant"));
    assert!(
        verdict
            .summary
            .starts_with("non-compliant — 2026-07-28 non-compliant"),
        "{}",
        verdict.summary
    );
}

#[tokio::test]
async fn over_stdio_all_judges_the_revisions_the_child_speaks_that_stdio_has() {
    let endpoint = reference_stdio("mcp --revision 2025-11-25");
    for choice in [SuiteChoice::Mcp, SuiteChoice::Auto] {
        let (verdict, findings) = judged_on_all(choice, &endpoint).await;
        let VerdictDetail::Mcp {
            revisions,
            not_judged,
            ..
        } = &verdict.detail
        else {
            panic!("{choice:?}: {:?}", verdict.detail);
        };
        let names: Vec<&str> = revisions.iter().map(|r| r.spec_revision.as_str()).collect();
        assert_eq!(names, ["2025-11-25"], "{choice:?}");
        // 2026-07-28 is left out: not spoken, or not judged over stdio at all.
        let over_stdio = protocheck::suite::detect::STDIO_ROUTES
            .iter()
            .any(|r| r.mcp_revision() == Some(McpRevision::V2026_07_28));
        let why = if over_stdio {
            "not spoken"
        } else {
            "not judged over stdio"
        };
        assert_eq!(not_judged, &[format!("2026-07-28: {why}")], "{choice:?}");
        assert_combines(&verdict, &findings);
        assert!(verdict.passed, "{}\n{}", verdict.summary, dump(&findings));
    }
}

#[tokio::test]
async fn over_stdio_all_judges_a_2026_child_on_2026_07_28() {
    let endpoint = reference_stdio("mcp");
    let (verdict, findings) = judged_on_all(SuiteChoice::Mcp, &endpoint).await;
    let VerdictDetail::Mcp {
        revisions,
        not_judged,
        ..
    } = &verdict.detail
    else {
        panic!("{:?}", verdict.detail);
    };
    let names: Vec<&str> = revisions.iter().map(|r| r.spec_revision.as_str()).collect();
    assert_eq!(names, ["2026-07-28"]);
    assert_eq!(not_judged, &["2025-11-25: not spoken".to_owned()]);
    assert_combines(&verdict, &findings);
    assert!(verdict.passed, "{}\n{}", verdict.summary, dump(&findings));
}

#[tokio::test]
async fn a_verdict_of_several_revisions_is_stored_and_read_back_whole() {
    let endpoint = Endpoint::Http(mcp2026_at(ReferenceEra::DualEra).await);
    let (verdict, _) = judged_on_all(SuiteChoice::Mcp, &endpoint).await;
    assert_eq!(verdict.revisions().len(), 2);
    for db in common::all_backends().await {
        let store = db.store.as_ref();
        let url = "http://dual.example/mcp";
        let key = protocheck::target::target_key(url);
        store.upsert_target(&key, url, 1).await.expect("target");
        let new = NewRun {
            id: Uuid::now_v7(),
            target_id: key,
            suite: SuiteChoice::Mcp,
            options: RunOptions {
                mcp_revision: Some(McpRevision::All),
                ..RunOptions::default()
            },
            webhook_url: None,
            dedup_key: Uuid::new_v4().to_string(),
            max_attempts: 3,
            created_at_ms: protocheck::now_ms(),
        };
        let Ok(Inserted::New(queued)) = store.insert_run(&new).await else {
            panic!("{}: a new run", db.name());
        };
        let now = protocheck::now_ms();
        let claimed = store.claim_run("w", now, 60_000).await.expect("claim");
        assert_eq!(claimed.map(|r| r.id), Some(queued.id), "{}", db.name());
        let end = RunEnd::Verdict(verdict.clone());
        assert!(
            store
                .finish_run(queued.id, "w", &end, &verdict.suite_version, now + 1)
                .await
                .expect("finish")
        );
        let stored = store
            .get_run(queued.id)
            .await
            .expect("read")
            .expect("the run");
        assert_eq!(stored.verdict.as_ref(), Some(&verdict), "{}", db.name());
        assert_eq!(
            stored.options.mcp_revision,
            Some(McpRevision::All),
            "{}",
            db.name()
        );
        // The run's webhook announcement carries the parts too.
        let announced = protocheck::webhook::payload(&stored, None);
        assert_eq!(
            announced["verdict"]["grade"],
            verdict.mcp_grade().unwrap_or("?")
        );
        assert_eq!(
            announced["verdict"]["revisions"],
            serde_json::to_value(verdict.revisions()).expect("parts")
        );
        // Each revision's grade beside the combined one.
        for part in verdict.revisions() {
            assert_eq!(
                announced["verdict"]["grade_by_revision"][&part.spec_revision],
                part.grade.as_str()
            );
        }
    }
}

#[tokio::test]
async fn reports_of_a_run_of_several_revisions_name_each() {
    use protocheck::report::{Format, Report};
    let endpoint = Endpoint::Http(mcp2026_at(ReferenceEra::DualEra).await);
    let (verdict, findings) = judged_on_all(SuiteChoice::Mcp, &endpoint).await;
    let report = Report::from_check(&endpoint.to_string(), Ok(&verdict), &findings);
    let sarif: serde_json::Value =
        serde_json::from_str(&report.render(Format::Sarif)).expect("SARIF is JSON");
    let shown = &sarif["runs"][0]["properties"]["verdict"];
    assert_eq!(shown["spec_revision"], "2026-07-28, 2025-11-25");
    assert_eq!(
        shown["revisions"],
        serde_json::to_value(verdict.revisions()).expect("parts")
    );
    let junit = report.render(Format::Junit);
    for part in verdict.revisions() {
        assert!(
            junit.contains(&format!("name=\"verdict {}\"", part.spec_revision)),
            "{junit}"
        );
    }
}

#[test]
fn verdicts_of_one_revision_read_and_write_as_before() {
    // A verdict stored before a run could judge several revisions.
    let old = serde_json::json!({
        "suite": "mcp", "suite_version": "0.1.0", "spec_revision": "2025-11-25",
        "passed": true, "summary": "strict",
        "counts": {"pass": 3, "fail": 0, "warn": 0, "info": 0, "skip": 1},
        "kind": "mcp", "grade": "strict"
    });
    let read: Verdict = serde_json::from_value(old.clone()).expect("an old verdict reads");
    assert_eq!(read.detail, VerdictDetail::mcp("strict"));
    assert!(read.revisions().is_empty());
    assert_eq!(serde_json::to_value(&read).expect("writes"), old);

    // One of several: `kind` stays `mcp`, the parts ride beside the grade.
    let part = |revision: &str, grade: &str, fail: u32| Verdict {
        spec_revision: revision.into(),
        passed: fail == 0,
        summary: grade.into(),
        counts: Counts {
            fail,
            pass: 2,
            ..Counts::default()
        },
        detail: VerdictDetail::mcp(grade),
        ..read.clone()
    };
    let both = Verdict::of_revisions(
        vec![
            part("2026-07-28", "strict", 0),
            part("2025-11-25", "compliant", 0),
        ],
        Vec::new(),
    )
    .expect("two parts");
    assert!(both.passed);
    assert_eq!(both.mcp_grade(), Some("compliant"));
    // The lowest grade is never shown alone: each revision's is beside it.
    assert_eq!(
        both.summary,
        "compliant — 2026-07-28 strict · 2025-11-25 compliant"
    );
    assert_eq!(
        both.grades_by_revision().as_deref(),
        Some("2026-07-28 strict · 2025-11-25 compliant")
    );
    assert_eq!(both.counts.pass, 4);
    let json = serde_json::to_value(&both).expect("writes");
    assert_eq!(json["kind"], "mcp");
    assert_eq!(json["grade"], "compliant");
    assert_eq!(
        json["grade_by_revision"],
        serde_json::json!({"2026-07-28": "strict", "2025-11-25": "compliant"})
    );
    assert_eq!(json["revisions"][1]["spec_revision"], "2025-11-25");
    assert!(json.get("not_judged").is_none(), "{json}");
    let back: Verdict = serde_json::from_value(json).expect("reads");
    assert_eq!(back, both);

    let failing = Verdict::of_revisions(
        vec![
            part("2026-07-28", "strict", 0),
            part("2025-11-25", "non-compliant", 1),
        ],
        Vec::new(),
    )
    .expect("two parts");
    assert!(!failing.passed);
    assert_eq!(failing.mcp_grade(), Some("non-compliant"));
    assert_eq!(Verdict::of_revisions(Vec::new(), Vec::new()), None);
}

#[tokio::test]
async fn check_with_mcp_revision_all_prints_each_revision() {
    use crate::common::cli::{output, protocheck, show};
    let url = mcp2026_at(ReferenceEra::DualEra).await;
    let mut cmd = protocheck();
    cmd.args([
        "check",
        url.as_str(),
        "--suite",
        "mcp",
        "--mcp-revision",
        "all",
    ]);
    let out = output(cmd).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "a verdict: {}",
        show(&out)
    );
    for revision in ["2026-07-28", "2025-11-25"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(&format!("  MCP {revision}: "))),
            "{revision}: {}",
            show(&out)
        );
    }
    // The last line names the combined (lowest) grade and, beside it,
    // each revision's: never one grade alone.
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        ["non-compliant", "compliant", "strict"]
            .iter()
            .any(|g| last.starts_with(&format!("verdict: {g} — "))),
        "the last line is the verdict: {}",
        show(&out)
    );
    for revision in ["2026-07-28", "2025-11-25"] {
        assert!(
            last.contains(&format!(" {revision} ")),
            "{revision}: {last}"
        );
    }
    assert!(
        !stdout
            .lines()
            .skip_while(|l| !l.starts_with("verdict: "))
            .any(|l| l.starts_with("  MCP ")),
        "the revision lines come before the verdict: {}",
        show(&out)
    );
    assert!(stdout.contains("MCP25-"), "{}", show(&out));

    let mut cmd = protocheck();
    cmd.args(["check", url.as_str(), "--mcp-revision", "every"]);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`all`"), "{}", show(&out));
}

/// A server of `tests/interop/mcp/spec/variants.py` (written from the spec
/// text alone, Python standard library only) on a loopback port; stopped
/// when dropped.
struct SpecServer {
    child: std::process::Child,
    url: Url,
}

impl Drop for SpecServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the variant `name` and waits for its `PORT n` line.
async fn spec_variant(name: &str) -> SpecServer {
    use std::io::BufRead;
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/mcp/spec/variants.py");
    let name = name.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut child = std::process::Command::new("python3")
            .arg(&script)
            .arg(&name)
            .arg("0")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start python3 variants.py");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read PORT line");
        let port: u16 = line
            .trim()
            .strip_prefix("PORT ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("{name}: no `PORT n` line: {line:?}"));
        let url = Url::parse(&format!("http://127.0.0.1:{port}/mcp")).expect("url");
        SpecServer { child, url }
    })
    .await
    .expect("join")
}

#[tokio::test]
async fn a_dual_era_server_answering_with_event_streams_is_judged_on_its_newest_revision() {
    // `spec-dual-era-sse` answers `server/discover` (and every other request)
    // as an SSE stream; detection once read only JSON bodies and judged it on
    // 2025-11-25, the revision its `initialize` answer named.
    let server = spec_variant("dual-era-sse").await;
    let endpoint = Endpoint::Http(server.url.clone());
    for choice in [SuiteChoice::Auto, SuiteChoice::Mcp] {
        let (suite, revision, _) = judged(choice, &endpoint, None).await;
        assert_eq!(
            (suite, revision.as_str()),
            (SuiteId::Mcp, "2026-07-28"),
            "{choice:?}"
        );
    }
    let ctx = loopback(RunOptions {
        mcp_revision: Some(McpRevision::All),
        ..RunOptions::default()
    });
    let (verdict, findings) = run(SuiteChoice::Mcp, &endpoint, &ctx).await;
    let verdict = verdict.unwrap_or_else(|e| panic!("no verdict: {e}\n{}", dump(&findings)));
    let revisions: BTreeSet<&str> = findings.iter().map(revision_of).collect();
    assert_eq!(
        revisions,
        BTreeSet::from(["2026-07-28", "2025-11-25"]),
        "{}",
        verdict.summary
    );

    // `protocheck check URL`, with the default revision (`newest`).
    use crate::common::cli::{output, protocheck, show};
    let mut cmd = protocheck();
    cmd.args(["check", server.url.as_str(), "--format", "json"]);
    let out = output(cmd).await;
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", show(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(
        doc["verdict"]["spec_revision"],
        "2026-07-28",
        "{}",
        show(&out)
    );
}

#[tokio::test]
async fn the_cold_probe_is_the_first_request_of_a_run_that_asks_which_revision_is_spoken() {
    // A server that refuses every request until some client has called
    // `server/discover`, on any connection (the reference's MCP-STL-003
    // fault keeps one flag for its process). The question "which revision?"
    // is a `server/discover`: sent before the cold probe, it let the cold
    // probe through, and MCP-STL-003 passed saying "before any
    // server/discover".
    let cases = [
        (SuiteChoice::Mcp, None),
        (SuiteChoice::Auto, None),
        (SuiteChoice::Mcp, Some(McpRevision::All)),
        (SuiteChoice::Mcp, Some(McpRevision::V2026_07_28)),
    ];
    for (choice, revision) in cases {
        let url = mcp2026_broken_at(ReferenceEra::Modern, &["MCP-STL-003"]).await;
        let ctx = loopback(RunOptions {
            mcp_revision: revision,
            ..RunOptions::default()
        });
        let (verdict, findings) = run(choice, &Endpoint::Http(url), &ctx).await;
        verdict.unwrap_or_else(|e| panic!("no verdict: {e}\n{}", dump(&findings)));
        let cold = findings
            .iter()
            .find(|f| f.rule_id == "MCP-STL-003")
            .unwrap_or_else(|| panic!("{choice:?} {revision:?}: no MCP-STL-003"));
        assert_eq!(
            cold.outcome,
            protocheck::suite::Outcome::Fail,
            "{choice:?} {revision:?}: {}",
            cold.message
        );
        assert!(
            cold.message.contains("the first request of the run"),
            "{}",
            cold.message
        );
    }
    // The same server, correct, passes, and the finding says so.
    let url = mcp2026_at(ReferenceEra::Modern).await;
    let (verdict, findings) = run(
        SuiteChoice::Mcp,
        &Endpoint::Http(url),
        &loopback(RunOptions::default()),
    )
    .await;
    verdict.unwrap_or_else(|e| panic!("no verdict: {e}\n{}", dump(&findings)));
    let cold = findings
        .iter()
        .find(|f| f.rule_id == "MCP-STL-003")
        .expect("MCP-STL-003");
    assert_eq!(
        cold.outcome,
        protocheck::suite::Outcome::Pass,
        "{}",
        cold.message
    );
}
