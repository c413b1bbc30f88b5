//! Bearer tokens submitted through the API (`credentials`): the run gets the
//! verdict `check --bearer-token` gives, the token is found nowhere protocheck
//! writes (database files, logs, every report format, the webhook body, the
//! signed statement), its sealed copy is gone once the run ends in any state,
//! and a run with credentials is never merged with one without.

use crate::common;

use axum::Router;
use axum::body::Bytes;
use axum::routing::post;
use common::app::{TestApp, mcp_reference_with, serve, worker_config};
use common::cli::{output, protocheck, show};
use protocheck::api_keys::{self, Rate};
use protocheck::credentials::{Credentials, Keyring, SealedCredentials};
use protocheck::reference::mcp::{McpReferenceConfig, SCOPE_READ, SCOPE_TOOLS};
use protocheck::store::{NewRun, RunEnd, RunOrigin};
use protocheck::suite::{BearerToken, RunOptions, SuiteChoice};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use uuid::Uuid;

/// A fresh random credentials key, as `openssl rand -hex 32` makes one.
fn random_key_hex() -> String {
    hex::encode(rand::random::<[u8; 32]>())
}

fn keyring() -> Keyring {
    Keyring::parse(&random_key_hex()).expect("key")
}

/// An MCP reference server that requires tokens, with `faults`, and a token
/// it accepts.
async fn protected_server(faults: &[&str]) -> (String, String) {
    let faults = faults.iter().map(|f| (*f).to_owned()).collect();
    let config = McpReferenceConfig::new(faults)
        .expect("known faults")
        .with_auth();
    let url = mcp_reference_with(config.clone()).await;
    let token = config
        .mint_token(
            &url,
            &format!("{SCOPE_READ} {SCOPE_TOOLS}"),
            Duration::from_secs(3600),
        )
        .expect("an --auth server mints tokens");
    (url, token)
}

/// `protocheck serve` in its own process with a SQLite file in `dir`, a
/// credentials key, debug logs in `dir/serve.log`; killed on drop.
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

