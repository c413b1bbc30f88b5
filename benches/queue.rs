//! Queue benchmark: how close the service comes to the engine's own limit.
//!
//! `cargo bench --bench queue` prints, against the local RCP reference server
//! (RCP suite, spec profile, distinct target URLs so nothing is deduplicated):
//!
//! - engine alone: [`THROUGHPUT_RUNS`] runs through `suite::runner::run_suite`, as
//!   `protocheck check` runs them, [`WORKERS`] at a time, no store: the limit;
//! - the service: the same runs submitted at once and drained by [`WORKERS`]
//!   in-process workers (submit → claim → findings → finished), on SQLite and,
//!   when `PROTOCHECK_TEST_DATABASE_URL` is set, on a fresh Postgres database;
//!   with the ratio to the engine, the statements a run costs the database, and
//!   the round trip of one run on an idle queue;
//! - on Postgres, the same burst drained by 1, 2 and 4 `protocheck worker`
//!   processes (4 workers each), the real binary Cargo builds for the bench
//!   (`CARGO_BIN_EXE_protocheck`, set for benches as for integration tests);
//! - the resident memory of an idle `protocheck serve`, of each worker
//!   process, and the peak of this process.
//!
//! Everything runs on loopback. Figures are printed, never asserted: the
//! machines are shared and noisy.

#[path = "common/pg.rs"]
mod pg;
#[path = "common/serve.rs"]
mod serve;

use pg::FreshPg;
use protocheck::events::RunEvents;
use protocheck::metrics::Metrics;
use protocheck::reference::rcp::{RcpReferenceConfig, rcp_router};
use protocheck::store::{self, RunStatus, Store};
use protocheck::submit::{Queue, Submission};
use protocheck::suite::context::{Endpoint, HandshakeHistory, RunContext};
use protocheck::suite::{self, RunOptions, SuiteChoice};
use protocheck::transport::{AddressPolicy, HttpClient, Limits};
use protocheck::worker::{WorkerConfig, WorkerDeps, WorkerPool};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, mpsc};
use uuid::Uuid;

const ROUND_TRIPS: usize = 30;
const THROUGHPUT_RUNS: usize = 200;
const WORKERS: usize = 4;
const PROCESSES: [usize; 3] = [1, 2, 4];
/// How long a worker process may take to start before the benchmark gives up.
const START_PATIENCE: Duration = Duration::from_secs(30);

#[tokio::main]
async fn main() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let config = RcpReferenceConfig::new(BTreeSet::<String>::new()).expect("config");
    tokio::spawn(async move { axum::serve(listener, rcp_router(config)).await });
    let target = format!("http://{addr}/rcp");

    let engine = engine_only(&target).await;
    println!(
        "engine alone: {THROUGHPUT_RUNS} runs, {WORKERS} at a time, in {:.2} s = {:.1} runs/s",
        THROUGHPUT_RUNS as f64 / engine,
        engine
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let sqlite = format!("sqlite://{}", dir.path().join("bench.db").display());
    let on_sqlite = service("sqlite", &sqlite, &target, engine).await;

    let mut on_postgres = None;
    let mut processes = Vec::new();
    match std::env::var("PROTOCHECK_TEST_DATABASE_URL") {
        Ok(admin) => {
            let db = FreshPg::create(&admin).await;
            on_postgres = Some(service("postgres", &db.url, &target, engine).await);
            db.drop().await;
            for count in PROCESSES {
                let db = FreshPg::create(&admin).await;
                processes.push((count, worker_processes(count, &db.url, &target).await));
                db.drop().await;
            }
        }
        Err(_) => println!("postgres: skipped (set PROTOCHECK_TEST_DATABASE_URL)"),
    }

    let idle = idle_serve_rss(dir.path()).await;

    println!();
    println!("summary ({WORKERS} workers, {THROUGHPUT_RUNS} RCP runs):");
    println!("  engine alone            {engine:6.1} runs/s  (the limit)");
    for (name, figures) in [
        ("sqlite", Some(&on_sqlite)),
        ("postgres", on_postgres.as_ref()),
    ] {
        if let Some(f) = figures {
            println!(
                "  service on {name:<9}    {:6.1} runs/s  {:3.0}% of the engine; {:.1} statements per run",
                f.runs_per_s,
                100.0 * f.runs_per_s / engine,
                f.worker_statements + f.submit_statements,
            );
        }
    }
    for (count, p) in &processes {
        println!(
            "  {count} worker process{:<3}     {:6.1} runs/s  {:3.0}% of the engine; largest worker RSS {:.1} MiB",
            if *count == 1 { "" } else { "es" },
            p.runs_per_s,
            100.0 * p.runs_per_s / engine,
            mib(p.max_rss_kib),
        );
    }
    println!("  idle `protocheck serve` RSS {:.1} MiB", mib(idle));
    println!(
        "  peak RSS of this process {:.1} MiB (reference server, engine runs, workers and stores together)",
        mib(own_peak_rss_kib())
    );
}

