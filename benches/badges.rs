//! Badge benchmark: requests per second for a badge from a warm cache, side by
//! side with the same server serving the same SVG as a static file (tower-http's
//! `ServeFile`, which reads the file for each request) and, as the stricter
//! baseline, from memory (a handler returning the bytes, as a static server with
//! a file cache would). The goal is a ratio of at least 0.5.
//!
//! `cargo bench --bench badges [-- SECONDS CONNECTIONS]`. The server runs on one
//! runtime thread; the load comes from `wrk` (one thread) when it is installed
//! (Debian: `apt-get install wrk`), else from a small keep-alive HTTP/1.1 client
//! on its own thread. Everything stays on loopback. The static route does not
//! pass through the app's tracing and metrics middleware, which favours the
//! baseline. Figures are printed, never asserted: the machines are shared.

use protocheck::events::RunEvents;
use protocheck::metrics::Metrics;
use protocheck::store::{self, Inserted, NewRun, RunEnd};
use protocheck::submit::Queue;
use protocheck::suite::{Counts, RunOptions, SuiteChoice, SuiteId, Verdict, VerdictDetail};
use protocheck::web::{self, AppState};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Notify;

/// Alternating rounds of each measurement; the median is reported.
const ROUNDS: usize = 3;

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .filter(|a| a.parse::<u64>().is_ok());
    let seconds: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let connections: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(32);
    let dir = tempfile::tempdir().expect("tempdir");
    let (addr, key) = start_server(dir.path());
    let badge = format!("http://{addr}/badge/{key}/rcp.svg");
    let file = format!("http://{addr}/static/badge.svg");
    let memory = format!("http://{addr}/static/memory.svg");
    let wrk = which_wrk();
    println!(
        "load: {} for {seconds}s, {connections} connections, {ROUNDS} rounds each",
        if wrk { "wrk -t1" } else { "built-in client" }
    );
    let (mut badge_rps, mut file_rps, mut memory_rps) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=ROUNDS {
        let f = measure(wrk, &file, seconds, connections);
        let m = measure(wrk, &memory, seconds, connections);
        let b = measure(wrk, &badge, seconds, connections);
        println!(
            "round {round}: static file {f:>9.0} req/s   static in memory {m:>9.0} req/s   badge {b:>9.0} req/s"
        );
        file_rps.push(f);
        memory_rps.push(m);
        badge_rps.push(b);
    }
    let (f, m, b) = (
        median(&mut file_rps),
        median(&mut memory_rps),
        median(&mut badge_rps),
    );
    println!("median: static file {f:.0} req/s, static in memory {m:.0} req/s, badge {b:.0} req/s");
    println!(
        "ratio: badge / static file {:.2}, badge / static in memory {:.2} (goal >= 0.50)",
        b / f,
        b / m
    );
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// protocheck on SQLite with one target whose RCP run passed at L0, plus the
/// badge's own SVG as a static file; returns the address and the target key.
fn start_server(dir: &std::path::Path) -> (SocketAddr, String) {
    let (tx, rx) = std::sync::mpsc::channel();
    let db = format!("sqlite://{}", dir.join("bench.db").display());
    let svg_file = dir.join("badge.svg");
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("server runtime");
        rt.block_on(async move {
            let store = store::connect(&db).await.expect("open");
            store.migrate().await.expect("migrate");
            let url = "http://bench.example/rcp";
            let key = protocheck::target::target_key(url);
            store.upsert_target(&key, url, 1).await.expect("target");
            let Ok(Inserted::New(run)) = store
                .insert_run(&NewRun {
                    id: uuid::Uuid::now_v7(),
                    target_id: key.clone(),
                    suite: SuiteChoice::Rcp,
                    options: RunOptions::default(),
                    webhook_url: None,
                    dedup_key: "bench".into(),
                    max_attempts: 1,
                    created_at_ms: 1,
                })
                .await
            else {
                panic!("a new run");
            };
            store.claim_run("bench", 1, 60_000).await.expect("claim");
            let verdict = Verdict {
                suite: SuiteId::Rcp,
                suite_version: "0.1.0".into(),
                spec_revision: "RCP/1 1.0".into(),
                passed: true,
                summary: "L0".into(),
                counts: Counts::default(),
                detail: VerdictDetail::Rcp {
                    profile: "spec".into(),
                    certified_level: "L0".into(),
                    declared_level: None,
                    honest: None,
                    protocol_observed: true,
                    report: Default::default(),
                },
            };
            store
                .finish_run(run.id, "bench", &RunEnd::Verdict(verdict), "0.1.0", 2)
                .await
                .expect("finish");

            let queue = Queue::new(store.clone(), Arc::new(Notify::new()), 1);
            let state = AppState::new(queue, RunEvents::new(), Metrics::new(), 30);
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            let addr = listener.local_addr().expect("addr");
            // Drawing it warms the cache, and gives the static copy the same bytes.
            let drawn = web::badge::draw(&state, &key, SuiteId::Rcp)
                .await
                .expect("draw");
            std::fs::write(&svg_file, drawn.svg()).expect("write the static copy");
            let bytes = axum::body::Bytes::copy_from_slice(drawn.svg());
            let router = web::app(state)
                .route_service(
                    "/static/badge.svg",
                    tower_http::services::ServeFile::new(&svg_file),
                )
                .route(
                    "/static/memory.svg",
                    axum::routing::get(move || {
                        let bytes = bytes.clone();
                        async move { ([("content-type", "image/svg+xml")], bytes) }
                    }),
                );
            tx.send((addr, key)).expect("hand over");
            axum::serve(listener, router).await.expect("serve");
        });
    });
    rx.recv().expect("server started")
}

