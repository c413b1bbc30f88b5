//! Queue benchmark: round trip (submit → claimed → finished) and finished runs
//! per second with 4 workers against the local RCP reference server, on SQLite
//! and (when `PROTOCHECK_TEST_DATABASE_URL` is set) on Postgres.
//!
//! `cargo bench --bench queue`. Everything runs on loopback. Figures are
//! printed, never asserted: the machines are shared and noisy.

use protocheck::events::RunEvents;
use protocheck::metrics::Metrics;
use protocheck::reference::rcp::{RcpReferenceConfig, rcp_router};
use protocheck::store::{self, Store};
use protocheck::submit::{Queue, Submission};
use protocheck::suite::{RunOptions, SuiteChoice};
use protocheck::transport::AddressPolicy;
use protocheck::worker::{WorkerConfig, WorkerDeps, WorkerPool};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use uuid::Uuid;

const ROUND_TRIPS: usize = 30;
const THROUGHPUT_RUNS: usize = 200;
const WORKERS: usize = 4;

#[tokio::main]
async fn main() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let config = RcpReferenceConfig::new(BTreeSet::<String>::new()).expect("config");
    tokio::spawn(async move { axum::serve(listener, rcp_router(config)).await });
    let target = format!("http://{addr}/rcp");

    let dir = tempfile::tempdir().expect("tempdir");
    let sqlite = format!("sqlite://{}", dir.path().join("bench.db").display());
    bench("sqlite", &sqlite, &target).await;

    match std::env::var("PROTOCHECK_TEST_DATABASE_URL") {
        Ok(admin) => {
            let db = format!("protocheck_bench_{}", Uuid::new_v4().simple());
            run_sql(&admin, &format!("CREATE DATABASE \"{db}\"")).await;
            let mut url = url::Url::parse(&admin).expect("url");
            url.set_path(&db);
            bench("postgres", url.as_str(), &target).await;
            run_sql(&admin, &format!("DROP DATABASE \"{db}\" WITH (FORCE)")).await;
        }
        Err(_) => println!("postgres: skipped (set PROTOCHECK_TEST_DATABASE_URL)"),
    }
}

async fn run_sql(url: &str, sql: &str) {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(url).await.expect("connect");
    sqlx::query(sql).execute(&mut conn).await.expect("sql");
}

async fn bench(name: &str, database_url: &str, target: &str) {
    let store = store::connect(database_url).await.expect("open");
    store.migrate().await.expect("migrate");
    let wake = Arc::new(Notify::new());
    let events = RunEvents::new();
    let deps = WorkerDeps {
        store: store.clone(),
        wake: wake.clone(),
        events: events.clone(),
        metrics: Metrics::new(),
    };
    let queue = Queue::new(store.clone(), wake, 3);
    let cfg = WorkerConfig::new(
        WORKERS,
        Duration::from_secs(60),
        AddressPolicy::AllowPrivate,
    );
    let pool = WorkerPool::start(deps, cfg).expect("workers");

    // Round trip: one run at a time, so each measures an idle queue's latency.
    let mut trips = Vec::with_capacity(ROUND_TRIPS);
    let mut claims = Vec::with_capacity(ROUND_TRIPS);
    for n in 0..ROUND_TRIPS {
        let started = Instant::now();
        let id = submit(&queue, target, &format!("rt{n}")).await;
        let run = wait_finished(store.as_ref(), &events, id).await;
        trips.push(started.elapsed());
        claims.push(Duration::from_millis(
            u64::try_from(run.started_at_ms.unwrap_or(run.created_at_ms) - run.created_at_ms)
                .unwrap_or(0),
        ));
    }
    trips.sort();
    claims.sort();

    // Throughput: a burst of distinct runs, drained by the workers.
    let started = Instant::now();
    let mut ids = Vec::with_capacity(THROUGHPUT_RUNS);
    for n in 0..THROUGHPUT_RUNS {
        ids.push(submit(&queue, target, &format!("tp{n}")).await);
    }
    for id in &ids {
        wait_finished(store.as_ref(), &events, *id).await;
    }
    let elapsed = started.elapsed();
    pool.shutdown().await;

    println!(
        "{name}: round trip submit→finished p50 {:.1} ms, p95 {:.1} ms (submit→claimed p50 {} ms); \
         {THROUGHPUT_RUNS} runs with {WORKERS} workers in {:.2} s = {:.1} runs/s",
        ms(trips[trips.len() / 2]),
        ms(trips[trips.len() * 95 / 100]),
        claims[claims.len() / 2].as_millis(),
        elapsed.as_secs_f64(),
        THROUGHPUT_RUNS as f64 / elapsed.as_secs_f64(),
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Distinct query strings make distinct targets, so nothing is deduplicated.
async fn submit(queue: &Queue, target: &str, tag: &str) -> Uuid {
    let sub = Submission {
        url: format!("{target}?bench={tag}"),
        suite: SuiteChoice::Rcp,
        options: RunOptions::default(),
        webhook_url: None,
        max_age_s: 0,
        force: true,
        idempotency: None,
    };
    queue.submit(sub).await.expect("submit").run.id
}

/// Waits for the run's end, woken by the workers' change events (the store is
/// read only when something happened, so the benchmark does not load it).
async fn wait_finished(store: &dyn Store, events: &RunEvents, id: Uuid) -> protocheck::store::Run {
    let mut changes = events.subscribe();
    loop {
        let run = store.get_run(id).await.expect("get").expect("run");
        if run.status.is_finished() {
            assert_eq!(
                run.status,
                protocheck::store::RunStatus::Passed,
                "{:?}",
                run.error
            );
            return run;
        }
        loop {
            match tokio::time::timeout(Duration::from_millis(200), changes.recv()).await {
                Ok(Ok(changed)) if changed != id => continue,
                _ => break,
            }
        }
    }
}
