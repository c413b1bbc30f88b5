//! What one target host receives under a burst of forced submissions from
//! several client addresses, with the service's default host limits (under
//! one name of the machine, and under five) and with none; and, on Postgres,
//! how soon a run resumes once its database answers again after going silent
//! or restarting, and how soon a submission is answered once it refuses
//! connections.
//!
//! `cargo bench --bench limits`. Everything runs on loopback. Figures are
//! printed, never asserted. `LIMITS_WINDOW_SECS` sets how long the flood is
//! watched (default 60).

#[path = "../tests/it/common/names.rs"]
mod names;
#[path = "common/pg.rs"]
mod pg;
#[path = "../tests/it/common/proxy.rs"]
mod proxy;

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use clap::Parser;
use protocheck::config::HostLimitArgs;
use protocheck::events::RunEvents;
use protocheck::metrics::Metrics;
use protocheck::reference::rcp::{RcpReferenceConfig, rcp_router};
use protocheck::store::{self, HostLimits, RunStatus, Store};
use protocheck::submit::{HostQuota, Queue};
use protocheck::transport::AddressPolicy;
use protocheck::web::{self, AppState};
use protocheck::worker::{WorkerConfig, WorkerDeps, WorkerPool};
use serde_json::json;
use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use uuid::Uuid;

const ADDRESSES: u8 = 5;
const PER_ADDRESS: usize = 20;
const WORKERS: usize = 4;

/// The service's defaults, as `serve` reads them with no setting given.
#[derive(Parser)]
struct Defaults {
    #[command(flatten)]
    limits: HostLimitArgs,
}

