//! Wall time of a full suite run through `protocheck check` (the released
//! binary, a fresh process per run, as a user or a CI job runs it) against the
//! local reference servers, and the requests each run sends.
//!
//! `cargo bench --bench suites`. Loopback only; figures are printed, never asserted.

use protocheck::reference::mcp::{McpReferenceConfig, serve_mcp_reference};
use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

const RUNS: usize = 20;

#[tokio::main]
async fn main() {
    let config = McpReferenceConfig::new(BTreeSet::new()).expect("config");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let server = config.clone();
    tokio::spawn(async move { serve_mcp_reference(listener, server).await });

    // One warm-up run, so the page cache holds the binary.
    check(&url, "mcp").await;
    let before = config.requests_served();
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        times.push(check(&url, "mcp").await);
    }
    let requests = (config.requests_served() - before) as f64 / RUNS as f64;
    report("mcp over HTTP", &mut times, requests);
}

/// Runs `protocheck check URL --suite S --json` and returns its wall time.
async fn check(url: &str, suite: &str) -> Duration {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_protocheck"));
    cmd.args(["check", url, "--suite", suite, "--json"]);
    tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let out = cmd.output().expect("run protocheck check");
        let elapsed = started.elapsed();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        elapsed
    })
    .await
    .expect("join")
}

fn report(name: &str, times: &mut [Duration], requests: f64) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{name}: `protocheck check` wall time p50 {:.1} ms, min {:.1} ms, max {:.1} ms over {} runs; {requests:.0} requests per run",
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1]),
        times.len(),
    );
}