/// Runs per second of the engine alone: no store, no queue, `WORKERS` runs at a time.
async fn engine_only(target: &str) -> f64 {
    let http = HttpClient::new(AddressPolicy::AllowPrivate, Limits::default()).expect("http");
    engine_run(&http, target, "warm-up").await;
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..WORKERS {
        let (http, next, target) = (http.clone(), next.clone(), target.to_owned());
        tasks.spawn(async move {
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= THROUGHPUT_RUNS {
                    break;
                }
                engine_run(&http, &target, &format!("engine{n}")).await;
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("engine task");
    }
    THROUGHPUT_RUNS as f64 / started.elapsed().as_secs_f64()
}

/// One run as a worker runs it on a target it has not seen before, findings
/// read as they come and dropped.
async fn engine_run(http: &HttpClient, target: &str, tag: &str) {
    let url = url::Url::parse(&format!("{target}?bench={tag}")).expect("url");
    let mut ctx = RunContext::new(http.clone(), RunOptions::default());
    ctx.handshake_history = HandshakeHistory::NotObserved.into();
    let (tx, mut rx) = mpsc::channel(64);
    let drain = async { while rx.recv().await.is_some() {} };
    let endpoint = Endpoint::Http(url);
    let (verdict, ()) = tokio::join!(
        suite::runner::run_suite(SuiteChoice::Rcp, &endpoint, &ctx, tx),
        drain
    );
    assert!(verdict.expect("a verdict").passed, "the reference passes");
}

/// What the service did with one burst.
struct ServiceFigures {
    runs_per_s: f64,
    /// Statements per run sent by the workers (claims, findings, heartbeats, ends).
    worker_statements: f64,
    /// Statements per run sent by submitting it.
    submit_statements: f64,
}

async fn service(name: &str, database_url: &str, target: &str, engine: f64) -> ServiceFigures {
    // Two stores on one database: the workers' and the submitter's, so each
    // side's statements are counted apart (the benchmark's own reads go to the
    // submitter's store and are not counted at all).
    let workers_store = store::connect(database_url).await.expect("open");
    workers_store.migrate().await.expect("migrate");
    let store = store::connect(database_url).await.expect("open");
    let wake = Arc::new(Notify::new());
    let events = RunEvents::new();
    let deps = WorkerDeps {
        store: workers_store.clone(),
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
    let worker_before = workers_store.statements();
    let started = Instant::now();
    let mut ids = Vec::with_capacity(THROUGHPUT_RUNS);
    let submit_before = store.statements();
    for n in 0..THROUGHPUT_RUNS {
        ids.push(submit(&queue, target, &format!("tp{n}")).await);
    }
    let submit_statements = store.statements() - submit_before;
    for id in &ids {
        wait_finished(store.as_ref(), &events, *id).await;
    }
    let elapsed = started.elapsed();
    let worker_statements = workers_store.statements() - worker_before;
    pool.shutdown().await;

    let per_run = |n: u64| n as f64 / THROUGHPUT_RUNS as f64;
    let figures = ServiceFigures {
        runs_per_s: THROUGHPUT_RUNS as f64 / elapsed.as_secs_f64(),
        worker_statements: per_run(worker_statements),
        submit_statements: per_run(submit_statements),
    };
    println!(
        "{name}: round trip submit→finished p50 {:.1} ms, p95 {:.1} ms (submit→claimed p50 {} ms); \
         {THROUGHPUT_RUNS} runs with {WORKERS} workers in {:.2} s = {:.1} runs/s, {:.0}% of the engine alone; \
         statements per run: {:.1} by the workers + {:.1} to submit",
        ms(trips[trips.len() / 2]),
        ms(trips[trips.len() * 95 / 100]),
        claims[claims.len() / 2].as_millis(),
        elapsed.as_secs_f64(),
        figures.runs_per_s,
        100.0 * figures.runs_per_s / engine,
        figures.worker_statements,
        figures.submit_statements,
    );
    figures
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Distinct query strings make distinct targets, so nothing is deduplicated.
async fn submit(queue: &Queue, target: &str, tag: &str) -> Uuid {
    let sub = Submission {
        url: format!("{target}?bench={tag}"),
        suite: SuiteChoice::Rcp,
        options: RunOptions::default(),
        webhook_url: None,
        credentials: None,
        max_age_s: 0,
        force: true,
        idempotency: None,
        submitter: None,
    };
    queue.submit(sub).await.expect("submit").run.id
}

/// Waits for the run's end, woken by the workers' change events (the store is
/// read only when something happened, so the benchmark does not load it).
async fn wait_finished(store: &dyn Store, events: &RunEvents, id: Uuid) -> store::Run {
    let mut changes = events.subscribe();
    loop {
        let run = store.get_run(id).await.expect("get").expect("run");
        if run.status.is_finished() {
            assert_eq!(run.status, RunStatus::Passed, "{:?}", run.error);
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

/// What a burst drained by worker processes did.
struct ProcessFigures {
    runs_per_s: f64,
    max_rss_kib: u64,
}

/// The burst drained by `count` `protocheck worker` processes of 4 workers each
/// (their default), sharing the queue of `database_url` through Postgres
/// `LISTEN`/`NOTIFY`. Unlike the in-process workers above they sign each
/// verdict, as `worker` always does.
async fn worker_processes(count: usize, database_url: &str, target: &str) -> ProcessFigures {
    let store = store::connect(database_url).await.expect("open");
    store.migrate().await.expect("migrate");
    let queue = Queue::new(store.clone(), Arc::new(Notify::new()), 3);
    let home = tempfile::tempdir().expect("tempdir");
    let mut children: Vec<Child> = (0..count)
        .map(|_| spawn_worker(database_url, home.path()))
        .collect();

    let started = Instant::now();
    for n in 0..THROUGHPUT_RUNS {
        submit(&queue, target, &format!("proc{count}-{n}")).await;
    }
    loop {
        let counts = store.count_by_status().await.expect("count");
        let active: i64 = counts
            .iter()
            .filter(|(status, _)| !status.is_finished())
            .map(|(_, n)| n)
            .sum();
        if active == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let elapsed = started.elapsed();
    let passed = store
        .count_by_status()
        .await
        .expect("count")
        .into_iter()
        .find(|(status, _)| *status == RunStatus::Passed)
        .map_or(0, |(_, n)| n);
    assert_eq!(passed, THROUGHPUT_RUNS as i64, "every run passes");

    let max_rss_kib = children
        .iter()
        .map(|child| proc_status_kib(child.id(), "VmHWM:"))
        .max()
        .unwrap_or(0);
    for child in &mut children {
        // Every run has ended: nothing is in flight to give back.
        child.kill().expect("kill worker");
        child.wait().expect("reap worker");
    }
    let figures = ProcessFigures {
        runs_per_s: THROUGHPUT_RUNS as f64 / elapsed.as_secs_f64(),
        max_rss_kib,
    };
    println!(
        "postgres, {count} `protocheck worker` process(es) × 4 workers: {THROUGHPUT_RUNS} runs in {:.2} s = {:.1} runs/s; \
         largest worker peak RSS {:.1} MiB",
        elapsed.as_secs_f64(),
        figures.runs_per_s,
        mib(max_rss_kib),
    );
    figures
}

/// Starts `protocheck worker` in `home` (where it keeps its signing key) and
/// returns once it says its workers are running. Its log is drained on a
/// thread so the pipe never fills.
fn spawn_worker(database_url: &str, home: &std::path::Path) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_protocheck"))
        .args(["worker", "--database-url", database_url])
        .env("PROTOCHECK_WORKERS", WORKERS.to_string())
        .env("PROTOCHECK_ALLOW_PRIVATE_TARGETS", "true")
        // Every run of the bench targets the one reference server: the
        // per-host limits (one run at a time, a gap between runs) would
        // measure themselves, not the queue. 0 turns them off.
        .env("PROTOCHECK_HOST_CONCURRENCY", "0")
        .env("PROTOCHECK_HOST_GAP_SECS", "0")
        // The start-up line only: a log line per run is not what is measured.
        .env(
            "RUST_LOG",
            "warn,protocheck=info,protocheck::worker=warn,protocheck::webhook=warn",
        )
        .current_dir(home)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn protocheck worker");
    let stderr = child.stderr.take().expect("stderr");
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if line.contains("protocheck workers running") {
                let _ = ready_tx.send(());
            }
        }
    });
    ready_rx
        .recv_timeout(START_PATIENCE)
        .expect("protocheck worker started");
    child
}

/// Resident memory of an idle `protocheck serve` (SQLite, 4 workers waiting),
/// a second after `/readyz` first answers.
async fn idle_serve_rss(dir: &std::path::Path) -> u64 {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let database_url = format!("sqlite://{}", dir.join("serve.db").display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_protocheck"))
        .args(["serve", "--database-url", &database_url])
        .args(["--bind", &format!("127.0.0.1:{port}")])
        .env("RUST_LOG", "warn")
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn protocheck serve");
    serve::wait_ready(&format!("http://127.0.0.1:{port}"), START_PATIENCE).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss = proc_status_kib(child.id(), "VmRSS:");
    child.kill().expect("kill serve");
    child.wait().expect("reap serve");
    println!(
        "idle `protocheck serve` (SQLite, 4 workers): RSS {:.1} MiB",
        mib(rss)
    );
    rss
}

/// The peak resident memory of this process so far.
fn own_peak_rss_kib() -> u64 {
    proc_status_kib(std::process::id(), "VmHWM:")
}

/// A `kB` line of `/proc/<pid>/status` (Linux), 0 where there is none.
fn proc_status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                line.strip_prefix(field)
                    .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            })
        })
        .unwrap_or(0)
}