#[tokio::main]
async fn main() {
    let window = Duration::from_secs(
        std::env::var("LIMITS_WINDOW_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(60),
    );
    let defaults = Defaults::parse_from(["limits"]).limits;
    let quota = HostQuota::from_args(&defaults);
    let limits = HostLimits {
        running_per_host: defaults.host_concurrency,
        gap_ms: protocheck::duration_ms(Duration::from_secs(defaults.host_gap_secs)),
    };
    flood("default limits", quota, limits, window, false).await;
    flood("default limits, five names", quota, limits, window, true).await;
    flood(
        "no limits",
        HostQuota::NONE,
        HostLimits::NONE,
        window,
        false,
    )
    .await;

    match std::env::var("PROTOCHECK_TEST_DATABASE_URL") {
        Ok(admin) => outage(&admin).await,
        Err(_) => println!("outage: skipped (set PROTOCHECK_TEST_DATABASE_URL)"),
    }
}

/// Serves the RCP reference server (with `latency` per reply) counting the
/// requests it answers; returns its RCP URL.
async fn counted_target(requests: Arc<AtomicU64>, latency: Duration) -> String {
    let mut config = RcpReferenceConfig::new(BTreeSet::<String>::new()).expect("config");
    config.latency = latency;
    let router = rcp_router(config).layer(middleware::from_fn(move |req: Request, next: Next| {
        let requests = requests.clone();
        async move {
            requests.fetch_add(1, Ordering::Relaxed);
            let resp: Response = next.run(req).await;
            resp
        }
    }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{addr}/rcp")
}

/// Names of the one loopback machine: each client address of the burst uses
/// one when `names` is set (a hosts-file alias where the machine has one).
fn spellings() -> Vec<String> {
    let mut spelled: Vec<String> = ["127.0.0.1", "localhost", "localhost.", "[::ffff:127.0.0.1]"]
        .map(str::to_owned)
        .to_vec();
    spelled.push(names::hosts_file_alias().unwrap_or_else(|| "127.0.0.2".to_owned()));
    spelled
}

async fn flood(name: &str, quota: HostQuota, limits: HostLimits, window: Duration, names: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("limits.db").display());
    let store = store::connect(&url).await.expect("open");
    store.migrate().await.expect("migrate");
    let requests = Arc::new(AtomicU64::new(0));
    let target = counted_target(requests.clone(), Duration::ZERO).await;

    let deps = WorkerDeps {
        store: store.clone(),
        wake: Arc::new(Notify::new()),
        events: RunEvents::new(),
        metrics: Metrics::new(),
    };
    let queue = Queue::new(store.clone(), deps.wake.clone(), 3).with_host_quota(quota);
    let state = AppState::new(queue, deps.events.clone(), deps.metrics.clone(), 1000);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        axum::serve(
            listener,
            web::app(state).into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
    });
    let mut cfg = WorkerConfig::new(
        WORKERS,
        Duration::from_secs(60),
        AddressPolicy::AllowPrivate,
    );
    cfg.host_limits = limits;
    let pool = WorkerPool::start(deps, cfg).expect("workers");

    // The burst: every address sends its forced submissions at once, each for
    // another target (query string) of the one host.
    let started = Instant::now();
    let mut senders = Vec::new();
    let spelled = spellings();
    for a in 0..ADDRESSES {
        let (base, mut target) = (base.clone(), target.clone());
        if names {
            let name = &spelled[usize::from(a) % spelled.len()];
            target = target.replacen("127.0.0.1", name, 1);
        }
        senders.push(tokio::spawn(async move {
            let client = reqwest::Client::builder()
                .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + a)))
                .build()
                .expect("client");
            let mut statuses = Vec::new();
            for n in 0..PER_ADDRESS {
                let body =
                    json!({"url": format!("{target}?a={a}&n={n}"), "suite": "rcp", "force": true});
                let resp = client
                    .post(format!("{base}/api/v1/runs"))
                    .json(&body)
                    .send()
                    .await
                    .expect("POST");
                statuses.push(resp.status().as_u16());
            }
            statuses
        }));
    }
    let (mut accepted, mut refused) = (0, 0);
    for s in senders {
        for status in s.await.expect("join") {
            match status {
                202 => accepted += 1,
                429 => refused += 1,
                other => panic!("unexpected status {other}"),
            }
        }
    }
    tokio::time::sleep(window.saturating_sub(started.elapsed())).await;
    let seen = requests.load(Ordering::Relaxed);
    let runs = store.recent_runs(1000).await.expect("runs");
    let started_runs = runs.iter().filter(|r| r.started_at_ms.is_some()).count();
    let most_at_once = most_running_at_once(&runs);
    pool.abort().await;
    let minutes = window.as_secs_f64() / 60.0;
    println!(
        "{name}: {} forced submissions from {ADDRESSES} addresses: {accepted} accepted, {refused} refused (429); \
         over {} s the host saw {:.1} runs/min, {:.0} requests/min, at most {most_at_once} runs at once",
        usize::from(ADDRESSES) * PER_ADDRESS,
        window.as_secs(),
        started_runs as f64 / minutes,
        seen as f64 / minutes,
    );
}

/// The most runs that were running at one moment, from their start and end times.
fn most_running_at_once(runs: &[store::Run]) -> usize {
    let mut events: Vec<(i64, i32)> = Vec::new();
    for r in runs {
        if let Some(start) = r.started_at_ms {
            events.push((start, 1));
            events.push((r.finished_at_ms.unwrap_or(i64::MAX), -1));
        }
    }
    // Ends before starts at the same millisecond.
    events.sort();
    let (mut now, mut most) = (0i32, 0i32);
    for (_, delta) in events {
        now += delta;
        most = most.max(now);
    }
    usize::try_from(most).unwrap_or(0)
}

