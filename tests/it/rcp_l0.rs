//! The RCP suite's L0 behaviour against the reference server over real HTTP
//! on loopback: the correct server passes every rule (and certifies L2), the
//! session models skip what decisions 3 and 4 say, an unreachable or slow
//! target is an engine error, and every reply the server sends during a run
//! matches the published schema. The fault matrix of every rule is in
//! `rcp_levels.rs`.

use crate::common;
use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;

use common::suite::{dump, loopback, rcp_at, router_at, run};
use protocheck::reference::rcp::{RcpReferenceConfig, rcp_router};
use protocheck::suite::context::HandshakeHistory;
use protocheck::suite::runner::run_suite;
use protocheck::suite::runner::{Endpoint, EngineError, RunContext};
use protocheck::suite::{Finding, Outcome, RunOptions, SuiteChoice, Verdict, VerdictDetail, rcp};
use protocheck::transport::{AddressPolicy, HttpClient, Limits};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use url::Url;

/// Starts the reference server on an ephemeral loopback port.
async fn start(config: RcpReferenceConfig) -> Url {
    rcp_at(config).await
}

async fn start_router(router: axum::Router) -> Url {
    router_at(router).await
}

/// Runs the RCP suite against `url` (loopback only, hence AllowPrivate).
async fn check(url: &Url) -> (Result<Verdict, EngineError>, Vec<Finding>) {
    let ctx = loopback(RunOptions::default());
    run(SuiteChoice::Rcp, &Endpoint::Http(url.clone()), &ctx).await
}

fn outcome(findings: &[Finding], id: &str) -> Outcome {
    let matching: Vec<&Finding> = findings.iter().filter(|f| f.rule_id == id).collect();
    assert_eq!(
        matching.len(),
        1,
        "{id} must be reported exactly once: {findings:#?}"
    );
    matching[0].outcome
}

fn level(verdict: &Verdict) -> (&str, Option<&str>, Option<bool>) {
    match &verdict.detail {
        VerdictDetail::Rcp {
            certified_level,
            declared_level,
            honest,
            ..
        } => (certified_level.as_str(), declared_level.as_deref(), *honest),
        other => panic!("not an RCP verdict: {other:?}"),
    }
}

/// Rules skipped on the correct server over HTTP with writes off (the
/// default): the stdio framing rule, and the two index write probes.
const SKIPPED_OVER_HTTP: [&str; 3] = ["RCP-OUT-002", "RCP-OUT-007", "RCP-OUT-008"];

/// Every rule passes on the correct server but those that do not apply.
fn assert_correct(verdict: &Verdict, findings: &[Finding]) {
    for rule in rcp::rules() {
        let expected = if SKIPPED_OVER_HTTP.contains(&rule.id) {
            Outcome::Skip
        } else {
            Outcome::Pass
        };
        assert_eq!(
            outcome(findings, rule.id),
            expected,
            "{}:\n{}",
            rule.id,
            dump(findings)
        );
    }
    assert_eq!(findings.len(), rcp::rules().len());
    assert_eq!(level(verdict), ("L2", Some("L2"), Some(true)));
    assert!(verdict.passed, "{verdict:?}");
    assert_eq!(verdict.summary, "L2");
    assert_eq!(
        verdict.counts.pass as usize,
        rcp::rules().len() - SKIPPED_OVER_HTTP.len()
    );
    assert_eq!(verdict.spec_revision, rcp::SPEC_REVISION);
}

#[tokio::test]
async fn the_correct_reference_server_passes_every_rule() {
    let url = start(RcpReferenceConfig::default()).await;
    let (verdict, findings) = check(&url).await;
    let verdict = verdict.expect("verdict");
    assert_correct(&verdict, &findings);
    for f in &findings {
        assert!(!f.message.is_empty());
    }
}

#[tokio::test]
async fn two_runs_against_one_long_lived_server_both_pass() {
    let url = start(RcpReferenceConfig::default()).await;
    for _ in 0..2 {
        let (verdict, findings) = check(&url).await;
        assert_correct(&verdict.expect("verdict"), &findings);
    }
}

#[tokio::test]
async fn a_missing_declaration_is_not_an_overclaim_but_a_declared_level_that_fails_is() {
    // The declaration is a MUST outside the levels (§14's preamble): its
    // absence keeps the level and fails the run.
    let url = start(RcpReferenceConfig::new(["RCP-L0-014"]).expect("fault")).await;
    let verdict = check(&url).await.0.expect("verdict");
    assert_eq!(level(&verdict), ("L2", None, None));
    assert_eq!(verdict.summary, "L2 · 1 spec violation");
    assert!(!verdict.passed);

    let url = start(RcpReferenceConfig::new(["RCP-L0-017"]).expect("fault")).await;
    let verdict = check(&url).await.0.expect("verdict");
    assert_eq!(level(&verdict), ("none", Some("L2"), Some(false)));
    assert_eq!(verdict.summary, "none · OVERCLAIMED (declared L2)");
    assert!(!verdict.passed);
}

