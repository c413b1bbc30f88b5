//! The MCP 2025-11-25 suite against a small server written here (with or
//! without sessions, and with one fault the reference server has no switch
//! for), and against servers protocheck did not write, over Streamable HTTP
//! and stdio: the official Python SDK and the reference `server-everything`.
//! Each fault switch of the reference server is proven by the fault matrix
//! (`mcp25_faults.rs`).
//!
//! The real servers come from the package registries (`scripts/test-all.sh` installs
//! them and names them in `PROTOCHECK_INTEROP_PYTHON`,
//! `PROTOCHECK_INTEROP_NODE` and `PROTOCHECK_INTEROP_EVERYTHING`); without
//! them those tests say `SKIPPED: …` and pass, unless
//! `PROTOCHECK_REQUIRE_TOOLS=1`.

use crate::common::suite::{dump, loopback};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use protocheck::suite::mcp2025;
use protocheck::suite::runner::{Endpoint, EngineError, Reporter};
use protocheck::suite::{Finding, Outcome, RunOptions, Verdict, VerdictDetail};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

/// Runs the 2025-11-25 suite against `endpoint`; the verdict and every finding.
async fn run(endpoint: &Endpoint) -> (Result<Verdict, EngineError>, Vec<Finding>) {
    let ctx = loopback(RunOptions::default());
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let collector = tokio::spawn(async move {
        let mut findings = Vec::new();
        while let Some(f) = rx.recv().await {
            findings.push(f);
        }
        findings
    });
    let mut reporter = Reporter::new(tx);
    let verdict = mcp2025::run(endpoint, &ctx, &mut reporter).await;
    drop(reporter);
    (verdict, collector.await.expect("collector"))
}

fn outcome(findings: &[Finding], id: &str) -> Outcome {
    findings
        .iter()
        .find(|f| f.rule_id == id)
        .unwrap_or_else(|| panic!("no finding for {id}:\n{}", dump(findings)))
        .outcome
}

fn grade(verdict: &Verdict) -> &str {
    match &verdict.detail {
        VerdictDetail::Mcp { grade, .. } => grade,
        other => panic!("not an MCP verdict: {other:?}"),
    }
}

/// Every rule of the catalogue has exactly one finding, in catalogue order,
/// and every judged finding carries evidence.
fn assert_complete(findings: &[Finding]) {
    let ids: Vec<&str> = findings.iter().map(|f| f.rule_id.as_str()).collect();
    let catalogue: Vec<&str> = mcp2025::rules().iter().map(|r| r.id).collect();
    assert_eq!(ids, catalogue, "findings out of catalogue order");
    for f in findings {
        if f.outcome != Outcome::Skip {
            assert!(!f.evidence.is_empty(), "{} has no evidence", f.rule_id);
        }
    }
}

// ---------------------------------------------------------------------------
// A small 2025-11-25 server over HTTP, correct unless a fault is switched on.
// Faults are named by the rule they break.

