//! One submitter's flood versus another submitter's single run (#31 item 4).
//!
//! `cargo bench --bench fairness [-- ROUNDS]` (default 5 rounds): per round,
//! the submitter `a:flood` queues 30 runs of a slow RCP reference server
//! (every reply 20 ms late; distinct query strings, nothing deduplicated),
//! and 100 ms later the submitter `a:user` queues one run of a fast one; 4
//! in-process workers on SQLite drain the queue, with the per-host limits off
//! (every server here is on 127.0.0.1). It prints how long the user's run
//! waited in the queue (created → started), p50 and p95 over the rounds,
//! beside how long one slow run takes: the claim ranks submitters by their
//! runs running, so the user's run starts at the next free worker, where
//! oldest-first claims made it wait for the whole flood ahead of it (about
//! 30 / 4 slow runs). Everything runs on loopback; figures are printed,
//! never asserted.

use protocheck::events::RunEvents;
use protocheck::metrics::Metrics;
use protocheck::reference::rcp::{RcpReferenceConfig, rcp_router};
use protocheck::store::{HostLimits, RunStatus, Store};
use protocheck::submit::{Queue, Submission};
use protocheck::suite::{RunOptions, SuiteChoice};
use protocheck::transport::AddressPolicy;
use protocheck::worker::{WorkerConfig, WorkerDeps, WorkerPool};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use uuid::Uuid;

const FLOOD: usize = 30;
const WORKERS: usize = 4;

async fn reference(latency: Duration) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let mut config = RcpReferenceConfig::new(BTreeSet::<String>::new()).expect("config");
    config.latency = latency;
    tokio::spawn(async move { axum::serve(listener, rcp_router(config)).await });
    format!("http://{addr}/rcp")
}

async fn submit(queue: &Queue, url: String, submitter: &str) -> Uuid {
    let sub = Submission {
        url,
        suite: SuiteChoice::Rcp,
        options: RunOptions::default(),
        webhook_url: None,
        credentials: None,
        max_age_s: 0,
        force: true,
        idempotency: None,
        submitter: Some(submitter.to_owned()),
    };
    queue.submit(sub).await.expect("submit").run.id
}

async fn finished(store: &dyn Store, id: Uuid) -> protocheck::store::Run {
    loop {
        let run = store.get_run(id).await.expect("get").expect("run");
        if !matches!(run.status, RunStatus::Queued | RunStatus::Running) {
            return run;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::main]
async fn main() {
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    let slow = reference(Duration::from_millis(20)).await;
    let fast = reference(Duration::ZERO).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let store = protocheck::store::connect(&url).await.expect("store");
    store.migrate().await.expect("migrate");
    let deps = WorkerDeps {
        store: store.clone(),
        wake: Arc::new(Notify::new()),
        events: RunEvents::new(),
        metrics: Metrics::new(),
    };
    let queue = Queue::new(store.clone(), deps.wake.clone(), 3);
    let mut cfg = WorkerConfig::new(
        WORKERS,
        Duration::from_secs(60),
        AddressPolicy::AllowPrivate,
    );
    cfg.host_limits = HostLimits::NONE;
    cfg.poll = Duration::from_millis(50);
    let pool = WorkerPool::start(deps, cfg).expect("workers");

    let mut waits = Vec::new();
    let mut slow_runs = Vec::new();
    for round in 0..rounds {
        let mut flood = Vec::new();
        for n in 0..FLOOD {
            flood.push(submit(&queue, format!("{slow}?round={round}&n={n}"), "a:flood").await);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let user = submit(&queue, format!("{fast}?round={round}"), "a:user").await;
        let run = finished(store.as_ref(), user).await;
        let waited = run.started_at_ms.unwrap_or(run.created_at_ms) - run.created_at_ms;
        waits.push(waited);
        for id in flood {
            let r = finished(store.as_ref(), id).await;
            if let (Some(s), Some(f)) = (r.started_at_ms, r.finished_at_ms) {
                slow_runs.push(f - s);
            }
        }
        println!("round {round}: the user's run waited {waited} ms");
    }
    waits.sort_unstable();
    slow_runs.sort_unstable();
    let at = |v: &[i64], q: f64| {
        v.get(((v.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or(0)
    };
    println!(
        "{FLOOD} slow runs from one submitter, {WORKERS} workers: another submitter's run waited p50 {} ms, p95 {} ms; one slow run takes p50 {} ms (oldest-first claims would make it wait about {} ms)",
        at(&waits, 0.5),
        at(&waits, 0.95),
        at(&slow_runs, 0.5),
        at(&slow_runs, 0.5) * (FLOOD / WORKERS) as i64,
    );
    pool.shutdown().await;
}
