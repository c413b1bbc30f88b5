//! What a fault and abuse run found (#54): webhook URLs refused at
//! submission (item 8), credentials on RCP runs (item 9), and runs judged
//! under the address policy of the service that accepted them (item 10).

use crate::common;

use common::TestDb;
use common::app::{TestApp, rcp_reference, serve, worker_config};
use protocheck::api_keys::{self, CreatedKey, Rate};
use protocheck::attest::Attestor;
use protocheck::attest::keys::SigningKeyPair;
use protocheck::credentials::Keyring;
use protocheck::events::RunEvents;
use protocheck::metrics::Metrics;
use protocheck::store::{Inserted, NewRun, RunOrigin};
use protocheck::submit::Queue;
use protocheck::suite::{RunOptions, SuiteChoice};
use protocheck::transport::AddressPolicy;
use protocheck::web::{self, AppState};
use protocheck::worker::WorkerDeps;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// The API on a socket whose queue applies `policy` to what is submitted,
/// as `serve` does, and accepts credentials; no workers.
async fn app_under(db: &TestDb, policy: AddressPolicy) -> TestApp {
    let keyring = Keyring::parse(&hex::encode(rand::random::<[u8; 32]>())).expect("key");
    let keyring = Some(Arc::new(keyring));
    let deps = WorkerDeps {
        store: db.store.clone(),
        wake: Arc::new(Notify::new()),
        events: RunEvents::new(),
        metrics: Metrics::new(),
    };
    let schedule_wake = Arc::new(Notify::new());
    let queue = Queue::new(db.store.clone(), deps.wake.clone(), 3)
        .with_keyring(keyring.clone())
        .with_address_policy(policy)
        .with_schedule_wake(schedule_wake.clone());
    let attestor = Attestor::new(SigningKeyPair::generate().expect("signing key"));
    let options = web::WebOptions {
        submit_per_minute: 1000,
        attestor: Some(attestor.clone()),
        ..web::WebOptions::default()
    };
    let state = AppState::with_options(queue, deps.events.clone(), deps.metrics.clone(), options);
    TestApp {
        base: serve(web::app(state)).await,
        deps,
        http: reqwest::Client::new(),
        attestor,
        keyring,
        schedule_wake,
    }
}

async fn key(db: &TestDb) -> CreatedKey {
    api_keys::create_key(
        db.store.as_ref(),
        "ci",
        None,
        "6000/m".parse::<Rate>().expect("rate"),
        protocheck::now_ms(),
    )
    .await
    .expect("API key")
}