#[tokio::test]
async fn the_session_model_skips_carry_the_decided_reasons() {
    let url = start(RcpReferenceConfig::new(["RCP-L0-027"]).expect("fault")).await;
    let (_, findings) = check(&url).await;
    for id in ["RCP-L0-004", "RCP-L0-010"] {
        let f = findings.iter().find(|f| f.rule_id == id).expect("finding");
        assert_eq!(f.outcome, Outcome::Skip);
        assert_eq!(
            f.message,
            "not verifiable on a server that is already initialized (spec §11.3 decision)"
        );
    }
    let url = start(RcpReferenceConfig::new(["RCP-L0-028"]).expect("fault")).await;
    let (_, findings) = check(&url).await;
    for id in ["RCP-L0-004", "RCP-L0-010", "RCP-L0-015"] {
        let f = findings.iter().find(|f| f.rule_id == id).expect("finding");
        assert_eq!(
            (f.outcome, f.message.as_str()),
            (Outcome::Skip, "stateless HTTP server (spec §5)")
        );
    }
}

/// Runs the suite against `url` with `history` as the service would look it up.
async fn check_remembering(
    url: &Url,
    history: HandshakeHistory,
) -> (Result<Verdict, EngineError>, Vec<Finding>) {
    let mut ctx = loopback(RunOptions::default());
    ctx.handshake_history = history.into();
    run(SuiteChoice::Rcp, &Endpoint::Http(url.clone()), &ctx).await
}

fn finding<'a>(findings: &'a [Finding], id: &str) -> &'a Finding {
    findings
        .iter()
        .find(|f| f.rule_id == id)
        .unwrap_or_else(|| panic!("{id} missing:\n{}", dump(findings)))
}

/// Decision 3 as narrowed: a server whose `initialize` never succeeds (always
/// -32600, nothing gated) looks like a process-wide server an earlier client
/// initialized; without a run that saw its handshake it certifies nothing,
/// whatever history source says so, and the verdict says which case it was.
#[tokio::test]
async fn a_server_whose_initialize_never_succeeds_is_not_certified_over_http() {
    let config = RcpReferenceConfig {
        never_initialize: true,
        ..RcpReferenceConfig::default()
    };
    let url = start(config).await;
    for (history, says) in [
        (
            HandshakeHistory::Unavailable,
            "no history of earlier runs is available (`protocheck check` keeps none)",
        ),
        (
            HandshakeHistory::NotObserved,
            "no earlier run of this target saw `initialize` succeed",
        ),
    ] {
        let (verdict, findings) = check_remembering(&url, history).await;
        let verdict = verdict.expect("verdict");
        let report = dump(&findings);
        let handshake = finding(&findings, "RCP-L0-011");
        assert_eq!(handshake.outcome, Outcome::Skip, "{report}");
        assert!(
            handshake
                .message
                .starts_with("the handshake was not observed")
                && handshake.message.contains(says)
                && handshake
                    .message
                    .contains("Restart the server and run again"),
            "{report}"
        );
        assert_eq!(level(&verdict), ("none", Some("L2"), None), "{report}");
        assert!(!verdict.passed);
        assert_eq!(verdict.summary, "none · handshake not observed");
        let VerdictDetail::Rcp { report: lr, .. } = &verdict.detail else {
            panic!("not RCP")
        };
        assert_eq!(lr.honesty, "unverified");
        assert!(
            lr.missing_for_next[0].starts_with("L0 needs RCP-L0-011")
                && lr.missing_for_next[0]
                    .ends_with("the handshake was not observed: restart the server and run again"),
            "{:?}",
            lr.missing_for_next
        );
        assert_eq!(outcome(&findings, "RCP-CERT-001"), Outcome::Skip);
    }
}

