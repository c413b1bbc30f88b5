//! The RCP suite over stdio, against `protocheck reference rcp --stdio`
//! spawned as a child process, exactly as a user's server would be: the
//! correct server certifies L2, and the faults whose symptoms differ on stdio
//! (framing, progress and logs on stdout) fail their rule only.

use crate::common::suite::dump;
use protocheck::suite::runner::{Endpoint, EngineError, RunContext};
use protocheck::suite::{Finding, Outcome, RunOptions, SuiteChoice, Verdict, VerdictDetail, rcp};
use protocheck::transport::{AddressPolicy, HttpClient, Limits};

/// The honesty verdict follows from the level, so it fails with any level fault.
const HONESTY: &str = "RCP-CERT-001";

/// The reference server's command line; the binary path is quoted in case it
/// contains spaces (the splitter understands quotes, no shell is involved).
fn reference_command(extra: &str) -> String {
    format!(
        "'{}' reference rcp --stdio {extra}",
        env!("CARGO_BIN_EXE_protocheck")
    )
}

async fn check(command: String) -> (Result<Verdict, EngineError>, Vec<Finding>) {
    // Stdio needs no network; the client is only carried by the context.
    let http = HttpClient::new(AddressPolicy::PublicOnly, Limits::default()).expect("client");
    let ctx = RunContext::new(http, RunOptions::default());
    crate::common::suite::run(SuiteChoice::Rcp, &Endpoint::Stdio(command), &ctx).await
}

fn certified(verdict: &Verdict) -> &str {
    match &verdict.detail {
        VerdictDetail::Rcp {
            certified_level, ..
        } => certified_level,
        other => panic!("not an RCP verdict: {other:?}"),
    }
}

#[tokio::test]
async fn the_correct_reference_server_certifies_l2_over_stdio() {
    let (verdict, findings) = check(reference_command("")).await;
    let verdict = verdict.expect("verdict");
    let report = dump(&findings);
    // The rules of the HTTP binding do not apply to a child process, and the
    // write probes are off by default.
    let skipped = [
        rcp::l0::PER_SESSION_INIT.id,
        rcp::l0::STATEFUL_HTTP.id,
        rcp::l2::STREAMING_BUFFERED.id,
        rcp::outside::PATH_MATCHES_BODY.id,
        rcp::outside::HTTP_NOTIFICATION_STATUS.id,
        rcp::outside::HTTP_STATUS_200.id,
        rcp::outside::INDEX_ADD.id,
        rcp::outside::INDEX_DELETE.id,
    ];
    for rule in rcp::rules() {
        let f = findings
            .iter()
            .find(|f| f.rule_id == rule.id)
            .unwrap_or_else(|| panic!("{} missing", rule.id));
        let expected = if skipped.contains(&rule.id) {
            Outcome::Skip
        } else {
            Outcome::Pass
        };
        assert_eq!(f.outcome, expected, "{}:\n{report}", rule.id);
    }
    assert_eq!(findings.len(), rcp::rules().len());
    assert_eq!(certified(&verdict), "L2");
    assert!(verdict.passed, "{verdict:?}\n{report}");
    // The run's first request, judged once the session's capabilities are known.
    let first = findings
        .iter()
        .find(|f| f.rule_id == rcp::l0::INFO_BEFORE_INIT.id)
        .expect("RCP-L0-001");
    let exchange = &first.evidence[0];
    assert_eq!(exchange.request.line, "stdin");
    assert!(
        exchange
            .response
            .as_ref()
            .is_some_and(|r| r.status.is_none() && r.body.contains("\"server\""))
    );
}

/// Over stdio the session is the process, so a server whose `initialize`
/// never succeeds cannot pass for an already-initialized one: the handshake
/// fails and no level is certified (decision 3 applies to HTTP only).
#[tokio::test]
async fn a_server_whose_initialize_never_succeeds_is_not_certified_over_stdio() {
    let (verdict, findings) = check(reference_command("--never-initialize")).await;
    let verdict = verdict.expect("verdict");
    let report = dump(&findings);
    let handshake = findings
        .iter()
        .find(|f| f.rule_id == rcp::l0::INITIALIZE_NEGOTIATES.id)
        .expect("RCP-L0-011");
    assert_eq!(handshake.outcome, Outcome::Fail, "{report}");
    assert_eq!(certified(&verdict), "none", "{report}");
    assert!(!verdict.passed);
}