#[derive(Clone, Default)]
struct Faults(Arc<HashSet<&'static str>>);

impl Faults {
    fn on(&self, id: &str) -> bool {
        self.0.contains(id)
    }
}

fn rpc_error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The prefix of the session ids the server issues when run with
/// `sessions`: one id per `initialize` (MCP25-HTP-013).
const SESSION: &str = "pc-test-session-";
/// Numbers the session ids.
static SESSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

async fn fault_server(State(faults): State<Faults>, headers: HeaderMap, body: Bytes) -> Response {
    let is_initialize = serde_json::from_slice::<Value>(&body)
        .is_ok_and(|m| m.get("method").and_then(Value::as_str) == Some("initialize"));
    // A present Origin other than loopback gets 403 (MCP25-HTP-018); a
    // present MCP-Protocol-Version it does not speak gets 400 (MCP25-HTP-017).
    let origin = headers.get("origin").and_then(|v| v.to_str().ok());
    if origin.is_some_and(|o| {
        !["http://127.0.0.1", "http://localhost"]
            .iter()
            .any(|ok| o == *ok || o.starts_with(&format!("{ok}:")))
    }) {
        return json_response(
            StatusCode::FORBIDDEN,
            &rpc_error(Value::Null, -32600, "Origin not allowed"),
        );
    }
    if headers
        .get("mcp-protocol-version")
        .is_some_and(|v| v.to_str().ok() != Some("2025-11-25"))
    {
        return json_response(
            StatusCode::BAD_REQUEST,
            &rpc_error(Value::Null, -32600, "unsupported MCP-Protocol-Version"),
        );
    }
    // With sessions, every POST but initialize carries the session id and
    // the negotiated version, as a 2025-11-25 client sends them.
    if faults.on("sessions") && !is_initialize {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        if !header("mcp-session-id").is_some_and(|sid| sid.starts_with(SESSION))
            || header("mcp-protocol-version") != Some("2025-11-25")
        {
            return json_response(
                StatusCode::BAD_REQUEST,
                &rpc_error(
                    Value::Null,
                    -32600,
                    "session id or protocol version missing",
                ),
            );
        }
    }
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return json_response(
            StatusCode::BAD_REQUEST,
            &rpc_error(Value::Null, -32700, "Parse error"),
        );
    };
    if message.is_array() {
        return json_response(
            StatusCode::BAD_REQUEST,
            &rpc_error(Value::Null, -32600, "batches are not supported"),
        );
    }
    let Some(obj) = message.as_object() else {
        return json_response(
            StatusCode::BAD_REQUEST,
            &rpc_error(Value::Null, -32600, "not a message"),
        );
    };
    // JSON-RPC 2.0: `jsonrpc` is exactly "2.0" (MCP25-RPC-005).
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return json_response(
            StatusCode::BAD_REQUEST,
            &rpc_error(Value::Null, -32600, "jsonrpc must be \"2.0\""),
        );
    }
    let method = obj.get("method").and_then(Value::as_str);
    let Some(id) = obj.get("id").cloned() else {
        // A notification (or a response): accepted, never answered.
        return StatusCode::ACCEPTED.into_response();
    };
    let Some(method) = method else {
        return json_response(
            StatusCode::BAD_REQUEST,
            &rpc_error(id, -32600, "a request names a method"),
        );
    };
    if id.is_null() {
        return json_response(
            StatusCode::BAD_REQUEST,
            &rpc_error(Value::Null, -32600, "ids are never null"),
        );
    }
    // MCP ids are strings or integers (MCP25-RPC-005 sends a boolean one).
    if !(id.is_string() || id.is_i64() || id.is_u64()) {
        return json_response(
            StatusCode::BAD_REQUEST,
            &rpc_error(Value::Null, -32600, "ids are strings or integers"),
        );
    }
    let result = match method {
        "initialize" => {
            let asked = message["params"]["protocolVersion"].as_str().unwrap_or("");
            let version = if ["2025-11-25", "2025-06-18"].contains(&asked) {
                asked
            } else {
                "2025-11-25"
            };
            let mut result = json!({
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fault-server", "version": "1.0.0"},
                "instructions": "A small server of protocheck's tests."
            });
            if faults.on("MCP25-LIF-001-instructions") {
                result["instructions"] = json!(["not", "a", "string"]);
            }
            result
        }
        "ping" => json!({}),
        // One page, so no cursor is one the server issued.
        "tools/list"
            if message
                .pointer("/params/cursor")
                .is_some_and(|c| !c.is_null()) =>
        {
            return json_response(StatusCode::OK, &rpc_error(id, -32602, "Invalid cursor"));
        }
        "tools/list" => json!({"tools": [], "_meta": {"dev.protocheck.test/page": 1}}),
        // It lists no tool, so every tool is unknown: invalid params.
        "tools/call" => {
            return json_response(StatusCode::OK, &rpc_error(id, -32602, "Unknown tool"));
        }
        // A method of the specification it does not offer (no `completions`).
        "completion/complete" => {
            return json_response(StatusCode::OK, &rpc_error(id, -32601, "Method not found"));
        }
        _ => {
            return json_response(StatusCode::OK, &rpc_error(id, -32601, "Method not found"));
        }
    };
    let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
    let mut response = json_response(StatusCode::OK, &answer);
    if faults.on("sessions") && method == "initialize" {
        let n = SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Ok(sid) = axum::http::HeaderValue::from_str(&format!("{SESSION}{n}")) {
            response.headers_mut().insert("mcp-session-id", sid);
        }
    }
    response
}