/// A long-lived process-wide server: the first run sees the handshake and
/// certifies L2; a second run finds it already initialized and gets the same
/// level only when told an earlier run saw the handshake.
#[tokio::test]
async fn a_process_wide_server_keeps_its_level_on_a_second_run_only_with_history() {
    let config = RcpReferenceConfig {
        process_wide: true,
        ..RcpReferenceConfig::default()
    };
    let url = start(config).await;
    let (first, findings) = check_remembering(&url, HandshakeHistory::NotObserved).await;
    let first = first.expect("verdict");
    assert_eq!(outcome(&findings, "RCP-L0-011"), Outcome::Pass);
    assert_eq!(
        level(&first),
        ("L2", Some("L2"), Some(true)),
        "{}",
        dump(&findings)
    );

    let (second, findings) = check_remembering(&url, HandshakeHistory::NotObserved).await;
    let second = second.expect("verdict");
    assert_eq!(level(&second).0, "none", "{}", dump(&findings));
    assert_eq!(outcome(&findings, "RCP-L0-027"), Outcome::Info);

    let history = HandshakeHistory::Observed {
        run_id: "0b7c5a1e-0000-4000-8000-000000000001".into(),
        at_ms: 1_790_000_000_000,
    };
    let (third, findings) = check_remembering(&url, history).await;
    let third = third.expect("verdict");
    let report = dump(&findings);
    let handshake = finding(&findings, "RCP-L0-011");
    assert_eq!(handshake.outcome, Outcome::Info, "{report}");
    assert!(
        handshake
            .message
            .contains("Run 0b7c5a1e-0000-4000-8000-000000000001 saw this target complete `initialize` at 2026-09-21T"),
        "{report}"
    );
    for id in ["RCP-L0-004", "RCP-L0-010"] {
        assert_eq!(
            finding(&findings, id).message,
            "not verifiable on a server that is already initialized (spec §11.3 decision)"
        );
    }
    assert_eq!(level(&third), level(&first), "{report}");
    assert!(third.passed);
    assert_eq!(third.summary, "L2");
}

#[tokio::test]
async fn an_unreachable_target_is_an_engine_error_not_a_verdict() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let url = Url::parse(&format!("http://{addr}/rcp")).expect("url");
    let (verdict, findings) = check(&url).await;
    let err = verdict.expect_err("no server listens there");
    assert!(err.is_retryable(), "{err}");
    assert!(findings.is_empty());
}

#[tokio::test]
async fn an_unknown_profile_is_refused() {
    let url = start(RcpReferenceConfig::default()).await;
    let http = HttpClient::new(AddressPolicy::AllowPrivate, Limits::default()).expect("client");
    let options = RunOptions {
        profile: Some("harness".into()),
        ..RunOptions::default()
    };
    let ctx = RunContext::new(http, options);
    let (tx, _rx) = mpsc::channel(64);
    let err = run_suite(SuiteChoice::Rcp, &Endpoint::Http(url), &ctx, tx)
        .await
        .expect_err("unsupported");
    assert!(
        matches!(&err, EngineError::Unsupported(m) if m.contains("`spec` or `reference`")),
        "{err}"
    );
}

/// Every reply the reference server sends during a run, with the method the
/// request named, captured at the server.
type Captured = Arc<Mutex<Vec<(Value, Vec<u8>)>>>;

async fn capture(captured: Captured, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let sent = to_bytes(body, usize::MAX).await.unwrap_or_default();
    let request_json: Value = serde_json::from_slice(&sent).unwrap_or(Value::Null);
    let response = next.run(Request::from_parts(parts, Body::from(sent))).await;
    let (parts, body) = response.into_parts();
    let got = to_bytes(body, usize::MAX).await.unwrap_or_default();
    captured
        .lock()
        .expect("lock")
        .push((request_json, got.to_vec()));
    Response::from_parts(parts, Body::from(got))
}

