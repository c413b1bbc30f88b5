//! Unfinished large request heads versus the service's memory (#31 item 6):
//! the service's connection loop (`web::serve`, as `protocheck serve` runs
//! it) in this process, and CONNECTIONS clients (default 3,200, 50 per
//! loopback address so that none passes the per-address cap) that each send
//! a request head of 300 KB that never ends. Before the head limit hyper
//! buffered about 400 KB of each; now it reads `MAX_HEAD_BYTES` (32 KiB),
//! answers 431 and closes.
//!
//! `cargo bench --bench heads [-- CONNECTIONS]`. Prints the resident memory
//! of the process (service and clients together; the clients hold one shared
//! filler) before, after and at its peak, and how many heads were answered
//! 431. Figures are printed, never asserted.

use protocheck::events::RunEvents;
use protocheck::metrics::Metrics;
use protocheck::submit::Queue;
use protocheck::web::serve::{ConnLimits, serve};
use protocheck::web::{self, AppState, WebOptions};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpSocket;
use tokio_util::sync::CancellationToken;

const PER_ADDRESS: usize = 50;
const HEAD_BYTES: usize = 300 * 1024;

fn main() {
    let connections: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(3200);
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(run(connections));
}

/// `VmRSS` and `VmHWM` of this process, in MiB.
fn memory() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

async fn run(connections: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let store = protocheck::store::connect(&url).await.expect("store");
    store.migrate().await.expect("migrate");
    let queue = Queue::new(store, Arc::new(tokio::sync::Notify::new()), 3);
    let state = AppState::with_options(
        queue,
        RunEvents::new(),
        Metrics::new(),
        WebOptions::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let limits = ConnLimits {
        header_timeout: Duration::from_secs(120),
        max_connections: connections + 64,
        ..ConnLimits::default()
    };
    let stop = CancellationToken::new();
    tokio::spawn(serve(listener, web::app(state), limits, stop.clone()));

    let mut head = b"GET / HTTP/1.1\r\nHost: bench\r\nX-Filler: ".to_vec();
    head.resize(HEAD_BYTES, b'a');
    let head: Arc<[u8]> = head.into();
    let (before, _) = memory();
    let mut clients = tokio::task::JoinSet::new();
    for i in 0..connections {
        let head = head.clone();
        clients.spawn(async move { send_unfinished(source(i), addr, &head).await });
    }
    let mut refused = 0usize;
    let mut other = 0usize;
    while let Some(done) = clients.join_next().await {
        match done {
            Ok(true) => refused += 1,
            _ => other += 1,
        }
    }
    let (after, peak) = memory();
    println!("unfinished heads | answered 431 | other | RSS before | RSS after | peak RSS");
    println!(
        "{connections:>16} | {refused:>13} | {other:>5} | {before:>7.1} MiB | {after:>6.1} MiB | {peak:>5.1} MiB"
    );
    stop.cancel();
}

/// Sends `head` without ending it; whether the answer was 431.
async fn send_unfinished(from: IpAddr, server: SocketAddr, head: &[u8]) -> bool {
    let Ok(socket) = TcpSocket::new_v4() else {
        return false;
    };
    if socket.bind(SocketAddr::new(from, 0)).is_err() {
        return false;
    }
    let Ok(mut conn) = socket.connect(server).await else {
        return false;
    };
    let _ = tokio::time::timeout(Duration::from_secs(30), conn.write_all(head)).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), conn.read_to_end(&mut answer)).await;
    answer.starts_with(b"HTTP/1.1 431")
}

/// The source address of connection `i`: 127.0.2.x, a new one every
/// `PER_ADDRESS` connections.
fn source(i: usize) -> IpAddr {
    let n = u8::try_from(i / PER_ADDRESS % 250).unwrap_or(0);
    IpAddr::V4(Ipv4Addr::new(127, 0, 2, n + 1))
}