/// `method path` with `body` as `key`: the status and the JSON answer.
async fn call(
    app: &TestApp,
    method: reqwest::Method,
    path: &str,
    key: &CreatedKey,
    body: &Value,
) -> (u16, Value) {
    let resp = app
        .http
        .request(method, app.url(path))
        .bearer_auth(&key.token)
        .json(body)
        .send()
        .await
        .expect("request");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// Webhook URLs a worker would refuse at every delivery, refused when a run
/// or a watch is submitted, with 422 and the reason; the operator's
/// allow-private setting is respected as for targets.
#[tokio::test]
async fn webhook_urls_delivery_would_refuse_are_refused_at_submission() {
    for db in common::all_backends().await {
        let b = db.name();
        let key = key(&db).await;
        for policy in [AddressPolicy::PublicOnly, AddressPolicy::AllowPrivate] {
            let app = app_under(&db, policy).await;
            // A public target, so that only the webhook is in question; no
            // worker runs, so nothing is sent anywhere.
            let target = "http://93.184.215.14/rcp";
            let (status, run) = call(
                &app,
                reqwest::Method::POST,
                "/api/v1/runs",
                &key,
                &json!({"url": target, "suite": "rcp"}),
            )
            .await;
            assert!(status == 200 || status == 202, "{b}: {run}");
            let watch = format!(
                "/api/v1/targets/{}/watch",
                run["target_id"].as_str().expect("target id")
            );

            let mut refused = vec![
                (
                    "http://169.254.169.254/latest/hook",
                    "cloud metadata address",
                ),
                (
                    "http://[::ffff:169.254.169.254]/hook",
                    "cloud metadata address",
                ),
                ("http://hooks.example:0/hook", "port 0"),
                ("http:///hooks.example/hook", "followed by the host"),
                ("https:hooks.example/hook", "followed by the host"),
            ];
            let private = [
                ("http://127.0.0.1:9/hook", "loopback address"),
                ("http://localhost:9/hook", "loopback address"),
                ("http://10.1.2.3/hook", "private address"),
                ("http://[::1]:9/hook", "loopback address"),
            ];
            if policy == AddressPolicy::PublicOnly {
                refused.extend(private);
            }
            for (hook, reason) in refused {
                for n in 0..2 {
                    let (path, body, field) = match n {
                        0 => (
                            "/api/v1/runs",
                            json!({"url": target, "suite": "rcp",
                                   "options": {"webhook_url": hook}}),
                            "options",
                        ),
                        _ => (
                            watch.as_str(),
                            json!({"suite": "rcp", "webhook_url": hook}),
                            "webhook_url",
                        ),
                    };
                    let (status, problem) =
                        call(&app, reqwest::Method::POST, path, &key, &body).await;
                    assert_eq!(status, 422, "{b} {policy:?}: {path} {hook}: {problem}");
                    assert_eq!(problem["field"], field, "{b}: {problem}");
                    let detail = problem["detail"].as_str().unwrap_or_default();
                    assert!(
                        detail.contains(reason) && detail.contains("webhook_url"),
                        "{b} {policy:?}: {hook}: {detail}"
                    );
                }
            }
            // What the policy allows is taken.
            let mut taken = vec!["https://hooks.example/hook"];
            if policy == AddressPolicy::AllowPrivate {
                taken.extend(private.iter().map(|(hook, _)| *hook));
            }
            for hook in taken {
                let (status, run) = call(
                    &app,
                    reqwest::Method::POST,
                    "/api/v1/runs",
                    &key,
                    &json!({"url": target, "suite": "rcp", "options": {"webhook_url": hook}}),
                )
                .await;
                assert!(
                    status == 200 || status == 202,
                    "{b} {policy:?}: {hook}: {run}"
                );
                let (status, watched) = call(
                    &app,
                    reqwest::Method::POST,
                    &watch,
                    &key,
                    &json!({"suite": "rcp", "webhook_url": hook}),
                )
                .await;
                assert!(
                    status == 200 || status == 201,
                    "{b} {policy:?}: {hook}: {watched}"
                );
            }
        }
    }
}

/// RCP/1 sends no token, so a run of the RCP suite takes none (422); an
/// `auto` run that finds RCP says it was judged without one, in the run, its
/// reports and its signed statement.
#[tokio::test]
async fn credentials_are_refused_on_rcp_runs_and_never_claimed_for_one() {
    for db in common::all_backends().await {
        let b = db.name();
        let app = app_under(&db, AddressPolicy::AllowPrivate).await;
        let key = key(&db).await;
        let target = rcp_reference(&[], Duration::ZERO).await;
        let token = format!("tok-{}", uuid::Uuid::new_v4().simple());
        let (status, problem) = call(
            &app,
            reqwest::Method::POST,
            "/api/v1/runs",
            &key,
            &json!({"url": target, "suite": "rcp", "credentials": {"bearer_token": token}}),
        )
        .await;
        assert_eq!(status, 422, "{b}: {problem}");
        assert_eq!(problem["field"], "credentials", "{b}: {problem}");
        assert!(
            problem["detail"]
                .as_str()
                .is_some_and(|d| d.starts_with("RCP/1 runs take no credentials")),
            "{b}: {problem}"
        );

        let (status, run) = call(
            &app,
            reqwest::Method::POST,
            "/api/v1/runs",
            &key,
            &json!({"url": target, "suite": "auto", "credentials": {"bearer_token": token}}),
        )
        .await;
        assert_eq!(status, 202, "{b}: {run}");
        let id = run["id"].as_str().expect("id").to_owned();
        let pool = app.workers(worker_config(1, Duration::from_secs(30)));
        let run = app.wait_finished(&id, Duration::from_secs(120)).await;
        pool.shutdown().await;
        assert_eq!(run["status"], "passed", "{b}: {run}");
        assert_eq!(run["verdict"]["suite"], "rcp", "{b}: {run}");
        assert!(run.get("credentials").is_none(), "{b}: {run}");
        let (_, report) = app
            .get_json(&format!("/api/v1/runs/{id}/report.json"))
            .await;
        assert!(report["run"].get("credentials").is_none(), "{b}: {report}");
        let page = app.get_text(&format!("/runs/{id}")).await;
        assert!(!page.contains("id=\"credentials\""), "{b}: the run page");
        let (_, envelope) = app
            .get_json(&format!("/api/v1/runs/{id}/attestation"))
            .await;
        let statement = base64::Engine::decode(
            &base64::engine::general_purpose::STANDARD,
            envelope["payload"].as_str().expect("payload"),
        )
        .expect("base64");
        let statement: Value = serde_json::from_slice(&statement).expect("statement");
        assert_eq!(statement["predicate"]["suite"], "rcp", "{b}: {statement}");
        assert!(
            statement["predicate"].get("credentials").is_none(),
            "{b}: {statement}"
        );
    }
}

/// A worker started without `PROTOCHECK_ALLOW_PRIVATE_TARGETS` runs the
/// loopback target a service allowing private targets accepted: the run
/// carries the service's decision.
#[tokio::test]
async fn a_run_is_judged_under_the_policy_of_the_service_that_accepted_it() {
    for db in common::all_backends().await {
        let b = db.name();
        let app = app_under(&db, AddressPolicy::AllowPrivate).await;
        let target = rcp_reference(&[], Duration::ZERO).await;
        let run = app.submit(&json!({"url": target, "suite": "rcp"})).await;
        let id = run["id"].as_str().expect("id").to_owned();
        let stored = db
            .store
            .get_run(id.parse().expect("uuid"))
            .await
            .expect("read")
            .expect("run");
        assert_eq!(stored.private_targets, Some(true), "{b}");

        let mut cfg = worker_config(1, Duration::from_secs(30));
        cfg.policy = AddressPolicy::PublicOnly;
        let pool = app.workers(cfg);
        let run = app.wait_finished(&id, Duration::from_secs(120)).await;
        pool.shutdown().await;
        assert_eq!(run["status"], "passed", "{b}: {run}");

        // A service allowing public targets only records that too.
        let strict = app_under(&db, AddressPolicy::PublicOnly).await;
        let run = strict
            .submit(&json!({"url": "http://93.184.215.14/rcp", "suite": "rcp"}))
            .await;
        let stored = db
            .store
            .get_run(run["id"].as_str().expect("id").parse().expect("uuid"))
            .await
            .expect("read")
            .expect("run");
        assert_eq!(stored.private_targets, Some(false), "{b}");

        // And a worker allowing private targets does not connect where such
        // a service would not: a name that resolves to loopback.
        let port = target
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches("/rcp");
        let url = format!("http://localhost:{port}/rcp");
        let now = protocheck::now_ms();
        db.store
            .upsert_target("strict-target", &url, now)
            .await
            .expect("target");
        let new = NewRun {
            id: uuid::Uuid::now_v7(),
            target_id: "strict-target".to_owned(),
            suite: SuiteChoice::Rcp,
            options: RunOptions::default(),
            webhook_url: None,
            dedup_key: uuid::Uuid::new_v4().to_string(),
            max_attempts: 1,
            created_at_ms: now,
        };
        let origin = RunOrigin {
            private_targets: Some(false),
            ..RunOrigin::default()
        };
        let Inserted::New(run) = db
            .store
            .insert_run_from(&new, &origin)
            .await
            .expect("insert")
        else {
            panic!("{b}: not inserted");
        };
        let pool = strict.workers(worker_config(1, Duration::from_secs(30)));
        let ended = strict
            .wait_finished(&run.id.to_string(), Duration::from_secs(120))
            .await;
        pool.shutdown().await;
        assert_eq!(ended["status"], "error", "{b}: {ended}");
        assert!(
            ended["error"]
                .as_str()
                .is_some_and(|e| e.contains("loopback address")),
            "{b}: {ended}"
        );
    }
}