#[tokio::test]
async fn a_fault_over_stdio_fails_its_rule_only() {
    let rule = &rcp::l0::NUMERIC_ID_ECHO;
    let (verdict, findings) = check(reference_command(&format!("--break {}", rule.id))).await;
    let verdict = verdict.expect("verdict");
    let report = dump(&findings);
    for f in findings.iter().filter(|f| f.rule_id != HONESTY) {
        let expected_fail = f.rule_id == rule.id;
        assert_eq!(
            f.outcome == Outcome::Fail,
            expected_fail,
            "{}:\n{report}",
            f.rule_id
        );
    }
    let broken = findings
        .iter()
        .find(|f| f.rule_id == rule.id)
        .expect("finding");
    assert!(!broken.evidence.is_empty());
    assert!(
        broken.message.contains("carried \"1\" (a string)"),
        "{}",
        broken.message
    );
    assert_eq!(certified(&verdict), "none");
    assert!(!verdict.passed);
}

#[tokio::test]
async fn notifications_answered_over_stdio_are_caught_without_desynchronising() {
    let rule = &rcp::l0::NOTIFY_GATED;
    let (verdict, findings) = check(reference_command(&format!("--break {}", rule.id))).await;
    verdict.expect("verdict");
    let report = dump(&findings);
    for f in findings.iter().filter(|f| f.rule_id != HONESTY) {
        assert_eq!(
            f.outcome == Outcome::Fail,
            f.rule_id == rule.id,
            "{}:\n{report}",
            f.rule_id
        );
    }
}

#[tokio::test]
async fn a_command_that_cannot_start_is_an_engine_error() {
    let (verdict, findings) = check("/nonexistent/protocheck-rcp-server --stdio".into()).await;
    let err = verdict.expect_err("nothing to run");
    assert!(err.to_string().contains("cannot start"), "{err}");
    assert!(findings.is_empty());
}

#[tokio::test]
async fn a_server_that_exits_at_once_is_an_engine_error_with_its_stderr() {
    let (verdict, _) = check("sh -c 'echo boom >&2; exit 3'".into()).await;
    let err = verdict.expect_err("the server exited");
    let text = err.to_string();
    assert!(
        text.contains("exit status: 3") && text.contains("boom"),
        "{text}"
    );
}

#[tokio::test]
async fn unknown_fault_ids_are_refused_by_the_command() {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_protocheck"))
        .args(["reference", "rcp", "--stdio", "--break", "RCP-L0-999"])
        .output()
        .await
        .expect("run");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("RCP-L0-999") && stderr.contains("RCP-L0-001"),
        "{stderr}"
    );
}

/// A server that dies mid-run: the rule that saw it go fails, later rules that
/// need the server are skipped with the reason, and nothing cascades.
#[tokio::test]
async fn a_server_that_dies_mid_run_fails_one_rule_and_skips_the_rest() {
    // `sed` passes three requests on, then closes the server's stdin (an
    // implicit shutdown, spec §5), so the fourth request is never answered.
    let command = format!(
        "sh -c \"sed -u 3q | '{}' reference rcp --stdio\"",
        env!("CARGO_BIN_EXE_protocheck")
    );
    let (verdict, findings) = check(command).await;
    let verdict = verdict.expect("a verdict: the server answered before it died");
    let report = dump(&findings);
    let failed: Vec<&str> = findings
        .iter()
        .filter(|f| f.outcome == Outcome::Fail)
        .map(|f| f.rule_id.as_str())
        .collect();
    assert_eq!(failed, [rcp::l0::GATED_BEFORE_INIT.id], "{report}");
    let gone = format!(
        "not verified: the server stopped answering during {}",
        rcp::l0::GATED_BEFORE_INIT.id
    );
    assert!(
        findings
            .iter()
            .any(|f| f.outcome == Outcome::Skip && f.message == gone),
        "{report}"
    );
    assert_eq!(certified(&verdict), "none");
}

