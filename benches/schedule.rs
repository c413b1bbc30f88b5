//! Scheduled re-checks beside people's submissions (#28): 1,000 watched
//! targets on 50 hosts with an interval of an hour, and a stream of user
//! submissions to the same hosts. How long does a user's run wait for a
//! worker, with no schedule, with the schedule spread by jitter, and with all
//! 1,000 slots due at once (a scheduler that was down)? And does any host
//! ever run more than its limit?
//!
//! The hour is compressed into the window (`SCHEDULE_WINDOW_SECS`, default
//! 30): first slots are drawn in the window as `scheduler::first_slot` draws
//! them in the interval. The runs go through the service's own code: the
//! scheduler's `tick` starts them, and simulated workers claim them with the
//! service's claim (host limits: one run per host at a time), hold each for
//! `RUN` as a run of a real server would, and end it. No target is contacted:
//! these are the queue's figures, which is what scheduling changes. SQLite,
//! and Postgres when `PROTOCHECK_TEST_DATABASE_URL` is set.
//!
//! `cargo bench --bench schedule`. Figures are printed, never asserted.

#[path = "common/pg.rs"]
mod pg;

use protocheck::scheduler::{self, ScheduleConfig};
use protocheck::store::{self, HostBudget, HostLimits, NewRun, NewWatch, RunEnd, RunOrigin};
use protocheck::suite::{RunOptions, SuiteChoice};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

const WATCHES: usize = 1000;
const HOSTS: usize = 50;
const WORKERS: usize = 8;
/// How long a simulated run holds its worker.
const RUN: Duration = Duration::from_millis(150);
/// A user submission every this often, to a host drawn in turn.
const USER_EVERY: Duration = Duration::from_millis(100);
const HOUR_MS: i64 = 3_600_000;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Schedule {
    None,
    Jittered,
    AllAtOnce,
}

impl Schedule {
    fn name(self) -> &'static str {
        match self {
            Self::None => "no schedule",
            Self::Jittered => "1,000 watches, jittered",
            Self::AllAtOnce => "1,000 watches due at once",
        }
    }
}

/// One run as a simulated worker held it.
struct Held {
    host: String,
    user: bool,
    start: Instant,
    end: Instant,
}

