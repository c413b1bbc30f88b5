//! The `protocheck` binary: exit codes of `check`, `migrate`, and `serve` with
//! a graceful stop on SIGTERM.

use crate::common;

use common::cli::{output, protocheck, show};

use common::app::{TestApp, mcp_reference, mcp_reference_with, rcp_reference, worker_config};
use std::process::{Command, Stdio};
use std::time::Duration;

#[tokio::test]
async fn check_exits_0_on_a_passing_verdict_1_on_a_failing_one_and_2_when_unreachable() {
    let good = rcp_reference(&[], Duration::ZERO).await;
    let mut cmd = protocheck();
    cmd.args(["check", &good, "--suite", "rcp"]);
    let out = output(cmd).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("verdict: L2"), "{stdout}");

    let broken = rcp_reference(&["RCP-L0-003"], Duration::ZERO).await;
    let mut cmd = protocheck();
    cmd.args(["check", &broken, "--suite", "rcp", "--json"]);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json prints JSON");
    assert_eq!(doc["verdict"]["passed"], false);
    let failed: Vec<&str> = doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["outcome"] == "fail")
        .filter_map(|f| f["rule_id"].as_str())
        .collect();
    // The fault drops the level to none, below the declared L2: the honesty
    // check fails with it.
    assert_eq!(failed, ["RCP-L0-003", "RCP-CERT-001"]);

    let mut cmd = protocheck();
    cmd.args(["check", "http://127.0.0.1:9/rcp", "--suite", "rcp"]);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("could not be reached"));

    let mut cmd = protocheck();
    cmd.args(["check", "ftp://example.com/"]);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("scheme `ftp`"));

    let mut cmd = protocheck();
    cmd.args(["check", "http://127.0.0.1:9/", "--public-only"]);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("loopback"));

    let mut cmd = protocheck();
    cmd.args(["frobnicate"]);
    assert_eq!(
        output(cmd).await.status.code(),
        Some(2),
        "an unknown command is a usage error"
    );
}

#[tokio::test]
async fn migrate_applies_and_reverts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("m.db").display());
    for args in [vec!["migrate"], vec!["migrate", "--down"], vec!["migrate"]] {
        let mut cmd = protocheck();
        cmd.args(&args).env("DATABASE_URL", &url);
        let out = output(cmd).await;
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let mut cmd = protocheck();
    cmd.args(["migrate"])
        .env("DATABASE_URL", "mysql://localhost/x");
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("scheme `mysql`"));
}

#[cfg(unix)]
#[tokio::test]
async fn serve_answers_and_stops_gracefully_on_sigterm() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let mut child = protocheck()
        .arg("serve")
        .env(
            "DATABASE_URL",
            format!("sqlite://{}", dir.path().join("s.db").display()),
        )
        .env("PROTOCHECK_BIND", format!("127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn serve");
    let client = reqwest::Client::new();
    let mut ready = false;
    for _ in 0..100 {
        if let Ok(r) = client
            .get(format!("http://127.0.0.1:{port}/readyz"))
            .send()
            .await
        {
            ready = r.status() == 200;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ready, "serve became ready");
    let pid = child.id().to_string();
    let killed = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    let status = tokio::task::spawn_blocking(move || child.wait().expect("wait"))
        .await
        .expect("join");
    assert_eq!(status.code(), Some(0), "a graceful stop exits 0");
}

/// Starts `serve` on a free loopback port with `env`; its child and address,
/// once `/readyz` answers 200.
async fn serve_with(db: &std::path::Path, env: &[(&str, &str)]) -> (std::process::Child, String) {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let mut cmd = protocheck();
    cmd.arg("serve")
        .env("DATABASE_URL", format!("sqlite://{}", db.display()))
        .env("PROTOCHECK_BIND", format!("127.0.0.1:{port}"))
        .env("PROTOCHECK_WORKERS", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn serve");
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    for _ in 0..300 {
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            panic!("serve with {env:?} exited with {status}: {err}");
        }
        if let Ok(r) = client.get(format!("{base}/readyz")).send().await
            && r.status() == 200
        {
            return (child, base);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("serve with {env:?} never became ready");
}

/// `PROTOCHECK_ALLOW_PRIVATE_TARGETS` takes 1/0, yes/no, on/off and
/// true/false, like every boolean setting: the service starts with each, and
/// the value decides whether a loopback target is accepted.
#[tokio::test]
async fn serve_takes_1_and_0_and_their_other_spellings_for_a_boolean_variable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let client = reqwest::Client::new();
    for (i, (word, allowed)) in [("1", true), ("0", false), ("yes", true), ("off", false)]
        .into_iter()
        .enumerate()
    {
        let db = dir.path().join(format!("b{i}.db"));
        let (mut child, base) =
            serve_with(&db, &[("PROTOCHECK_ALLOW_PRIVATE_TARGETS", word)]).await;
        let resp = client
            .post(format!("{base}/api/v1/runs"))
            .json(&serde_json::json!({"url": "http://127.0.0.1:9/rcp", "suite": "rcp"}))
            .send()
            .await
            .expect("submit");
        let status = resp.status();
        let body = resp.text().await.expect("body");
        if allowed {
            assert_eq!(status, 202, "{word}: {body}");
        } else {
            assert!(status.is_client_error(), "{word}: {status} {body}");
            assert!(body.contains("127.0.0.1"), "{word}: {body}");
        }
        child.kill().expect("kill");
        let _ = child.wait();
    }
    // A word that is none of them is a usage error, named as such.
    let mut cmd = protocheck();
    cmd.arg("serve")
        .env(
            "DATABASE_URL",
            format!("sqlite://{}", dir.path().join("x.db").display()),
        )
        .env("PROTOCHECK_ALLOW_PRIVATE_TARGETS", "maybe");
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("possible values: 1, 0, true, false, yes, no, on, off"),
        "{}",
        show(&out)
    );
}

#[tokio::test]
async fn check_grades_an_mcp_server() {
    let good = mcp_reference(&[]).await;
    let mut cmd = protocheck();
    cmd.args(["check", &good, "--suite", "mcp"]);
    let out = output(cmd).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("verdict: strict"), "{stdout}");

    let broken = mcp_reference(&["MCP-STL-001"]).await;
    let mut cmd = protocheck();
    cmd.args(["check", &broken, "--json"]);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json prints JSON");
    assert_eq!(doc["verdict"]["grade"], "non-compliant");
}