/// The server with `faults` on 127.0.0.1; its MCP endpoint.
async fn fault_server_at(faults: &[&'static str]) -> Endpoint {
    let router = axum::Router::new()
        .route("/mcp", axum::routing::post(fault_server))
        .with_state(Faults(Arc::new(faults.iter().copied().collect())));
    let base = crate::common::app::serve(router).await;
    Endpoint::Http(url::Url::parse(&format!("{base}/mcp")).expect("url"))
}

/// The rules the fault server cannot be judged on (it has no sessions and
/// speaks HTTP) skip; every other rule passes.
#[tokio::test]
async fn the_correct_server_passes_every_rule() {
    // Without sessions, then with a session id it checks on every request.
    for mode in [&[][..], &["sessions"][..]] {
        let endpoint = fault_server_at(mode).await;
        let (verdict, findings) = run(&endpoint).await;
        let verdict = verdict.expect("verdict");
        let report = dump(&findings);
        assert_complete(&findings);
        for f in &findings {
            assert!(
                matches!(f.outcome, Outcome::Pass | Outcome::Skip),
                "{mode:?}: {} is {:?}:\n{report}",
                f.rule_id,
                f.outcome
            );
        }
        // A stdio rule on an HTTP target.
        assert_eq!(
            outcome(&findings, "MCP25-LIF-007"),
            Outcome::Skip,
            "{report}"
        );
        assert_eq!(
            outcome(&findings, "MCP25-RPC-012"),
            Outcome::Pass,
            "{report}"
        );
        assert_eq!(grade(&verdict), "strict", "{report}");
        assert_eq!(verdict.spec_revision, "2025-11-25");
        assert!(verdict.passed);
    }
}

/// A malformed `initialize` result fails MCP25-LIF-001, and every rule that
/// needs it is unverified, not failed (no cascades).
#[tokio::test]
async fn a_broken_initialize_skips_what_depends_on_it() {
    // Instructions that are no string (the fault matrix proves the
    // reference server's serverInfo without a version).
    for fault in ["MCP25-LIF-001-instructions"] {
        let endpoint = fault_server_at(&[fault]).await;
        let (verdict, findings) = run(&endpoint).await;
        let verdict = verdict.expect("verdict");
        let report = dump(&findings);
        assert_complete(&findings);
        assert_eq!(
            outcome(&findings, "MCP25-LIF-001"),
            Outcome::Fail,
            "{fault}: {report}"
        );
        for f in &findings {
            let rule = mcp2025::rule(&f.rule_id).expect("rule");
            if rule.requirements().contains(&"MCP25-LIF-001") {
                assert_eq!(f.outcome, Outcome::Skip, "{report}");
                assert!(
                    f.message.starts_with("not verified: MCP25-LIF-001 failed")
                        || f.message.starts_with("not applicable"),
                    "{}: {}",
                    f.rule_id,
                    f.message
                );
            }
        }
        assert_eq!(grade(&verdict), "non-compliant");
    }
}

/// A server that answers `initialize` with an earlier revision is judged
/// on nothing else, and the verdict says which revision it speaks.
#[tokio::test]
async fn a_server_of_another_revision_meets_the_era_gate() {
    async fn old(body: Bytes) -> Response {
        let message: Value = serde_json::from_slice(&body).unwrap_or_default();
        let Some(id) = message.get("id").cloned() else {
            return StatusCode::ACCEPTED.into_response();
        };
        let result = match message["method"].as_str() {
            Some("initialize") => json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "serverInfo": {"name": "old", "version": "1"}
            }),
            _ => json!({}),
        };
        json_response(
            StatusCode::OK,
            &json!({"jsonrpc": "2.0", "id": id, "result": result}),
        )
    }
    let router = axum::Router::new().route("/mcp", axum::routing::post(old));
    let base = crate::common::app::serve(router).await;
    let endpoint = Endpoint::Http(url::Url::parse(&format!("{base}/mcp")).expect("url"));
    let (verdict, findings) = run(&endpoint).await;
    let verdict = verdict.expect("verdict");
    let report = dump(&findings);
    assert_eq!(
        outcome(&findings, "MCP25-LIF-001"),
        Outcome::Info,
        "{report}"
    );
    assert!(
        verdict
            .summary
            .contains("speaks 2025-06-18, not 2025-11-25"),
        "{}",
        verdict.summary
    );
    let skipped = findings
        .iter()
        .find(|f| f.rule_id == "MCP25-RPC-007")
        .expect("finding");
    assert_eq!(skipped.outcome, Outcome::Skip, "{report}");
    assert!(
        skipped
            .message
            .contains("speaks 2025-06-18, not 2025-11-25"),
        "{}",
        skipped.message
    );

    // A 2026-07-28 server refuses initialize the way that revision does.
    async fn modern(body: Bytes) -> Response {
        let message: Value = serde_json::from_slice(&body).unwrap_or_default();
        json_response(
            StatusCode::NOT_FOUND,
            &rpc_error(message["id"].clone(), -32601, "Method not found"),
        )
    }
    let router = axum::Router::new().route("/mcp", axum::routing::post(modern));
    let base = crate::common::app::serve(router).await;
    let endpoint = Endpoint::Http(url::Url::parse(&format!("{base}/mcp")).expect("url"));
    let (verdict, findings) = run(&endpoint).await;
    let verdict = verdict.expect("verdict");
    let report = dump(&findings);
    assert_eq!(
        outcome(&findings, "MCP25-LIF-001"),
        Outcome::Info,
        "{report}"
    );
    assert!(
        verdict.summary.contains("speaks 2026-07-28 only"),
        "{}",
        verdict.summary
    );
    assert!(verdict.passed, "{report}");
}

