//! What Postgres pays for protocheck, counted by Postgres itself
//! (`pg_stat_database.xact_commit` of a fresh database, read from another
//! database so that reading adds nothing):
//!
//! - idle: a `protocheck serve` (4 workers, the scheduler, the webhook
//!   deliverer) with nothing to do, for [`IDLE`]: commits per second;
//! - a burst: [`RUNS`] RCP runs submitted through the REST API, as people and
//!   CI jobs submit them, and drained by the same process: commits per run,
//!   the idle rate over the burst's time subtracted.
//!
//! Postgres counts a backend's transactions when it reports its statistics,
//! at most once a second while busy and within [`STATS_LAG`] once idle, so
//! each reading waits that long after the activity it counts. Needs
//! `PROTOCHECK_TEST_DATABASE_URL`; figures are printed, never asserted.

#[path = "common/pg.rs"]
mod pg;
#[path = "common/serve.rs"]
mod serve;

use pg::FreshPg;
use protocheck::reference::rcp::{RcpReferenceConfig, rcp_router};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const RUNS: usize = 20;
/// How long the idle service is watched.
const IDLE: Duration = Duration::from_secs(60);
/// Longer than Postgres takes to report an idle backend's statistics (10 s).
const STATS_LAG: Duration = Duration::from_secs(12);
const START_PATIENCE: Duration = Duration::from_secs(30);

#[tokio::main]
async fn main() {
    let Ok(admin) = std::env::var("PROTOCHECK_TEST_DATABASE_URL") else {
        println!("commits: skipped (set PROTOCHECK_TEST_DATABASE_URL)");
        return;
    };
    let idle_for = std::env::var("PROTOCHECK_BENCH_IDLE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(IDLE, Duration::from_secs);

    // The RCP reference server, counting the requests it answers.
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = requests.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let config = RcpReferenceConfig::new(BTreeSet::<String>::new()).expect("config");
    // One server per run, under its own path: the service runs a target at
    // most once every few minutes, and a query string does not make another.
    let mut router = axum::Router::new();
    for i in 0..RUNS {
        router = router.nest(&format!("/b{i}"), rcp_router(config.clone()));
    }
    let router = router.layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            counted.fetch_add(1, Ordering::SeqCst);
            next.run(req)
        },
    ));
    tokio::spawn(async move { axum::serve(listener, router).await });
    let target = |i: usize| format!("http://{addr}/b{i}/rcp");

    let db = FreshPg::create(&admin).await;
    let mut stats = Stats::connect(&admin, &db.name).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let mut serve = Command::new(env!("CARGO_BIN_EXE_protocheck"))
        .args(["serve", "--database-url", &db.url])
        .args(["--bind", &format!("127.0.0.1:{port}")])
        .env("PROTOCHECK_ALLOW_PRIVATE_TARGETS", "true")
        .env("PROTOCHECK_SUBMIT_PER_MINUTE", "10000")
        // Every run targets the one reference server: the per-host limits
        // would hold the burst back, which is not what is counted.
        .env("PROTOCHECK_HOST_CONCURRENCY", "0")
        .env("PROTOCHECK_HOST_GAP_SECS", "0")
        .env("PROTOCHECK_HOST_RUNS_PER_HOUR", "0")
        .env("RUST_LOG", "warn")
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn protocheck serve");
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    serve::wait_ready(&base, START_PATIENCE).await;

    // Idle: what the service commits with nothing to do (its start-up's
    // commits reported before the first reading).
    tokio::time::sleep(STATS_LAG).await;
    let before = stats.commits().await;
    let started = Instant::now();
    tokio::time::sleep(idle_for).await;
    let after = stats.commits().await;
    let idle_rate = (after - before) as f64 / started.elapsed().as_secs_f64();
    println!(
        "idle `protocheck serve` (4 workers, scheduler, webhooks): {} commits in {:.0} s = {idle_rate:.3} commits/s",
        after - before,
        started.elapsed().as_secs_f64()
    );

    // A burst of runs through the API.
    let before = stats.commits().await;
    let started = Instant::now();
    let mut ids = Vec::new();
    for i in 0..RUNS {
        let answer: Value = http
            .post(format!("{base}/api/v1/runs"))
            .json(&json!({"url": target(i), "suite": "rcp"}))
            .send()
            .await
            .expect("submit")
            .json()
            .await
            .expect("json");
        let Some(id) = answer["id"].as_str() else {
            panic!("the submission was refused: {answer}");
        };
        ids.push(id.to_owned());
    }
    // The runs are over when the reference server has had no request for a
    // while (each run sends dozens, milliseconds apart); nothing here reads
    // the measured database until the commits are counted.
    let mut seen = requests.load(Ordering::SeqCst);
    loop {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let now = requests.load(Ordering::SeqCst);
        if now == seen && now > 0 {
            break;
        }
        seen = now;
    }
    tokio::time::sleep(STATS_LAG).await;
    let after = stats.commits().await;
    let elapsed = started.elapsed().as_secs_f64();
    let burst = (after - before) as f64 - idle_rate * elapsed;
    // Now check that every run ended, with the API (after the counting).
    let mut finished = 0;
    for id in &ids {
        let run: Value = http
            .get(format!("{base}/api/v1/runs/{id}"))
            .send()
            .await
            .expect("run")
            .json()
            .await
            .expect("json");
        if matches!(run["status"].as_str(), Some("passed" | "failed")) {
            finished += 1;
        }
    }
    println!(
        "{RUNS} RCP runs submitted through the API and drained: {} commits in {elapsed:.1} s, \
         {:.0} of them idle: {:.1} commits per run ({finished} of {RUNS} runs finished, \
         {seen} requests to the target)",
        after - before,
        idle_rate * elapsed,
        burst / RUNS as f64
    );
    assert_eq!(finished, RUNS, "every run finished");

    serve.kill().expect("kill serve");
    serve.wait().expect("reap serve");
    drop(stats);
    db.drop().await;
}

/// Reads a database's commit count from another database's connection.
struct Stats {
    conn: sqlx::PgConnection,
    name: String,
}

impl Stats {
    async fn connect(admin: &str, name: &str) -> Self {
        use sqlx::Connection;
        Self {
            conn: sqlx::PgConnection::connect(admin).await.expect("connect"),
            name: name.to_owned(),
        }
    }

    async fn commits(&mut self) -> i64 {
        // A fresh snapshot: within one transaction Postgres would repeat the first.
        sqlx::query("SELECT pg_stat_clear_snapshot()")
            .execute(&mut self.conn)
            .await
            .expect("clear snapshot");
        sqlx::query_scalar("SELECT xact_commit FROM pg_stat_database WHERE datname = $1")
            .bind(&self.name)
            .fetch_one(&mut self.conn)
            .await
            .expect("xact_commit")
    }
}
