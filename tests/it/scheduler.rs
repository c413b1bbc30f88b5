//! The scheduler takes a new watch's first slot when it comes, even while it
//! sleeps towards a slot an hour away: making a watch wakes it. SQLite and
//! Postgres.

use crate::common;
use common::app::{TestApp, rcp_reference, worker_config};
use protocheck::store::NewWatch;
use serde_json::{Value, json};
use std::time::Duration;

/// Liveness bound; never a timing assertion.
const PATIENCE: Duration = Duration::from_secs(90);

/// Submits `url` (RCP) with `token`; the run's target id.
async fn submitted_target(app: &TestApp, token: &str, url: &str) -> String {
    let resp = app
        .http
        .post(app.url("/api/v1/runs"))
        .bearer_auth(token)
        .json(&json!({"url": url, "suite": "rcp"}))
        .send()
        .await
        .expect("submit");
    assert_eq!(resp.status(), 202);
    let run: Value = resp.json().await.expect("json");
    run["target_id"].as_str().expect("target id").to_owned()
}

/// Waits until the watch of `target` kept by `key` (None: a badge's) has
/// taken a slot; that slot.
async fn slot_taken(db: &common::TestDb, target: &str, key: Option<uuid::Uuid>) -> i64 {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let watch = db
            .store
            .get_watch(target, "rcp", key)
            .await
            .expect("store")
            .expect("the watch");
        if let Some(taken) = watch.last_due_at_ms {
            return taken;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{}: the slot of {target}'s watch was never taken",
            db.name()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The scheduler sleeps until the earliest slot it knows of, up to its
/// `refresh` (an hour here, so that only a wake can explain a slot taken in
/// time): a watch made through the API wakes it, and its first slot, the
/// `next_run_at` the API answered, is the slot it takes.
#[tokio::test]
async fn a_new_watch_wakes_the_scheduler_and_its_first_slot_is_taken() {
    for db in common::all_backends().await {
        let app = TestApp::start_tuned(&db, 1000, |o| {
            o.watch.min_interval = Duration::from_secs(1);
        })
        .await;
        let created = crate::webhooks::key(&db).await;
        let early = submitted_target(
            &app,
            &created.token,
            &rcp_reference(&[], Duration::ZERO).await,
        )
        .await;
        let later = submitted_target(
            &app,
            &created.token,
            &rcp_reference(&[], Duration::ZERO).await,
        )
        .await;
        // A watch due now and then in a day: the scheduler's first tick takes
        // its slot, then sleeps for the longest it may.
        let now = protocheck::now_ms();
        db.store
            .keep_badge_watch(&NewWatch {
                target_id: early.clone(),
                suite: "rcp".into(),
                options: Default::default(),
                interval_ms: 86_400_000,
                first_due_at_ms: now,
                api_key: None,
                created_at_ms: now,
                expires_at_ms: Some(now + 86_400_000),
                webhook_url: None,
                events: Vec::new(),
            })
            .await
            .expect("a watch due now");
        let mut cfg = worker_config(1, Duration::from_secs(5));
        cfg.schedule.tick = Duration::from_millis(100);
        cfg.schedule.refresh = Duration::from_secs(3600);
        let pool = app.workers(cfg);
        slot_taken(&db, &early, None).await;

        let resp = app
            .http
            .post(app.url(&format!("/api/v1/targets/{later}/watch")))
            .bearer_auth(&created.token)
            .json(&json!({"suite": "rcp", "interval_s": 1}))
            .send()
            .await
            .expect("watch");
        assert_eq!(resp.status(), 201);
        let watch: Value = resp.json().await.expect("json");
        let taken = slot_taken(&db, &later, Some(created.key.id)).await;
        assert_eq!(
            json!(protocheck::rfc3339(taken)),
            watch["next_run_at"],
            "{}: the first slot taken is the one announced",
            db.name()
        );
        pool.shutdown().await;
    }
}
