//! A CA to trust: `reference mcp --tls --ca-out` writes its CA as PEM, and
//! `check --ca-cert` and a service's `PROTOCHECK_CA_CERT` trust it for the
//! target, beside the built-in roots. Without it the same target cannot be
//! reached (its issuer is unknown), which is a usage error, not a verdict.

use crate::common::cli::{output, protocheck, show};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

/// A child process killed when the test lets go of it.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `protocheck reference mcp --tls --ca-out DIR/ca.pem` on a free port: the
/// process, the server's URL and the CA file, once the file is written (the
/// server says so with the `check` line that uses it).
fn tls_reference(dir: &Path) -> (Killed, String, std::path::PathBuf) {
    let ca = dir.join("ca.pem");
    let mut child = protocheck()
        .args(["reference", "mcp", "--tls", "--port", "0", "--ca-out"])
        .arg(&ca)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn reference");
    let stderr = child.stderr.take().expect("stderr");
    let child = Killed(child);
    // A thread reads stderr for the server's whole life, so it never blocks
    // on a full pipe (nor dies writing to a closed one).
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                // Nobody listens any more: keep draining.
                continue;
            }
        }
    });
    let mut url = None;
    let mut said = Vec::new();
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(120)) {
        said.push(line.clone());
        if let Some(at) = line.find("https://") {
            url.get_or_insert_with(|| line[at..].trim().to_owned());
        }
        if line.contains("protocheck check --ca-cert") {
            let url = url.clone().expect("the server named its URL first");
            assert!(
                line.contains(&url) && line.contains(&ca.display().to_string()),
                "the check line names the CA file and the URL: {line}"
            );
            return (child, url, ca);
        }
    }
    panic!("the reference server stopped before writing its CA: {said:?}");
}

#[tokio::test]
async fn check_trusts_the_ca_it_is_given_and_only_then_reaches_the_target() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, url, ca) = tls_reference(dir.path());
    let pem = std::fs::read_to_string(&ca).expect("CA file");
    assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");

    let mut trusted = protocheck();
    trusted
        .args(["check", &url, "--suite", "mcp", "--ca-cert"])
        .arg(&ca);
    let out = output(trusted).await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("strict"),
        "{}",
        show(&out)
    );

    // The same target without the CA: its issuer is unknown to the built-in roots.
    let mut plain = protocheck();
    plain.args(["check", &url, "--suite", "mcp"]);
    let out = output(plain).await;
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(show(&out).contains("UnknownIssuer"), "{}", show(&out));

    // PROTOCHECK_CA_CERT is the same setting.
    let mut from_env = protocheck();
    from_env
        .args(["check", &url, "--suite", "mcp"])
        .env("PROTOCHECK_CA_CERT", &ca);
    let out = output(from_env).await;
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}

#[tokio::test]
async fn a_ca_file_that_is_not_one_is_a_usage_error_that_says_why() {
    let dir = tempfile::tempdir().expect("temp dir");
    let not_pem = dir.path().join("key.txt");
    std::fs::write(&not_pem, "not a certificate\n").expect("write");
    for (path, says) in [
        (
            dir.path().join("absent.pem"),
            "cannot read the CA certificate",
        ),
        (not_pem, "holds no PEM certificate"),
    ] {
        let mut cmd = protocheck();
        cmd.args(["check", "https://127.0.0.1:9/mcp", "--ca-cert"])
            .arg(&path);
        let out = output(cmd).await;
        assert_eq!(out.status.code(), Some(2), "{}", show(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{}",
            show(&out)
        );
    }
    // A service refuses to start with it, rather than judge without it.
    let mut serve = protocheck();
    serve
        .arg("serve")
        .env(
            "DATABASE_URL",
            format!("sqlite://{}", dir.path().join("s.db").display()),
        )
        .env("PROTOCHECK_BIND", "127.0.0.1:0")
        .env("PROTOCHECK_SIGNING_KEY_FILE", dir.path().join("k.pem"))
        .env("PROTOCHECK_CA_CERT", dir.path().join("absent.pem"));
    let out = output(serve).await;
    assert!(!out.status.success(), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot read the CA certificate"),
        "{}",
        show(&out)
    );
}

#[tokio::test]
async fn a_service_given_the_ca_judges_the_target_behind_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_server, url, ca) = tls_reference(dir.path());
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let log = std::fs::File::create(dir.path().join("serve.log")).expect("log");
    let _serve = Killed(
        protocheck()
            .arg("serve")
            .env(
                "DATABASE_URL",
                format!("sqlite://{}", dir.path().join("serve.db").display()),
            )
            .env("PROTOCHECK_BIND", format!("127.0.0.1:{port}"))
            .env("PROTOCHECK_WORKERS", "1")
            .env(
                "PROTOCHECK_SIGNING_KEY_FILE",
                dir.path().join("signing.pem"),
            )
            .env("PROTOCHECK_CA_CERT", &ca)
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("spawn serve"),
    );
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let mut ready = false;
    for _ in 0..600 {
        if let Ok(r) = client.get(format!("{base}/readyz")).send().await
            && r.status() == 200
        {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        ready,
        "serve never became ready: {}",
        std::fs::read_to_string(dir.path().join("serve.log")).unwrap_or_default()
    );
    let resp = client
        .post(format!("{base}/api/v1/runs"))
        .json(&serde_json::json!({"url": url, "suite": "mcp"}))
        .send()
        .await
        .expect("submit");
    assert_eq!(resp.status(), 202);
    let run: Value = resp.json().await.expect("json");
    let id = run["id"].as_str().expect("id").to_owned();
    let mut last = Value::Null;
    for _ in 0..1200 {
        last = client
            .get(format!("{base}/api/v1/runs/{id}"))
            .send()
            .await
            .expect("GET run")
            .json()
            .await
            .expect("json");
        if !matches!(last["status"].as_str(), Some("queued" | "running")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(last["status"], "passed", "{last}");
    assert_eq!(last["verdict"]["grade"], "strict", "{last}");
}