#[tokio::test]
async fn every_reply_of_the_correct_server_matches_the_published_schema() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/spec/schemas/rcp-1.0.schema.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("SKIPPED: the schema leg; {} was not found", path.display());
        return;
    };
    let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
    let message = jsonschema::validator_for(&schema).expect("root schema compiles");
    // The result shapes are bound to method names by `ResultFor`; it is applied to
    // `{method, result}` once the pairing is known (its own description says so).
    let result_for = jsonschema::validator_for(&json!({
        "$schema": schema["$schema"],
        "$ref": "#/$defs/ResultFor",
        "$defs": schema["$defs"],
    }))
    .expect("ResultFor compiles");
    // The validators bite: a wrong version string and a hit-less retrieve result fail.
    assert!(!message.is_valid(&json!({"jsonrpc": "1.0", "id": 1, "result": {}})));
    assert!(!result_for.is_valid(&json!({"method": "retrieve", "result": {}})));

    let captured: Captured = Arc::default();
    let layer_handle = Arc::clone(&captured);
    let router =
        rcp_router(RcpReferenceConfig::default()).layer(middleware::from_fn(move |req, next| {
            let handle = Arc::clone(&layer_handle);
            capture(handle, req, next)
        }));
    let url = start_router(router).await;
    // Writes allowed, so the `index/*` results are captured too.
    let options = RunOptions {
        allow_writes: Some(true),
        ..RunOptions::default()
    };
    let verdict = check_with(&url, options).await.expect("verdict");
    assert_eq!(level(&verdict), ("L2", Some("L2"), Some(true)));

    let exchanges = captured.lock().expect("lock").clone();
    let mut validated = 0;
    let mut results = 0;
    let mut methods = std::collections::BTreeSet::new();
    for (request, reply) in &exchanges {
        if reply.is_empty() {
            continue; // a notification's 204
        }
        // An event stream (spec §5.2): one JSON frame per `data:` line.
        let text = String::from_utf8_lossy(reply);
        let frames: Vec<Value> = if text.starts_with("data:") {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| serde_json::from_str(d.trim()).expect("every frame is JSON"))
                .collect()
        } else {
            vec![serde_json::from_slice(reply).expect("every reply body is JSON")]
        };
        for reply in frames {
            let errors: Vec<String> = message.iter_errors(&reply).map(|e| e.to_string()).collect();
            assert!(
                errors.is_empty(),
                "frame {reply} for {request} breaks the schema: {errors:?}"
            );
            validated += 1;
            if let (Some(result), Some(method)) = (reply.get("result"), request.get("method")) {
                let pair = json!({"method": method, "result": result});
                let errors: Vec<String> = result_for
                    .iter_errors(&pair)
                    .map(|e| e.to_string())
                    .collect();
                assert!(
                    errors.is_empty(),
                    "result of `{method}` breaks the schema: {errors:?}\n{result}"
                );
                results += 1;
                methods.insert(method.as_str().unwrap_or_default().to_owned());
            }
        }
    }
    assert!(validated >= 60, "only {validated} frames were captured");
    assert!(results >= 40, "only {results} results were checked");
    for method in [
        "initialize",
        "info",
        "ping",
        "shutdown",
        "retrieve",
        "rerank",
        "embed/sparse",
        "embed/multi",
        "query/transform",
        "graph",
        "index/add",
        "index/delete",
    ] {
        assert!(
            methods.contains(method),
            "no `{method}` result was checked: {methods:?}"
        );
    }
}

async fn check_with(url: &Url, options: RunOptions) -> Result<Verdict, EngineError> {
    let http = HttpClient::new(AddressPolicy::AllowPrivate, Limits::default()).expect("client");
    let ctx = RunContext::new(http, options);
    let (tx, mut rx) = mpsc::channel(16);
    tokio::spawn(async move { while rx.recv().await.is_some() {} });
    run_suite(SuiteChoice::Rcp, &Endpoint::Http(url.clone()), &ctx, tx).await
}

#[tokio::test]
async fn a_slow_server_still_certifies_and_a_too_slow_one_is_a_retryable_error() {
    let config = RcpReferenceConfig {
        latency: std::time::Duration::from_millis(20),
        ..RcpReferenceConfig::default()
    };
    let url = start(config).await;
    let verdict = check_with(&url, RunOptions::default())
        .await
        .expect("verdict");
    assert!(verdict.passed, "{verdict:?}");

    let config = RcpReferenceConfig {
        latency: std::time::Duration::from_millis(500),
        ..RcpReferenceConfig::default()
    };
    let url = start(config).await;
    let options = RunOptions {
        request_timeout_ms: Some(100),
        ..RunOptions::default()
    };
    let err = check_with(&url, options)
        .await
        .expect_err("every request times out");
    // A slow target is judged on its first attempt: retrying would only send
    // it the same load again.
    assert!(
        matches!(err, EngineError::Unreachable(_)) && !err.is_retryable(),
        "{err}"
    );
}

/// A JSON-RPC result or error for `frame`'s id, as a server would send it.
fn reply_to(frame: &Value, answer: Value) -> Response {
    let mut body = json!({"jsonrpc": "2.0", "id": frame["id"].clone()});
    if answer.get("code").is_some() {
        body["error"] = answer;
    } else {
        body["result"] = answer;
    }
    Response::builder()
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .expect("response")
}

/// The reference server behind a middleware that answers some requests
/// itself, the way a lax server would; every other request goes through.
fn lax(answer: fn(&str, &Value) -> Option<Value>) -> axum::Router {
    rcp_router(RcpReferenceConfig::default()).layer(middleware::from_fn(
        move |request: Request, next: Next| async move {
            let (parts, body) = request.into_parts();
            let bytes = to_bytes(body, 1 << 20).await.unwrap_or_default();
            let frame: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let method = frame["method"].as_str().unwrap_or_default().to_owned();
            if frame.get("id").is_some()
                && let Some(answer) = answer(&method, &frame["params"])
            {
                return reply_to(&frame, answer);
            }
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        },
    ))
}

