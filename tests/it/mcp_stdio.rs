//! MCP 2026-07-28 over stdio: the suite against the reference server run as
//! a child process (`protocheck reference mcp --stdio`), on this machine
//! only. The correct server gets the grade it gets over HTTP, with the rules
//! that judge HTTP skipped for that reason; each rule that applies over stdio
//! fails on its fault switch and changes no other rule; `suite: auto` and
//! `suite: mcp` send a 2026-07-28 child to the 2026-07-28 suite and a
//! 2025-11-25 one to 2025-11-25.

use crate::common::cli::{output, protocheck, show};
use crate::common::suite::{dump, loopback, run};
use futures::StreamExt;
use protocheck::reference::mcp::{McpReferenceConfig, serve_mcp_reference};
use protocheck::suite::mcp;
use protocheck::suite::runner::Endpoint;
use protocheck::suite::{
    Finding, McpRevision, Outcome, RunOptions, SuiteChoice, Verdict, VerdictDetail,
};
use std::collections::{BTreeMap, BTreeSet};
use url::Url;

/// The rules that apply over stdio but whose fault the reference server
/// cannot play there, and why.
const NO_STDIO_FAULT: &[(&str, &str)] = &[
    (
        "MCP-REG-001",
        "the fault is in the server.json the reference serves over HTTP; over stdio the rule \
         judges the document given with the run, and the reference serves none",
    ),
    (
        "MCP-REG-002",
        "the fault is in the server.json the reference serves over HTTP",
    ),
    (
        "MCP-REG-003",
        "the fault is in the server.json the reference serves over HTTP",
    ),
];

fn reference_stdio(args: &str) -> Endpoint {
    Endpoint::Stdio(format!(
        "{} reference mcp {args}",
        env!("CARGO_BIN_EXE_protocheck")
    ))
}

fn faulty(faults: &[&str]) -> Endpoint {
    let breaks: Vec<String> = faults.iter().map(|f| format!("--break {f}")).collect();
    reference_stdio(&format!("--stdio {}", breaks.join(" ")))
}

async fn http_reference() -> Url {
    let config = McpReferenceConfig::new(BTreeSet::new()).expect("no faults");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move {
        let _ = serve_mcp_reference(listener, config).await;
    });
    Url::parse(&format!("http://{addr}/mcp")).expect("url")
}

/// A run of `choice` against `endpoint`, which must give a verdict.
async fn judged(
    choice: SuiteChoice,
    endpoint: &Endpoint,
    revision: Option<McpRevision>,
) -> (Verdict, Vec<Finding>) {
    let ctx = loopback(RunOptions {
        mcp_revision: revision,
        ..RunOptions::default()
    });
    let (verdict, findings) = run(choice, endpoint, &ctx).await;
    let verdict =
        verdict.unwrap_or_else(|e| panic!("{endpoint}: no verdict: {e}\n{}", dump(&findings)));
    (verdict, findings)
}

fn grade(verdict: &Verdict) -> &str {
    match &verdict.detail {
        VerdictDetail::Mcp { grade, .. } => grade,
        other => panic!("not an MCP verdict: {other:?}"),
    }
}

fn outcomes(findings: &[Finding]) -> BTreeMap<String, (Outcome, String)> {
    findings
        .iter()
        .map(|f| (f.rule_id.clone(), (f.outcome, f.message.clone())))
        .collect()
}

/// Over stdio, the `initialize` that DEP-006 and DEP-007 judge goes to a
/// process of its own when the run's process, opened with `server/discover`,
/// refused it: a dual-era server may bind its process to the era of its
/// first request (versioning, "Backward Compatibility": legacy semantics
/// are "scoped to the stdio process"), and a legacy client opens its own.
#[tokio::test]
async fn over_stdio_initialize_is_judged_in_a_process_of_its_own() {
    let revision = Some(McpRevision::V2026_07_28);
    // Written from the spec: each process serves the era its first request
    // chose, and refuses `initialize` once opened with a 2026-07-28 request.
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/interop/mcp/spec/stdio_dual.py"
    );
    let dual = Endpoint::Stdio(format!("python3 {script}"));
    let (verdict, findings) = judged(SuiteChoice::Mcp, &dual, revision).await;
    let found = outcomes(&findings);
    let (accepts, said) = &found["MCP-DEP-006"];
    assert_eq!(*accepts, Outcome::Pass, "{}", dump(&findings));
    assert!(said.contains("first line to a new process"), "{said}");
    assert!(said.contains("negotiating 2025-11-25"), "{said}");
    // What the run's own process answered is named too.
    assert!(said.contains("-32601"), "{said}");
    let (names, said) = &found["MCP-DEP-007"];
    assert_eq!(*names, Outcome::Skip, "{said}");
    assert!(said.contains("dual-era"), "{said}");
    assert_eq!(grade(&verdict), "strict", "{}", dump(&findings));

    // A modern-only server refuses it in a new process too: DEP-007 is
    // judged on that answer and quotes the versions the error lists, not
    // the version the request asked for.
    let (_, findings) = judged(SuiteChoice::Mcp, &reference_stdio("--stdio"), revision).await;
    let found = outcomes(&findings);
    let (accepts, said) = &found["MCP-DEP-006"];
    assert_eq!(*accepts, Outcome::Skip, "{said}");
    assert!(said.contains("first line to a new process"), "{said}");
    let (names, said) = &found["MCP-DEP-007"];
    assert_eq!(*names, Outcome::Pass, "{said}");
    assert!(
        said.contains("error.data.supported lists [\"2026-07-28\""),
        "{said}"
    );
}

