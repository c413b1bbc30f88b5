//! A run's deadline is the whole run's, from its first claim to its end, and
//! a target that is slow is judged on the first attempt rather than retried.

use crate::common;

use common::app::{TestApp, worker_config};
use protocheck::store::{Inserted, NewRun, RunStatus};
use protocheck::suite::{RunOptions, SuiteChoice};
use protocheck::target::CanonicalUrl;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use uuid::Uuid;

/// Liveness bound: far longer than the deadlines below, far shorter than a
/// run given its whole deadline again; never a timing assertion.
const PATIENCE: Duration = Duration::from_secs(60);

/// A slowloris server on loopback: it reads the request, then trickles a
/// response head one byte at a time and never finishes it. Returns its URL
/// and the number of connections it accepted.
async fn slowloris() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                if socket.read(&mut buf).await.is_err() {
                    return;
                }
                let head = b"HTTP/1.1 200 OK\r\nX-Slow: ";
                if socket.write_all(head).await.is_err() {
                    return;
                }
                loop {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    if socket.write_all(b"a").await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (format!("http://{addr}/rcp"), accepted)
}

#[tokio::test]
async fn a_slow_target_ends_as_error_on_its_first_attempt() {
    let (target, _) = slowloris().await;
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        let mut cfg = worker_config(1, Duration::from_secs(30));
        cfg.run_deadline = Duration::from_secs(2);
        let pool = app.workers(cfg);
        let body: Value = app.submit(&json!({"url": target, "suite": "rcp"})).await;
        let id = body["id"].as_str().expect("id").to_owned();
        let run = app.wait_finished(&id, PATIENCE).await;
        assert_eq!(run["status"], "error", "{}: {run:#}", db.name());
        assert_eq!(
            run["attempts"],
            1,
            "{}: a slow target is not retried",
            db.name()
        );
        assert_eq!(run["max_attempts"], 3);
        let reason = run["error"].as_str().unwrap_or_default();
        assert_eq!(reason, "the run did not finish within its 2s deadline");
        pool.shutdown().await;
    }
}

/// Queues a run of `target` created (and so available) at `created_at_ms`.
async fn queue_at(db: &common::TestDb, target: &str, created_at_ms: i64) -> Uuid {
    let url = CanonicalUrl::parse(target).expect("url");
    db.store
        .upsert_target(&url.key(), url.as_str(), created_at_ms)
        .await
        .expect("target");
    let new = NewRun {
        id: Uuid::now_v7(),
        target_id: url.key(),
        suite: SuiteChoice::Rcp,
        options: RunOptions::default(),
        webhook_url: None,
        dedup_key: format!("deadline-{}", Uuid::new_v4()),
        max_attempts: 3,
        created_at_ms,
    };
    match db.store.insert_run(&new).await.expect("insert") {
        Inserted::New(run) => run.id,
        other => panic!("{other:?}"),
    }
}

/// A worker claimed the run `started_ago` before now and died: its lease
/// expired long ago, and the reaper of the workers started next requeues it.
async fn claimed_by_a_dead_worker(
    db: &common::TestDb,
    target: &str,
    started_ago: Duration,
) -> Uuid {
    let started = protocheck::now_ms() - protocheck::duration_ms(started_ago);
    let id = queue_at(db, target, started).await;
    let claimed = db
        .store
        .claim_run("dead-worker", started, 1_000)
        .await
        .expect("claim")
        .expect("the run");
    assert_eq!(claimed.id, id);
    assert_eq!(claimed.started_at_ms, Some(started));
    id
}

#[tokio::test]
async fn a_later_attempt_gets_only_what_is_left_of_the_deadline() {
    let (target, _) = slowloris().await;
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        // Ten minutes of deadline, of which all but three seconds went to the
        // attempt of a worker that died: given the whole deadline again, the
        // second attempt would outlast the patience below.
        let deadline = Duration::from_secs(600);
        let id = claimed_by_a_dead_worker(&db, &target, deadline - Duration::from_secs(3)).await;
        let mut cfg = worker_config(1, Duration::from_secs(30));
        cfg.run_deadline = deadline;
        let pool = app.workers(cfg);
        let run = app.wait_finished(&id.to_string(), PATIENCE).await;
        assert_eq!(run["status"], "error", "{}: {run:#}", db.name());
        assert_eq!(run["attempts"], 2, "{}", db.name());
        assert_eq!(
            run["error"],
            "the run did not finish within its 600s deadline \
             (counted from the run's first start, over 2 attempts)"
        );
        pool.shutdown().await;
    }
}

#[tokio::test]
async fn a_run_whose_deadline_passed_while_it_waited_ends_at_once() {
    let (target, accepted) = slowloris().await;
    for db in common::all_backends().await {
        let app = TestApp::start(&db, 100).await;
        let deadline = Duration::from_secs(600);
        let id = claimed_by_a_dead_worker(&db, &target, deadline + Duration::from_secs(1)).await;
        let mut cfg = worker_config(1, Duration::from_secs(30));
        cfg.run_deadline = deadline;
        let pool = app.workers(cfg);
        let run = app.wait_finished(&id.to_string(), PATIENCE).await;
        assert_eq!(run["status"], "error", "{}: {run:#}", db.name());
        assert_eq!(run["attempts"], 2);
        assert_eq!(
            run["error"],
            "the run's 600s deadline passed before attempt 2 could start \
             (it counts from the run's first start)"
        );
        let stored = db.store.get_run(id).await.expect("get").expect("run");
        assert_eq!(stored.status, RunStatus::Error);
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            0,
            "the target was not contacted"
        );
        pool.shutdown().await;
    }
}
