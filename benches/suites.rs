//! Wall time of a full suite run through `protocheck check` (the released
//! binary, a fresh process per run, as a user or a CI job runs it) against the
//! local reference servers (MCP over HTTP, RCP over HTTP and stdio), and the
//! requests each MCP run sends.
//!
//! `cargo bench --bench suites`. Loopback only; figures are printed, never asserted.

mod common;

use common::timed;
use protocheck::reference::mcp::{McpReferenceConfig, serve_mcp_reference};
use protocheck::reference::rcp::{RcpReferenceConfig, rcp_router};
use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

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
    report("mcp over HTTP", &mut times, Some(requests));

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/rcp", listener.local_addr().expect("addr"));
    let router = rcp_router(RcpReferenceConfig::default());
    tokio::spawn(async move { axum::serve(listener, router).await });
    check(&url, "rcp").await;
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        times.push(check(&url, "rcp").await);
    }
    report("rcp over HTTP", &mut times, None);

    // Over stdio the reference server is a child process that `check` spawns.
    let command = format!("{} reference rcp --stdio", env!("CARGO_BIN_EXE_protocheck"));
    check_stdio(&command).await;
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        times.push(check_stdio(&command).await);
    }
    report("rcp over stdio", &mut times, None);
}

/// Runs `protocheck check --stdio CMD --suite rcp --json` and returns its wall time.
async fn check_stdio(command: &str) -> Duration {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_protocheck"));
    cmd.args(["check", "--stdio", command, "--suite", "rcp", "--json"]);
    timed(cmd).await
}

/// Runs `protocheck check URL --suite S --json` and returns its wall time.
async fn check(url: &str, suite: &str) -> Duration {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_protocheck"));
    cmd.args(["check", url, "--suite", suite, "--json"]);
    timed(cmd).await
}

fn report(name: &str, times: &mut [Duration], requests: Option<f64>) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{name}: `protocheck check` wall time p50 {:.1} ms, min {:.1} ms, max {:.1} ms over {} runs{}",
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1]),
        times.len(),
        requests.map_or_else(String::new, |r| format!("; {r:.0} requests per run")),
    );
}
