//! The MCP suite against the MCP reference server, on loopback only.
//!
//! The clean server must come out `strict` with every rule passing or skipped
//! with a reason; each rule's fault switch must make that rule fail (or warn,
//! per its severity) and change no other rule's outcome, except rules that are
//! then skipped as "not verified: <that rule> …" (no cascades).

use futures::StreamExt;
use protocheck::reference::mcp::{
    Allowed, AuthShape, CertificateFault, McpReferenceConfig, ReferenceEra, SCOPE_READ,
    SCOPE_TOOLS, TestCertificate, Variant, serve_mcp_reference, serve_mcp_reference_tls,
    supported_faults,
};
use protocheck::suite::context::{Endpoint, RunContext};
use protocheck::suite::mcp::{self, McpSettings};
use protocheck::suite::runner::Reporter;
use protocheck::suite::{BearerToken, Finding, Outcome, RunOptions, Verdict, VerdictDetail};
use protocheck::transport::{AddressPolicy, HttpClient, Limits};
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::task::JoinHandle;
use url::Url;

/// A reference server on 127.0.0.1, stopped when dropped.
struct Server {
    addr: SocketAddr,
    task: JoinHandle<()>,
    /// The test CA to trust, when the server speaks HTTPS.
    ca_der: Option<Vec<u8>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    async fn start(config: McpReferenceConfig) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        assert!(addr.ip().is_loopback());
        let task = tokio::spawn(async move {
            let _ = serve_mcp_reference(listener, config).await;
        });
        Self {
            addr,
            task,
            ca_der: None,
        }
    }

    /// The server over HTTPS with a certificate made for the test.
    async fn start_tls(config: McpReferenceConfig, fault: CertificateFault) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let certificate = TestCertificate::generate(fault).expect("test certificate");
        let ca_der = Some(certificate.ca_der.clone());
        let task = tokio::spawn(async move {
            let _ = serve_mcp_reference_tls(listener, config, certificate).await;
        });
        Self { addr, task, ca_der }
    }

    fn scheme(&self) -> &str {
        if self.ca_der.is_some() {
            "https"
        } else {
            "http"
        }
    }

    fn url(&self) -> Url {
        format!("{}://{}/mcp", self.scheme(), self.addr)
            .parse()
            .expect("url")
    }

    fn server_json(&self) -> String {
        format!("{}://{}/server.json", self.scheme(), self.addr)
    }

    /// A client for this server: it trusts the test CA (this run only).
    fn client(&self) -> HttpClient {
        match &self.ca_der {
            Some(ca) => {
                HttpClient::with_extra_root(AddressPolicy::AllowPrivate, Limits::default(), ca)
            }
            None => HttpClient::new(AddressPolicy::AllowPrivate, Limits::default()),
        }
        .expect("client")
    }
}

struct Run {
    verdict: Verdict,
    findings: Vec<Finding>,
}

impl Run {
    fn outcome(&self, id: &str) -> Outcome {
        self.finding(id).outcome
    }

    fn finding(&self, id: &str) -> &Finding {
        self.findings
            .iter()
            .find(|f| f.rule_id == id)
            .unwrap_or_else(|| panic!("no finding for {id}"))
    }

    fn grade(&self) -> &str {
        match &self.verdict.detail {
            VerdictDetail::Mcp { grade, .. } => grade,
            other => panic!("not an MCP verdict: {other:?}"),
        }
    }