#[tokio::test]
async fn the_correct_reference_gets_the_same_grade_over_stdio_as_over_http() {
    let revision = Some(McpRevision::V2026_07_28);
    let http = Endpoint::Http(http_reference().await);
    let (over_http, _) = judged(SuiteChoice::Mcp, &http, revision).await;
    let (over_stdio, findings) =
        judged(SuiteChoice::Mcp, &reference_stdio("--stdio"), revision).await;
    assert_eq!(over_stdio.spec_revision, "2026-07-28");
    assert_eq!(grade(&over_stdio), grade(&over_http), "{}", dump(&findings));
    assert_eq!(grade(&over_stdio), "strict", "{}", dump(&findings));
    let ids: BTreeSet<&str> = findings.iter().map(|f| f.rule_id.as_str()).collect();
    assert_eq!(ids.len(), findings.len(), "one finding per rule");
    assert_eq!(ids.len(), mcp::rules().len(), "every rule judged");
    let mut judged_over_stdio = 0;
    for f in &findings {
        let rule = mcp::rule(&f.rule_id).expect("a catalogue rule");
        if rule.runs_over_stdio() {
            assert!(
                matches!(f.outcome, Outcome::Pass | Outcome::Skip),
                "{} over stdio: {:?} {}",
                f.rule_id,
                f.outcome,
                f.message
            );
            assert!(
                !f.message.contains("Streamable HTTP only"),
                "{}: {}",
                f.rule_id,
                f.message
            );
            if f.outcome == Outcome::Pass {
                judged_over_stdio += 1;
            }
        } else {
            assert_eq!(f.outcome, Outcome::Skip, "{}: {}", f.rule_id, f.message);
            assert!(
                f.message
                    .starts_with("not applicable over stdio: applies to Streamable HTTP only ("),
                "{}: {}",
                f.rule_id,
                f.message
            );
        }
    }
    // Most of the stdio rules are judged, not skipped, on the full server
    // (the REG rules are skipped: the run has no server.json).
    assert!(judged_over_stdio >= 30, "{}", dump(&findings));
}

#[tokio::test]
async fn each_stdio_rule_fails_on_its_fault_over_stdio() {
    let revision = Some(McpRevision::V2026_07_28);
    let (_, clean) = judged(SuiteChoice::Mcp, &reference_stdio("--stdio"), revision).await;
    let baseline = outcomes(&clean);
    let without: BTreeSet<&str> = NO_STDIO_FAULT.iter().map(|(id, _)| *id).collect();
    for (id, why) in NO_STDIO_FAULT {
        let rule = mcp::rule(id).expect("a catalogue rule");
        assert!(
            rule.runs_over_stdio(),
            "{id} is listed but does not run over stdio"
        );
        assert!(!why.trim().is_empty(), "{id} is listed without a reason");
    }
    let ids: Vec<&'static str> = mcp::catalogue()
        .iter()
        .filter(|r| r.runs_over_stdio())
        .map(|r| r.rule.id)
        .filter(|id| !without.contains(id))
        .collect();
    assert!(ids.len() >= 35, "{ids:?}");
    let results: Vec<(String, Vec<String>)> = futures::stream::iter(ids)
        .map(|id| {
            let baseline = baseline.clone();
            async move {
                let (_, findings) = judged(SuiteChoice::Mcp, &faulty(&[id]), revision).await;
                let run = outcomes(&findings);
                let expected = mcp::rule(id).expect("rule").rule.on_failure;
                let mut problems = Vec::new();
                match run.get(id) {
                    Some((outcome, message)) if *outcome != expected => problems.push(format!(
                        "{id} itself came out {outcome:?} (expected {expected:?}): {message}"
                    )),
                    None => problems.push(format!("{id} has no finding")),
                    Some(_) => {}
                }
                if findings
                    .iter()
                    .any(|f| f.rule_id == id && f.evidence.is_empty())
                {
                    problems.push(format!("{id} failed without evidence"));
                }
                for (other, (outcome, message)) in &run {
                    if other == id || baseline.get(other).map(|b| b.0) == Some(*outcome) {
                        continue;
                    }
                    let cascade = *outcome == Outcome::Skip
                        && message.starts_with(&format!("not verified: {id}"));
                    if !cascade {
                        problems.push(format!(
                            "{other} changed from {:?} to {outcome:?}: {message}",
                            baseline.get(other).map(|b| b.0)
                        ));
                    }
                }
                (id.to_owned(), problems)
            }
        })
        .buffer_unordered(3)
        .collect()
        .await;
    let failures: Vec<String> = results
        .into_iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(id, p)| format!("--break {id}:\n  {}", p.join("\n  ")))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn over_stdio_auto_and_mcp_route_each_server_to_its_revision() {
    let modern = reference_stdio("--stdio");
    let legacy = reference_stdio("--revision 2025-11-25 --stdio");
    for choice in [SuiteChoice::Auto, SuiteChoice::Mcp] {
        let (verdict, findings) = judged(choice, &modern, None).await;
        assert_eq!(verdict.spec_revision, "2026-07-28", "{choice:?}");
        assert_eq!(grade(&verdict), "strict", "{choice:?}\n{}", dump(&findings));
        let (verdict, _) = judged(choice, &legacy, None).await;
        assert_eq!(verdict.spec_revision, "2025-11-25", "{choice:?}");
    }
}

