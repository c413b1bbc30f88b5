//! `protocheck submit`: the CI client against a live protocheck on loopback,
//! with the exit-code contract (0 passes, 1 fails, 2 usage or network error),
//! the polling fallback and the wait on `429 Retry-After`.

use crate::common;

use common::app::{TestApp, rcp_reference, worker_config};
use common::cli::{output, protocheck, show};
use serde_json::{Value, json};
use std::process::{Child, Output, Stdio};
use std::time::Duration;

/// `protocheck submit TARGET --server SERVER ARGS…`, run to its end.
async fn submit(target: &str, server: &str, args: &[&str]) -> Output {
    let mut cmd = protocheck();
    cmd.args(["submit", target, "--server", server]).args(args);
    output(cmd).await
}

/// `protocheck serve` as its own process on a free loopback port, with a
/// SQLite database in `dir`. Killed on drop.
struct Served {
    child: Child,
    base: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn live_serve(dir: &std::path::Path) -> Served {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let child = protocheck()
        .arg("serve")
        .env(
            "DATABASE_URL",
            format!("sqlite://{}", dir.join("serve.db").display()),
        )
        .env("PROTOCHECK_BIND", format!("127.0.0.1:{port}"))
        .env("PROTOCHECK_WORKERS", "2")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn serve");
    let served = Served {
        child,
        base: format!("http://127.0.0.1:{port}"),
    };
    let client = reqwest::Client::new();
    for _ in 0..300 {
        if let Ok(r) = client.get(format!("{}/readyz", served.base)).send().await
            && r.status() == 200
        {
            return served;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("serve did not become ready at {}", served.base);
}

#[tokio::test]
async fn submit_wait_against_a_live_serve_exits_by_the_verdict() {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = live_serve(dir.path()).await;

    let good = rcp_reference(&[], Duration::ZERO).await;
    let out = submit(
        &good,
        &served.base,
        &["--suite", "rcp", "--wait", "--format", "json"],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let report: Value = serde_json::from_slice(&out.stdout).expect("the report is JSON");
    assert_eq!(report["verdict"]["passed"], true, "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("PASS") && stderr.contains("RCP-L0-"),
        "findings are shown while waiting: {stderr}"
    );

    let broken = rcp_reference(&["RCP-L0-003"], Duration::ZERO).await;
    let out = submit(
        &broken,
        &served.base,
        &["--suite", "rcp", "--wait", "--format", "json"],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let report: Value = serde_json::from_slice(&out.stdout).expect("the report is JSON");
    assert_eq!(report["verdict"]["passed"], false);

    // A target nobody answers on: the run ends as `error`, which is not a failed verdict.
    let out = submit(
        "http://127.0.0.1:9/rcp",
        &served.base,
        &["--suite", "rcp", "--wait"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("ended as error"),
        "{}",
        show(&out)
    );

    // The same gates and formats as `check`: JUnit on stdout, the level gate met.
    let out = submit(
        &good,
        &served.base,
        &[
            "--suite",
            "rcp",
            "--wait",
            "--quiet",
            "--format",
            "junit",
            "--min-level",
            "L2",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let xml = String::from_utf8_lossy(&out.stdout);
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("PASS"),
        "--quiet"
    );

    // Without --wait: the run id on stdout, exit 0 once it is accepted (a
    // server not run in the cooldown: `good` was, moments ago).
    let other = rcp_reference(&[], Duration::ZERO).await;
    let out = submit(&other, &served.base, &["--force"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(uuid::Uuid::parse_str(&id).is_ok(), "{}", show(&out));
}

#[tokio::test]
async fn submit_polls_when_asked_and_waits_out_429() {
    let db = common::sqlite().await;
    // 60 a minute: a burst of 60, then one more each second.
    let app = TestApp::start(&db, 60).await;
    let _pool = app.workers(worker_config(2, Duration::from_secs(30)));
    let good = rcp_reference(&[], Duration::ZERO).await;

    // Spend the burst with malformed submissions (they count too).
    for _ in 0..70 {
        app.post_json("/api/v1/runs", &json!({"nonsense": true}))
            .await;
    }
    let out = submit(
        &good,
        &app.base,
        &["--suite", "rcp", "--wait", "--poll", "--format", "json"],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rate limited"),
        "the 429 was waited out: {stderr}"
    );
    assert!(
        !stderr.contains("PASS"),
        "polling sees no findings stream: {stderr}"
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("the report is JSON");
    assert_eq!(report["verdict"]["passed"], true);
}

#[tokio::test]
async fn submit_usage_and_network_errors_exit_2() {
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 30).await;

    // The service refuses the submission (a scheme it cannot check): 2, with its reason.
    let out = submit("ftp://example.com/", &app.base, &[]).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("refused"),
        "{}",
        show(&out)
    );

    for server in [
        "not a url",
        "ftp://127.0.0.1/",
        "http://user:pw@127.0.0.1:1/",
    ] {
        let out = submit("http://127.0.0.1:1/", server, &[]).await;
        assert_eq!(out.status.code(), Some(2), "{server}: {}", show(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--server"),
            "{server}: {}",
            show(&out)
        );
    }

    // Gates need --wait, and must fit the suite: refused before any run is queued.
    for args in [
        vec!["--min-grade", "strict"],
        vec!["--wait", "--suite", "mcp", "--min-level", "L1"],
        vec![
            "--wait",
            "--expected-failures",
            "/nonexistent/baseline.yaml",
        ],
    ] {
        let mut cmd = protocheck();
        cmd.args(["submit", "http://127.0.0.1:1/", "--server", &app.base]);
        cmd.args(&args);
        let out = output(cmd).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
    }
    let key = protocheck::target::CanonicalUrl::parse("http://127.0.0.1:1/")
        .expect("canonical")
        .key();
    let (status, _) = app.get_json(&format!("/api/v1/targets/{key}")).await;
    assert_eq!(status, 404, "refused flags queued nothing");

    // A key the service does not know is refused (401), never used anonymously.
    let mut cmd = protocheck();
    cmd.args(["submit", "http://127.0.0.1:1/", "--server", &app.base])
        .env("PROTOCHECK_API_KEY", "pck_not-a-key");
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("401"),
        "{}",
        show(&out)
    );

    // No service listens there: a network error, not a verdict.
    let out = submit(
        "http://127.0.0.1:1/",
        "http://127.0.0.1:9",
        &["--timeout", "5s"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
}

/// `submit --wait --github`, as the GitHub Action runs it: the step outputs
/// (with the run's page and the target's badge on the service) and a job
/// summary naming the failing rule.
#[tokio::test]
async fn submit_wait_with_github_writes_the_outputs_and_a_summary() {
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let _pool = app.workers(worker_config(1, Duration::from_secs(30)));
    let broken = rcp_reference(&["RCP-L0-003"], Duration::ZERO).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let outputs = dir.path().join("github_output");
    let summary = dir.path().join("github_step_summary");
    let report = dir.path().join("report.sarif");
    let mut cmd = protocheck();
    cmd.args(["submit", &broken, "--server", &app.base])
        .args(["--suite", "rcp", "--wait", "--quiet", "--format", "sarif"])
        .arg("--output")
        .arg(&report)
        .args(["--min-level", "L1", "--github"])
        .env("GITHUB_OUTPUT", &outputs)
        .env("GITHUB_STEP_SUMMARY", &summary);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let written = std::fs::read_to_string(&outputs).expect("outputs");
    let value = |name: &str| {
        written
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("no {name} in {written}"))
            .to_owned()
    };
    assert_eq!(value("passed"), "false", "{written}");
    assert_eq!(value("grade"), "", "{written}");
    assert!(!value("level").is_empty(), "{written}");
    assert_eq!(value("report"), report.display().to_string());
    let run_url = value("run-url");
    assert!(
        run_url.starts_with(&format!("{}/runs/", app.base)),
        "{written}"
    );
    let badge_url = value("badge-url");
    assert!(
        badge_url.starts_with(&format!("{}/badge/", app.base)) && badge_url.ends_with("/rcp.svg"),
        "{written}"
    );
    // The links lead somewhere.
    let status = app
        .http
        .get(&badge_url)
        .send()
        .await
        .expect("badge")
        .status();
    assert_eq!(status, 200, "{badge_url}");
    let shown = std::fs::read_to_string(&summary).expect("summary");
    assert!(
        shown.contains("RCP-L0-003") && shown.contains("fails"),
        "{shown}"
    );
    assert!(shown.contains(&run_url), "{shown}");
}
