//! A worker that loses its database keeps its run: when the database answers
//! again, the same worker goes on (or takes the run back as its next attempt)
//! at once, without waiting for its lease to expire. Postgres only: the
//! database sits behind a loopback proxy the test freezes or cuts.

use crate::common;

use common::app::{TestApp, rcp_reference, worker_config};
use common::proxy::Proxy;
use protocheck::store::RunStatus;
use serde_json::{Value, json};
use std::time::Duration;
use uuid::Uuid;

/// Far shorter than the lease below: a run that finishes within it was not
/// waiting for its lease to expire. A liveness bound, never a timing assertion.
const PATIENCE: Duration = Duration::from_secs(60);
/// Longer than the test can run: only the worker holding the run can finish it.
const LEASE: Duration = Duration::from_secs(600);
/// How long the database stays away: many heartbeats.
const OUTAGE: Duration = Duration::from_secs(2);

/// The app and one worker, both reaching the database through `proxy`;
/// the test reads the database directly.
async fn through_proxy(db: &common::TestDb) -> (Proxy, TestApp, protocheck::worker::WorkerPool) {
    let (proxy, url) = Proxy::postgres(&db.url).await;
    let store = protocheck::store::connect(&url)
        .await
        .expect("connect through the proxy");
    let app = TestApp::start(&db.through(store), 100).await;
    let mut cfg = worker_config(1, LEASE);
    cfg.heartbeat = Duration::from_millis(200);
    let pool = app.workers(cfg);
    (proxy, app, pool)
}

/// Submits a slow run and waits until it is running with findings stored;
/// returns it and the worker holding it.
async fn mid_run(app: &TestApp, db: &common::TestDb) -> (Uuid, String) {
    let target = rcp_reference(&[], Duration::from_millis(100)).await;
    let body: Value = app.submit(&json!({"url": target, "suite": "rcp"})).await;
    let id = body["id"]
        .as_str()
        .and_then(|s| Uuid::parse_str(s).ok())
        .expect("run id");
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let run = db.store.get_run(id).await.expect("get").expect("run");
        let found = db.store.findings(id, -1).await.expect("findings").len();
        if run.status == RunStatus::Running && found >= 2 {
            return (id, run.locked_by.expect("holder"));
        }
        assert!(
            !run.status.is_finished(),
            "finished before the outage: {run:?}"
        );
        assert!(tokio::time::Instant::now() < deadline, "never got going");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits for the run to finish, checking on the way that only `worker` ever
/// holds it.
async fn finished_by(db: &common::TestDb, id: Uuid, worker: &str) -> protocheck::store::Run {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let run = db.store.get_run(id).await.expect("get").expect("run");
        if run.status.is_finished() {
            return run;
        }
        if let Some(holder) = &run.locked_by {
            assert_eq!(holder, worker, "held by another worker: {run:?}");
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "run still {:?} after the database came back: {run:?}",
            run.status
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_worker_keeps_its_run_while_the_database_is_silent() {
    let Some(db) = common::postgres().await else {
        return;
    };
    let (proxy, app, pool) = through_proxy(&db).await;
    let (id, worker) = mid_run(&app, &db).await;

    proxy.freeze(true);
    tokio::time::sleep(OUTAGE).await;
    proxy.freeze(false);

    let run = finished_by(&db, id, &worker).await;
    assert_eq!(run.status, RunStatus::Passed, "{run:?}");
    assert_eq!(run.attempts, 1, "the attempt went on: {run:?}");
    pool.shutdown().await;
}

#[tokio::test]
async fn a_worker_takes_its_run_back_when_the_database_restarts() {
    let Some(db) = common::postgres().await else {
        return;
    };
    let (proxy, app, pool) = through_proxy(&db).await;
    let (id, worker) = mid_run(&app, &db).await;

    proxy.go_down();
    tokio::time::sleep(OUTAGE).await;
    proxy.come_back();

    let run = finished_by(&db, id, &worker).await;
    assert_eq!(run.status, RunStatus::Passed, "{run:?}");
    // Findings written while the database was away were lost with their
    // connections, so the worker restarts the run as its next attempt rather
    // than leave a report with holes; when none was in flight, it goes on.
    assert!((1..=2).contains(&run.attempts), "{run:?}");
    let findings = db.store.findings(id, -1).await.expect("findings");
    let seqs: Vec<i64> = findings.iter().map(|f| f.seq).collect();
    assert_eq!(
        seqs,
        (0..findings.len() as i64).collect::<Vec<_>>(),
        "one complete attempt, nothing lost or doubled"
    );
    let counts = &run.verdict.as_ref().expect("verdict").counts;
    let total = counts.pass + counts.fail + counts.warn + counts.info + counts.skip;
    assert_eq!(total as usize, findings.len());
    pool.shutdown().await;
}