/// A target that does not answer at all is unreachable, not non-compliant.
#[tokio::test]
async fn an_unreachable_target_gives_no_verdict() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    let endpoint =
        Endpoint::Http(url::Url::parse(&format!("http://127.0.0.1:{port}/mcp")).expect("url"));
    let (verdict, findings) = run(&endpoint).await;
    assert!(
        matches!(verdict, Err(EngineError::Unreachable(_))),
        "{verdict:?}"
    );
    assert!(findings.is_empty());
    let missing = Endpoint::Stdio("/nonexistent/protocheck-mcp25-server".into());
    let (verdict, _) = run(&missing).await;
    assert!(
        matches!(verdict, Err(EngineError::Unreachable(_))),
        "{verdict:?}"
    );
    // A child that prints a banner and exits: the error says how it ended.
    let quits = Endpoint::Stdio("sh -c 'echo not-json; echo bye >&2; exit 3'".into());
    let (verdict, findings) = run(&quits).await;
    match verdict {
        Err(EngineError::Unreachable(err)) => {
            let text = err.to_string();
            // The child may be gone before or after the first write: a
            // closed stdout or a broken pipe, with its exit status either way.
            assert!(text.contains("status: 3"), "the exit is quoted: {text}");
            assert!(text.contains("bye"), "the stderr tail is quoted: {text}");
        }
        other => panic!("{other:?}"),
    }
    assert!(findings.is_empty());
}

// ---------------------------------------------------------------------------
// Servers protocheck did not write.

fn say_skipped(what: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED: {what}");
}

fn tool(var: &str) -> Option<PathBuf> {
    let found = std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var("PROTOCHECK_REQUIRE_TOOLS").as_deref() != Ok("1"),
            "{var} names no file and PROTOCHECK_REQUIRE_TOOLS=1"
        );
        say_skipped(&format!("MCP 2025-11-25 interop: {var} is not set"));
    }
    found
}