    fn table(&self) -> String {
        self.findings
            .iter()
            .map(|f| format!("{} {:?}: {}", f.rule_id, f.outcome, f.message))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

async fn run_against(url: Url, options: RunOptions) -> Run {
    let http = HttpClient::new(AddressPolicy::AllowPrivate, Limits::default()).expect("client");
    run_with_client(url, options, http).await
}

async fn run_with_client(url: Url, options: RunOptions, http: HttpClient) -> Run {
    let ctx = RunContext::new(http, options);
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let mut reporter = Reporter::new(tx);
    let verdict = tokio::time::timeout(
        Duration::from_secs(60),
        mcp::run_with(
            &Endpoint::Http(url),
            &ctx,
            &mut reporter,
            &McpSettings::default(),
        ),
    )
    .await
    .expect("run finishes within 60 s")
    .expect("run gives a verdict");
    let findings = reporter.findings().to_vec();
    drop(reporter);
    let _ = drain.await;
    Run { verdict, findings }
}

async fn run_reference(config: McpReferenceConfig) -> Run {
    let server = Server::start(config).await;
    let options = RunOptions {
        server_json: Some(serde_json::Value::String(server.server_json())),
        ..RunOptions::default()
    };
    run_against(server.url(), options).await
}

/// How a run reaches the reference server: without authorization, or with
/// `--auth` and a token with every scope or with `mcp:read` only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Access {
    Open,
    Full,
    Low,
    /// `--auth` over HTTPS, a token with every scope.
    Tls,
}

/// The access under which a rule's fault shows: AUT rules need a server that
/// asks for authorization, and MCP-AUT-007 a token that lacks a scope.
fn access_for(id: &str) -> Access {
    if id == "MCP-AUT-007" {
        Access::Low
    } else if id == "MCP-SEC-002" {
        Access::Tls
    } else if id.starts_with("MCP-AUT-") {
        Access::Full
    } else {
        Access::Open
    }
}

/// A run against a reference server with `faults`, reached with `access`;
/// returns the token used, if any.
async fn run_with_access(faults: &[&str], access: Access) -> (Run, Option<String>) {
    let cfg = config(faults);
    if access == Access::Open {
        return (run_reference(cfg).await, None);
    }
    let cfg = cfg.with_auth();
    let server = if access == Access::Tls {
        let fault = if faults.contains(&"MCP-SEC-002") {
            CertificateFault::Expired
        } else {
            CertificateFault::None
        };
        Server::start_tls(cfg.clone(), fault).await
    } else {
        Server::start(cfg.clone()).await
    };
    let scope = match access {
        Access::Low => SCOPE_READ.to_owned(),
        _ => format!("{SCOPE_READ} {SCOPE_TOOLS}"),
    };
    let token = cfg
        .mint_token(server.url().as_str(), &scope, Duration::from_secs(600))
        .expect("an --auth server mints tokens");
    let options = RunOptions {
        server_json: Some(serde_json::Value::String(server.server_json())),
        bearer_token: Some(BearerToken::new(token.clone())),
        ..RunOptions::default()
    };
    (
        run_with_client(server.url(), options, server.client()).await,
        Some(token),
    )
}

fn config(faults: &[&str]) -> McpReferenceConfig {
    McpReferenceConfig::new(faults.iter().map(|f| (*f).to_owned()).collect()).expect("known faults")
}

#[tokio::test]
async fn clean_reference_server_is_strict() {
    let run = run_reference(config(&[])).await;
    println!("{}", run.table());
    let ids: Vec<&str> = run.findings.iter().map(|f| f.rule_id.as_str()).collect();
    let unique: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(ids.len(), unique.len(), "one finding per rule");
    assert_eq!(unique.len(), mcp::rules().len(), "every rule judged");
    for f in &run.findings {
        assert!(
            matches!(f.outcome, Outcome::Pass | Outcome::Skip),
            "{} on the clean server: {:?} {}",
            f.rule_id,
            f.outcome,
            f.message
        );
        if f.outcome == Outcome::Skip {
            assert!(
                !f.message.trim().is_empty(),
                "{} skipped without a reason",
                f.rule_id
            );
        }
    }
    assert_eq!(run.grade(), "strict", "{}", run.verdict.summary);
    assert!(run.verdict.passed);
    assert_eq!(run.verdict.spec_revision, "2026-07-28");
}

#[test]
fn every_rule_has_a_fault_switch() {
    let faults = supported_faults();
    let missing: Vec<&str> = mcp::rules()
        .iter()
        .map(|r| r.id)
        .filter(|id| !faults.contains(id))
        .collect();
    assert!(
        missing.is_empty(),
        "rules without a fault switch: {missing:?}"
    );
}

/// The outcome a rule's fault must produce.
fn expected_outcome(id: &str) -> Outcome {
    mcp::rule(id).expect("rule").rule.on_failure
}

#[tokio::test]
async fn each_fault_breaks_exactly_its_rule() {
    let mut baselines: BTreeMap<Access, BTreeMap<String, Outcome>> = BTreeMap::new();
    for access in [Access::Open, Access::Full, Access::Low, Access::Tls] {
        let (clean, _) = run_with_access(&[], access).await;
        baselines.insert(
            access,
            clean
                .findings
                .iter()
                .map(|f| (f.rule_id.clone(), f.outcome))
                .collect(),
        );
    }
    let ids: Vec<&'static str> = mcp::rules().iter().map(|r| r.id).collect();
    let results: Vec<(String, Vec<String>)> = futures::stream::iter(ids)
        .map(|id| {
            let baseline = baselines[&access_for(id)].clone();
            async move {
                let (run, _) = run_with_access(&[id], access_for(id)).await;
                let mut problems = Vec::new();
                let broken = run.finding(id);
                if broken.outcome != expected_outcome(id) {
                    problems.push(format!(
                        "{id} itself came out {:?} (expected {:?}): {}",
                        broken.outcome,
                        expected_outcome(id),
                        broken.message
                    ));
                } else if broken.evidence.is_empty() {
                    problems.push(format!("{id} failed without evidence: {}", broken.message));
                }
                for f in &run.findings {
                    if f.rule_id == id || baseline.get(&f.rule_id) == Some(&f.outcome) {
                        continue;
                    }
                    let cascade = f.outcome == Outcome::Skip
                        && f.message.starts_with(&format!("not verified: {id}"));
                    if !cascade {
                        problems.push(format!(
                            "{} changed from {:?} to {:?}: {}",
                            f.rule_id, baseline[&f.rule_id], f.outcome, f.message
                        ));
                    }
                }
                (id.to_owned(), problems)
            }
        })
        .buffer_unordered(4)
        .collect()
        .await;
    let failures: Vec<String> = results
        .into_iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(id, p)| format!("--break {id}:\n  {}", p.join("\n  ")))
        .collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[tokio::test]
async fn clean_authorized_server_judges_every_authorization_rule() {
    let (run, token) = run_with_access(&[], Access::Full).await;
    println!("{}", run.table());
    assert_eq!(run.findings.len(), mcp::rules().len(), "every rule judged");
    for f in &run.findings {
        assert!(
            matches!(f.outcome, Outcome::Pass | Outcome::Skip),
            "{} on the clean authorized server: {:?} {}",
            f.rule_id,
            f.outcome,
            f.message
        );
    }
    for r in mcp::rules().iter().filter(|r| r.group == "AUT") {
        let f = run.finding(r.id);
        if r.id == "MCP-AUT-007" {
            // A token with every scope is never refused for scope.
            assert_eq!(f.outcome, Outcome::Skip, "{}", f.message);
            assert!(f.message.contains("never refused"), "{}", f.message);
        } else {
            assert_eq!(f.outcome, Outcome::Pass, "{}: {}", r.id, f.message);
        }
    }
    assert_eq!(run.grade(), "strict", "{}", run.verdict.summary);
    let shown = serde_json::to_string(&run.findings).expect("json");
    assert!(
        !shown.contains(&token.expect("token")),
        "the token is never shown"
    );
}

#[tokio::test]
async fn an_authorized_https_server_passes_every_aut_and_sec_rule() {
    let (run, _) = run_with_access(&[], Access::Tls).await;
    println!("{}", run.table());
    for r in mcp::rules()
        .iter()
        .filter(|r| r.group == "AUT" || r.group == "SEC")
    {
        let f = run.finding(r.id);
        let expected = if r.id == "MCP-AUT-007" {
            Outcome::Skip
        } else {
            Outcome::Pass
        };
        assert_eq!(f.outcome, expected, "{}: {}", r.id, f.message);
    }
    assert_eq!(run.grade(), "strict", "{}", run.table());
}

#[tokio::test]
async fn refused_certificates_fail_https_and_nothing_else() {
    for fault in [
        CertificateFault::Expired,
        CertificateFault::WrongHost,
        CertificateFault::SelfSigned,
    ] {
        let server = Server::start_tls(config(&[]), fault).await;
        let run = run_with_client(server.url(), RunOptions::default(), server.client()).await;
        let f = run.finding("MCP-SEC-002");
        assert_eq!(f.outcome, Outcome::Fail, "{fault:?}: {}", f.message);
        assert!(!f.evidence.is_empty(), "{fault:?}");
        for other in run.findings.iter().filter(|f| f.rule_id != "MCP-SEC-002") {
            assert_eq!(other.outcome, Outcome::Skip, "{fault:?} {}", other.rule_id);
            assert!(other.message.starts_with("not verified: MCP-SEC-002"));
        }
        assert_eq!(run.grade(), "non-compliant");
    }
    // The service's own client trusts the built-in roots only: the test CA is
    // not among them, so even the sound certificate is refused.
    let server = Server::start_tls(config(&[]), CertificateFault::None).await;
    let run = run_against(server.url(), RunOptions::default()).await;
    assert_eq!(run.outcome("MCP-SEC-002"), Outcome::Fail);
}

#[tokio::test]
async fn a_low_scope_token_meets_insufficient_scope() {
    let (run, token) = run_with_access(&[], Access::Low).await;
    let f = run.finding("MCP-AUT-007");
    assert_eq!(f.outcome, Outcome::Pass, "{}", f.message);
    let (broken, broken_token) = run_with_access(&["MCP-AUT-007"], Access::Low).await;
    let f = broken.finding("MCP-AUT-007");
    assert_eq!(f.outcome, Outcome::Warn, "{}", f.message);
    assert!(f.message.contains("HTTP 401"), "{}", f.message);
    // The evidence shows the refused request, with its token redacted.
    let exchange = &f.evidence[0];
    assert!(
        exchange
            .request
            .headers
            .iter()
            .any(|(n, v)| n == "authorization" && v == "Bearer ‹redacted›")
    );
    for (run, token) in [(&run, token), (&broken, broken_token)] {
        let shown = serde_json::to_string(&run.findings).expect("json");
        assert!(
            !shown.contains(&token.expect("token")),
            "the token is never shown"
        );
    }
}

/// A run against `cfg` with `--auth`, with a token of every scope, and
/// with a limited token of `limited` scope when given.
async fn run_authorized(cfg: McpReferenceConfig, limited: Option<&str>) -> Run {
    let cfg = cfg.with_auth();
    let server = Server::start(cfg.clone()).await;
    let mint = |scope: &str| {
        cfg.mint_token(server.url().as_str(), scope, Duration::from_secs(600))
            .expect("an --auth server mints tokens")
    };
    let options = RunOptions {
        server_json: Some(serde_json::Value::String(server.server_json())),
        bearer_token: Some(BearerToken::new(mint(&format!(
            "{SCOPE_READ} {SCOPE_TOOLS}"
        )))),
        limited_token: limited.map(|scope| BearerToken::new(mint(scope))),
        ..RunOptions::default()
    };
    run_with_client(server.url(), options, server.client()).await
}

#[tokio::test]
async fn authorization_shapes_fail_their_rules() {
    let cases: [(AuthShape, &[&str], &str); 4] = [
        (
            AuthShape::OpenDiscoverBareChallenge,
            &["MCP-AUT-001"],
            "carries no WWW-Authenticate",
        ),
        (
            AuthShape::DeadResourceMetadata,
            &["MCP-AUT-001", "MCP-AUT-002"],
            "oauth-protected-resource/missing",
        ),
        (
            AuthShape::ScopesNotStrings,
            &["MCP-AUT-002"],
            "`scopes_supported` is not a JSON array of strings",
        ),
        (
            AuthShape::SecondIssuerWithoutMetadata,
            &["MCP-AUT-004"],
            "/as2: no metadata",
        ),
    ];
    for (shape, rules, says) in cases {
        let run = run_authorized(config(&[]).with_auth_shape(shape), None).await;
        for rule in rules {
            let f = run.finding(rule);
            assert_eq!(f.outcome, Outcome::Fail, "{shape:?} {rule}: {}", f.message);
            assert!(f.message.contains(says), "{shape:?} {rule}: {}", f.message);
            assert!(!f.evidence.is_empty(), "{shape:?} {rule}");
        }
    }
}

#[tokio::test]
async fn allowed_authorization_shapes_pass() {
    for allowed in [Allowed::OpenDiscover, Allowed::ForeignIssuerFirst] {
        let run = run_authorized(config(&[]).allowing(allowed), None).await;
        for r in mcp::rules().iter().filter(|r| r.group == "AUT") {
            let f = run.finding(r.id);
            let expected = if r.id == "MCP-AUT-007" {
                Outcome::Skip
            } else {
                Outcome::Pass
            };
            assert_eq!(f.outcome, expected, "{allowed:?} {}: {}", r.id, f.message);
        }
        if allowed == Allowed::OpenDiscover {
            let f = run.finding("MCP-AUT-001");
            assert!(f.message.contains("leaves open"), "{}", f.message);
        } else {
            let f = run.finding("MCP-AUT-004");
            assert!(f.message.contains("names another issuer"), "{}", f.message);
        }
    }
}

#[tokio::test]
async fn a_limited_token_meets_insufficient_scope() {
    let run = run_authorized(config(&[]), Some(SCOPE_READ)).await;
    let f = run.finding("MCP-AUT-007");
    assert_eq!(f.outcome, Outcome::Pass, "{}", f.message);
    assert!(f.message.contains("limited token"), "{}", f.message);
    let broken = run_authorized(config(&["MCP-AUT-007"]), Some(SCOPE_READ)).await;
    let f = broken.finding("MCP-AUT-007");
    assert_eq!(f.outcome, Outcome::Warn, "{}", f.message);
    assert!(
        f.message
            .contains("with the limited token, `tools/call` got HTTP 401"),
        "{}",
        f.message
    );
    // No other rule moves for the limited token.
    for f in &run.findings {
        assert!(
            matches!(f.outcome, Outcome::Pass | Outcome::Skip),
            "{}: {:?} {}",
            f.rule_id,
            f.outcome,
            f.message
        );
    }
}

#[tokio::test]
async fn authorization_rules_skip_on_an_open_server() {
    let run = run_reference(config(&[])).await;
    for r in mcp::rules().iter().filter(|r| r.group == "AUT") {
        let f = run.finding(r.id);
        assert_eq!(f.outcome, Outcome::Skip, "{}", r.id);
        assert!(
            f.message.contains("does not require authorization"),
            "{}: {}",
            r.id,
            f.message
        );
    }
}

#[tokio::test]
async fn without_a_token_only_authorization_is_judged() {
    let server = Server::start(config(&[]).with_auth()).await;
    let run = run_against(server.url(), RunOptions::default()).await;
    for f in &run.findings {
        if f.rule_id.starts_with("MCP-AUT-") {
            let expected = if f.rule_id == "MCP-AUT-007" {
                Outcome::Skip
            } else {
                Outcome::Pass
            };
            assert_eq!(f.outcome, expected, "{}: {}", f.rule_id, f.message);
        } else if f.rule_id != "MCP-SEC-002" {
            assert_eq!(f.outcome, Outcome::Skip, "{}: {}", f.rule_id, f.message);
            assert!(
                f.message.contains("requires authorization"),
                "{}: {}",
                f.rule_id,
                f.message
            );
        }
    }
}

#[test]
fn bearer_tokens_are_never_stored() {
    let options: RunOptions =
        serde_json::from_str(r#"{"bearer_token": "secret-token-1"}"#).expect("accepted");
    assert!(options.carries_credentials());
    let stored = serde_json::to_string(&options).expect("json");
    assert!(!stored.contains("secret-token-1"), "{stored}");
    let submitted = protocheck::submit::SubmitOptions::from_parts(options.clone(), None);
    assert!(!submitted.canonical_json().contains("secret-token-1"));
    assert!(!format!("{options:?}").contains("secret-token-1"));
}

#[tokio::test]
async fn broken_rule_messages_are_actionable() {
    let run = run_reference(config(&["MCP-HDR-006"])).await;
    let f = run.finding("MCP-HDR-006");
    assert_eq!(f.outcome, Outcome::Fail);
    // Both halves of the fault: a name spelled as the spec does is not found,
    // and a value in another case is taken for the body's.
    assert!(
        f.message
            .contains("with header names spelled as the spec writes them")
            && f.message.contains(
                "`Mcp-Method: SERVER/DISCOVER` with body `server/discover` was accepted with 200"
            )
            && f.message.contains("expected 400 with -32020"),
        "{}",
        f.message
    );
    let spelled = &f.evidence[0];
    assert!(
        spelled
            .request
            .headers
            .iter()
            .any(|(n, v)| n == "Mcp-Method" && v == "server/discover"),
        "{:?}",
        spelled.request.headers
    );
    assert_eq!(spelled.response.as_ref().and_then(|r| r.status), Some(400));
    let exchange = &f.evidence[2];
    assert!(
        exchange
            .request
            .headers
            .iter()
            .any(|(n, v)| n == "mcp-method" && v == "SERVER/DISCOVER")
    );
    assert_eq!(exchange.response.as_ref().and_then(|r| r.status), Some(200));
    assert_eq!(run.grade(), "non-compliant");
    assert_eq!(run.verdict.summary, "non-compliant: 1 failing");
}

#[tokio::test]
async fn tools_are_only_run_when_read_only_or_allowed() {
    let cfg = config(&[]);
    let server = Server::start(cfg.clone()).await;
    let run = run_against(server.url(), RunOptions::default()).await;
    assert_eq!(run.grade(), "strict", "{}", run.table());
    assert_eq!(
        cfg.side_effect_calls(),
        0,
        "set_reminder is not read-only and must not run"
    );

    let allowed = RunOptions {
        allow_tool_calls: Some(true),
        ..RunOptions::default()
    };
    let run = run_against(server.url(), allowed).await;
    assert_eq!(run.grade(), "strict", "{}", run.table());
    assert!(
        cfg.side_effect_calls() > 0,
        "allow_tool_calls lets protocheck run every tool"
    );
}

#[tokio::test]
async fn registry_rules_are_skipped_without_server_json() {
    let server = Server::start(config(&[])).await;
    let run = run_against(server.url(), RunOptions::default()).await;
    for r in mcp::rules().iter().filter(|r| r.group == "REG") {
        let f = run.finding(r.id);
        assert_eq!(f.outcome, Outcome::Skip, "{}", r.id);
        assert!(f.message.contains("options.server_json"), "{}", f.message);
    }
    // The document itself, inline, works as well as a URL.
    let inline = serde_json::json!({
        "name": "io.github.someone/server", "description": "A server", "version": "1.0.0",
        "remotes": [{"type": "streamable-http", "url": server.url().to_string()}]
    });
    let run = run_against(
        server.url(),
        RunOptions {
            server_json: Some(inline),
            ..RunOptions::default()
        },
    )
    .await;
    for r in mcp::rules().iter().filter(|r| r.group == "REG") {
        assert_eq!(
            run.outcome(r.id),
            Outcome::Pass,
            "{}: {}",
            r.id,
            run.finding(r.id).message
        );
    }
}

#[tokio::test]
async fn registry_remotes_match_as_templates_and_by_transport() {
    let server = Server::start(config(&[])).await;
    let url = server.url();
    let port = url.port().expect("a port");
    let doc = |remote: serde_json::Value| RunOptions {
        server_json: Some(serde_json::json!({
            "name": "io.github.someone/server", "description": "A server", "version": "1.0.0",
            "remotes": [remote]
        })),
        ..RunOptions::default()
    };
    // A template naming the endpoint matches it as a pattern.
    let templated = serde_json::json!({
        "type": "streamable-http", "url": format!("http://{{host}}:{port}{}", url.path()),
        "variables": {"host": {"choices": ["127.0.0.1", "localhost"]}}
    });
    let run = run_against(url.clone(), doc(templated)).await;
    let f = run.finding("MCP-REG-004");
    assert_eq!(f.outcome, Outcome::Pass, "{}", f.message);
    assert!(f.message.contains("host=\"127.0.0.1\""), "{}", f.message);
    // A variable whose choices exclude the endpoint's host does not.
    let elsewhere = serde_json::json!({
        "type": "streamable-http", "url": format!("http://{{host}}:{port}{}", url.path()),
        "variables": {"host": {"choices": ["mcp.example.com"]}}
    });
    let run = run_against(url.clone(), doc(elsewhere)).await;
    assert_eq!(run.outcome("MCP-REG-004"), Outcome::Warn);
    // The right URL declared `sse` for an endpoint that serves Streamable HTTP.
    let sse = serde_json::json!({"type": "sse", "url": url.to_string()});
    let run = run_against(url.clone(), doc(sse)).await;
    let f = run.finding("MCP-REG-004");
    assert_eq!(f.outcome, Outcome::Warn, "{}", f.message);
    assert!(f.message.contains("declared `sse`"), "{}", f.message);
}

#[tokio::test]
async fn a_dual_era_server_advertising_logging_to_legacy_clients_is_found() {
    // The fault on a dual-era server: `logging` only in the `initialize`
    // result, which its legacy clients see; `server/discover` is clean.
    let run = run_reference(config(&["MCP-DEP-005"]).with_era(ReferenceEra::DualEra)).await;
    let f = run.finding("MCP-DEP-005");
    assert_eq!(f.outcome, Outcome::Info, "{}", f.message);
    assert!(
        f.message
            .contains("the initialize result advertises [\"logging\"]")
            && !f.message.contains("server/discover advertises"),
        "{}",
        f.message
    );
    let clean = run_reference(config(&[]).with_era(ReferenceEra::DualEra)).await;
    let f = clean.finding("MCP-DEP-005");
    assert_eq!(f.outcome, Outcome::Pass, "{}", f.message);
    assert!(
        f.message
            .contains("server/discover and the initialize result"),
        "{}",
        f.message
    );
}

#[tokio::test]
async fn a_dual_era_server_is_judged_on_both_eras() {
    let run = run_reference(config(&[]).with_era(ReferenceEra::DualEra)).await;
    assert_eq!(run.grade(), "strict", "{}", run.table());
    assert_eq!(run.outcome("MCP-DEP-006"), Outcome::Pass, "{}", run.table());
    assert_eq!(run.outcome("MCP-DEP-007"), Outcome::Skip);
}

#[tokio::test]
async fn a_legacy_only_server_gets_one_clear_verdict() {
    let run = run_reference(config(&[]).with_era(ReferenceEra::LegacyOnly)).await;
    println!("{}", run.table());
    let discover = run.finding("MCP-DSC-001");
    assert_eq!(discover.outcome, Outcome::Fail);
    assert!(
        discover.message.contains(
            "judged, from these two answers, as a server that speaks MCP 2025-11-25 only"
        ),
        "{}",
        discover.message
    );
    assert_eq!(run.verdict.counts.fail, 1, "one failure, not one per rule");
    assert!(
        run.verdict.summary.contains("2025-11-25 only"),
        "{}",
        run.verdict.summary
    );
    assert_eq!(run.grade(), "non-compliant");
    for f in &run.findings {
        let group = &f.rule_id[4..7];
        if f.rule_id == "MCP-DSC-001" || group == "DEP" || group == "REG" {
            continue;
        }
        assert_eq!(f.outcome, Outcome::Skip, "{}", f.rule_id);
        assert!(f.message.contains("2025-11-25 only"), "{}", f.message);
    }
    // The DEP rules still say what a move to 2026-07-28 removes.
    assert_eq!(run.outcome("MCP-DEP-001"), Outcome::Warn, "{}", run.table());
    assert_eq!(run.outcome("MCP-DEP-006"), Outcome::Pass);
}

#[tokio::test]
async fn every_listed_resource_and_template_expansion_is_read_for_its_caching_hints() {
    let (clean, no_ttl, no_scope) = tokio::join!(
        run_reference(config(&[])),
        run_reference(config(&[]).with_variant(Variant::TemplateReadWithoutTtl)),
        run_reference(config(&[]).with_variant(Variant::SixthReadWithoutScope)),
    );
    for id in ["MCP-CAC-001", "MCP-CAC-002"] {
        let f = clean.finding(id);
        assert_eq!(f.outcome, Outcome::Pass, "{id}: {}", f.message);
        assert!(
            f.message
                .contains("6 listed resources and 2 resource templates expanded"),
            "{id}: {}",
            f.message
        );
    }
    // A resource reached only through `ref://topics/{topic}`, expanded with
    // the value its completion offers.
    let f = no_ttl.finding("MCP-CAC-001");
    assert_eq!(f.outcome, Outcome::Fail, "{}", no_ttl.table());
    assert!(
        f.message.contains("ref://topics/caching") && f.message.contains("ref://topics/{topic}"),
        "{}",
        f.message
    );
    assert!(!f.evidence.is_empty());
    assert_eq!(no_ttl.outcome("MCP-CAC-002"), Outcome::Pass);
    // The sixth listed resource.
    let f = no_scope.finding("MCP-CAC-002");
    assert_eq!(f.outcome, Outcome::Fail, "{}", no_scope.table());
    assert!(f.message.contains("ref://docs/faq"), "{}", f.message);
    assert_eq!(no_scope.outcome("MCP-CAC-001"), Outcome::Pass);
}

#[tokio::test]
async fn a_result_type_beside_an_unknown_advertised_extension_is_accepted_as_an_inference() {
    let run = run_reference(config(&[]).with_variant(Variant::ExtensionResultType)).await;
    let f = run.finding("MCP-RES-002");
    assert_eq!(f.outcome, Outcome::Pass, "{}", run.table());
    assert!(
        f.message.contains("inferred")
            && f.message.contains("\"deferred\" on `completion/complete`")
            && f.message.contains("dev.protocheck/reference"),
        "{}",
        f.message
    );
    assert_eq!(run.outcome("MCP-RES-001"), Outcome::Pass);
}

#[tokio::test]
async fn a_correct_tools_only_server_is_compliant() {
    let run = run_reference(config(&[]).tools_only()).await;
    println!("{}", run.table());
    assert!(
        matches!(run.grade(), "strict" | "compliant"),
        "{}",
        run.table()
    );
    for id in ["MCP-ERR-003", "MCP-CAC-005"] {
        let f = run.finding(id);
        assert!(
            f.outcome == Outcome::Skip || f.outcome == Outcome::Pass,
            "{id}: {}",
            f.message
        );
    }
    assert_eq!(run.outcome("MCP-ERR-003"), Outcome::Skip);
    assert!(
        run.finding("MCP-ERR-003")
            .message
            .contains("does not advertise resources")
    );
}

#[tokio::test]
async fn a_stdio_command_that_cannot_start_gives_no_verdict() {
    // Stdio endpoints are judged (tests/it/mcp_stdio.rs); one whose command
    // does not exist is a target that could not be reached, not a verdict.
    let http = HttpClient::new(AddressPolicy::AllowPrivate, Limits::default()).expect("client");
    let ctx = RunContext::new(http, RunOptions::default());
    let (tx, _rx) = tokio::sync::mpsc::channel(4);
    let mut reporter = Reporter::new(tx);
    let err = mcp::run(
        &Endpoint::Stdio("/nonexistent/protocheck-test-server".into()),
        &ctx,
        &mut reporter,
    )
    .await
    .expect_err("nothing to judge");
    assert!(err.to_string().contains("cannot start"), "{err}");
}
