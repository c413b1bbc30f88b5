//! Two ways to crowd the service's connection loop (`web::serve`, as
//! `protocheck serve` runs it), and what a third client gets:
//!
//! 1. Two addresses fill every place (128, 64 each: the per-address cap is
//!    half the total) with request heads they never finish; then 100
//!    `GET /healthz` from a third address, one at a time.
//! 2. One client sends 400 pipelined requests for the OpenAPI document and
//!    never reads an answer; how long the service holds its connection, with
//!    the default write timeout.
//!
//! `cargo bench --profile dev --bench crowding`. Everything runs on loopback.
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

const TOTAL: usize = 128;
const PROBES: usize = 100;
/// Enough answers to fill the socket buffers of both
/// ends many times over, so that the service's writes wait.
const PIPELINED: usize = 400;

#[tokio::main]
async fn main() {
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
        // Long enough that no unfinished head is closed by its timeout here.
        header_timeout: Duration::from_secs(600),
        max_connections: TOTAL,
        max_per_client: TOTAL / 2,
        ..ConnLimits::default()
    };
    let write_timeout = limits.write_timeout;
    let stop = CancellationToken::new();
    tokio::spawn(serve(listener, web::app(state), limits, stop.clone()));

    // 1. Every place holds an unfinished head.
    let mut crowd = Vec::with_capacity(TOTAL);
    for i in 0..TOTAL {
        let from = Ipv4Addr::new(127, 0, 0, 2 + u8::try_from(i % 2).unwrap_or(0));
        let mut conn = connect_from(from.into(), addr, None).await;
        conn.write_all(b"GET /healthz HTTP/1.1\r\nHost: bench\r\nX-Slow: ")
            .await
            .expect("write");
        crowd.push(conn);
    }
    let mut times = Vec::with_capacity(PROBES);
    let mut answered = 0;
    for _ in 0..PROBES {
        let started = Instant::now();
        if healthz(addr).await {
            answered += 1;
            times.push(started.elapsed());
        }
    }
    times.sort();
    let open = crowd.iter().filter(|c| still_open(c)).count();
    let pct = |p: usize| {
        times
            .get((times.len() * p / 100).min(times.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    println!(
        "{TOTAL} unfinished heads from 2 addresses fill every place: /healthz from a third answered {answered}/{PROBES} \
         (p50 {:.1} ms, p95 {:.1} ms); {open} of the {TOTAL} still open",
        pct(50),
        pct(95),
    );
    drop(crowd);

    // 2. Answers nobody reads.
    let mut conn = connect_from(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 4)), addr, Some(4096)).await;
    let request = "GET /api/openapi.json HTTP/1.1\r\nHost: bench\r\n\r\n".repeat(PIPELINED);
    let sent = Instant::now();
    let _ = tokio::time::timeout(Duration::from_secs(10), conn.write_all(request.as_bytes())).await;
    let mut held = None;
    while sent.elapsed() < Duration::from_secs(600) {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if closed_by_peer(&conn) {
            held = Some(sent.elapsed());
            break;
        }
    }
    match held {
        Some(d) => println!(
            "{PIPELINED} pipelined answers never read: the connection was closed after {:.1} s (write timeout {} s)",
            d.as_secs_f64(),
            write_timeout.as_secs()
        ),
        None => println!("{PIPELINED} pipelined answers never read: still open after 600 s"),
    }
    stop.cancel();
}

async fn connect_from(from: IpAddr, server: SocketAddr, receive_buffer: Option<u32>) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    if let Some(size) = receive_buffer {
        socket.set_recv_buffer_size(size).expect("receive buffer");
    }
    socket.bind(SocketAddr::new(from, 0)).expect("bind source");
    socket.connect(server).await.expect("connect")
}

async fn healthz(server: SocketAddr) -> bool {
    let mut conn = connect_from(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 9)), server, None).await;
    if conn
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
        .await
        .is_err()
    {
        return false;
    }
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), conn.read_to_end(&mut answer)).await;
    matches!(read, Ok(Ok(_))) && answer.starts_with(b"HTTP/1.1 200")
}

/// Whether `conn` is still open: nothing to read and no end of stream.
fn still_open(conn: &TcpStream) -> bool {
    let mut buf = [0u8; 1];
    matches!(conn.try_read(&mut buf), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

/// Whether the peer reset `conn`, found without reading what it sent (a
/// read would be the client reading again) nor writing to it (bytes would be
/// a new request head): the socket's pending error. The service closes the
/// connection with requests it never read, which resets it.
fn closed_by_peer(conn: &TcpStream) -> bool {
    matches!(
        socket2::SockRef::from(conn).take_error(),
        Ok(Some(_)) | Err(_)
    )
}