/// `--concurrency` bounds the requests in flight to the target; the verdict
/// is the same one at a time and 16 at a time, and a bound outside 1 to 32
/// is refused before anything is sent.
#[tokio::test]
async fn check_takes_a_target_concurrency_and_keeps_its_verdict() {
    let broken = mcp_reference(&["MCP-HDR-001"]).await;
    let mut verdicts = Vec::new();
    for n in ["1", "16"] {
        let mut cmd = protocheck();
        cmd.args(["check", &broken, "--json", "--concurrency", n]);
        let out = output(cmd).await;
        assert_eq!(out.status.code(), Some(1), "{}", show(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let mut outcomes: Vec<(String, String)> = doc["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| (f["rule_id"].to_string(), f["outcome"].to_string()))
            .collect();
        outcomes.sort();
        verdicts.push((doc["verdict"]["grade"].clone(), outcomes));
    }
    assert_eq!(verdicts[0], verdicts[1], "the same verdict at 1 and at 16");
    for bad in ["0", "33", "many"] {
        let mut cmd = protocheck();
        cmd.args(["check", &broken, "--concurrency", bad]);
        let out = output(cmd).await;
        assert_eq!(out.status.code(), Some(2), "{}", show(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr)
                .contains("is not a number of requests from 1 to 32"),
            "{}",
            show(&out)
        );
    }
}

/// `--max-answer-bytes` outside 64 KiB to 1 GiB (or not a number) is
/// refused before anything is sent, flag or environment variable alike.
#[tokio::test]
async fn check_refuses_a_read_limit_out_of_bounds() {
    for bad in ["1000", "2000000000", "16MiB"] {
        let mut cmd = protocheck();
        cmd.args(["check", "http://127.0.0.1:9/mcp", "--max-answer-bytes", bad]);
        let out = output(cmd).await;
        assert_eq!(out.status.code(), Some(2), "{}", show(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr)
                .contains("is not a number of bytes from 65536 to 1073741824"),
            "{}",
            show(&out)
        );
    }
    let mut cmd = protocheck();
    cmd.args(["check", "http://127.0.0.1:9/mcp"])
        .env("PROTOCHECK_MAX_ANSWER_BYTES", "12");
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
}

/// A server that answers 401 with a Bearer challenge naming its protected
/// resource metadata is recognised as MCP by `auto`, and with no token its
/// verdict is "not judged", never a grade: only the authorization rules
/// could be exercised.
#[tokio::test]
async fn check_recognises_a_protected_server_and_gives_it_no_grade_without_a_token() {
    use protocheck::reference::mcp::McpReferenceConfig;
    let config = McpReferenceConfig::new(Default::default())
        .expect("no faults")
        .with_auth();
    let url = mcp_reference_with(config).await;
    let mut cmd = protocheck();
    cmd.args(["check", &url]);
    let out = output(cmd).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        stdout.contains("not judged: authorization required"),
        "{stdout}"
    );
    assert!(!stdout.contains("verdict: strict"), "{stdout}");

    let mut cmd = protocheck();
    cmd.args(["check", &url, "--json"]);
    let out = output(cmd).await;
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json prints JSON");
    assert_eq!(doc["verdict"]["grade"], "not judged", "{doc}");
    assert_eq!(doc["verdict"]["withheld"], "authorization required");
    assert_eq!(doc["verdict"]["passed"], false);
    let findings = doc["findings"].as_array().expect("findings");
    let judged: Vec<&str> = findings
        .iter()
        .filter(|f| f["outcome"] != "skip")
        .filter_map(|f| f["rule_id"].as_str())
        .collect();
    assert!(!judged.is_empty(), "the authorization rules are judged");
    assert!(
        judged
            .iter()
            .all(|id| id.starts_with("MCP-AUT-") || *id == "MCP-SEC-002"),
        "{judged:?}"
    );
}

#[tokio::test]
async fn verify_checks_an_attestation_offline_with_the_published_keys() {
    let target = rcp_reference(&[], Duration::ZERO).await;
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let pool = app.workers(worker_config(1, Duration::from_secs(30)));
    let body: serde_json::Value = app
        .post_json(
            "/api/v1/runs",
            &serde_json::json!({"url": target, "suite": "rcp"}),
        )
        .await
        .json()
        .await
        .expect("json");
    let id = body["id"].as_str().expect("id").to_owned();
    app.wait_finished(&id, Duration::from_secs(60)).await;
    pool.shutdown().await;

    let dir = tempfile::tempdir().expect("tempdir");
    let envelope = app
        .get_text(&format!("/api/v1/runs/{id}/attestation"))
        .await;
    let keys = app.get_text("/.well-known/protocheck/keys.json").await;
    let envelope_path = dir.path().join("attestation.json");
    let keys_path = dir.path().join("keys.json");
    std::fs::write(&envelope_path, &envelope).expect("write");
    std::fs::write(&keys_path, &keys).expect("write");

    let mut cmd = protocheck();
    cmd.arg("verify")
        .arg(&envelope_path)
        .arg("--keys")
        .arg(&keys_path);
    let out = output(cmd).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // One changed byte of the signed payload: not verified.
    let mut doc: serde_json::Value = serde_json::from_str(&envelope).expect("envelope json");
    let payload = doc["payload"].as_str().expect("payload").to_owned();
    let rest = payload.get(1..).unwrap_or_default();
    let first = if payload.starts_with('e') { 'f' } else { 'e' };
    let flipped = format!("{first}{rest}");
    doc["payload"] = serde_json::Value::String(flipped);
    std::fs::write(&envelope_path, doc.to_string()).expect("write");
    let mut cmd = protocheck();
    cmd.arg("verify")
        .arg(&envelope_path)
        .arg("--keys")
        .arg(&keys_path);
    assert_eq!(
        output(cmd).await.status.code(),
        Some(1),
        "a tampered attestation does not verify"
    );
}

#[tokio::test]
async fn check_json_is_an_alias_of_format_json_and_output_writes_the_report_to_a_file() {
    let good = rcp_reference(&[], Duration::ZERO).await;
    let mut cmd = protocheck();
    cmd.args(["check", &good, "--suite", "rcp", "--json"]);
    let alias = output(cmd).await;
    assert_eq!(alias.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&alias.stdout).expect("--json prints JSON");
    assert_eq!(doc["report_version"], "1");
    assert_eq!(doc["verdict"]["certified_level"], "L2");

    let mut cmd = protocheck();
    cmd.args(["check", &good, "--json", "--format", "sarif"]);
    assert_eq!(
        output(cmd).await.status.code(),
        Some(2),
        "--json and --format together are a usage error"
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("report.sarif");
    let mut cmd = protocheck();
    cmd.args([
        "check", &good, "--suite", "rcp", "--format", "sarif", "--output",
    ])
    .arg(&file);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("verdict: L2") && !stdout.contains("\"runs\""),
        "stdout gets the summary, the file the report: {stdout}"
    );
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("report written"))
            .expect("SARIF JSON");
    assert_eq!(sarif["version"], "2.1.0");

    let mut cmd = protocheck();
    cmd.args(["check", &good, "--suite", "rcp", "--output"])
        .arg(dir.path().join("no/such/dir/report.txt"));
    let out = output(cmd).await;
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unwritable --output is a usage error"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write"));
}
