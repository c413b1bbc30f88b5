//! The `protocheck` binary: exit codes of `check`, `migrate`, and `serve` with
//! a graceful stop on SIGTERM.

mod common;

use common::app::rcp_reference;
use std::process::{Command, Stdio};
use std::time::Duration;

fn protocheck() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_protocheck"));
    cmd.env_remove("DATABASE_URL").env("RUST_LOG", "warn");
    cmd
}

async fn output(mut cmd: Command) -> std::process::Output {
    tokio::task::spawn_blocking(move || cmd.output().expect("run protocheck"))
        .await
        .expect("join")
}

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