/// A server process that prints `PORT n` once it listens; killed when dropped.
struct Running {
    child: Child,
    port: u16,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(mut cmd: Command) -> Running {
    cmd.env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("start the server");
    let stdout = child.stdout.take().expect("stdout");
    let mut running = Running { child, port: 0 };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        for line in lines.by_ref() {
            let Ok(line) = line else { break };
            if let Some(port) = line.strip_prefix("PORT ") {
                let _ = tx.send(port.trim().parse::<u16>().ok());
                break;
            }
        }
        for _ in lines {}
    });
    running.port = rx
        .recv_timeout(Duration::from_secs(120))
        .ok()
        .flatten()
        .expect("the server printed no `PORT n`");
    // Ready once it accepts a connection.
    for _ in 0..300 {
        if std::net::TcpStream::connect(("127.0.0.1", running.port)).is_ok() {
            return running;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the server never listened on {}", running.port);
}

fn panel(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop/mcp")
        .join(file)
}

/// What a run against a real server must show: no rule the server is known
/// to honour fails, and the rules named pass.
fn assert_judged(name: &str, findings: &[Finding], must_pass: &[&str], may_fail: &[&str]) {
    let report = dump(findings);
    assert_complete(findings);
    for id in must_pass {
        assert_eq!(
            outcome(findings, id),
            Outcome::Pass,
            "{name}: {id}\n{report}"
        );
    }
    for f in findings {
        if !may_fail.contains(&f.rule_id.as_str()) {
            assert!(
                !matches!(f.outcome, Outcome::Fail),
                "{name}: {} fails\n{report}",
                f.rule_id
            );
        }
    }
}

/// The rules every real 2025-11-25 server here passes, on both transports.
const CORE: &[&str] = &[
    "MCP25-LIF-001",
    "MCP25-LIF-002",
    "MCP25-LIF-005",
    "MCP25-RPC-001",
    "MCP25-RPC-002",
    "MCP25-RPC-003",
    "MCP25-RPC-007",
    "MCP25-RPC-009",
    "MCP25-RPC-011",
    "MCP25-UTL-001",
    "MCP25-UTL-002",
];

#[tokio::test]
async fn the_python_sdk_over_http() {
    let Some(python) = tool("PROTOCHECK_INTEROP_PYTHON") else {
        return;
    };
    for mode in ["stateless-json", "stateful"] {
        let mut cmd = Command::new(&python);
        cmd.arg(panel("sdk_server.py")).arg(mode).arg("0");
        let server = start(cmd);
        let endpoint = Endpoint::Http(
            url::Url::parse(&format!("http://127.0.0.1:{}/mcp", server.port)).expect("url"),
        );
        let (verdict, findings) = run(&endpoint).await;
        let verdict = verdict.unwrap_or_else(|e| panic!("sdk {mode}: {e}"));
        println!("sdk {mode}: {}\n{}", verdict.summary, dump(&findings));
        assert_judged(&format!("sdk {mode}"), &findings, CORE, &[]);
    }
}

#[tokio::test]
async fn the_python_sdk_over_stdio() {
    let Some(python) = tool("PROTOCHECK_INTEROP_PYTHON") else {
        return;
    };
    let endpoint = Endpoint::Stdio(format!(
        "'{}' '{}' stdio",
        python.display(),
        panel("sdk_server.py").display()
    ));
    let (verdict, findings) = run(&endpoint).await;
    let verdict = verdict.unwrap_or_else(|e| panic!("sdk stdio: {e}"));
    println!("sdk stdio: {}\n{}", verdict.summary, dump(&findings));
    assert_judged("sdk stdio", &findings, CORE, &[]);
}

#[tokio::test]
async fn server_everything_over_http_and_stdio() {
    let (Some(node), Some(everything)) = (
        tool("PROTOCHECK_INTEROP_NODE"),
        tool("PROTOCHECK_INTEROP_EVERYTHING"),
    ) else {
        return;
    };
    let mut cmd = Command::new(&node);
    cmd.arg("--require")
        .arg(panel("loopback.cjs"))
        .arg(&everything)
        .arg("streamableHttp")
        .env("PORT", "0");
    let server = start(cmd);
    let http = Endpoint::Http(
        url::Url::parse(&format!("http://127.0.0.1:{}/mcp", server.port)).expect("url"),
    );
    let stdio = Endpoint::Stdio(format!(
        "'{}' '{}' stdio",
        node.display(),
        everything.display()
    ));
    for endpoint in [http, stdio] {
        let (verdict, findings) = run(&endpoint).await;
        let verdict = verdict.unwrap_or_else(|e| panic!("everything {endpoint}: {e}"));
        println!(
            "everything {endpoint}: {}\n{}",
            verdict.summary,
            dump(&findings)
        );
        // Over HTTP it accepts any Origin (its CORS allows every origin),
        // which the transport's 403 sentence forbids (MCP25-HTP-018), and its
        // event store replays the events of every stream after the one named
        // by Last-Event-ID (MCP25-HTP-011), and a session ended by DELETE
        // gets 400, not 404 (MCP25-HTP-015). On both transports, `tasks/get`
        // and `tasks/result` with a `taskId` that is a number, or none, get
        // -32603 where tasks' "Protocol Errors" name -32602 for an invalid
        // taskId with a MUST (MCP25-TSK-001).
        let may_fail: &[&str] = match endpoint {
            Endpoint::Http(_) => &[
                "MCP25-HTP-011",
                "MCP25-HTP-015",
                "MCP25-HTP-018",
                "MCP25-TSK-001",
            ],
            Endpoint::Stdio(_) => &["MCP25-TSK-001"],
        };
        assert_judged(&format!("everything {endpoint}"), &findings, CORE, may_fail);
        if matches!(endpoint, Endpoint::Http(_)) {
            let report = dump(&findings);
            for id in may_fail {
                assert_eq!(outcome(&findings, id), Outcome::Fail, "{id}\n{report}");
            }
        }
        // On stdio it serves a request before initialize (reported, never
        // failed) and drops a request without `method` unanswered, which
        // passes as long as it keeps serving.
        if matches!(endpoint, Endpoint::Stdio(_)) {
            let report = dump(&findings);
            assert_eq!(
                outcome(&findings, "MCP25-LIF-007"),
                Outcome::Info,
                "{report}"
            );
            assert_eq!(
                outcome(&findings, "MCP25-RPC-005"),
                Outcome::Pass,
                "{report}"
            );
        }
    }
}

/// `protocheck check --limited-token`: MCP25-AUT-007 is judged with the
/// token given, passes on the reference server that refuses it the scope it
/// lacks, warns (a SHOULD) on the one that answers 401 instead, and without the flag is
/// skipped with a reason naming the flag.
#[tokio::test]
async fn the_limited_token_is_given_on_the_command_line() {
    use protocheck::reference::mcp2025::{
        MCP25_SCOPE_READ, MCP25_SCOPE_TOOLS, Mcp25ReferenceConfig, serve_mcp25_reference,
    };
    for (fault, token_given, expected) in [
        (None, true, "pass"),
        (Some("MCP25-AUT-007"), true, "warn"),
        (None, false, "skip"),
    ] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        let faults: Vec<&str> = fault.into_iter().collect();
        let config = Mcp25ReferenceConfig::new().with_faults(&faults).with_auth();
        let hour = Duration::from_secs(3600);
        let full = config
            .mint_token(
                &url,
                &format!("{MCP25_SCOPE_READ} {MCP25_SCOPE_TOOLS}"),
                hour,
            )
            .expect("a token");
        let limited = config
            .mint_token(&url, MCP25_SCOPE_READ, hour)
            .expect("a token");
        let server = tokio::spawn(async move {
            let _ = serve_mcp25_reference(listener, config).await;
        });
        let mut cmd = crate::common::cli::protocheck();
        cmd.args([
            "check",
            &url,
            "--suite",
            "mcp",
            "--mcp-revision",
            "2025-11-25",
        ])
        .args(["--format", "json"])
        .env("PROTOCHECK_BEARER_TOKEN", &full);
        if token_given {
            cmd.env("PROTOCHECK_LIMITED_TOKEN", &limited);
        }
        let out = crate::common::cli::output(cmd).await;
        server.abort();
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}\n{}", crate::common::cli::show(&out)));
        let finding = report["findings"]
            .as_array()
            .and_then(|f| f.iter().find(|f| f["rule_id"] == "MCP25-AUT-007"))
            .unwrap_or_else(|| panic!("no AUT-007\n{}", crate::common::cli::show(&out)))
            .clone();
        assert_eq!(finding["outcome"], expected, "{fault:?}: {finding}");
        let message = finding["message"].as_str().unwrap_or_default();
        if !token_given {
            assert!(message.contains("--limited-token"), "{message}");
        }
        // Neither token is ever printed.
        let printed = String::from_utf8_lossy(&out.stdout);
        assert!(!printed.contains(&full) && !printed.contains(&limited));
    }
}