fn hits() -> Value {
    json!({"hits": [{"id": "doc-1", "score": 1.0}]})
}

/// What the upstream C++ reference server was seen to do with option values
/// it does not advertise: serve them. The reference server advertises no
/// `retrieve.units` (so only chunk/passage, §6.1), no `retrieve.modalities`
/// (so only text, §4.8), fusion rrf and weighted, and graph ops local,
/// neighbors and communities.
fn serves_unadvertised_options(method: &str, p: &Value) -> Option<Value> {
    let served = match method {
        "retrieve" => {
            p.get("unit").is_some()
                || p.get("modality").is_some()
                || p["fusion"]["method"] == "convex"
        }
        "graph" => ["global", "drift"].contains(&p["op"].as_str().unwrap_or_default()),
        _ => false,
    };
    served.then(hits)
}

/// What the same server did with malformed params: a `retrieve` without
/// `query` or without `k` (both required, schema `RetrieveParams`) and a
/// `graph` without `op` returned hits; `query: 123` crashed with -32603.
fn serves_malformed_params(method: &str, p: &Value) -> Option<Value> {
    match method {
        "retrieve" if p["query"].is_number() => {
            Some(json!({"code": -32603, "message": "internal error"}))
        }
        "retrieve" if p.get("query").is_none() || p.get("k").is_none() => Some(hits()),
        "graph" if p.get("op").is_none() => Some(hits()),
        _ => None,
    }
}

#[tokio::test]
async fn unadvertised_option_values_are_probed_against_the_advertised_or_default_set() {
    let url = start_router(lax(serves_unadvertised_options)).await;
    let (verdict, findings) = check(&url).await;
    let verdict = verdict.expect("verdict");
    let report = dump(&findings);
    let f = findings
        .iter()
        .find(|f| f.rule_id == "RCP-L0-019")
        .expect("RCP-L0-019");
    assert_eq!(f.outcome, Outcome::Fail, "{report}");
    // Every value outside a set is probed; the failures of one option are
    // reported together, each value named.
    for probe in [
        "unit outside",
        "\"document\" was answered",
        "\"node\" was answered",
        "modality outside",
        "\"image\" was answered",
        "fusion.method outside",
        "\"convex\" was answered",
        "op outside",
        "\"global\" was answered",
    ] {
        assert!(f.message.contains(probe), "{probe}: {}", f.message);
    }
    assert_eq!(level(&verdict).0, "none", "{report}");
    // The op probe is judged once, by RCP-L0-019; RCP-L2-005 judges the
    // advertised ops only, so the two cannot disagree.
    assert_eq!(outcome(&findings, "RCP-L2-005"), Outcome::Pass, "{report}");
}

#[tokio::test]
async fn every_required_field_and_field_type_of_every_advertised_method_is_probed() {
    let url = start_router(lax(serves_malformed_params)).await;
    let (verdict, findings) = check(&url).await;
    let verdict = verdict.expect("verdict");
    let report = dump(&findings);
    let f = findings
        .iter()
        .find(|f| f.rule_id == "RCP-L0-020")
        .expect("RCP-L0-020");
    assert_eq!(f.outcome, Outcome::Fail, "{report}");
    for probe in [
        "`retrieve` without the required `query`",
        "`retrieve` without the required `k`",
        "`retrieve` with `query` = 123",
        "`graph` without the required `op`",
    ] {
        assert!(f.message.contains(probe), "{probe}: {}", f.message);
    }
    assert!(f.message.contains("-32603"), "{}", f.message);
    assert_eq!(level(&verdict).0, "none", "{report}");
}

/// The spec body gives no code for `notifications/cancel` sent with an id
/// (§7.14, §12); only the Appendix E change log calls it malformed. Any error
/// passes, and a result is a warning that leaves the level alone.
#[tokio::test]
async fn a_cancel_sent_with_an_id_is_not_an_l0_blocker() {
    fn other_error(method: &str, _: &Value) -> Option<Value> {
        (method == "notifications/cancel")
            .then(|| json!({"code": -32602, "message": "cancel is a notification"}))
    }
    fn result(method: &str, _: &Value) -> Option<Value> {
        (method == "notifications/cancel").then(|| json!({}))
    }
    for (answer, expected) in [
        (other_error as fn(&str, &Value) -> Option<Value>, "pass"),
        (result, "warn"),
    ] {
        let url = start_router(lax(answer)).await;
        let (verdict, findings) = check(&url).await;
        let verdict = verdict.expect("verdict");
        let report = dump(&findings);
        let f = findings
            .iter()
            .find(|f| f.rule_id == "RCP-L0-032")
            .expect("RCP-L0-032");
        assert_eq!(f.outcome.as_str(), expected, "{report}");
        assert_eq!(level(&verdict), ("L2", Some("L2"), Some(true)), "{report}");
    }
}

