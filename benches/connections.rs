//! Held connections versus `/healthz` latency: the service's connection loop
//! (`web::serve`, the one `protocheck serve` runs) with 0, 100, 500 and 1000
//! silent connections held open, spread over loopback addresses so that no
//! address passes its per-client cap, and for each level 200 `GET /healthz`
//! on fresh connections from 127.0.0.1, one at a time.
//!
//! `cargo bench --bench connections [-- LEVEL…]`. The header timeout is raised
//! to two minutes here so that the held connections are not closed during a
//! level (with the default of 10 s they would be, which is the point of it).
//! Figures are printed, never asserted: the machines are shared.

use protocheck::events::RunEvents;
use protocheck::metrics::Metrics;
use protocheck::submit::Queue;
use protocheck::web::serve::{ConnLimits, serve};
use protocheck::web::{self, AppState, WebOptions};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio_util::sync::CancellationToken;

const PROBES: usize = 200;
/// Held connections per source address, below the default per-client cap (64).
const PER_ADDRESS: usize = 50;

fn main() {
    let levels: Vec<usize> = {
        let given: Vec<usize> = std::env::args()
            .skip(1)
            .filter_map(|a| a.parse().ok())
            .collect();
        if given.is_empty() {
            vec![0, 100, 500, 1000]
        } else {
            given
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(run(&levels));
}

async fn run(levels: &[usize]) {
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
        max_connections: 4096,
        ..ConnLimits::default()
    };
    let stop = CancellationToken::new();
    tokio::spawn(serve(listener, web::app(state), limits, stop.clone()));

    println!("held connections | /healthz p50 | p95 | max | failed");
    for &level in levels {
        let mut held = Vec::with_capacity(level);
        for i in 0..level {
            held.push(connect_from(source(i), addr).await);
        }
        let mut times = Vec::with_capacity(PROBES);
        let mut failed = 0;
        for _ in 0..PROBES {
            let started = Instant::now();
            if healthz(addr).await {
                times.push(started.elapsed());
            } else {
                failed += 1;
            }
        }
        times.sort();
        let at = |q: f64| {
            times
                .get(((times.len() as f64 - 1.0) * q).round() as usize)
                .copied()
                .unwrap_or_default()
        };
        println!(
            "{level:>16} | {:>12.2?} | {:>8.2?} | {:>8.2?} | {failed}",
            at(0.5),
            at(0.95),
            times.last().copied().unwrap_or_default()
        );
        drop(held);
        // Let the server see the held connections close before the next level.
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    stop.cancel();
}

/// The source address of held connection `i`: 127.0.1.x, a new one every
/// `PER_ADDRESS` connections.
fn source(i: usize) -> IpAddr {
    let n = u8::try_from(i / PER_ADDRESS % 250).unwrap_or(0);
    IpAddr::V4(Ipv4Addr::new(127, 0, 1, n + 1))
}

async fn connect_from(from: IpAddr, server: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    socket.bind(SocketAddr::new(from, 0)).expect("bind");
    socket.connect(server).await.expect("connect")
}

async fn healthz(server: SocketAddr) -> bool {
    let Ok(mut conn) = TcpStream::connect(server).await else {
        return false;
    };
    if conn
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
        .await
        .is_err()
    {
        return false;
    }
    let mut answer = Vec::new();
    conn.read_to_end(&mut answer).await.is_ok() && answer.starts_with(b"HTTP/1.1 200")
}