/// A 2025-11-25 server that answers `initialize` with 401 is judged on its
/// authorization only: no rule fails for the 401 (LIF-001 included), the
/// authorization rules are judged, and the verdict is "not judged", never a
/// grade.
#[tokio::test]
async fn a_protected_server_without_a_token_is_judged_on_its_authorization_only() {
    use protocheck::reference::mcp2025::{Mcp25ReferenceConfig, serve_mcp25_reference};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let config = Mcp25ReferenceConfig::new().with_auth();
    let server = tokio::spawn(async move {
        let _ = serve_mcp25_reference(listener, config).await;
    });
    let mut cmd = crate::common::cli::protocheck();
    cmd.args([
        "check",
        &url,
        "--suite",
        "mcp",
        "--mcp-revision",
        "2025-11-25",
        "--format",
        "json",
    ]);
    let out = crate::common::cli::output(cmd).await;
    server.abort();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}\n{}", crate::common::cli::show(&out)));
    assert_eq!(report["verdict"]["grade"], "not judged", "{report}");
    assert_eq!(report["verdict"]["withheld"], "authorization required");
    assert_eq!(out.status.code(), Some(1));
    let findings = report["findings"].as_array().expect("findings");
    for f in findings {
        let id = f["rule_id"].as_str().unwrap_or_default();
        if id == "MCP25-AUT-001" {
            assert_eq!(f["outcome"], "pass", "{f}");
        } else if !id.starts_with("MCP25-AUT-") {
            assert_eq!(f["outcome"], "skip", "{f}");
        }
        assert_ne!(f["outcome"], "fail", "{f}");
    }
}