/// Faults whose symptoms show differently on stdio than over HTTP: framing,
/// and progress and logs on stdout instead of in an event stream.
#[tokio::test]
async fn stdio_faults_fail_their_rule_only() {
    let rules = [
        &rcp::outside::STDIO_FRAMING,
        &rcp::outside::UNSOLICITED,
        &rcp::l2::STREAMING_PROGRESS,
        &rcp::l2::LOG,
        &rcp::l2::PAGINATION,
        &rcp::l1::SPARSE_MODE,
    ];
    let runs = rules.iter().map(|rule| async move {
        let command = reference_command(&format!("--break {}", rule.id));
        (*rule, check(command).await)
    });
    for (rule, (verdict, findings)) in futures::future::join_all(runs).await {
        let verdict = verdict.unwrap_or_else(|e| panic!("{}: {e}", rule.id));
        let report = dump(&findings);
        let failed: Vec<&str> = findings
            .iter()
            .filter(|f| f.outcome == Outcome::Fail && f.rule_id != HONESTY)
            .map(|f| f.rule_id.as_str())
            .collect();
        assert_eq!(failed, [rule.id], "{report}");
        let broken = findings
            .iter()
            .find(|f| f.rule_id == rule.id)
            .expect("finding");
        assert!(!broken.evidence.is_empty(), "{}: no evidence", rule.id);
        let expected = match rule.group {
            "L1" => "L0",
            "L2" => "L1",
            _ => "L2",
        };
        assert_eq!(certified(&verdict), expected, "{}:\n{report}", rule.id);
    }
}

/// What the slow server below leaves out, to keep its run short (every frame
/// it writes costs half a second): only `rerank` is advertised, so about 40
/// frames make the run, and the server declares the L0 it then certifies.
const SLOW_SERVER: &str = "--without retrieve --without filter --without citations --without multiVector \
     --without sparseEmbed --without transform --without graph --without streaming --without pagination \
     --without log --without index --declare L0";

/// A server slower than the fixed wait protocheck once kept after each
/// notification (300 ms): every frame it writes comes 500 ms late. The
/// `ping` sent after a notification tells silence from an answer at any
/// pace, so a server that answers notifications is still caught (and the
/// conversation stays in step), and a correct one still passes.
#[tokio::test]
async fn a_server_slower_than_the_old_notification_wait_is_judged_as_a_fast_one() {
    let rule = &rcp::l0::NOTIFY_GATED;
    let slow = format!("--latency-ms 500 {SLOW_SERVER}");
    let (correct, broken) = tokio::join!(
        check(reference_command(&slow)),
        check(reference_command(&format!("{slow} --break {}", rule.id))),
    );

    let (verdict, findings) = correct;
    let verdict = verdict.expect("verdict");
    let report = dump(&findings);
    let failed: Vec<&str> = findings
        .iter()
        .filter(|f| matches!(f.outcome, Outcome::Fail | Outcome::Warn))
        .map(|f| f.rule_id.as_str())
        .collect();
    assert!(failed.is_empty(), "{failed:?}:\n{report}");
    assert!(verdict.passed, "{report}");
    let silent = findings
        .iter()
        .find(|f| f.rule_id == rule.id)
        .expect("finding");
    assert!(
        silent
            .message
            .contains("no line before the reply to a `ping`"),
        "{}",
        silent.message
    );

    let (verdict, findings) = broken;
    let verdict = verdict.expect("verdict");
    let report = dump(&findings);
    let failed: Vec<&str> = findings
        .iter()
        .filter(|f| f.outcome == Outcome::Fail && f.rule_id != HONESTY)
        .map(|f| f.rule_id.as_str())
        .collect();
    assert_eq!(failed, [rule.id], "{report}");
    let answered = findings
        .iter()
        .find(|f| f.rule_id == rule.id)
        .expect("finding");
    assert!(
        answered.message.contains("was answered with error"),
        "{}",
        answered.message
    );
    assert!(!verdict.passed);
}
