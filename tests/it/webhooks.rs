//! Webhooks, end to end on loopback: a receiver (axum) records what protocheck
//! POSTs when a run ends and checks the signature with the secret printed when
//! the key was created; failures are retried and every attempt is visible on the
//! run; anonymous webhooks are refused; the SSRF guard applies; a delivery left
//! by a crashed process is sent by the next one. SQLite and Postgres.

use crate::common;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use common::TestDb;
use common::app::{TestApp, rcp_reference, serve, worker_config};
use hmac::{Hmac, Mac};
use protocheck::api_keys::{self, CreatedKey};
use protocheck::transport::AddressPolicy;
use protocheck::worker::WorkerConfig;
use serde_json::{Value, json};
use sha2::Sha256;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

/// Liveness bound for runs and deliveries; never a timing assertion.
const PATIENCE: Duration = Duration::from_secs(60);
const PUBLIC_URL: &str = "https://protocheck.example";

#[derive(Debug, Clone)]
pub(crate) struct Received {
    pub(crate) signature: String,
    pub(crate) delivery: String,
    pub(crate) event: String,
    pub(crate) body: Bytes,
}

#[derive(Clone, Default)]
struct ReceiverState {
    got: Arc<Mutex<Vec<Received>>>,
    /// Statuses to answer, in order; 200 once they run out.
    script: Arc<Mutex<VecDeque<u16>>>,
    /// When set, the next request waits for this before it is answered.
    hold: Arc<Mutex<Option<oneshot::Receiver<()>>>>,
}

pub(crate) struct Receiver {
    pub(crate) url: String,
    state: ReceiverState,
}

impl Receiver {
    pub(crate) fn got(&self) -> Vec<Received> {
        self.state.got.lock().unwrap().clone()
    }
}