#[tokio::test]
async fn check_over_stdio_with_suite_mcp_gives_a_2026_07_28_verdict() {
    let server = format!("{} reference mcp --stdio", env!("CARGO_BIN_EXE_protocheck"));
    let mut cmd = protocheck();
    cmd.args(["check", "--stdio", &server, "--suite", "mcp", "--json"]);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json prints JSON");
    assert_eq!(
        doc["verdict"]["spec_revision"],
        "2026-07-28",
        "{}",
        show(&out)
    );
    assert_eq!(doc["verdict"]["passed"], true);

    let broken = format!("{server} --break MCP-RES-001");
    let mut cmd = protocheck();
    cmd.args(["check", "--stdio", &broken, "--suite", "mcp", "--json"]);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
}

#[test]
fn the_stdio_table_in_docs_matches_the_catalogue() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/mcp-2026-07-28-stdio.md");
    let text = std::fs::read_to_string(path).expect("docs/mcp-2026-07-28-stdio.md");
    let mut listed = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("| MCP-")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        listed.insert(cells[0].to_owned(), cells[1].to_owned());
    }
    assert_eq!(listed.len(), mcp::rules().len(), "one row per rule");
    for rule in mcp::catalogue() {
        let cell = &listed[rule.rule.id];
        match rule.stdio_skip_reason() {
            None => assert_eq!(cell, "yes", "{}", rule.rule.id),
            Some(reason) => assert_eq!(
                format!(
                    "not applicable over stdio: {}",
                    cell.trim_start_matches("no: ")
                ),
                reason,
                "{}",
                rule.rule.id
            ),
        }
    }
}

/// A line longer than protocheck reads is protocheck's limit, not the
/// server's failure: the finding is "not verified", naming the limit, and
/// the run (nothing of which could be read) gets no grade.
#[tokio::test]
async fn a_child_answering_lines_over_the_limit_gets_a_verdict() {
    use protocheck::suite::context::RunContext;
    use protocheck::transport::{AddressPolicy, HttpClient, Limits};
    let limits = Limits {
        stdio_max_line_bytes: 1000,
        ..Limits::default()
    };
    let http = HttpClient::new(AddressPolicy::AllowPrivate, limits).expect("client");
    let ctx = RunContext::new(
        http,
        RunOptions {
            mcp_revision: Some(McpRevision::V2026_07_28),
            ..RunOptions::default()
        },
    );
    // Every line read is answered with 5000 characters on one line.
    let child = Endpoint::Stdio("sh -c 'while read -r l; do printf \"%05000d\\n\" 0; done'".into());
    let (verdict, findings) = run(SuiteChoice::Mcp, &child, &ctx).await;
    let verdict = verdict.unwrap_or_else(|e| panic!("no verdict: {e}\n{}", dump(&findings)));
    assert!(!verdict.passed, "{}", dump(&findings));
    let discover = findings
        .iter()
        .find(|f| f.rule_id == "MCP-DSC-001")
        .expect("MCP-DSC-001 judged");
    assert_eq!(discover.outcome, Outcome::Skip, "{}", discover.message);
    assert!(
        discover.message.starts_with(
            "not verified: an answer was larger than protocheck reads (its 1000-byte limit"
        ) && discover
            .message
            .contains("over protocheck's 1000-byte limit"),
        "{}",
        discover.message
    );
    assert!(
        findings.iter().all(|f| f.outcome != Outcome::Fail),
        "{}",
        dump(&findings)
    );
}
