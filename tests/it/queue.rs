//! The queue under failure: a worker that dies keeps its lease until it
//! expires, then another worker finishes the run with nothing lost; a worker
//! that shuts down gracefully gives its run back.

use crate::common;

use common::app::{TestApp, rcp_reference, worker_config};
use protocheck::events::RunEvents;
use protocheck::metrics::Metrics;
use protocheck::store::{Backend, RunStatus};
use protocheck::worker::WorkerDeps;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use uuid::Uuid;

const FINISH: Duration = Duration::from_secs(90);

async fn submit(app: &TestApp, target: &str) -> Uuid {
    let body: Value = app.submit(&json!({"url": target, "suite": "rcp"})).await;
    body["id"]
        .as_str()
        .and_then(|s| Uuid::parse_str(s).ok())
        .expect("run id")
}

/// Waits until the run is running with at least `n` findings stored.
async fn wait_mid_run(db: &common::TestDb, id: Uuid, n: usize) {
    let deadline = tokio::time::Instant::now() + FINISH;
    loop {
        let run = db.store.get_run(id).await.expect("get").expect("run");
        let found = db.store.findings(id, -1).await.expect("findings").len();
        if run.status == RunStatus::Running && found >= n {
            return;
        }
        assert!(
            !run.status.is_finished(),
            "run finished before the worker could be stopped"
        );
        assert!(
            tokio::time::Instant::now() < deadline,
            "run never got going"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_dead_workers_run_is_finished_by_another_after_the_lease_expires() {
    // Slow replies keep the run going long enough to kill its worker mid-way.
    let target = rcp_reference(&[], Duration::from_millis(150)).await;
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        let lease = Duration::from_secs(1);
        let doomed = app.workers(worker_config(1, lease));
        let id = submit(&app, &target).await;
        wait_mid_run(&db, id, 2).await;
        doomed.abort().await;

        let stranded = db.store.get_run(id).await.expect("get").expect("run");
        assert_eq!(
            stranded.status,
            RunStatus::Running,
            "{}: a crash releases nothing",
            db.name()
        );
        assert!(stranded.locked_by.is_some());
        assert_eq!(stranded.attempts, 1);

        let rescuer = app.workers(worker_config(1, lease));
        let run = app.wait_finished(&id.to_string(), FINISH).await;
        assert_eq!(run["status"], "passed", "{}: {run:#}", db.name());
        assert_eq!(run["attempts"], 2, "claimed again after the lease expired");
        let findings = run["findings"].as_array().expect("findings");
        let seqs: Vec<i64> = findings
            .iter()
            .map(|f| f["seq"].as_i64().expect("seq"))
            .collect();
        assert_eq!(
            seqs,
            (0..findings.len() as i64).collect::<Vec<_>>(),
            "{}: one complete attempt, no duplicates",
            db.name()
        );
        let total: u64 = ["pass", "fail", "warn", "info", "skip"]
            .iter()
            .map(|k| run["verdict"]["counts"][k].as_u64().unwrap_or(0))
            .sum();
        assert_eq!(total as usize, findings.len(), "nothing lost");
        rescuer.shutdown().await;
    }
}

#[tokio::test]
async fn a_graceful_shutdown_releases_runs_that_outlast_the_grace_period() {
    let target = rcp_reference(&[], Duration::from_millis(150)).await;
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        let mut cfg = worker_config(1, Duration::from_secs(30));
        cfg.shutdown_grace = Duration::ZERO;
        let leaving = app.workers(cfg);
        let id = submit(&app, &target).await;
        wait_mid_run(&db, id, 1).await;
        leaving.shutdown().await;

        let released = db.store.get_run(id).await.expect("get").expect("run");
        assert_eq!(released.status, RunStatus::Queued, "{}", db.name());
        assert_eq!(released.attempts, 0, "a released attempt is not counted");
        assert!(released.locked_by.is_none());

        let next = app.workers(worker_config(1, Duration::from_secs(30)));
        let run = app.wait_finished(&id.to_string(), FINISH).await;
        assert_eq!(run["status"], "passed");
        assert_eq!(run["attempts"], 1);
        next.shutdown().await;
    }
}

#[tokio::test]
async fn a_graceful_shutdown_lets_a_short_run_finish() {
    let target = rcp_reference(&[], Duration::from_millis(20)).await;
    let db = common::sqlite().await;
    let app = TestApp::start(&db, 100).await;
    let pool = app.workers(worker_config(1, Duration::from_secs(30)));
    let id = submit(&app, &target).await;
    wait_mid_run(&db, id, 1).await;
    pool.shutdown().await;
    let run = db.store.get_run(id).await.expect("get").expect("run");
    assert_eq!(
        run.status,
        RunStatus::Passed,
        "in-flight work finished within the grace period"
    );
}

#[tokio::test]
async fn postgres_notify_wakes_workers_in_another_process() {
    let Some(db) = common::postgres().await else {
        return;
    };
    assert_eq!(db.store.backend(), Backend::Postgres);
    let target = rcp_reference(&[], Duration::ZERO).await;
    let app = TestApp::start(&db, 100).await;
    // A second "process": its own Notify, never touched by the submitting side,
    // and a poll interval far longer than the wait below.
    let other = WorkerDeps {
        store: db.store.clone(),
        wake: Arc::new(Notify::new()),
        events: RunEvents::new(),
        metrics: Metrics::new(),
    };
    let mut cfg = worker_config(1, Duration::from_secs(30));
    cfg.poll = Duration::from_secs(600);
    let pool = protocheck::worker::WorkerPool::start(other, cfg).expect("workers");
    // Let the listener connect before submitting.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let id = submit(&app, &target).await;
    let run = app
        .wait_finished(&id.to_string(), Duration::from_secs(60))
        .await;
    assert_eq!(run["status"], "passed");
    pool.shutdown().await;
}

/// A target whose host is an IP literal the service's address policy refuses
/// is refused at submission (422 on the API, next to the URL on the form),
/// before it is queued and counted against its host (#31 item 10).
#[tokio::test]
async fn a_forbidden_ip_literal_is_refused_before_it_is_queued() {
    use protocheck::submit::{Queue, Submission, SubmitError};
    use protocheck::suite::{RunOptions, SuiteChoice};
    use protocheck::transport::AddressPolicy;
    for db in common::all_backends().await {
        let queue = Queue::new(db.store.clone(), Default::default(), 3)
            .with_address_policy(AddressPolicy::PublicOnly);
        for url in [
            "http://127.0.0.1:9/mcp",
            "http://[::1]:9/mcp",
            "http://[::ffff:127.0.0.1]:9/mcp",
            "http://169.254.169.254/latest",
            "http://10.0.0.1/rcp",
        ] {
            let sub = Submission {
                url: url.to_owned(),
                suite: SuiteChoice::Mcp,
                options: RunOptions::default(),
                webhook_url: None,
                credentials: None,
                max_age_s: 0,
                force: false,
                idempotency: None,
                submitter: None,
            };
            let err = queue.submit(sub).await.expect_err(url);
            assert!(
                matches!(&err, SubmitError::Url(e) if e.to_string().contains("does not connect to")),
                "{}: {url}: {err}",
                db.name()
            );
        }
        let counts = db.store.count_by_status().await.expect("counts");
        assert!(
            counts.iter().all(|(_, n)| *n == 0),
            "{}: {counts:?}",
            db.name()
        );
    }
}