fn which_wrk() -> bool {
    std::process::Command::new("wrk")
        .arg("--version")
        .output()
        .is_ok()
}

fn measure(wrk: bool, url: &str, seconds: u64, connections: usize) -> f64 {
    if wrk {
        let out = std::process::Command::new("wrk")
            .args([
                "-t1",
                &format!("-c{connections}"),
                &format!("-d{seconds}s"),
                url,
            ])
            .output()
            .expect("run wrk");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            !text.contains("Non-2xx"),
            "every request must succeed:\n{text}"
        );
        text.lines()
            .find_map(|l| l.strip_prefix("Requests/sec:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no Requests/sec in wrk's output:\n{text}"))
    } else {
        builtin_load(url, seconds, connections)
    }
}

/// Keep-alive HTTP/1.1 GETs from `connections` connections for `seconds`, on a
/// one-thread runtime of its own; returns requests per second.
fn builtin_load(url: &str, seconds: u64, connections: usize) -> f64 {
    let url = url::Url::parse(url).expect("url");
    let addr: SocketAddr = url
        .socket_addrs(|| None)
        .expect("address")
        .into_iter()
        .next()
        .expect("one address");
    let request = format!("GET {} HTTP/1.1\r\nHost: {addr}\r\n\r\n", url.path());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("client runtime");
    rt.block_on(async move {
        let deadline = Instant::now() + Duration::from_secs(seconds);
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..connections {
            let request = request.clone();
            tasks.spawn(async move {
                let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
                stream.set_nodelay(true).expect("nodelay");
                let mut stream = BufReader::new(stream);
                let mut done = 0u64;
                let mut line = String::new();
                let mut body = Vec::new();
                while Instant::now() < deadline {
                    stream
                        .get_mut()
                        .write_all(request.as_bytes())
                        .await
                        .expect("write");
                    let mut length = 0usize;
                    loop {
                        line.clear();
                        stream.read_line(&mut line).await.expect("read");
                        if line == "\r\n" {
                            break;
                        }
                        if line.starts_with("HTTP/1.1 ") {
                            assert!(line.starts_with("HTTP/1.1 200"), "{line}");
                        }
                        let lower = line.to_ascii_lowercase();
                        if let Some(v) = lower.strip_prefix("content-length:") {
                            length = v.trim().parse().expect("content-length");
                        }
                    }
                    body.resize(length, 0);
                    stream.read_exact(&mut body).await.expect("body");
                    done += 1;
                }
                done
            });
        }
        let started = Instant::now();
        let mut total = 0u64;
        while let Some(done) = tasks.join_next().await {
            total += done.expect("client task");
        }
        total as f64 / started.elapsed().as_secs_f64()
    })
}
