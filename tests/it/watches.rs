//! Watched targets (#28), end to end on loopback: the watch API (each API key
//! keeps its own watch of a target, within its quota; bad values get 4xx;
//! two keys watching at once both get a watch of their own), and a watched RCP
//! reference server that breaks between two scheduled runs and is fixed
//! again: its badge follows, and the watch's receiver gets `run.regressed`
//! with the rule that changed, then `run.recovered`. SQLite and Postgres.

use crate::common;
use crate::webhooks::{fast_webhooks, key, receiver, verify};
use axum::Router;
use common::app::{TestApp, serve, worker_config};
use protocheck::api_keys;
use protocheck::reference::rcp::{RcpReferenceConfig, rcp_router};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Liveness bound; never a timing assertion.
const PATIENCE: Duration = Duration::from_secs(90);

async fn call(
    app: &TestApp,
    method: reqwest::Method,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> (u16, Value) {
    let mut req = app.http.request(method, app.url(path));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(b) = body {
        req = req.json(b);
    }
    let resp = req.send().await.expect("request");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

pub(crate) async fn submit_and_wait(app: &TestApp, token: &str, url: &str) -> Value {
    let body = json!({"url": url, "suite": "rcp", "force": true});
    let (status, run) = call(
        app,
        reqwest::Method::POST,
        "/api/v1/runs",
        Some(token),
        Some(&body),
    )
    .await;
    assert!(status == 202 || status == 200, "{status}: {run}");
    let id = run["id"].as_str().expect("run id").to_owned();
    app.wait_finished(&id, PATIENCE).await
}

/// A second API key, beside `key`'s.
async fn other_key(db: &common::TestDb) -> protocheck::api_keys::CreatedKey {
    api_keys::create_key(
        db.store.as_ref(),
        "other",
        None,
        "100/min".parse().unwrap(),
        1,
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn the_watch_api_takes_a_keys_watch_and_refuses_what_it_must() {
    for db in common::all_backends().await {
        let b = db.name();
        let app = TestApp::start_tuned(&db, 1000, |o| {
            o.watch.min_interval = Duration::from_secs(60);
        })
        .await;
        let pool = app.workers(worker_config(1, Duration::from_secs(5)));
        let target = common::app::rcp_reference(&[], Duration::ZERO).await;
        let owner = key(&db).await;
        let other = other_key(&db).await;
        let run = submit_and_wait(&app, &owner.token, &target).await;
        let id = run["target_id"].as_str().unwrap().to_owned();
        let path = format!("/api/v1/targets/{id}/watch");
        let post = reqwest::Method::POST;

        let body = json!({"suite": "rcp", "interval_s": 3600});
        let (status, problem) = call(&app, post.clone(), &path, None, Some(&body)).await;
        assert_eq!(status, 401, "{b}: {problem}");

        for (bad, field) in [
            (json!({"suite": "rcp", "interval_s": 59}), "interval_s"),
            (
                json!({"suite": "rcp", "interval_s": 31 * 24 * 3600}),
                "interval_s",
            ),
            (json!({"suite": "auto"}), "suite"),
            (json!({"suite": "rcp", "events": []}), "events"),
            (json!({"suite": "rcp", "events": ["run.started"]}), "events"),
            (
                json!({"suite": "rcp", "webhook_url": "https://u:p@hooks.example/x"}),
                "webhook_url",
            ),
        ] {
            let (status, problem) =
                call(&app, post.clone(), &path, Some(&owner.token), Some(&bad)).await;
            assert_eq!(status, 422, "{b}: {bad}: {problem}");
            assert_eq!(problem["field"], field, "{b}: {problem}");
        }
        let (status, problem) = call(
            &app,
            post.clone(),
            &path,
            Some(&owner.token),
            Some(&json!({"suite": "rcp", "every": 5})),
        )
        .await;
        assert_eq!(status, 422, "{b}: unknown fields are refused: {problem}");
        let (status, _) = call(
            &app,
            post.clone(),
            "/api/v1/targets/000000000000000000000000/watch",
            Some(&owner.token),
            Some(&body),
        )
        .await;
        assert_eq!(status, 404, "{b}");

        // Created, then replaced by the same key: the hook is shown by its origin only.
        let hooked = json!({"suite": "rcp", "interval_s": 3600,
                            "webhook_url": "https://hooks.example/secret-path?token=abc",
                            "events": ["run.recovered", "run.finished", "run.recovered"]});
        let (status, watch) =
            call(&app, post.clone(), &path, Some(&owner.token), Some(&hooked)).await;
        assert_eq!(status, 201, "{b}: {watch}");
        assert_eq!(watch["interval_s"], 3600, "{b}");
        assert_eq!(watch["events"], json!(["run.finished", "run.recovered"]));
        assert!(!watch.to_string().contains("secret-path"), "{b}: {watch}");
        let next = db
            .store
            .get_watch(&id, "rcp", Some(owner.key.id))
            .await
            .unwrap()
            .expect("stored")
            .next_due_at_ms;
        let now = protocheck::now_ms();
        assert!(
            next > now - 60_000 && next <= now + 3_600_000,
            "{b}: the first run comes within the first interval: {watch}"
        );
        let (status, again) =
            call(&app, post.clone(), &path, Some(&owner.token), Some(&body)).await;
        assert_eq!(status, 200, "{b}: {again}");
        assert_eq!(again["next_run_at"], watch["next_run_at"], "{b}: same beat");
        assert_eq!(
            again["events"],
            json!(["run.regressed", "run.recovered"]),
            "{b}: the default events"
        );

        // Another key keeps a watch of its own beside it, and ends only its own.
        let del = reqwest::Method::DELETE;
        let (status, theirs) =
            call(&app, post.clone(), &path, Some(&other.token), Some(&body)).await;
        assert_eq!(status, 201, "{b}: {theirs}");
        let (status, _) = call(
            &app,
            del.clone(),
            &format!("{path}?suite=rcp"),
            Some(&other.token),
            None,
        )
        .await;
        assert_eq!(status, 204, "{b}");
        let (status, problem) = call(
            &app,
            del.clone(),
            &format!("{path}?suite=rcp"),
            Some(&other.token),
            None,
        )
        .await;
        assert_eq!(
            status, 404,
            "{b}: the other key has no watch left: {problem}"
        );
        assert!(
            db.store
                .get_watch(&id, "rcp", Some(owner.key.id))
                .await
                .unwrap()
                .is_some(),
            "{b}: the first key's watch goes on"
        );
        let (status, _) = call(&app, del.clone(), &format!("{path}?suite=rcp"), None, None).await;
        assert_eq!(status, 401, "{b}");
        let (status, _) = call(&app, del.clone(), &path, Some(&owner.token), None).await;
        assert_eq!(status, 400, "{b}: the suite is required");
        let (status, _) = call(
            &app,
            del.clone(),
            &format!("{path}?suite=rcp"),
            Some(&owner.token),
            None,
        )
        .await;
        assert_eq!(status, 204, "{b}");
        let (status, _) = call(
            &app,
            del,
            &format!("{path}?suite=rcp"),
            Some(&owner.token),
            None,
        )
        .await;
        assert_eq!(status, 404, "{b}: already gone");
        assert_eq!(
            db.store
                .get_watch(&id, "rcp", Some(owner.key.id))
                .await
                .unwrap(),
            None
        );
        pool.shutdown().await;
    }
}

/// A key, as `protocheck keys create --watch-quota` makes one.
async fn quota_key(db: &common::TestDb, name: &str, quota: u32) -> api_keys::CreatedKey {
    api_keys::create_key_with_quota(
        db.store.as_ref(),
        name,
        None,
        "100000/min".parse().unwrap(),
        quota,
        1,
    )
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_keys_watching_a_target_at_once_each_get_a_watch_of_their_own() {
    for db in common::all_backends().await {
        let b = db.name();
        let app = TestApp::start_tuned(&db, 100_000, |o| {
            o.watch.min_interval = Duration::from_secs(60);
        })
        .await;
        let keys = [
            quota_key(&db, "one", 1_000).await,
            quota_key(&db, "two", 1_000).await,
        ];
        let app = Arc::new(app);
        for n in 0..200u32 {
            let id = format!("{:024x}", 0xabc0_0000 + n);
            db.store
                .upsert_target(&id, &format!("https://watched-{n}.example/rcp"), 1)
                .await
                .unwrap();
            let path = format!("/api/v1/targets/{id}/watch");
            let barrier = Arc::new(tokio::sync::Barrier::new(2));
            let asks: Vec<_> = keys
                .iter()
                .map(|k| {
                    let (app, barrier, path) = (app.clone(), barrier.clone(), path.clone());
                    let token = k.token.clone();
                    let hook = format!("https://hooks.example/{}", k.key.name);
                    tokio::spawn(async move {
                        let body = json!({"suite": "rcp", "webhook_url": hook});
                        barrier.wait().await;
                        call(
                            &app,
                            reqwest::Method::POST,
                            &path,
                            Some(&token),
                            Some(&body),
                        )
                        .await
                    })
                })
                .collect();
            for ask in asks {
                let (status, watch) = ask.await.unwrap();
                assert_eq!(status, 201, "{b}: race {n}: {watch}");
            }
            let watches = db.store.list_watches(Some(&id)).await.unwrap();
            let owners: BTreeSet<_> = watches
                .iter()
                .map(|w| (w.api_key, w.webhook_url.clone()))
                .collect();
            let expected: BTreeSet<_> = keys
                .iter()
                .map(|k| {
                    (
                        Some(k.key.id),
                        Some(format!("https://hooks.example/{}", k.key.name)),
                    )
                })
                .collect();
            assert_eq!(owners, expected, "{b}: race {n}");
        }
    }
}

#[tokio::test]
async fn a_key_keeps_no_more_watches_than_its_quota() {
    for db in common::all_backends().await {
        let b = db.name();
        let app = TestApp::start_tuned(&db, 1000, |o| {
            o.watch.min_interval = Duration::from_secs(60);
        })
        .await;
        let small = quota_key(&db, "small", 2).await;
        let mut paths = Vec::new();
        for n in 0..3u32 {
            let id = format!("{:024x}", 0xdef0_0000 + n);
            db.store
                .upsert_target(&id, &format!("https://quota-{n}.example/rcp"), 1)
                .await
                .unwrap();
            paths.push(format!("/api/v1/targets/{id}/watch"));
        }
        let body = json!({"suite": "rcp"});
        let post = reqwest::Method::POST;
        for path in &paths[..2] {
            let (status, watch) =
                call(&app, post.clone(), path, Some(&small.token), Some(&body)).await;
            assert_eq!(status, 201, "{b}: {watch}");
        }
        let (status, problem) = call(
            &app,
            post.clone(),
            &paths[2],
            Some(&small.token),
            Some(&body),
        )
        .await;
        assert_eq!(status, 429, "{b}: {problem}");
        assert_eq!(problem["type"], "/problems/watch-quota", "{b}: {problem}");
        assert_eq!(
            (&problem["watch_quota"], &problem["watches"]),
            (&json!(2), &json!(2)),
            "{b}: {problem}"
        );
        assert!(
            problem["detail"].as_str().unwrap().contains("quota of 2"),
            "{b}: {problem}"
        );
        // A watch the key keeps can still change; one ended makes room.
        let (status, _) = call(
            &app,
            post.clone(),
            &paths[0],
            Some(&small.token),
            Some(&body),
        )
        .await;
        assert_eq!(status, 200, "{b}");
        let (status, _) = call(
            &app,
            reqwest::Method::DELETE,
            &format!("{}?suite=rcp", paths[0]),
            Some(&small.token),
            None,
        )
        .await;
        assert_eq!(status, 204, "{b}");
        let (status, watch) = call(&app, post, &paths[2], Some(&small.token), Some(&body)).await;
        assert_eq!(status, 201, "{b}: {watch}");
    }
}

/// An RCP reference server on one address that can be broken and fixed
/// between runs: `broken` picks which of two reference servers answers.
pub(crate) async fn switchable_rcp(fault: &str) -> (String, Arc<AtomicBool>) {
    let healthy = rcp_router(RcpReferenceConfig::new(BTreeSet::<String>::new()).expect("config"));
    let faults: BTreeSet<String> = [fault.to_owned()].into();
    let broken_router = rcp_router(RcpReferenceConfig::new(faults).expect("known fault"));
    let broken = Arc::new(AtomicBool::new(false));
    let flag = broken.clone();
    let front =
        Router::new().fallback_service(tower::service_fn(move |req: axum::extract::Request| {
            let router = if flag.load(Ordering::SeqCst) {
                broken_router.clone()
            } else {
                healthy.clone()
            };
            tower::ServiceExt::oneshot(router, req)
        }));
    (format!("{}/rcp", serve(front).await), broken)
}

/// The runs of a target, newest first, as its history pages them.
async fn history(app: &TestApp, target: &str) -> Vec<Value> {
    let (status, page) = app
        .get_json(&format!("/api/v1/targets/{target}/runs?limit=100"))
        .await;
    assert_eq!(status, 200, "{page}");
    page["runs"].as_array().cloned().unwrap_or_default()
}

/// Waits for the receiver's first delivery of `event`.
async fn wait_event(hook: &crate::webhooks::Receiver, event: &str) -> Value {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        if let Some(got) = hook.got().into_iter().find(|g| g.event == event) {
            return serde_json::from_slice(&got.body).expect("JSON body");
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no {event}; got {:?}",
            hook.got()
                .iter()
                .map(|g| g.event.clone())
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_watched_target_that_breaks_and_is_fixed_is_announced_both_ways() {
    const FAULT: &str = "RCP-L0-003";
    for db in common::all_backends().await {
        let b = db.name();
        let app = TestApp::start_tuned(&db, 1000, |o| {
            o.watch.min_interval = Duration::from_secs(1);
        })
        .await;
        let mut cfg = fast_webhooks(worker_config(2, Duration::from_secs(5)));
        cfg.schedule.tick = Duration::from_millis(100);
        cfg.schedule.refresh = Duration::from_millis(100);
        let pool = app.workers(cfg);
        let (target, broken) = switchable_rcp(FAULT).await;
        let hook = receiver(&[]).await;
        let created = key(&db).await;

        let first = submit_and_wait(&app, &created.token, &target).await;
        assert_eq!(first["status"], "passed", "{b}: {first}");
        let id = first["target_id"].as_str().unwrap().to_owned();
        let (_, healthy_badge) = app.get_json(&format!("/badge/{id}/rcp.json")).await;
        let (status, watch) = call(
            &app,
            reqwest::Method::POST,
            &format!("/api/v1/targets/{id}/watch"),
            Some(&created.token),
            Some(&json!({"suite": "rcp", "interval_s": 1, "webhook_url": hook.url})),
        )
        .await;
        assert_eq!(status, 201, "{b}: {watch}");

        // A scheduled run of the healthy server changes nothing: no event.
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while history(&app, &id)
            .await
            .iter()
            .filter(|r| r["status"] == "passed")
            .count()
            < 2
        {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{b}: no scheduled run"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }

        // Broken between two scheduled runs.
        broken.store(true, Ordering::SeqCst);
        let regressed = wait_event(&hook, "run.regressed").await;
        let got = hook.got();
        let delivery = got.iter().find(|g| g.event == "run.regressed").unwrap();
        assert!(
            verify(&created.webhook_secret, &delivery.signature, &delivery.body),
            "{b}: signed with the watch's key"
        );
        assert_eq!(regressed["event"], "run.regressed", "{b}");
        assert_eq!(regressed["status"], "failed", "{b}: {regressed}");
        let changes = regressed["changes"].as_array().expect("changes");
        assert!(
            changes
                .iter()
                .any(|c| c["rule_id"] == FAULT && c["before"] == "pass" && c["after"] == "fail"),
            "{b}: {regressed}"
        );
        assert!(regressed["previous"]["run_url"].is_string(), "{b}");
        assert!(
            got.iter().all(|g| g.event != "run.finished"),
            "{b}: run.finished was not asked for"
        );
        // The badge shows the new verdict.
        let run_id = regressed["run_id"].as_str().unwrap();
        let (_, shown) = app.get_json(&format!("/api/v1/runs/{run_id}")).await;
        assert_eq!(shown["status"], "failed", "{b}");
        let (_, badge) = app.get_json(&format!("/badge/{id}/rcp.json")).await;
        // The healthy server's badge was green "L2"; the failed run's is not.
        assert_ne!(badge["message"], healthy_badge["message"], "{b}: {badge}");
        assert_ne!(badge["color"], healthy_badge["color"], "{b}: {badge}");

        // Fixed: the next scheduled run recovers.
        broken.store(false, Ordering::SeqCst);
        let recovered = wait_event(&hook, "run.recovered").await;
        assert_eq!(recovered["status"], "passed", "{b}: {recovered}");
        assert!(
            recovered["changes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["rule_id"] == FAULT && c["before"] == "fail"),
            "{b}: {recovered}"
        );
        assert!(
            db.store
                .delete_watch(&id, "rcp", Some(created.key.id))
                .await
                .unwrap()
        );
        pool.shutdown().await;
    }
}

#[tokio::test]
async fn a_served_badge_keeps_its_target_watched() {
    for db in common::all_backends().await {
        let b = db.name();
        let app = TestApp::start_tuned(&db, 1000, |o| {
            o.watch.badge_interval = Duration::from_secs(1);
        })
        .await;
        let mut cfg = worker_config(1, Duration::from_secs(5));
        cfg.schedule.tick = Duration::from_millis(100);
        cfg.schedule.refresh = Duration::from_millis(100);
        let pool = app.workers(cfg);
        let target = common::app::rcp_reference(&[], Duration::ZERO).await;
        let created = key(&db).await;
        let first = submit_and_wait(&app, &created.token, &target).await;
        let id = first["target_id"].as_str().unwrap().to_owned();
        assert_eq!(
            db.store.get_watch(&id, "rcp", None).await.unwrap(),
            None,
            "{b}"
        );

        // A badge of a target nobody stored keeps nothing.
        let nobody = "0123456789abcdef01234567";
        let (status, _) = app.get_json(&format!("/badge/{nobody}/rcp.json")).await;
        assert_eq!(status, 200, "{b}");

        let served = protocheck::now_ms();
        let resp = app
            .http
            .get(app.url(&format!("/badge/{id}/rcp.svg")))
            .send()
            .await
            .expect("badge");
        assert_eq!(resp.status(), 200, "{b}");
        let deadline = tokio::time::Instant::now() + PATIENCE;
        let watch = loop {
            if let Some(w) = db.store.get_watch(&id, "rcp", None).await.unwrap() {
                break w;
            }
            assert!(tokio::time::Instant::now() < deadline, "{b}: not watched");
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert_eq!(watch.api_key, None, "{b}");
        assert_eq!(watch.interval_ms, 1000, "{b}");
        let month = 30 * 24 * 3_600_000;
        let ends = watch.expires_at_ms.expect("a badge's watch ends");
        assert!(
            ends >= served + month && ends <= protocheck::now_ms() + month,
            "{b}: it ends 30 days after the badge was served"
        );
        assert_eq!(db.store.list_watches(Some(nobody)).await.unwrap(), vec![]);

        // Its runs come on schedule.
        while history(&app, &id).await.len() < 3 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{b}: no scheduled run"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // The scheduler's work shows in the metrics.
        let metrics = app.get_text("/metrics").await;
        let started = metrics
            .lines()
            .find_map(|l| l.strip_prefix("protocheck_schedule_runs_started_total "))
            .and_then(|n| n.trim().parse::<f64>().ok())
            .unwrap_or_default();
        assert!(started >= 2.0, "{b}: {metrics}");
        assert!(
            metrics.contains("protocheck_schedule_slots_due_total"),
            "{b}"
        );
        // No key may end it (it is none of theirs): it lasts while the badge
        // is served.
        let (status, problem) = call(
            &app,
            reqwest::Method::DELETE,
            &format!("/api/v1/targets/{id}/watch?suite=rcp"),
            Some(&created.token),
            None,
        )
        .await;
        assert_eq!(status, 404, "{b}: {problem}");
        assert!(db.store.delete_watch(&id, "rcp", None).await.unwrap());
        pool.shutdown().await;
    }
}

#[tokio::test]
async fn a_submission_can_ask_for_a_watch() {
    for db in common::all_backends().await {
        let b = db.name();
        let app = TestApp::start_tuned(&db, 1000, |_| {}).await;
        let target = common::app::rcp_reference(&[], Duration::ZERO).await;
        let owner = key(&db).await;
        let other = other_key(&db).await;
        let post = reqwest::Method::POST;
        let body = |suite: &str| {
            json!({"url": target, "suite": suite,
                   "options": {"profile": "reference", "webhook_url": "https://hooks.example/h"},
                   "watch": {"interval_s": 7200, "events": ["run.finished"]}})
        };
        let (status, problem) =
            call(&app, post.clone(), "/api/v1/runs", None, Some(&body("rcp"))).await;
        assert_eq!(
            (status, &problem["field"]),
            (422, &json!("watch")),
            "{b}: {problem}"
        );
        let (status, problem) = call(
            &app,
            post.clone(),
            "/api/v1/runs",
            Some(&owner.token),
            Some(&body("auto")),
        )
        .await;
        assert_eq!(
            (status, &problem["field"]),
            (422, &json!("suite")),
            "{b}: {problem}"
        );

        let (status, run) = call(
            &app,
            post.clone(),
            "/api/v1/runs",
            Some(&owner.token),
            Some(&body("rcp")),
        )
        .await;
        assert_eq!(status, 202, "{b}: {run}");
        assert_eq!(run["watch"]["interval_s"], 7200, "{b}: {run}");
        assert_eq!(run["watch"]["events"], json!(["run.finished"]), "{b}");
        let id = run["target_id"].as_str().unwrap();
        let watch = db
            .store
            .get_watch(id, "rcp", Some(owner.key.id))
            .await
            .unwrap()
            .expect("watched");
        assert_eq!(watch.options.profile.as_deref(), Some("reference"), "{b}");
        assert_eq!(
            watch.webhook_url.as_deref(),
            Some("https://hooks.example/h"),
            "{b}"
        );

        // Another key's submission with a watch gets a watch of its own.
        let (status, run) = call(
            &app,
            post,
            "/api/v1/runs",
            Some(&other.token),
            Some(&body("rcp")),
        )
        .await;
        assert!(status == 200 || status == 202, "{b}: {status} {run}");
        assert_eq!(run["watch"]["interval_s"], 7200, "{b}: {run}");
        let watchers: BTreeSet<_> = db
            .store
            .list_watches(Some(id))
            .await
            .unwrap()
            .into_iter()
            .map(|w| w.api_key)
            .collect();
        assert_eq!(
            watchers,
            BTreeSet::from([Some(owner.key.id), Some(other.key.id)]),
            "{b}"
        );
    }
}