async fn receive(State(st): State<ReceiverState>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let h = |n: &str| {
        headers
            .get(n)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    st.got.lock().unwrap().push(Received {
        signature: h("protocheck-signature"),
        delivery: h("protocheck-delivery"),
        event: h("protocheck-event"),
        body,
    });
    let hold = st.hold.lock().unwrap().take();
    if let Some(hold) = hold {
        let _ = hold.await;
    }
    let status = st.script.lock().unwrap().pop_front().unwrap_or(200);
    StatusCode::from_u16(status).unwrap()
}

pub(crate) async fn receiver(script: &[u16]) -> Receiver {
    let state = ReceiverState::default();
    state.script.lock().unwrap().extend(script.iter().copied());
    let router = Router::new()
        .route("/hooks/secret-path", post(receive))
        .with_state(state.clone());
    Receiver {
        url: format!("{}/hooks/secret-path?token=abc", serve(router).await),
        state,
    }
}

/// Recomputes the signature as a receiver would, with the hmac crate directly.
pub(crate) fn verify(secret: &str, header: &str, body: &[u8]) -> bool {
    let Some((t, v1)) = header
        .strip_prefix("t=")
        .and_then(|rest| rest.split_once(",v1="))
    else {
        return false;
    };
    let Ok(sig) = hex::decode(v1) else {
        return false;
    };
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(t.as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.verify_slice(&sig).is_ok()
}

pub(crate) fn fast_webhooks(mut cfg: WorkerConfig) -> WorkerConfig {
    cfg.webhooks.retry_delays = vec![Duration::from_millis(50); 4];
    cfg.webhooks.poll = Duration::from_millis(50);
    cfg.webhooks.public_url = Some(PUBLIC_URL.to_owned());
    cfg
}

pub(crate) async fn key(db: &TestDb) -> CreatedKey {
    api_keys::create_key(
        db.store.as_ref(),
        "ci",
        Some("CI"),
        "100/min".parse().unwrap(),
        1,
    )
    .await
    .unwrap()
}

async fn submit(app: &TestApp, key: Option<&CreatedKey>, body: &Value) -> (u16, Value) {
    let mut req = app.http.post(app.url("/api/v1/runs")).json(body);
    if let Some(k) = key {
        req = req.bearer_auth(&k.token);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap())
}

/// Polls the run until its webhook is delivered or given up.
async fn wait_webhook(app: &TestApp, run_id: &str) -> Value {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let (_, run) = app.get_json(&format!("/api/v1/runs/{run_id}")).await;
        let state = run["webhook"]["state"].as_str().unwrap_or_default();
        if matches!(state, "delivered" | "failed") {
            return run;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "webhook still {state}: {run}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_finished_run_is_announced_signed_with_the_keys_secret() {
    for db in common::all_backends().await {
        let b = db.name();
        let app = TestApp::start(&db, 100).await;
        let pool = app.workers(fast_webhooks(worker_config(1, Duration::from_secs(5))));
        let target = rcp_reference(&[], Duration::ZERO).await;
        let hook = receiver(&[]).await;
        let created = key(&db).await;

        let (status, run) = submit(
            &app,
            Some(&created),
            &json!({"url": target, "suite": "rcp", "options": {"webhook_url": hook.url}}),
        )
        .await;
        assert_eq!(status, 202, "{b}: {run}");
        let id = run["id"].as_str().unwrap().to_owned();
        let origin = &hook.url[..hook.url.find("/hooks").unwrap()];
        assert_eq!(
            run["options"]["webhook_url"],
            format!("{origin}/…"),
            "{b}: the URL is shown without its path and query"
        );
        let finished = app.wait_finished(&id, PATIENCE).await;
        assert_eq!(finished["status"], "passed", "{b}: {finished}");
        let run = wait_webhook(&app, &id).await;
        pool.shutdown().await;

        let webhook = &run["webhook"];
        assert_eq!(webhook["state"], "delivered", "{b}: {run}");
        assert!(
            !webhook.to_string().contains("secret-path"),
            "{b}: {webhook}"
        );
        let attempts = webhook["deliveries"].as_array().unwrap();
        assert_eq!(attempts.len(), 1, "{b}: {webhook}");
        assert_eq!(attempts[0]["attempt"], 1);
        assert_eq!(attempts[0]["status_code"], 200);
        assert_eq!(attempts[0]["error"], Value::Null);
        assert_eq!(attempts[0]["next_attempt_at"], Value::Null);

        let got = hook.got();
        assert_eq!(got.len(), 1, "{b}");
        let r = &got[0];
        assert!(
            verify(&created.webhook_secret, &r.signature, &r.body),
            "{b}: {r:?}"
        );
        assert!(!verify("whsec_wrong", &r.signature, &r.body), "{b}");
        assert_eq!(r.event, "run.finished", "{b}");
        assert!(!r.delivery.is_empty(), "{b}");
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(body["event"], "run.finished", "{b}: {body}");
        assert_eq!(body["run_id"], id.as_str(), "{b}");
        assert_eq!(body["target_url"], finished["url"], "{b}");
        assert_eq!(body["status"], "passed", "{b}");
        assert_eq!(body["verdict"]["passed"], true, "{b}");
        assert_eq!(body["verdict"]["certified_level"], "L2", "{b}: {body}");
        // The declared L2 was compared with the certified one, and holds.
        assert_eq!(body["verdict"]["honest"], true, "{b}: {body}");
        assert_eq!(body["verdict"]["summary"], finished["verdict"]["summary"]);
        assert!(
            body["verdict"]["counts"]["pass"].as_u64().unwrap() > 0,
            "{b}"
        );
        assert_eq!(
            body["report_url"],
            format!("{PUBLIC_URL}/api/v1/runs/{id}/report.json"),
            "{b}"
        );
        assert_eq!(body["run_url"], format!("{PUBLIC_URL}/runs/{id}"), "{b}");
        // The links name what the service serves.
        for link in ["report_url", "run_url", "api_url"] {
            let path = body[link]
                .as_str()
                .unwrap()
                .strip_prefix(PUBLIC_URL)
                .unwrap();
            let resp = app.http.get(app.url(path)).send().await.unwrap();
            assert_eq!(resp.status(), 200, "{b}: {link} {path}");
        }
        assert_eq!(body["finished_at"], finished["finished_at"], "{b}");

        // The run page shows the section, escaped, without the secret path.
        let page = app.get_text(&format!("/runs/{id}")).await;
        assert!(page.contains("<h2>Webhook</h2>"), "{b}");
        assert!(
            page.contains("HTTP 200") && page.contains("delivered"),
            "{b}"
        );
        assert!(!page.contains("secret-path"), "{b}");
    }
}

#[tokio::test]
async fn a_failing_receiver_is_retried_and_every_attempt_is_recorded() {
    for db in common::all_backends().await {
        let b = db.name();
        let app = TestApp::start(&db, 100).await;
        let pool = app.workers(fast_webhooks(worker_config(1, Duration::from_secs(5))));
        let target = rcp_reference(&[], Duration::ZERO).await;
        let hook = receiver(&[500, 500]).await;
        let created = key(&db).await;
        let (status, run) = submit(
            &app,
            Some(&created),
            &json!({"url": target, "suite": "rcp", "options": {"webhook_url": hook.url}}),
        )
        .await;
        assert_eq!(status, 202, "{b}: {run}");
        let id = run["id"].as_str().unwrap().to_owned();
        app.wait_finished(&id, PATIENCE).await;
        let run = wait_webhook(&app, &id).await;
        pool.shutdown().await;

        let attempts = run["webhook"]["deliveries"].as_array().unwrap().clone();
        let codes: Vec<_> = attempts.iter().map(|a| a["status_code"].clone()).collect();
        assert_eq!(
            codes,
            vec![json!(500), json!(500), json!(200)],
            "{b}: {run}"
        );
        assert_eq!(run["webhook"]["state"], "delivered", "{b}");
        for a in &attempts[..2] {
            assert!(a["next_attempt_at"].is_string(), "{b}: {a}");
            assert!(a["error"].as_str().unwrap().contains("500"), "{b}: {a}");
        }
        assert_eq!(attempts[2]["next_attempt_at"], Value::Null, "{b}");

        let got = hook.got();
        assert_eq!(got.len(), 3, "{b}");
        assert!(
            got.iter().all(|r| r.delivery == got[0].delivery),
            "{b}: one delivery id across attempts"
        );
        assert!(
            got.iter()
                .all(|r| verify(&created.webhook_secret, &r.signature, &r.body)),
            "{b}"
        );
    }
}

#[tokio::test]
async fn webhooks_need_an_api_key_and_a_valid_url() {
    for db in common::all_backends().await {
        let b = db.name();
        let app = TestApp::start(&db, 100).await;
        let created = key(&db).await;
        let target = "http://127.0.0.1:9/rcp";
        let (status, problem) = submit(
            &app,
            None,
            &json!({"url": target, "options": {"webhook_url": "https://hooks.example/x"}}),
        )
        .await;
        assert_eq!(status, 422, "{b}: {problem}");
        assert_eq!(problem["field"], "options.webhook_url", "{b}: {problem}");
        assert!(
            problem["detail"].as_str().unwrap().contains("API key"),
            "{b}: {problem}"
        );
        for bad in [
            "ftp://hooks.example/x",
            "/relative",
            "https://user:pw@hooks.example/x",
        ] {
            let (status, problem) = submit(
                &app,
                Some(&created),
                &json!({"url": target, "options": {"webhook_url": bad}}),
            )
            .await;
            assert_eq!(status, 422, "{b}: {bad}: {problem}");
            assert!(
                problem["detail"]
                    .as_str()
                    .unwrap()
                    .contains("options.webhook_url"),
                "{b}: {problem}"
            );
        }
        assert!(
            db.store.count_by_status().await.unwrap().is_empty(),
            "{b}: nothing queued"
        );

        // Two keys' (or two jobs') webhooks are different runs, so each is told.
        let hook = json!({"url": target, "options": {"webhook_url": "https://hooks.example/a"}});
        let other = json!({"url": target, "options": {"webhook_url": "https://hooks.example/b"}});
        let (_, first) = submit(&app, Some(&created), &hook).await;
        let (_, again) = submit(&app, Some(&created), &hook).await;
        let (_, second) = submit(&app, Some(&created), &other).await;
        assert_eq!(
            again["id"], first["id"],
            "{b}: the same hook is deduplicated"
        );
        assert_eq!(again["reason"], "already-active", "{b}");
        assert_ne!(
            second["id"], first["id"],
            "{b}: another hook is another run"
        );
    }
}

#[tokio::test]
async fn a_private_receiver_is_refused_under_public_only_and_not_retried() {
    for db in common::all_backends().await {
        let b = db.name();
        let app = TestApp::start(&db, 100).await;
        let mut cfg = fast_webhooks(worker_config(1, Duration::from_secs(5)));
        cfg.policy = AddressPolicy::PublicOnly;
        let pool = app.workers(cfg);
        let hook = receiver(&[]).await;
        let created = key(&db).await;
        // A name that resolves to loopback: the guard in the resolver refuses it.
        let private_hook = hook.url.replace("127.0.0.1", "localhost");
        // The target is refused too, so the run ends as `error`, which is announced.
        let (status, run) = submit(
            &app,
            Some(&created),
            &json!({"url": "http://127.0.0.1:9/rcp", "suite": "rcp",
                    "options": {"webhook_url": private_hook}}),
        )
        .await;
        assert_eq!(status, 202, "{b}: {run}");
        let id = run["id"].as_str().unwrap().to_owned();
        let finished = app.wait_finished(&id, PATIENCE).await;
        assert_eq!(finished["status"], "error", "{b}: {finished}");
        let run = wait_webhook(&app, &id).await;
        pool.shutdown().await;

        assert_eq!(run["webhook"]["state"], "failed", "{b}: {run}");
        let attempts = run["webhook"]["deliveries"].as_array().unwrap();
        assert_eq!(attempts.len(), 1, "{b}: refused, not retried: {run}");
        assert_eq!(attempts[0]["status_code"], Value::Null, "{b}");
        assert_eq!(attempts[0]["next_attempt_at"], Value::Null, "{b}");
        let error = attempts[0]["error"].as_str().unwrap();
        assert!(
            error.contains("refused") && error.contains("localhost"),
            "{b}: {error}"
        );
        assert!(
            hook.got().is_empty(),
            "{b}: the receiver was never contacted"
        );
    }
}

#[tokio::test]
async fn a_delivery_left_by_a_crashed_process_is_sent_by_the_next_one() {
    for db in common::all_backends().await {
        let b = db.name();
        let app = TestApp::start(&db, 100).await;
        let mut cfg = fast_webhooks(worker_config(1, Duration::from_secs(5)));
        cfg.webhooks.lease = Duration::from_millis(300);
        let first = app.workers(cfg.clone());
        let target = rcp_reference(&[], Duration::ZERO).await;
        let hook = receiver(&[]).await;
        let (release, held) = oneshot::channel();
        *hook.state.hold.lock().unwrap() = Some(held);
        let created = key(&db).await;
        let (_, run) = submit(
            &app,
            Some(&created),
            &json!({"url": target, "suite": "rcp", "options": {"webhook_url": hook.url}}),
        )
        .await;
        let id = run["id"].as_str().unwrap().to_owned();
        app.wait_finished(&id, PATIENCE).await;

        // The first attempt is in flight (the receiver holds it); the process dies.
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while hook.got().is_empty() {
            assert!(tokio::time::Instant::now() < deadline, "{b}: no attempt");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        first.abort().await;
        let _ = release.send(());
        let (_, run) = app.get_json(&format!("/api/v1/runs/{id}")).await;
        assert_eq!(run["webhook"]["state"], "pending", "{b}: {run}");
        assert_eq!(
            run["webhook"]["deliveries"],
            json!([]),
            "{b}: nothing recorded"
        );

        // A new process picks it up once the dead one's lease has expired.
        let second = app.workers(cfg);
        let deadline = tokio::time::Instant::now() + PATIENCE;
        let run = loop {
            let (_, run) = app.get_json(&format!("/api/v1/runs/{id}")).await;
            let state = run["webhook"]["state"].as_str().unwrap_or_default();
            if matches!(state, "delivered" | "failed") {
                break run;
            }
            // Said in full if it ever happens: what the receiver saw and what
            // the store holds, beside the run.
            assert!(
                tokio::time::Instant::now() < deadline,
                "{b}: webhook still {state} after {PATIENCE:?}; the receiver got {} requests; \
                 the store holds {:?}; {run}",
                hook.got().len(),
                db.store.run_webhook(id.parse().unwrap()).await,
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        second.shutdown().await;
        assert_eq!(run["webhook"]["state"], "delivered", "{b}: {run}");
        let got = hook.got();
        assert_eq!(got.len(), 2, "{b}");
        assert_eq!(got[0].delivery, got[1].delivery, "{b}");
        assert!(verify(
            &created.webhook_secret,
            &got[1].signature,
            &got[1].body
        ));
    }
}

/// A hook's path and query are its secret: no attempt's error, in the run
/// resource or on its page, quotes them, whether the connection was refused
/// or the receiver answered 500.
#[tokio::test]
async fn no_public_answer_quotes_a_hooks_path_or_query() {
    for db in common::all_backends().await {
        let b = db.name();
        let app = TestApp::start(&db, 100).await;
        let pool = app.workers(fast_webhooks(worker_config(1, Duration::from_secs(5))));
        let target = rcp_reference(&[], Duration::ZERO).await;
        let created = key(&db).await;
        // A port nothing listens on: the connection is refused.
        let closed = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let refused = format!("http://127.0.0.1:{closed}/hooks/SECRETPATH?token=SECRETQUERY");
        // A receiver that answers 500 every time.
        let failing = receiver(&[500; 8]).await;
        let failing_url = failing.url.replace("token=abc", "token=SECRETQUERY");
        for hook in [refused, failing_url] {
            let (status, run) = submit(
                &app,
                Some(&created),
                &json!({"url": target, "suite": "rcp", "options": {"webhook_url": hook}}),
            )
            .await;
            assert_eq!(status, 202, "{b}: {run}");
            let id = run["id"].as_str().unwrap().to_owned();
            app.wait_finished(&id, PATIENCE).await;
            let run = wait_webhook(&app, &id).await;
            let attempts = run["webhook"]["deliveries"].as_array().unwrap().clone();
            assert!(!attempts.is_empty(), "{b}: {run}");
            assert!(
                attempts.iter().all(|a| a["error"].is_string()),
                "{b}: every attempt failed and says why: {run}"
            );
            let resource = run.to_string();
            let page = app.get_text(&format!("/runs/{id}")).await;
            for secret in ["SECRETPATH", "SECRETQUERY", "secret-path"] {
                assert!(!resource.contains(secret), "{b}: {secret} in {resource}");
                assert!(!page.contains(secret), "{b}: {secret} on the run page");
            }
        }
        pool.shutdown().await;
    }
}