/// The public harness's process-wide servers, already initialized when the
/// run starts, and a server whose `initialize` never succeeds look the same
/// to one run: without a run that saw the handshake, no level.
#[tokio::test]
async fn an_already_initialized_server_without_history_certifies_no_level() {
    let url = start(RcpReferenceConfig::new(["RCP-L0-027"]).expect("fault")).await;
    let (verdict, findings) = check(&url).await;
    let verdict = verdict.expect("verdict");
    assert_eq!(level(&verdict).0, "none", "{}", dump(&findings));
    assert!(!verdict.passed);
}

/// A listener that stops taking connections when told, and says when it has:
/// a server gone for good, whose address refuses every new connection.
struct Closable {
    inner: Option<TcpListener>,
    addr: std::net::SocketAddr,
    close: Arc<tokio::sync::Notify>,
    closed: Arc<tokio::sync::Notify>,
}

impl axum::serve::Listener for Closable {
    type Io = tokio::net::TcpStream;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Some(listener) = &self.inner else {
                return std::future::pending().await;
            };
            tokio::select! {
                accepted = listener.accept() => {
                    if let Ok(accepted) = accepted {
                        return accepted;
                    }
                }
                () = self.close.notified() => {
                    self.inner = None;
                    self.closed.notify_one();
                }
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.addr)
    }
}

/// Over HTTP the probes of the initialized session go side by side; a server
/// that is gone when they start gets the verdict it got when they went one
/// after another: the first probe's rule saw it go, every later rule is
/// skipped with that reason, and nothing cascades.
#[tokio::test]
async fn a_server_gone_when_the_session_probes_start_fails_one_rule_and_skips_the_rest() {
    let close = Arc::new(tokio::sync::Notify::new());
    let closed = Arc::new(tokio::sync::Notify::new());
    let initializes = Arc::new(Mutex::new(0usize));
    let (c, d, n) = (close.clone(), closed.clone(), initializes.clone());
    // After the answer to the third `initialize` (the second repeat probe,
    // the last request before the session probes), the address refuses
    // connections: the session probes, each on a connection of its own,
    // find nobody there.
    let router = rcp_router(RcpReferenceConfig::default()).layer(middleware::from_fn(
        move |request: Request, next: Next| {
            let (close, closed, initializes) = (c.clone(), d.clone(), n.clone());
            async move {
                let initialize = request.uri().path().ends_with("/initialize");
                let response = next.run(request).await;
                let last = initialize && {
                    let mut count = initializes.lock().expect("the count");
                    *count += 1;
                    *count == 3
                };
                if last {
                    close.notify_one();
                    closed.notified().await;
                }
                response
            }
        },
    ));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("its address");
    let listener = Closable {
        inner: Some(listener),
        addr,
        close,
        closed,
    };
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    let url = Url::parse(&format!("http://{addr}/rcp")).expect("url");
    let (verdict, findings) = check(&url).await;
    let report = dump(&findings);
    verdict.expect("a verdict: the server answered before it went");
    let first = rcp::l0::TOLERATES_UNKNOWN.id;
    assert_ne!(outcome(&findings, first), Outcome::Pass, "{report}");
    let gone = format!("not verified: the server stopped answering during {first}");
    for rule in [
        &rcp::l0::UNKNOWN_METHOD,
        &rcp::l0::UNADVERTISED_METHOD,
        &rcp::l0::UNSUPPORTED_OPTION,
        &rcp::l0::MALFORMED_PARAMS,
        &rcp::l0::INFO_AFTER_INIT,
        &rcp::l0::NOTIFY_UNKNOWN,
        &rcp::l0::CANCEL_WITH_ID,
        &rcp::l0::BATCH,
        &rcp::l0::EMPTY_BATCH,
        &rcp::l1::DENSE_MODE,
    ] {
        let finding = findings
            .iter()
            .find(|f| f.rule_id == rule.id)
            .unwrap_or_else(|| panic!("{} reported: {report}", rule.id));
        assert_eq!(
            (finding.outcome, finding.message.as_str()),
            (Outcome::Skip, gone.as_str()),
            "{}: {report}",
            rule.id
        );
    }
    // Skipped, not failed: only the rule that saw the server go failed after
    // the handshake, and the declaration (L2) against what was certified.
    let handshake_done = findings
        .iter()
        .position(|f| f.rule_id == first)
        .expect("the first session probe reported");
    let failed_later: Vec<&str> = findings[handshake_done + 1..]
        .iter()
        .filter(|f| f.outcome == Outcome::Fail)
        .map(|f| f.rule_id.as_str())
        .collect();
    assert_eq!(failed_later, [rcp::DECLARATION_HONEST.id], "{report}");
}