/// A stdio server whose process ends on a valid request (`prompts/get`,
/// status 3): the rules judged after it meet a dead pipe, so none of them
/// fails, and the run gets no grade.
#[tokio::test]
async fn a_process_that_ends_mid_run_fails_no_rule_and_gets_no_grade() {
    let python = tool("PROTOCHECK_INTEROP_PYTHON").unwrap_or_else(|| PathBuf::from("python3"));
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("ends_on_get.py");
    std::fs::write(
        &script,
        format!(
            "import os, sys\nsys.path.insert(0, {:?})\nimport server\n\n\
             class EndsOnGet(server.Server):\n    def before(self, call, method):\n        \
             if method == 'prompts/get':\n            sys.stderr.write('fatal: prompts/get\\n')\n            \
             sys.stderr.flush()\n            os._exit(3)\n\nserver.serve_stdio(EndsOnGet())\n",
            panel("spec25").display().to_string()
        ),
    )
    .expect("write the server");
    let endpoint = Endpoint::Stdio(format!("'{}' '{}'", python.display(), script.display()));
    let (verdict, findings) = run(&endpoint).await;
    let verdict = verdict.unwrap_or_else(|e| panic!("ends on get: {e}"));
    println!("ends on get: {}\n{}", verdict.summary, dump(&findings));
    let failed: Vec<&str> = findings
        .iter()
        .filter(|f| f.outcome == Outcome::Fail)
        .map(|f| f.rule_id.as_str())
        .collect();
    assert!(failed.is_empty(), "judged on a dead process: {failed:?}");
    assert_eq!(
        verdict.mcp_grade(),
        Some("not judged"),
        "{}",
        verdict.summary
    );
    assert!(
        verdict
            .summary
            .contains("process ended during the run (exit status: 3)"),
        "{}",
        verdict.summary
    );
}