async fn live_serve(dir: &Path) -> Served {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let log = std::fs::File::create(dir.join("serve.log")).expect("log file");
    let child = protocheck()
        .arg("serve")
        .env(
            "DATABASE_URL",
            format!("sqlite://{}", dir.join("serve.db").display()),
        )
        .env("PROTOCHECK_BIND", format!("127.0.0.1:{port}"))
        .env("PROTOCHECK_WORKERS", "1")
        .env("PROTOCHECK_MAX_ATTEMPTS", "1")
        .env("PROTOCHECK_HOST_GAP_SECS", "0")
        .env("PROTOCHECK_CREDENTIALS_KEY", random_key_hex())
        .env("PROTOCHECK_SIGNING_KEY_FILE", dir.join("signing.pem"))
        // Everything protocheck and its libraries log, at debug.
        .env("RUST_LOG", "debug")
        .stdout(log.try_clone().expect("log file"))
        .stderr(log)
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

/// A loopback webhook receiver keeping every body it is sent.
async fn receiver() -> (String, Arc<Mutex<Vec<Vec<u8>>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let kept = got.clone();
    let router = Router::new().route(
        "/hook",
        post(move |body: Bytes| {
            let kept = kept.clone();
            async move {
                kept.lock().expect("lock").push(body.to_vec());
                "ok"
            }
        }),
    );
    (format!("{}/hook", serve(router).await), got)
}

async fn get(client: &reqwest::Client, url: &str) -> (u16, String) {
    let resp = client.get(url).send().await.expect("GET");
    let status = resp.status().as_u16();
    (status, resp.text().await.expect("body"))
}

async fn wait_finished(client: &reqwest::Client, base: &str, id: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let (status, body) = get(client, &format!("{base}/api/v1/runs/{id}")).await;
        assert_eq!(status, 200, "{body}");
        let run: Value = serde_json::from_str(&body).expect("json");
        if !matches!(run["status"].as_str(), Some("queued" | "running")) {
            return run;
        }
        assert!(tokio::time::Instant::now() < deadline, "run {id}: {run}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every file of the SQLite database (the file, its WAL and shared memory).
fn database_files(dir: &Path) -> Vec<std::path::PathBuf> {
    ["serve.db", "serve.db-wal", "serve.db-shm"]
        .iter()
        .map(|n| dir.join(n))
        .filter(|p| p.exists())
        .collect()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

#[tokio::test]
async fn a_token_submitted_through_the_api_gets_checks_verdict_and_is_kept_nowhere() {
    // A broken rule, so that findings carry evidence of authorized requests.
    let (target, token) = protected_server(&["MCP-HDR-001"]).await;
    assert!(token.len() >= 16, "the token is a unique string");

    // What `check --bearer-token` says about the server.
    let mut cmd = protocheck();
    cmd.args(["check", &target, "--suite", "mcp", "--json"])
        .env("PROTOCHECK_BEARER_TOKEN", &token);
    let out = output(cmd).await;
    let checked: Value = serde_json::from_slice(&out.stdout).expect("check --json");
    assert_eq!(
        checked["verdict"]["grade"],
        "non-compliant",
        "{}",
        show(&out)
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let served = live_serve(dir.path()).await;
    let base = served.base.clone();
    let store = protocheck::store::connect(&format!(
        "sqlite://{}",
        dir.path().join("serve.db").display()
    ))
    .await
    .expect("open the service's database");
    let key = api_keys::create_key(
        store.as_ref(),
        "ci",
        Some("CI"),
        "600/m".parse::<Rate>().expect("rate"),
        protocheck::now_ms(),
    )
    .await
    .expect("API key");
    let (hook, hooked) = receiver().await;
    let client = reqwest::Client::new();

    let resp = client
        .post(format!("{base}/api/v1/runs"))
        .bearer_auth(&key.token)
        .json(&json!({
            "url": target,
            "suite": "mcp",
            "options": {"webhook_url": hook},
            "credentials": {"bearer_token": token},
        }))
        .send()
        .await
        .expect("POST");
    assert_eq!(resp.status().as_u16(), 202);
    let answer = resp.text().await.expect("body");
    assert!(!answer.contains(&token));
    let answer: Value = serde_json::from_str(&answer).expect("json");
    assert_eq!(answer["credentials"], "bearer", "{answer}");
    let id = answer["id"].as_str().expect("id").to_owned();

    let run = wait_finished(&client, &base, &id).await;
    assert_eq!(run["status"], "failed", "{run}");
    // The same verdict as `check --bearer-token`.
    for field in ["grade", "passed", "counts", "summary"] {
        assert_eq!(run["verdict"][field], checked["verdict"][field], "{field}");
    }

    // Every output: the run resource, each report format, the page, the statement.
    let mut outputs = Vec::new();
    for path in [
        format!("/api/v1/runs/{id}"),
        format!("/api/v1/runs/{id}/report.json"),
        format!("/api/v1/runs/{id}/report.junit.xml"),
        format!("/api/v1/runs/{id}/report.sarif"),
        format!("/runs/{id}"),
        format!("/api/v1/runs/{id}/attestation"),
    ] {
        let (status, body) = get(&client, &format!("{base}{path}")).await;
        assert_eq!(status, 200, "{path}: {body}");
        assert!(!body.contains(&token), "{path} shows the token");
        outputs.push((path, body));
    }
    let note = "judged with a token supplied by the submitter";
    for (path, body) in &outputs[1..5] {
        assert!(body.contains(note), "{path} says how the run was judged");
    }
    let report: Value = serde_json::from_str(&outputs[1].1).expect("report");
    assert_eq!(report["run"]["credentials"]["kind"], "bearer");
    // Every Authorization header in evidence shows its scheme, never the token.
    let mut authorizations = 0;
    for finding in report["findings"].as_array().expect("findings") {
        for exchange in finding["evidence"].as_array().into_iter().flatten() {
            for header in exchange["request"]["headers"]
                .as_array()
                .into_iter()
                .flatten()
            {
                if header[0] == "authorization" {
                    authorizations += 1;
                    assert!(
                        header[1] == "Bearer ‹redacted›" || header[1] == "‹redacted›",
                        "{header}"
                    );
                }
            }
        }
    }
    assert!(authorizations > 0, "the evidence shows authorized requests");
    let envelope: Value = serde_json::from_str(&outputs[5].1).expect("envelope");
    let statement = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        envelope["payload"].as_str().expect("payload"),
    )
    .expect("base64");
    assert!(!contains(&statement, &token), "the signed statement");
    let statement: Value = serde_json::from_slice(&statement).expect("statement");
    assert_eq!(statement["predicate"]["credentials"], "bearer");

    // The webhook.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while hooked.lock().expect("lock").is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "no webhook");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for body in hooked.lock().expect("lock").iter() {
        assert!(!contains(body, &token), "the webhook body");
        assert!(contains(body, &id));
        assert!(
            contains(body, note),
            "the webhook says how the run was judged"
        );
    }

    // The sealed copy is gone once the run has ended.
    assert_eq!(
        store
            .run_credentials(id.parse().expect("uuid"))
            .await
            .expect("read"),
        None
    );
    assert_eq!(store.count_run_credentials().await.expect("count"), 0);

    // `protocheck submit --bearer-token-file`, as CI runs it, with the text report.
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{token}\n")).expect("write token file");
    let mut cmd = protocheck();
    cmd.args(["submit", &target, "--server", &base, "--suite", "mcp"])
        .args(["--wait", "--format", "text", "--bearer-token-file"])
        .arg(&token_file)
        .env("PROTOCHECK_API_KEY", &key.token);
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(1), "non-compliant: {}", show(&out));
    let text = show(&out);
    assert!(!text.contains(&token), "submit prints the token");
    assert!(text.contains(&format!("credentials: {note}")), "{text}");
    assert!(text.contains("non-compliant"), "{text}");
    std::fs::remove_file(&token_file).expect("remove token file");

    // A run with a token that ends in `error` (nobody listens there) loses it too.
    let unreachable_token = format!("tok-{}", Uuid::new_v4().simple());
    let resp = client
        .post(format!("{base}/api/v1/runs"))
        .bearer_auth(&key.token)
        .json(&json!({
            "url": "http://127.0.0.1:9/mcp",
            "suite": "mcp",
            "credentials": {"bearer_token": unreachable_token, "limited_token": format!("{unreachable_token}-low")},
        }))
        .send()
        .await
        .expect("POST");
    assert_eq!(resp.status().as_u16(), 202);
    let errored: Value = resp.json().await.expect("json");
    let errored_id = errored["id"].as_str().expect("id").to_owned();
    let run = wait_finished(&client, &base, &errored_id).await;
    assert_eq!(run["status"], "error", "{run}");
    assert_eq!(store.count_run_credentials().await.expect("count"), 0);
    for path in [
        format!("/api/v1/runs/{errored_id}"),
        format!("/api/v1/runs/{errored_id}/report.json"),
        format!("/api/v1/runs/{errored_id}/report.junit.xml"),
        format!("/api/v1/runs/{errored_id}/report.sarif"),
        format!("/runs/{errored_id}"),
    ] {
        let (_, body) = get(&client, &format!("{base}{path}")).await;
        assert!(!body.contains(&unreachable_token), "{path}");
    }

    // The database files and the logs, with the service still up and after it stops.
    let mut running = Some((store, served));
    for stopped in [false, true] {
        if stopped {
            drop(running.take());
        }
        let files = database_files(dir.path());
        assert!(files.iter().any(|f| f.ends_with("serve.db")));
        for file in files {
            // The last connection to close removes the WAL and shared memory.
            let Ok(bytes) = std::fs::read(&file) else {
                continue;
            };
            for t in [&token, &unreachable_token] {
                assert!(!contains(&bytes, t), "{} holds a token", file.display());
            }
        }
        let log = std::fs::read(dir.path().join("serve.log")).expect("log");
        assert!(contains(&log, "run ended"), "the log was captured");
        for t in [&token, &unreachable_token] {
            assert!(!contains(&log, t), "the log shows a token");
        }
    }
}

#[tokio::test]
async fn runs_with_and_without_credentials_are_never_merged() {
    let (target, token) = protected_server(&[]).await;
    let db = common::sqlite().await;
    let app = TestApp::start_with_keyring(&db, 1000, keyring()).await;
    let key = api_keys::create_key(
        db.store.as_ref(),
        "ci",
        None,
        "600/m".parse::<Rate>().expect("rate"),
        protocheck::now_ms(),
    )
    .await
    .expect("API key");
    let submit = |credentials: bool| {
        let mut body = json!({"url": target, "suite": "mcp"});
        if credentials {
            body["credentials"] = json!({"bearer_token": token});
        }
        let req = app
            .http
            .post(app.url("/api/v1/runs"))
            .bearer_auth(&key.token)
            .json(&body);
        async move {
            let resp = req.send().await.expect("POST");
            let status = resp.status().as_u16();
            let doc: Value = resp.json().await.expect("json");
            assert!(status == 200 || status == 202, "{doc}");
            (
                doc["id"].as_str().expect("id").to_owned(),
                doc["reason"].as_str().expect("reason").to_owned(),
            )
        }
    };

    // While queued: no worker runs yet.
    let (plain, reason) = submit(false).await;
    assert_eq!(reason, "queued");
    let (with_token, reason) = submit(true).await;
    assert_eq!(
        reason, "queued",
        "not merged with the active run without a token"
    );
    assert_ne!(with_token, plain);
    let (again, reason) = submit(false).await;
    assert_eq!(
        (again.as_str(), reason.as_str()),
        (plain.as_str(), "already-active")
    );
    let (second_token, reason) = submit(true).await;
    assert_eq!(reason, "queued", "nor with the active run with a token");
    assert_ne!(second_token, with_token);

    let pool = app.workers(worker_config(2, Duration::from_secs(30)));
    for id in [&plain, &with_token, &second_token] {
        app.wait_finished(id, Duration::from_secs(120)).await;
    }
    pool.shutdown().await;

    // Once finished: a fresh result answers only its own kind.
    let (fresh, reason) = submit(false).await;
    assert_eq!(
        (fresh.as_str(), reason.as_str()),
        (plain.as_str(), "fresh-result")
    );
    let (fresh_token, reason) = submit(true).await;
    assert_eq!(
        reason, "queued",
        "a token's run is never served from another"
    );
    assert!(![&plain, &with_token, &second_token].contains(&&fresh_token));

    let (_, plain_run) = app.get_json(&format!("/api/v1/runs/{plain}")).await;
    let (_, token_run) = app.get_json(&format!("/api/v1/runs/{with_token}")).await;
    assert!(plain_run.get("credentials").is_none(), "{plain_run}");
    assert_eq!(token_run["credentials"], "bearer");
    assert_eq!(plain_run["verdict"]["grade"], "not judged");
    assert_eq!(token_run["verdict"]["grade"], "strict");
}

/// The status and problem document of a submission.
async fn refused(app: &TestApp, api_key: Option<&str>, body: Value) -> (u16, Value) {
    let mut req = app.http.post(app.url("/api/v1/runs")).json(&body);
    if let Some(key) = api_key {
        req = req.bearer_auth(key);
    }
    let resp = req.send().await.expect("POST");
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert_eq!(content_type, "application/problem+json");
    (status, resp.json().await.expect("json"))
}

#[tokio::test]
async fn credentials_are_refused_without_a_key_empty_oversized_or_unsealable() {
    let db = common::sqlite().await;
    let app = TestApp::start_with_keyring(&db, 1000, keyring()).await;
    let key = api_keys::create_key(
        db.store.as_ref(),
        "ci",
        None,
        "600/m".parse::<Rate>().expect("rate"),
        protocheck::now_ms(),
    )
    .await
    .expect("API key")
    .token;
    let url = "http://127.0.0.1:9/mcp";
    let secret = "s3cret-never-echoed";

    let (status, doc) = refused(
        &app,
        None,
        json!({"url": url, "credentials": {"bearer_token": secret}}),
    )
    .await;
    assert_eq!(status, 422, "{doc}");
    assert!(
        doc["detail"]
            .as_str()
            .expect("detail")
            .contains("need an API key"),
        "{doc}"
    );
    assert!(!doc.to_string().contains(secret));

    for (token, why) in [
        (String::new(), "empty"),
        ("x".repeat(4097), "oversized"),
        ("two words".to_owned(), "with a space"),
    ] {
        let (status, doc) = refused(
            &app,
            Some(&key),
            json!({"url": url, "credentials": {"bearer_token": token}}),
        )
        .await;
        assert_eq!(status, 422, "{why}: {doc}");
        assert!(
            doc["detail"]
                .as_str()
                .expect("detail")
                .contains("credentials.bearer_token must be 1 to 4096 visible ASCII"),
            "{why}: {doc}"
        );
    }
    let (status, doc) = refused(
        &app,
        Some(&key),
        json!({"url": url, "credentials": {"bearer_token": secret, "password": "x"}}),
    )
    .await;
    assert!(status == 400 || status == 422, "{doc}");
    assert!(!doc.to_string().contains(secret));
    let (status, doc) = refused(
        &app,
        Some(&key),
        json!({"url": url, "options": {"bearer_token": secret}}),
    )
    .await;
    assert_eq!(status, 422, "{doc}");
    assert!(
        doc["detail"]
            .as_str()
            .expect("detail")
            .contains("`credentials"),
        "{doc}"
    );
    assert_eq!(db.store.count_run_credentials().await.expect("count"), 0);

    // A service whose operator set no credentials key takes none.
    let plain = TestApp::start(&db, 1000).await;
    let (status, doc) = refused(
        &plain,
        Some(&key),
        json!({"url": url, "credentials": {"bearer_token": secret}}),
    )
    .await;
    assert_eq!(status, 422, "{doc}");
    assert!(
        doc["detail"]
            .as_str()
            .expect("detail")
            .contains("PROTOCHECK_CREDENTIALS_KEY"),
        "{doc}"
    );
}

#[tokio::test]
async fn submit_refuses_a_missing_or_empty_token_file_before_submitting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("no-such-token");
    let empty = dir.path().join("empty-token");
    std::fs::write(&empty, "\n").expect("write");
    for (file, says) in [
        (&missing, "cannot read the token file"),
        (&empty, "the token file is empty"),
    ] {
        let mut cmd = protocheck();
        cmd.args([
            "submit",
            "http://127.0.0.1:9/mcp",
            // Nothing listens there: the file is checked before any request.
            "--server",
            "http://127.0.0.1:9",
            "--api-key",
            "pck_test",
            "--bearer-token-file",
        ])
        .arg(file);
        let out = output(cmd).await;
        assert_eq!(out.status.code(), Some(2), "{}", show(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("--bearer-token-file") && stderr.contains(says),
            "{}",
            show(&out)
        );
        assert!(!stderr.contains("rate limited") && !stderr.contains("retrying"));
    }
}

/// The store's part, on every backend: sealed credentials are written with
/// their run, read back while it is queued or running, kept across a requeue,
/// and gone when it ends by a worker's hand or the reaper's.
#[tokio::test]
async fn the_store_keeps_sealed_credentials_only_while_the_run_is_active() {
    for db in common::all_backends().await {
        let b = db.name();
        let s = db.store.as_ref();
        let ring = keyring();
        let target = s
            .upsert_target("creds-target", "http://127.0.0.1:9/mcp", 1)
            .await
            .expect("target");
        let credentials = Credentials {
            bearer_token: BearerToken::new("tok-store-contract"),
            limited_token: None,
        };
        let insert = async |id: Uuid, max_attempts: i32| -> SealedCredentials {
            let sealed = ring.seal(id, &credentials).expect("seal");
            let new = NewRun {
                id,
                target_id: target.id.clone(),
                suite: SuiteChoice::Mcp,
                options: RunOptions::default(),
                webhook_url: None,
                dedup_key: format!("credentials:{id}"),
                max_attempts,
                created_at_ms: 1,
            };
            let origin = RunOrigin {
                credentials: Some(sealed.clone()),
                ..RunOrigin::default()
            };
            s.insert_run_from(&new, &origin).await.expect("insert");
            sealed
        };

        // Finished by its worker.
        let first = Uuid::now_v7();
        let sealed = insert(first, 2).await;
        let run = s.get_run(first).await.expect("get").expect("run");
        assert_eq!(run.credentials.as_deref(), Some("bearer"), "{b}");
        assert_eq!(
            s.run_credentials(first).await.expect("read"),
            Some(sealed.clone()),
            "{b}"
        );
        let opened = ring.open(first, &sealed).expect("open");
        assert_eq!(opened, credentials, "{b}");
        let claimed = s
            .claim_run("w1", 10, 1_000)
            .await
            .expect("claim")
            .expect("run");
        assert_eq!(claimed.id, first);
        assert!(
            s.requeue_run(first, "w1", "again", 10, true)
                .await
                .expect("requeue"),
            "{b}"
        );
        assert!(
            s.run_credentials(first).await.expect("read").is_some(),
            "{b}: kept for the retry"
        );
        s.claim_run("w1", 20, 1_000)
            .await
            .expect("claim")
            .expect("run");
        let ended = s
            .finish_run(first, "w1", &RunEnd::Error("target down".into()), "0", 30)
            .await
            .expect("finish");
        assert!(ended, "{b}");
        assert_eq!(
            s.run_credentials(first).await.expect("read"),
            None,
            "{b}: wiped"
        );

        // Ended by the reaper when its worker stopped responding.
        let second = Uuid::now_v7();
        insert(second, 1).await;
        s.claim_run("w2", 40, 10)
            .await
            .expect("claim")
            .expect("run");
        let reaped = s.reap_expired(1_000, 10).await.expect("reap");
        assert_eq!(reaped.errored, 1, "{b}");
        assert_eq!(
            s.run_credentials(second).await.expect("read"),
            None,
            "{b}: wiped"
        );
        assert_eq!(s.count_run_credentials().await.expect("count"), 0, "{b}");
        let run = s.get_run(second).await.expect("get").expect("run");
        assert_eq!(
            run.credentials.as_deref(),
            Some("bearer"),
            "{b}: the kind stays"
        );
    }
}

/// The 2025-11-25 reference server requiring tokens, and its all-scope
/// token (`reference mcp --revision 2025-11-25 --auth` prints one).
async fn protected_2025_server() -> (String, String) {
    use protocheck::reference::mcp2025::{
        MCP25_SCOPE_READ, MCP25_SCOPE_TOOLS, Mcp25ReferenceConfig, serve_mcp25_reference,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let config = Mcp25ReferenceConfig::new().with_auth();
    let token = config
        .mint_token(
            &url,
            &format!("{MCP25_SCOPE_READ} {MCP25_SCOPE_TOOLS}"),
            Duration::from_secs(3600),
        )
        .expect("an --auth server mints tokens");
    tokio::spawn(async move {
        let _ = serve_mcp25_reference(listener, config).await;
    });
    (url, token)
}

/// The revisions a JSON report judged (one, or each of `all`'s, joined by
/// `, ` in `spec_revision`), and its grade.
fn judged_on(report: &Value) -> (Vec<String>, String) {
    let verdict = &report["verdict"];
    let revisions = verdict["spec_revision"]
        .as_str()
        .unwrap_or_default()
        .split(", ")
        .map(str::to_owned)
        .collect();
    let grade = verdict["grade"].as_str().unwrap_or_default().to_owned();
    (revisions, grade)
}

/// A protected 2025-11-25 server given its all-scope token is judged on
/// 2025-11-25, the revision it speaks, however the run chooses the
/// revision: `check` by default, with `--suite mcp` and with
/// `--mcp-revision all`, and `submit --bearer-token-file --wait` (by
/// default, and with `--mcp-revision 2025-11-25`). The token never
/// decides the revision: without the token in the probes that choose it,
/// each was judged on 2026-07-28 and failed.
#[tokio::test]
async fn a_protected_2025_11_25_server_with_a_token_is_judged_on_2025_11_25_by_check_and_submit() {
    let (target, token) = protected_2025_server().await;
    for args in [&[][..], &["--suite", "mcp"], &["--mcp-revision", "all"]] {
        let mut cmd = protocheck();
        cmd.args(["check", &target, "--json"])
            .args(args)
            .env("PROTOCHECK_BEARER_TOKEN", &token);
        let out = output(cmd).await;
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}\n{}", show(&out)));
        let (revisions, grade) = judged_on(&report);
        assert_eq!(revisions, ["2025-11-25"], "{args:?}: {}", report["verdict"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {grade}\n{}",
            show(&out)
        );
    }

    let dir = tempfile::tempdir().expect("tempdir");
    let served = live_serve(dir.path()).await;
    let store = protocheck::store::connect(&format!(
        "sqlite://{}",
        dir.path().join("serve.db").display()
    ))
    .await
    .expect("open the service's database");
    let key = api_keys::create_key(
        store.as_ref(),
        "ci",
        None,
        "600/m".parse::<Rate>().expect("rate"),
        protocheck::now_ms(),
    )
    .await
    .expect("API key");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{token}\n")).expect("write token file");
    for args in [&[][..], &["--mcp-revision", "2025-11-25"]] {
        let mut cmd = protocheck();
        cmd.args(["submit", &target, "--server", &served.base])
            .args([
                "--wait",
                "--quiet",
                "--format",
                "json",
                "--bearer-token-file",
            ])
            .arg(&token_file)
            .args(args)
            .env("PROTOCHECK_API_KEY", &key.token);
        let out = output(cmd).await;
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("submit {args:?}: {e}\n{}", show(&out)));
        let (revisions, _) = judged_on(&report);
        assert_eq!(
            revisions,
            ["2025-11-25"],
            "submit {args:?}: {}",
            report["verdict"]
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "submit {args:?}: {}",
            show(&out)
        );
        assert!(!show(&out).contains(&token), "submit prints the token");
    }
}