#[tokio::main]
async fn main() {
    let window = Duration::from_secs(
        std::env::var("SCHEDULE_WINDOW_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(30),
    );
    println!(
        "schedule: {WATCHES} watches on {HOSTS} hosts, {WORKERS} workers, runs of {} ms, \
         a user submission every {} ms, a {}-second window for the hour",
        RUN.as_millis(),
        USER_EVERY.as_millis(),
        window.as_secs()
    );
    let dir = tempfile::tempdir().expect("tempdir");
    for schedule in [Schedule::None, Schedule::Jittered, Schedule::AllAtOnce] {
        let url = format!(
            "sqlite://{}",
            dir.path().join(format!("{}.db", Uuid::new_v4())).display()
        );
        measure("sqlite", &url, schedule, window).await;
    }
    match std::env::var("PROTOCHECK_TEST_DATABASE_URL") {
        Ok(admin) => {
            for schedule in [Schedule::None, Schedule::Jittered, Schedule::AllAtOnce] {
                let db = pg::FreshPg::create(&admin).await;
                measure("postgres", &db.url, schedule, window).await;
                db.drop().await;
            }
        }
        Err(_) => println!("postgres: skipped (set PROTOCHECK_TEST_DATABASE_URL)"),
    }
}

fn host(n: usize) -> String {
    format!("host-{n}.example")
}

async fn measure(backend: &str, url: &str, schedule: Schedule, window: Duration) {
    let store = store::connect(url).await.expect("open");
    store.migrate().await.expect("migrate");
    let now = protocheck::now_ms();
    let window_ms = i64::try_from(window.as_millis()).unwrap_or(i64::MAX);
    if schedule != Schedule::None {
        for n in 0..WATCHES {
            let id = format!("watched-{n}");
            store
                .upsert_target(&id, &format!("https://{}/rcp/{n}", host(n % HOSTS)), now)
                .await
                .expect("target");
            let first_due_at_ms = match schedule {
                Schedule::Jittered => scheduler::first_slot(now, window_ms),
                _ => now,
            };
            store
                .put_watch(&NewWatch {
                    target_id: id,
                    suite: "rcp".into(),
                    options: RunOptions::default(),
                    interval_ms: HOUR_MS,
                    first_due_at_ms,
                    api_key: None,
                    created_at_ms: now,
                    expires_at_ms: None,
                    webhook_url: None,
                    events: Vec::new(),
                })
                .await
                .expect("watch");
        }
    }
    for h in 0..HOSTS {
        store
            .upsert_target(
                &format!("user-{h}"),
                &format!("https://{}/mcp", host(h)),
                now,
            )
            .await
            .expect("target");
    }

    let stop = CancellationToken::new();
    let submitted: Arc<Mutex<HashMap<Uuid, Instant>>> = Arc::default();
    let held: Arc<Mutex<Vec<Held>>> = Arc::default();
    let waits: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let mut tasks = tokio::task::JoinSet::new();
    let started = Instant::now();

    // The scheduler, ticking as a process of the service does (faster, for
    // the compressed hour).
    let ticking = {
        let (store, stop) = (store.clone(), stop.clone());
        let cfg = ScheduleConfig {
            tick: Duration::from_millis(100),
            budget: HostBudget::default(),
            ..ScheduleConfig::default()
        };
        tokio::spawn(async move {
            let mut late = Vec::new();
            while !stop.is_cancelled() {
                let tick = scheduler::tick(store.as_ref(), &cfg, protocheck::now_ms())
                    .await
                    .expect("tick");
                late.extend(tick.lateness_ms);
                tokio::time::sleep(cfg.tick).await;
            }
            late
        })
    };

    // People: one submission every USER_EVERY, the hosts in turn.
    {
        let (store, stop, submitted) = (store.clone(), stop.clone(), submitted.clone());
        tasks.spawn(async move {
            let mut n = 0usize;
            while !stop.is_cancelled() {
                let id = Uuid::now_v7();
                submitted.lock().expect("lock").insert(id, Instant::now());
                let new = NewRun {
                    id,
                    target_id: format!("user-{}", n % HOSTS),
                    suite: SuiteChoice::Mcp,
                    options: RunOptions::default(),
                    webhook_url: None,
                    dedup_key: format!("user-{n}"),
                    max_attempts: 1,
                    created_at_ms: protocheck::now_ms(),
                };
                let origin = RunOrigin {
                    submitter: Some(format!("a:user-{}", n % 7)),
                    ..RunOrigin::default()
                };
                store.insert_run_from(&new, &origin).await.expect("submit");
                n += 1;
                tokio::time::sleep(USER_EVERY).await;
            }
        });
    }

    // Workers, claiming with the host limits the service applies.
    let limits = HostLimits {
        running_per_host: 1,
        gap_ms: 0,
    };
    for w in 0..WORKERS {
        let (store, stop, submitted, held, waits) = (
            store.clone(),
            stop.clone(),
            submitted.clone(),
            held.clone(),
            waits.clone(),
        );
        tasks.spawn(async move {
            let worker = format!("w{w}");
            while !stop.is_cancelled() {
                let claimed = store
                    .claim_run_within(&worker, protocheck::now_ms(), 60_000, &limits)
                    .await
                    .expect("claim");
                let Some(run) = claimed else {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                let start = Instant::now();
                let asked = submitted.lock().expect("lock").remove(&run.id);
                if let Some(asked) = asked {
                    waits.lock().expect("lock").push(start - asked);
                }
                tokio::time::sleep(RUN).await;
                // Taken before the end is stored: another claim of the host
                // can only follow the stored end, so an overlap is real.
                let end = Instant::now();
                store
                    .finish_run(
                        run.id,
                        &worker,
                        &RunEnd::Error("simulated".into()),
                        "0",
                        protocheck::now_ms(),
                    )
                    .await
                    .expect("finish");
                let host = run
                    .target_url
                    .split('/')
                    .nth(2)
                    .unwrap_or_default()
                    .to_owned();
                held.lock().expect("lock").push(Held {
                    host,
                    user: asked.is_some(),
                    start,
                    end,
                });
            }
        });
    }

    tokio::time::sleep(window).await;
    stop.cancel();
    while tasks.join_next().await.is_some() {}
    let late = ticking.await.expect("join");
    let elapsed = started.elapsed();

    let mut waits = std::mem::take(&mut *waits.lock().expect("lock"));
    waits.sort();
    let never = submitted.lock().expect("lock").len();
    let held = std::mem::take(&mut *held.lock().expect("lock"));
    let scheduled = held.iter().filter(|h| !h.user).count();
    let most_on_a_host = most_at_once(&held);
    let mut late = late;
    late.sort_unstable();
    let pct = |v: &[Duration], p: f64| -> f64 {
        if v.is_empty() {
            return 0.0;
        }
        let i = ((v.len() as f64 - 1.0) * p).round() as usize;
        v[i].as_secs_f64() * 1000.0
    };
    println!(
        "{backend:8} {:28} user runs {:4}: wait p50 {:6.1} ms, p95 {:6.1} ms, max {:6.1} ms \
         ({never} still queued at the end) · scheduled runs {scheduled} · slot lateness p95 {} ms \
         · most runs of one host at once {most_on_a_host} · {:.0} s",
        schedule.name(),
        waits.len(),
        pct(&waits, 0.5),
        pct(&waits, 0.95),
        waits.last().map_or(0.0, |d| d.as_secs_f64() * 1000.0),
        late.get(late.len().saturating_sub(1) * 95 / 100)
            .copied()
            .unwrap_or(0),
        elapsed.as_secs_f64(),
    );
}

/// The most runs of one host held at the same moment.
fn most_at_once(held: &[Held]) -> usize {
    let mut by_host: HashMap<&str, Vec<(Instant, i32)>> = HashMap::new();
    for h in held {
        let edges = by_host.entry(h.host.as_str()).or_default();
        edges.push((h.start, 1));
        edges.push((h.end, -1));
    }
    by_host
        .values_mut()
        .map(|edges| {
            // Ends before starts at the same instant.
            edges.sort();
            let mut now = 0i32;
            let mut most = 0i32;
            for (_, d) in edges.iter() {
                now += d;
                most = most.max(now);
            }
            usize::try_from(most).unwrap_or(0)
        })
        .max()
        .unwrap_or(0)
}