/// A server that serves one connection at a time and keeps it open for as
/// long as the client does (HTTP/1.1 keep-alive): a request on another
/// connection waits until the first is closed. Its probes went side by side
/// on connections of their own, got no answer in time, and went again, one
/// after another, on the run's connection, as every later request does: the
/// correct server still gets the verdict of a correct server.
#[tokio::test]
async fn a_server_that_serves_one_connection_at_a_time_gets_a_correct_verdict() {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use hyper_util::server::conn::auto::Builder;
    use hyper_util::service::TowerToHyperService;
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("its address");
    let router = rcp_router(RcpReferenceConfig::default());
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let service = TowerToHyperService::new(router.clone());
            // Served to its end before the next connection is accepted.
            let _ = Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        }
    });
    let url = Url::parse(&format!("http://{addr}/rcp")).expect("url");
    // A short request timeout: the probes sent side by side wait for it.
    let ctx = loopback(RunOptions {
        request_timeout_ms: Some(1_000),
        ..RunOptions::default()
    });
    let (verdict, findings) = run(SuiteChoice::Rcp, &Endpoint::Http(url), &ctx).await;
    let verdict = verdict.expect("a verdict");
    assert_correct(&verdict, &findings);
}

/// What a broken server in front of the reference server does with one HTTP
/// request: answer it itself, or pass it on (its frame possibly rewritten).
enum Bent {
    Answer(Value),
    Silent,
    Forward(Value),
}

/// The reference server behind a middleware that bends some frames the way a
/// broken server would; `bend` sees whether the request carries a session
/// token (`RCP-Session`, handed out by a successful `initialize`) and the
/// frame, single or batch.
fn bent(bend: fn(bool, Value) -> Bent) -> axum::Router {
    rcp_router(RcpReferenceConfig::default()).layer(middleware::from_fn(
        move |request: Request, next: Next| async move {
            let (parts, body) = request.into_parts();
            let bytes = to_bytes(body, 1 << 20).await.unwrap_or_default();
            let Ok(frame) = serde_json::from_slice::<Value>(&bytes) else {
                return next
                    .run(Request::from_parts(parts, Body::from(bytes)))
                    .await;
            };
            let session = parts.headers.contains_key("rcp-session");
            let body = match bend(session, frame) {
                Bent::Answer(answer) => {
                    return Response::builder()
                        .header("content-type", "application/json")
                        .body(Body::from(answer.to_string()))
                        .expect("response");
                }
                Bent::Silent => {
                    return Response::builder()
                        .status(204)
                        .body(Body::empty())
                        .expect("response");
                }
                Bent::Forward(frame) => frame.to_string(),
            };
            let mut parts = parts;
            parts.headers.remove("content-length");
            next.run(Request::from_parts(parts, Body::from(body))).await
        },
    ))
}

/// Runs the suite on `router` and asserts that `rule` alone fails, with every
/// `words` in its message, and that the level drops to none (L0 is broken).
async fn only_this_fails(router: axum::Router, rule: &str, words: &[&str]) {
    let url = start_router(router).await;
    let (verdict, findings) = check(&url).await;
    let verdict = verdict.expect("verdict");
    let report = dump(&findings);
    let f = finding(&findings, rule);
    assert_eq!(f.outcome, Outcome::Fail, "{report}");
    assert!(!f.evidence.is_empty(), "{report}");
    for w in words {
        assert!(f.message.contains(w), "{w}: {}", f.message);
    }
    for other in &findings {
        if other.rule_id != rule && other.rule_id != rcp::DECLARATION_HONEST.id {
            assert_ne!(other.outcome, Outcome::Fail, "{}:\n{report}", other.rule_id);
        }
    }
    assert_eq!(level(&verdict).0, "none", "{report}");
}