async fn outage(admin: &str) {
    let db = pg::FreshPg::create(admin).await;
    let direct_store = store::connect(&db.url).await.expect("open");
    direct_store.migrate().await.expect("migrate");
    let (proxy, through) = proxy::Proxy::postgres(&db.url).await;
    let store = store::connect(&through)
        .await
        .expect("open through the proxy");
    let target = counted_target(Arc::new(AtomicU64::new(0)), Duration::from_millis(100)).await;

    let deps = WorkerDeps {
        store: store.clone(),
        wake: Arc::new(Notify::new()),
        events: RunEvents::new(),
        metrics: Metrics::new(),
    };
    let queue = Queue::new(store.clone(), deps.wake.clone(), 3);
    let mut cfg = WorkerConfig::new(1, Duration::from_secs(600), AddressPolicy::AllowPrivate);
    cfg.heartbeat = Duration::from_millis(200);
    cfg.poll = Duration::from_millis(100);
    let pool = WorkerPool::start(deps, cfg).expect("workers");

    for (kind, rounds) in [("silent", 5), ("restart", 5)] {
        let mut resumed = Vec::new();
        for n in 0..rounds {
            let sub = protocheck::submit::Submission {
                url: format!("{target}?outage={kind}{n}"),
                suite: protocheck::suite::SuiteChoice::Rcp,
                options: protocheck::suite::RunOptions::default(),
                webhook_url: None,
                credentials: None,
                max_age_s: 0,
                force: true,
                idempotency: None,
                submitter: None,
            };
            let id = queue.submit(sub).await.expect("submit").run.id;
            wait_for_findings(direct_store.as_ref(), id, 2).await;
            match kind {
                "silent" => proxy.freeze(true),
                _ => proxy.go_down(),
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
            let before = progress(direct_store.as_ref(), id).await;
            let back = Instant::now();
            match kind {
                "silent" => proxy.freeze(false),
                _ => proxy.come_back(),
            }
            // Resumed: a finding stored after the database came back (the same
            // attempt's next one, or a restarted attempt's first).
            loop {
                if progress(direct_store.as_ref(), id).await != before {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            resumed.push(back.elapsed());
            let run = wait_finished(direct_store.as_ref(), id).await;
            assert_eq!(run.status, RunStatus::Passed, "{:?}", run.error);
        }
        resumed.sort();
        println!(
            "outage ({kind}, 2 s): database back → run resumed p50 {:.0} ms, max {:.0} ms over {rounds} runs",
            resumed[resumed.len() / 2].as_secs_f64() * 1000.0,
            resumed[resumed.len() - 1].as_secs_f64() * 1000.0,
        );
    }
    pool.shutdown().await;
    refused_submissions(store.clone(), &proxy).await;
    drop((store, direct_store));
    db.drop().await;
}

/// How soon `POST /api/v1/runs` is answered once the database behind `proxy`
/// refuses connections (its listener closed: a stopped server). Ends the
/// proxy for good.
async fn refused_submissions(store: Arc<dyn Store>, proxy: &proxy::Proxy) {
    let queue = Queue::new(store, Arc::new(Notify::new()), 3);
    let state = AppState::new(queue, RunEvents::new(), Metrics::new(), 1000);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        axum::serve(
            listener,
            web::app(state).into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
    });
    proxy.stop();
    let client = reqwest::Client::new();
    let mut took = Vec::new();
    for n in 0..5 {
        let asked = Instant::now();
        let resp = client
            .post(format!("{base}/api/v1/runs"))
            .json(&json!({"url": format!("http://127.0.0.1:9/rcp?refused={n}"), "suite": "rcp"}))
            .send()
            .await
            .expect("POST");
        took.push(asked.elapsed());
        assert_eq!(resp.status().as_u16(), 503);
    }
    took.sort();
    println!(
        "database refusing connections: submission answered 503 in p50 {:.0} ms, max {:.0} ms over 5",
        took[2].as_secs_f64() * 1000.0,
        took[4].as_secs_f64() * 1000.0,
    );
}

/// The run's attempt and its number of findings.
async fn progress(store: &dyn Store, id: Uuid) -> (i32, usize) {
    let run = store.get_run(id).await.expect("get").expect("run");
    let found = store.findings(id, -1).await.expect("findings").len();
    (run.attempts, found)
}

async fn wait_for_findings(store: &dyn Store, id: Uuid, n: usize) {
    loop {
        let run = store.get_run(id).await.expect("get").expect("run");
        assert!(!run.status.is_finished(), "finished too soon");
        if run.status == RunStatus::Running
            && store.findings(id, -1).await.expect("findings").len() >= n
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn wait_finished(store: &dyn Store, id: Uuid) -> store::Run {
    loop {
        let run = store.get_run(id).await.expect("get").expect("run");
        if run.status.is_finished() {
            return run;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
