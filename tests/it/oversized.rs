//! A target whose answers are larger than protocheck reads: in both suites
//! the finding of the rule whose probe provoked it says so in the same words
//! (RCP/1 fails the rule; the MCP suites leave it "not verified", the limit
//! being protocheck's), and an RCP run gets a verdict instead of ending in
//! error. Loopback servers answer with too much, over HTTP and over stdio.

use crate::common::app::serve;
use crate::common::suite::dump;
use axum::http::StatusCode;
use protocheck::suite::runner::{Endpoint, EngineError, RunContext};
use protocheck::suite::{Finding, Outcome, RunOptions, SuiteChoice, Verdict};
use protocheck::transport::{AddressPolicy, HttpClient, Limits};

/// The limit the runs below read up to; the servers answer twice as much.
const LIMIT: usize = 64 * 1024;

fn limits() -> Limits {
    Limits {
        max_body_bytes: LIMIT,
        stdio_max_line_bytes: LIMIT,
        ..Limits::default()
    }
}

/// How every oversized answer reads in a finding, in both suites.
fn over_the_limit() -> String {
    format!("with a body over protocheck's {LIMIT}-byte limit")
}

async fn check(
    suite: SuiteChoice,
    endpoint: Endpoint,
) -> (Result<Verdict, EngineError>, Vec<Finding>) {
    let http = HttpClient::new(AddressPolicy::AllowPrivate, limits()).expect("client");
    let ctx = RunContext::new(http, RunOptions::default());
    crate::common::suite::run(suite, &endpoint, &ctx).await
}

/// A server that answers every request, whatever its path, with 200 and a
/// JSON-typed body twice the limit.
async fn huge_server() -> String {
    let router = axum::Router::new().fallback(|| async {
        (
            StatusCode::OK,
            [("content-type", "application/json")],
            vec![b' '; 2 * LIMIT],
        )
    });
    serve(router).await
}

/// The failing findings say the target answered with too much; none says it
/// did not answer.
fn assert_judged_as_answers(findings: &[Finding]) {
    let report = dump(findings);
    let failed: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.outcome == Outcome::Fail)
        .collect();
    assert!(!failed.is_empty(), "{report}");
    assert!(
        failed.iter().any(|f| f.message.contains(&over_the_limit())),
        "{report}"
    );
    for f in findings {
        assert!(
            !f.message.contains("no answer (response body exceeds"),
            "{}: {}",
            f.rule_id,
            f.message
        );
    }
}

#[tokio::test]
async fn an_rcp_target_answering_too_much_over_http_gets_a_verdict() {
    let url = format!("{}/rcp", huge_server().await);
    let endpoint = Endpoint::Http(url.parse().expect("url"));
    let (verdict, findings) = check(SuiteChoice::Rcp, endpoint).await;
    let verdict = verdict.unwrap_or_else(|e| panic!("an error, not a verdict: {e}"));
    assert_judged_as_answers(&findings);
    let first = findings
        .iter()
        .find(|f| f.rule_id == protocheck::suite::rcp::l0::INFO_BEFORE_INIT.id)
        .expect("RCP-L0-001");
    assert_eq!(first.outcome, Outcome::Fail, "{}", dump(&findings));
    assert!(
        first.message.contains(&over_the_limit()),
        "{}",
        first.message
    );
    assert!(!verdict.passed);
    let json = serde_json::to_value(&verdict).expect("json");
    assert_eq!(json["certified_level"], "none");
    assert_eq!(json["protocol_observed"], false, "nothing of it was read");
}

#[tokio::test]
async fn an_rcp_target_answering_too_much_over_stdio_gets_a_verdict() {
    // Every line read is answered with a line twice the limit.
    let command = format!(
        "sh -c 'while read -r line; do head -c {} /dev/zero | tr \"\\0\" x; echo; done'",
        2 * LIMIT
    );
    let (verdict, findings) = check(SuiteChoice::Rcp, Endpoint::Stdio(command)).await;
    let verdict = verdict.unwrap_or_else(|e| panic!("an error, not a verdict: {e}"));
    assert_judged_as_answers(&findings);
    assert!(!verdict.passed);
}

#[tokio::test]
async fn an_mcp_target_answering_too_much_is_worded_as_rcp_words_it() {
    let url = format!("{}/mcp", huge_server().await);
    let endpoint = Endpoint::Http(url.parse().expect("url"));
    let (verdict, findings) = check(SuiteChoice::Mcp, endpoint).await;
    let report = dump(&findings);
    assert!(verdict.is_ok(), "{verdict:?}\n{report}");
    assert!(
        findings
            .iter()
            .any(|f| f.message.contains(&over_the_limit())),
        "{report}"
    );
    for f in &findings {
        assert!(
            !f.message.contains("no answer (response body exceeds"),
            "{}: {}",
            f.rule_id,
            f.message
        );
    }
}