/// §13: "After a success, a second `initialize` MUST get -32600", whatever
/// its params. The reference server's fault of RCP-L0-015 answers a repeat
/// identical to the handshake as if it were idempotent; this server answers
/// one with other params. Each is caught.
#[tokio::test]
async fn a_repeated_initialize_is_refused_whether_identical_or_differing() {
    let url = start(RcpReferenceConfig::new(["RCP-L0-015"]).expect("fault")).await;
    let (_, findings) = check(&url).await;
    let f = finding(&findings, "RCP-L0-015");
    assert_eq!(f.outcome, Outcome::Fail, "{}", dump(&findings));
    assert!(f.message.contains("params unchanged"), "{}", f.message);
    assert!(!f.message.contains("other params"), "{}", f.message);

    fn differing(session: bool, frame: Value) -> Bent {
        let repeat = session
            && frame["method"] == "initialize"
            && frame["params"]["capabilities"].get("log").is_none();
        if repeat {
            return Bent::Answer(json!({"jsonrpc": "2.0", "id": frame["id"], "result": {
                "protocolVersion": 1,
                "server": {"name": "re-initialized"},
                "capabilities": {"retrieve": {}},
            }}));
        }
        Bent::Forward(frame)
    }
    only_this_fails(bent(differing), "RCP-L0-015", &["other params"]).await;
}

/// §4.5: notifications "MUST NOT be answered, not even with an error, and
/// whatever the method. … Unknown `notifications/*` are silently ignored."
/// One server answers unknown `notifications/*` (the reserved namespace),
/// another answers undefined methods only once the session is initialized.
#[tokio::test]
async fn unknown_notifications_are_sent_in_every_namespace_before_and_after_initialize() {
    fn is_notification(frame: &Value) -> bool {
        frame.is_object() && frame.get("id").is_none()
    }
    fn not_found(_: &Value) -> Bent {
        Bent::Answer(json!({"jsonrpc": "2.0", "id": null,
            "error": {"code": -32601, "message": "method not found"}}))
    }
    fn namespace(_: bool, frame: Value) -> Bent {
        let method = frame["method"].as_str().unwrap_or_default();
        if is_notification(&frame)
            && method.starts_with("notifications/")
            && method != "notifications/cancel"
        {
            return not_found(&frame);
        }
        Bent::Forward(frame)
    }
    fn once_initialized(session: bool, frame: Value) -> Bent {
        if session && is_notification(&frame) && frame["method"] == "does/not/exist" {
            return not_found(&frame);
        }
        Bent::Forward(frame)
    }
    only_this_fails(
        bent(namespace),
        "RCP-L0-007",
        &[
            "`notifications/protocheck-unknown` before `initialize`",
            "`notifications/protocheck-unknown` after `initialize`",
        ],
    )
    .await;
    only_this_fails(
        bent(once_initialized),
        "RCP-L0-007",
        &["`does/not/exist` after `initialize` was answered with error -32601"],
    )
    .await;
}

/// §11: "A malformed member produces a `-32600` entry with `id:null`; the
/// other members are still processed." This server drops the malformed member
/// silently and answers the rest.
#[tokio::test]
async fn a_malformed_batch_member_needs_its_own_error_entry() {
    fn drops_malformed(_: bool, frame: Value) -> Bent {
        match frame {
            Value::Array(members) if !members.is_empty() => {
                let kept: Vec<Value> = members.into_iter().filter(Value::is_object).collect();
                if kept.is_empty() {
                    Bent::Silent
                } else {
                    Bent::Forward(Value::Array(kept))
                }
            }
            other => Bent::Forward(other),
        }
    }
    only_this_fails(
        bent(drops_malformed),
        "RCP-L0-030",
        &["a malformed member (the number 1)"],
    )
    .await;
}

/// §4.6 "Unknown fields in any object MUST be ignored, never rejected" and
/// §4.7 ids echoed "with the same JSON type and value" hold on every method:
/// one server refuses unknown fields on `retrieve` alone, another turns a
/// string id that looks like a number into a number on `retrieve` alone.
#[tokio::test]
async fn unknown_fields_and_string_ids_reach_the_capability_methods() {
    fn strict_retrieve(_: bool, frame: Value) -> Bent {
        if frame["method"] == "retrieve"
            && frame["params"].get("x-protocheck-unknown-field").is_some()
        {
            return Bent::Answer(json!({"jsonrpc": "2.0", "id": frame["id"],
                "error": {"code": -32602, "message": "unknown field"}}));
        }
        Bent::Forward(frame)
    }
    fn coerced_retrieve_id(_: bool, frame: Value) -> Bent {
        if frame["method"] == "retrieve"
            && let Some(n) = frame["id"].as_str().and_then(|s| s.parse::<u64>().ok())
        {
            return Bent::Answer(json!({"jsonrpc": "2.0", "id": n, "result": hits()}));
        }
        Bent::Forward(frame)
    }
    only_this_fails(
        bent(strict_retrieve),
        "RCP-L0-016",
        &["`retrieve` was answered with error -32602"],
    )
    .await;
    only_this_fails(bent(coerced_retrieve_id), "RCP-L0-025", &["\"018\""]).await;
}
