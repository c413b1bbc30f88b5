//! What CI integration costs: rendering a report in each format, and a whole
//! `protocheck submit --wait` against a live `protocheck serve` next to the same
//! run through `protocheck check` (the service's overhead: queue, store, event
//! stream, report fetch).
//!
//! `cargo bench --bench reports`. Loopback only; figures are printed, never asserted.

mod common;
#[path = "common/serve.rs"]
mod serve;

use common::timed;
use protocheck::reference::mcp::{McpReferenceConfig, serve_mcp_reference};
use protocheck::report::{Format, Report};
use protocheck::suite::context::{Endpoint, RunContext};
use protocheck::suite::{self, RunOptions, SuiteChoice};
use protocheck::transport::{AddressPolicy, HttpClient, Limits};
use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RENDERS: usize = 200;
const RUNS: usize = 15;

#[tokio::main]
async fn main() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let config = McpReferenceConfig::new(BTreeSet::new()).expect("config");
    tokio::spawn(async move { serve_mcp_reference(listener, config).await });

    // One MCP report (79 rules, with evidence), rendered many times.
    let http = HttpClient::new(AddressPolicy::AllowPrivate, Limits::default()).expect("client");
    let ctx = RunContext::new(http, RunOptions::default());
    let (tx, mut rx) = tokio::sync::mpsc::channel(256);
    let collect = tokio::spawn(async move {
        let mut all = Vec::new();
        while let Some(f) = rx.recv().await {
            all.push(f);
        }
        all
    });
    let endpoint = Endpoint::Http(url.parse().expect("url"));
    let verdict = suite::runner::run_suite(SuiteChoice::Mcp, &endpoint, &ctx, tx)
        .await
        .expect("the reference server answers");
    let findings = collect.await.expect("join");
    let report = Report::from_check(&url, Ok(&verdict), &findings);
    for (name, format) in [
        ("json", Format::Json),
        ("junit", Format::Junit),
        ("sarif", Format::Sarif),
        ("text", Format::Text),
    ] {
        let started = Instant::now();
        let mut bytes = 0;
        for _ in 0..RENDERS {
            bytes = std::hint::black_box(report.render(format)).len();
        }
        let per = started.elapsed() / RENDERS as u32;
        println!(
            "render {name}: {:.0} µs per report of {} findings, {:.1} KiB",
            per.as_secs_f64() * 1e6,
            findings.len(),
            bytes as f64 / 1024.0
        );
    }

    // The same run through the service and locally.
    let dir = tempfile::tempdir().expect("tempdir");
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let mut serve = Command::new(env!("CARGO_BIN_EXE_protocheck"))
        .arg("serve")
        .env(
            "DATABASE_URL",
            format!("sqlite://{}", dir.path().join("bench.db").display()),
        )
        .env("PROTOCHECK_BIND", format!("127.0.0.1:{port}"))
        .env("PROTOCHECK_SUBMIT_PER_MINUTE", "1000")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn serve");
    let server = format!("http://127.0.0.1:{port}");
    // 30 s, as the 300 tries of 100 ms this waited before; now a service
    // that never gets ready stops the benchmark here, not at its first submit.
    serve::wait_ready(&server, Duration::from_secs(30)).await;
    let submit = |format: &str| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_protocheck"));
        cmd.args([
            "submit", &url, "--server", &server, "--suite", "mcp", "--wait", "--force", "--quiet",
            "--format", format,
        ]);
        cmd
    };
    timed(submit("json")).await;
    let mut times: Vec<Duration> = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        times.push(timed(submit("json")).await);
    }
    show("submit --wait (events) + report.json", &mut times);
    let mut times: Vec<Duration> = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let mut cmd = submit("sarif");
        cmd.arg("--poll");
        times.push(timed(cmd).await);
    }
    show("submit --wait --poll + report (sarif)", &mut times);
    let mut times: Vec<Duration> = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_protocheck"));
        cmd.args(["check", &url, "--suite", "mcp", "--format", "json"]);
        times.push(timed(cmd).await);
    }
    show("check (no service)", &mut times);
    let _ = serve.kill();
    let _ = serve.wait();
}

fn show(name: &str, times: &mut [Duration]) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{name}: wall time p50 {:.0} ms, min {:.0} ms, max {:.0} ms over {} MCP runs",
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1]),
        times.len(),
    );
}
