//! Connection limits of the service's own connection loop (`web::serve`), on
//! real loopback sockets: idle and slow clients are closed after their
//! timeouts without starving anyone else, one address cannot hold more than
//! its share of connections or progress streams, and a body that stops
//! arriving is answered 408. Timeouts are short here; assertions are on what
//! happens (a connection closed, an answer given), never on how fast.

use crate::common;
use protocheck::events::RunEvents;
use protocheck::metrics::Metrics;
use protocheck::submit::Queue;
use protocheck::web::serve::{ConnLimits, serve};
use protocheck::web::{self, AppState, WebOptions};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio_util::sync::CancellationToken;

/// Liveness bound: how long a test waits for what must happen. Never a
/// measure of speed.
const PATIENCE: Duration = Duration::from_secs(30);

struct Server {
    addr: SocketAddr,
    stop: CancellationToken,
    served: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    _db: common::TestDb,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn start(limits: ConnLimits, options: WebOptions) -> Server {
    let db = common::sqlite().await;
    let queue = Queue::new(db.store.clone(), Arc::new(tokio::sync::Notify::new()), 3);
    let state = AppState::with_options(queue, RunEvents::new(), Metrics::new(), options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let stop = CancellationToken::new();
    let served = tokio::spawn(serve(listener, web::app(state), limits, stop.clone()));
    Server {
        addr,
        stop,
        served: Some(served),
        _db: db,
    }
}

fn limits(header: Duration, idle: Duration, total: usize, per_client: usize) -> ConnLimits {
    ConnLimits {
        header_timeout: header,
        idle_timeout: idle,
        write_timeout: Duration::from_secs(30),
        max_connections: total,
        max_per_client: per_client,
    }
}

/// A TCP connection to `server` from the loopback address `from` (any of
/// 127.0.0.0/8 works on Linux).
async fn connect_from(from: &str, server: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    let local: IpAddr = from.parse().expect("address");
    socket.bind(SocketAddr::new(local, 0)).expect("bind source");
    socket.connect(server).await.expect("connect")
}

/// Sends `request` on `conn` and reads until the server closes it.
async fn exchange(mut conn: TcpStream, request: &str) -> String {
    conn.write_all(request.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(PATIENCE, conn.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes");
    String::from_utf8_lossy(&answer).into_owned()
}

/// `GET /healthz` from `from`: the status line, or what went wrong.
async fn healthz_from(from: &str, server: SocketAddr) -> String {
    let conn = connect_from(from, server).await;
    let answer = exchange(
        conn,
        "GET /healthz HTTP/1.1\r\nHost: protocheck\r\nConnection: close\r\n\r\n",
    )
    .await;
    answer.lines().next().unwrap_or("(closed)").to_owned()
}

/// A connection from `from` that has been answered once and stays open (kept
/// alive), so it surely holds one of the server's slots. Retries while slots
/// of connections that just closed are not given back yet.
async fn kept_alive_from(from: &str, server: SocketAddr) -> TcpStream {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let mut conn = connect_from(from, server).await;
        let mut buf = [0u8; 1024];
        let answered = conn
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: protocheck\r\n\r\n")
            .await
            .is_ok()
            && matches!(conn.read(&mut buf).await, Ok(n) if buf[..n].starts_with(b"HTTP/1.1 200"));
        if answered {
            return conn;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{from} never got a connection in"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until the server has closed `conn`: a read that ends (or fails)
/// instead of waiting. Panics after [`PATIENCE`].
async fn assert_closed(conn: &mut TcpStream, what: &str) {
    let mut buf = [0u8; 4096];
    let closed = tokio::time::timeout(PATIENCE, async {
        loop {
            match conn.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "{what}: still open after {PATIENCE:?}");
}

/// Whether `conn` is still open: nothing to read and no end of stream.
/// Whether the server has not closed `conn`: what it sent is read and
/// dropped (a progress stream says where a queued run stands), then the end
/// of the stream is closed, nothing more to read is open.
fn still_open(conn: &TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    loop {
        match conn.try_read(&mut buf) {
            Ok(0) => return false,
            Ok(_) => {}
            Err(e) => return e.kind() == std::io::ErrorKind::WouldBlock,
        }
    }
}

#[tokio::test]
async fn silent_and_slow_clients_are_closed_and_do_not_starve_others() {
    let header = Duration::from_secs(1);
    let server = start(
        limits(header, Duration::from_secs(2), 2000, 1000),
        WebOptions::default(),
    )
    .await;

    // Connections that never send a byte.
    let mut silent = Vec::new();
    for _ in 0..150 {
        silent.push(connect_from("127.0.0.1", server.addr).await);
    }
    // Connections that send a request head one byte at a time, too slowly.
    let stop_trickle = CancellationToken::new();
    let mut slow = Vec::new();
    for _ in 0..100 {
        let conn = connect_from("127.0.0.1", server.addr).await;
        let (mut read, mut write) = conn.into_split();
        let stop = stop_trickle.clone();
        tokio::spawn(async move {
            for byte in b"GET /healthz HTTP/1.1\r\nHost: protocheck\r\n\r\n" {
                if write.write_all(&[*byte]).await.is_err() {
                    return;
                }
                tokio::select! {
                    () = tokio::time::sleep(header / 4) => {}
                    () = stop.cancelled() => return,
                }
            }
        });
        slow.push(tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            loop {
                match read.read(&mut buf).await {
                    Ok(0) | Err(_) => return String::from_utf8_lossy(&buf).into_owned(),
                    Ok(_) => {}
                }
            }
        }));
    }

    // Everyone else still gets an answer, from the same address too.
    assert_eq!(
        healthz_from("127.0.0.1", server.addr).await,
        "HTTP/1.1 200 OK"
    );

    for (i, conn) in silent.iter_mut().enumerate() {
        assert_closed(conn, &format!("silent connection {i}")).await;
    }
    for (i, reader) in slow.into_iter().enumerate() {
        let ended = tokio::time::timeout(PATIENCE, reader).await;
        assert!(
            ended.is_ok(),
            "slow connection {i}: still open after {PATIENCE:?}"
        );
        let answer = ended.expect("ended").expect("join");
        assert!(
            !answer.starts_with("HTTP/1.1 200"),
            "slow connection {i} completed its head: {answer}"
        );
    }
    stop_trickle.cancel();
    assert_eq!(
        healthz_from("127.0.0.1", server.addr).await,
        "HTTP/1.1 200 OK"
    );
}

#[tokio::test]
async fn a_kept_alive_connection_is_closed_when_idle_but_not_while_streaming() {
    let server = start(
        limits(Duration::from_secs(1), Duration::from_secs(1), 100, 50),
        WebOptions::default(),
    )
    .await;

    // One answered request, then silence: the idle timeout closes it.
    let mut idle = connect_from("127.0.0.1", server.addr).await;
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: protocheck\r\n\r\n")
        .await
        .expect("write");
    let mut buf = [0u8; 1024];
    let n = idle.read(&mut buf).await.expect("answer");
    assert!(
        String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&buf[..n])
    );
    assert_closed(&mut idle, "an idle kept-alive connection").await;

    // A progress stream is a request in flight, however quiet: not idle.
    let db_url = format!("http://{}/api/v1/runs", server.addr);
    let run: serde_json::Value = reqwest::Client::new()
        .post(&db_url)
        .json(&serde_json::json!({"url": "http://127.0.0.1:9/rcp", "suite": "rcp"}))
        .send()
        .await
        .expect("submit")
        .json()
        .await
        .expect("json");
    let id = run["id"].as_str().expect("run id").to_owned();
    let mut stream = connect_from("127.0.0.1", server.addr).await;
    stream
        .write_all(
            format!("GET /api/v1/runs/{id}/events HTTP/1.1\r\nHost: protocheck\r\n\r\n").as_bytes(),
        )
        .await
        .expect("write");
    let n = stream.read(&mut buf).await.expect("stream head");
    assert!(
        String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&buf[..n])
    );
    // Several idle timeouts pass; the run stays queued (no workers), so the
    // stream says where it stands once and then nothing, and stays open.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        still_open(&stream),
        "the progress stream was closed as idle"
    );
}

#[tokio::test]
async fn one_address_cannot_hold_more_than_its_share() {
    let server = start(
        limits(Duration::from_secs(60), Duration::from_secs(60), 5, 3),
        WebOptions::default(),
    )
    .await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(connect_from("127.0.0.1", server.addr).await);
    }
    // Make sure the server has taken the three before the fourth arrives.
    assert_eq!(
        healthz_from("127.0.0.2", server.addr).await,
        "HTTP/1.1 200 OK"
    );
    let mut over = connect_from("127.0.0.1", server.addr).await;
    assert_closed(&mut over, "the fourth connection of one address").await;
    for conn in &held {
        assert!(still_open(conn), "the first three stay open");
    }
    // Another address still gets in, up to the total.
    assert_eq!(
        healthz_from("127.0.0.2", server.addr).await,
        "HTTP/1.1 200 OK"
    );
    let _fourth = kept_alive_from("127.0.0.3", server.addr).await;
    let _fifth = kept_alive_from("127.0.0.3", server.addr).await;
    // Five held (three, and two from 127.0.0.3): the total is reached. None
    // has a request in flight, so a newcomer takes the place of one of the
    // address holding the most (#31 item 8).
    assert_eq!(
        healthz_from("127.0.0.4", server.addr).await,
        "HTTP/1.1 200 OK"
    );
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while held.iter().all(still_open) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no connection of 127.0.0.1 gave its place up"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        held.iter().filter(|c| still_open(c)).count(),
        2,
        "one connection of the address holding the most was closed"
    );

    // A connection given back is free again (once the server has seen it close).
    held.retain(still_open);
    drop(held.pop());
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let status = healthz_from("127.0.0.1", server.addr).await;
        if status == "HTTP/1.1 200 OK" {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "a freed slot was never reused: {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// #31 item 8: two addresses fill every place with heads they never finish;
/// a third address still gets its answer, in the place of one of them. When
/// every place serves a request (progress streams), a newcomer is closed and
/// no request is cut.
#[tokio::test]
async fn a_full_service_gives_the_place_of_an_unfinished_head_to_a_newcomer() {
    let server = start(
        limits(Duration::from_secs(60), Duration::from_secs(60), 4, 2),
        WebOptions::default(),
    )
    .await;
    let mut stalled = Vec::new();
    for from in ["127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.3"] {
        let mut conn = connect_from(from, server.addr).await;
        conn.write_all(b"GET /healthz HTTP/1.1\r\nHost: protocheck\r\nX-Slow: ")
            .await
            .expect("write");
        stalled.push(conn);
    }
    // Two newcomers that stay (kept alive): each takes the place of one
    // unfinished head.
    let mut newcomers = Vec::new();
    for _ in 0..2 {
        let mut conn = connect_from("127.0.0.4", server.addr).await;
        conn.write_all(b"GET /healthz HTTP/1.1\r\nHost: protocheck\r\n\r\n")
            .await
            .expect("write");
        let mut buf = [0u8; 1024];
        let n = tokio::time::timeout(PATIENCE, conn.read(&mut buf))
            .await
            .expect("an answer")
            .expect("read");
        assert!(
            buf[..n].starts_with(b"HTTP/1.1 200"),
            "a newcomer while every place holds an unfinished head: {}",
            String::from_utf8_lossy(&buf[..n])
        );
        newcomers.push(conn);
    }
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while stalled.iter().filter(|c| still_open(c)).count() > 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the unfinished heads kept their places"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        stalled.iter().filter(|c| still_open(c)).count(),
        2,
        "one unfinished head closed for each newcomer"
    );
    drop((stalled, newcomers));

    // Every place serving a request: the newcomer is the one closed.
    let base = format!("http://{}", server.addr);
    let run: serde_json::Value = reqwest::Client::new()
        .post(format!("{base}/api/v1/runs"))
        .json(&serde_json::json!({"url": "http://127.0.0.1:9/rcp", "suite": "rcp"}))
        .send()
        .await
        .expect("submit")
        .json()
        .await
        .expect("json");
    let id = run["id"].as_str().expect("run id").to_owned();
    let mut streams = Vec::new();
    let deadline = tokio::time::Instant::now() + PATIENCE;
    for from in ["127.0.0.5", "127.0.0.5", "127.0.0.6", "127.0.0.6"] {
        loop {
            let mut conn = connect_from(from, server.addr).await;
            let mut buf = [0u8; 1024];
            let opened = conn
                .write_all(
                    format!("GET /api/v1/runs/{id}/events HTTP/1.1\r\nHost: protocheck\r\n\r\n")
                        .as_bytes(),
                )
                .await
                .is_ok()
                && matches!(conn.read(&mut buf).await, Ok(n) if buf[..n].starts_with(b"HTTP/1.1 200"));
            if opened {
                streams.push(conn);
                break;
            }
            // A place of the closed heads not given back yet.
            assert!(tokio::time::Instant::now() < deadline, "{from}: no stream");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let mut newcomer = connect_from("127.0.0.7", server.addr).await;
    assert_closed(
        &mut newcomer,
        "a connection while every place serves a request",
    )
    .await;
    for conn in &streams {
        assert!(still_open(conn), "a progress stream was cut for a newcomer");
    }
}

/// #31 item 7: a client that sends pipelined requests and never reads the
/// answers is closed once the writes have waited `write_timeout`; it does not
/// hold its connection for as long as it likes.
#[tokio::test]
async fn a_client_that_stops_reading_is_closed_after_the_write_timeout() {
    let mut limits = limits(Duration::from_secs(60), Duration::from_secs(60), 100, 50);
    limits.write_timeout = Duration::from_secs(1);
    let server = start(limits, WebOptions::default()).await;
    let socket = TcpSocket::new_v4().expect("socket");
    // A small receive window, so the server's writes wait soon.
    socket.set_recv_buffer_size(4096).expect("receive buffer");
    let mut conn = socket.connect(server.addr).await.expect("connect");
    let request = "GET /api/openapi.json HTTP/1.1\r\nHost: protocheck\r\n\r\n";
    let pipelined = request.repeat(200);
    // The server stops reading requests once its answers back up; what it
    // does not read stays in the buffers.
    let _ =
        tokio::time::timeout(Duration::from_secs(5), conn.write_all(pipelined.as_bytes())).await;
    // Longer than the write timeout, reading nothing.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let mut answers = Vec::new();
    let ended = tokio::time::timeout(PATIENCE, conn.read_to_end(&mut answers)).await;
    assert!(
        ended.is_ok(),
        "the connection of a client that stopped reading was still open"
    );
    let text = String::from_utf8_lossy(&answers);
    let answered = text.matches("HTTP/1.1 200 OK").count();
    assert!(
        answered < 200,
        "all {answered} answers were sent: the client was never cut"
    );
}

#[tokio::test]
async fn progress_streams_are_capped_per_address() {
    let options = WebOptions {
        max_streams_per_client: 2,
        ..WebOptions::default()
    };
    let server = start(ConnLimits::default(), options).await;
    let base = format!("http://{}", server.addr);
    let client = reqwest::Client::new();
    let run: serde_json::Value = client
        .post(format!("{base}/api/v1/runs"))
        .json(&serde_json::json!({"url": "http://127.0.0.1:9/rcp", "suite": "rcp"}))
        .send()
        .await
        .expect("submit")
        .json()
        .await
        .expect("json");
    let events = format!(
        "{base}/api/v1/runs/{}/events",
        run["id"].as_str().expect("id")
    );

    let first = client.get(&events).send().await.expect("first stream");
    assert_eq!(first.status(), 200);
    let second = client.get(&events).send().await.expect("second stream");
    assert_eq!(second.status(), 200);
    let third = client.get(&events).send().await.expect("third stream");
    assert_eq!(third.status(), 429);
    assert_eq!(third.headers()["retry-after"], "10");
    assert_eq!(third.headers()["content-type"], "application/problem+json");
    let problem: serde_json::Value = third.json().await.expect("problem");
    assert_eq!(problem["type"], "/problems/too-many-streams");
    assert_eq!(problem["status"], 429);

    // Another address has its own streams.
    let other = reqwest::Client::builder()
        .local_address(IpAddr::from([127, 0, 0, 2]))
        .build()
        .expect("client");
    let theirs = other.get(&events).send().await.expect("other address");
    assert_eq!(theirs.status(), 200);

    // A stream that ends gives its slot back.
    drop(first);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let again = client.get(&events).send().await.expect("again");
        if again.status() == 200 {
            break;
        }
        assert_eq!(again.status(), 429);
        assert!(
            tokio::time::Instant::now() < deadline,
            "a closed stream never gave its slot back"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_body_that_stops_arriving_is_answered_408() {
    let options = WebOptions {
        body_timeout: Duration::from_secs(1),
        ..WebOptions::default()
    };
    let server = start(ConnLimits::default(), options).await;

    // The API: a problem document.
    let conn = connect_from("127.0.0.1", server.addr).await;
    let answer = exchange_keeping_open(
        conn,
        "POST /api/v1/runs HTTP/1.1\r\nHost: protocheck\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"url\":",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("content-type: application/problem+json"),
        "{answer}"
    );
    assert!(answer.contains("/problems/body-timeout"), "{answer}");

    // The form: a page.
    let token = "0123456789abcdef0123456789abcdef";
    let conn = connect_from("127.0.0.1", server.addr).await;
    let answer = exchange_keeping_open(
        conn,
        &format!(
            "POST / HTTP/1.1\r\nHost: protocheck\r\nCookie: pc_csrf={token}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 200\r\n\r\nurl=http"
        ),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("content-type: text/html"),
        "{answer}"
    );
}

/// Sends `request` (whose body is incomplete) and reads the answer's head and
/// what follows, without closing the sending side.
async fn exchange_keeping_open(mut conn: TcpStream, request: &str) -> String {
    conn.write_all(request.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let _ = tokio::time::timeout(PATIENCE, async {
        loop {
            match conn.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    answer.extend_from_slice(&buf[..n]);
                    if String::from_utf8_lossy(&answer).contains("\r\n\r\n{")
                        || String::from_utf8_lossy(&answer).contains("</html>")
                    {
                        return;
                    }
                }
            }
        }
    })
    .await;
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn shutdown_lets_the_loop_end() {
    let mut server = start(ConnLimits::default(), WebOptions::default()).await;
    let _idle = connect_from("127.0.0.1", server.addr).await;
    assert_eq!(
        healthz_from("127.0.0.1", server.addr).await,
        "HTTP/1.1 200 OK"
    );
    server.stop.cancel();
    let served = server.served.take().expect("the loop's task");
    let ended = tokio::time::timeout(PATIENCE, served).await;
    assert!(
        matches!(ended, Ok(Ok(Ok(())))),
        "the connection loop did not end after shutdown: {ended:?}"
    );
}

/// The real `protocheck serve`, configured through its environment: the
/// limits reach the connection loop, and the file limit it runs with is logged.
#[tokio::test]
async fn the_serve_command_applies_its_connection_settings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("free port");
        probe.local_addr().expect("addr").port()
    };
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let log = std::fs::File::create(dir.path().join("serve.log")).expect("log file");
    let mut cmd = common::cli::protocheck();
    cmd.arg("serve")
        .env(
            "DATABASE_URL",
            format!("sqlite://{}", dir.path().join("serve.db").display()),
        )
        .env("PROTOCHECK_BIND", addr.to_string())
        .env("PROTOCHECK_WORKERS", "0")
        .env("PROTOCHECK_HEADER_TIMEOUT_SECS", "1")
        .env("PROTOCHECK_MAX_CONNECTIONS_PER_CLIENT", "4")
        .env(
            "PROTOCHECK_SIGNING_KEY_FILE",
            dir.path().join("key.pem").display().to_string(),
        )
        .env("RUST_LOG", "protocheck=info")
        .stdout(std::process::Stdio::null())
        .stderr(log);
    let mut child = KillOnDrop(cmd.spawn().expect("spawn protocheck serve"));

    // Waits for the service to listen, from an address the test uses for nothing else.
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let socket = TcpSocket::new_v4().expect("socket");
        socket
            .bind(SocketAddr::from(([127, 0, 0, 9], 0)))
            .expect("bind source");
        if socket.connect(addr).await.is_ok() {
            break;
        }
        assert!(
            child.0.try_wait().expect("wait").is_none(),
            "protocheck serve exited: {}",
            std::fs::read_to_string(dir.path().join("serve.log")).unwrap_or_default()
        );
        assert!(
            tokio::time::Instant::now() < deadline,
            "serve never listened"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(connect_from("127.0.0.1", addr).await);
    }
    assert_eq!(healthz_from("127.0.0.2", addr).await, "HTTP/1.1 200 OK");
    let mut over = connect_from("127.0.0.1", addr).await;
    assert_closed(&mut over, "the fifth connection of one address").await;
    for (i, conn) in held.iter_mut().enumerate() {
        assert_closed(conn, &format!("silent connection {i}")).await;
    }
    assert_eq!(healthz_from("127.0.0.1", addr).await, "HTTP/1.1 200 OK");

    let logged = std::fs::read_to_string(dir.path().join("serve.log")).expect("log");
    assert!(
        logged.contains("connection limits") && logged.contains("file_limit"),
        "{logged}"
    );
}

/// Kills the spawned service when the test ends, passed or not.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// #31 item 7: a body trickled one byte just inside each pause is cut by the
/// whole-body deadline with 408 problem+json, not held until the request
/// timeout and answered with an empty 503.
#[tokio::test]
async fn a_trickled_body_is_cut_by_the_whole_body_deadline() {
    let options = WebOptions {
        body_timeout: Duration::from_secs(1),
        ..WebOptions::default()
    };
    let server = start(ConnLimits::default(), options).await;
    let mut conn = connect_from("127.0.0.1", server.addr).await;
    conn.write_all(
        b"POST /api/v1/runs HTTP/1.1\r\nHost: protocheck\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n",
    )
    .await
    .expect("write head");
    let trickle = async {
        for _ in 0..40 {
            tokio::time::sleep(Duration::from_millis(300)).await;
            if conn.write_all(b" ").await.is_err() {
                break;
            }
        }
    };
    let mut answer = Vec::new();
    trickle.await;
    let mut buf = [0u8; 4096];
    let _ = tokio::time::timeout(PATIENCE, async {
        while let Ok(n) = conn.read(&mut buf).await {
            if n == 0 {
                break;
            }
            answer.extend_from_slice(&buf[..n]);
            if String::from_utf8_lossy(&answer).contains("\r\n\r\n{") {
                break;
            }
        }
    })
    .await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("/problems/body-timeout"), "{answer}");
}

/// #31 item 10: the errors the router answers by itself carry a problem
/// document under `/api` (a method a path does not answer keeps its
/// `Allow`), and an unknown static file is a problem for a program.
#[tokio::test]
async fn bare_router_errors_are_problem_documents() {
    let server = start(ConnLimits::default(), WebOptions::default()).await;
    let base = format!("http://{}", server.addr);
    let http = reqwest::Client::new();
    let resp = http
        .delete(format!("{base}/api/v1/runs"))
        .send()
        .await
        .expect("DELETE");
    assert_eq!(resp.status(), 405);
    assert_eq!(resp.headers()["allow"], "POST");
    assert_eq!(resp.headers()["content-type"], "application/problem+json");
    let body: serde_json::Value = resp.json().await.expect("json");
    assert!(
        body["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("DELETE"),
        "{body}"
    );
    // Beside its own `Allow`, the detail never says the path answers nothing.
    let detail = body["detail"].as_str().unwrap_or_default();
    assert!(
        !detail.contains("no method") && (detail.contains("POST") || detail.contains("Allow")),
        "{detail}"
    );
    // A browser gets the page.
    let resp = http
        .put(format!("{base}/"))
        .header("accept", "text/html")
        .send()
        .await
        .expect("PUT");
    assert_eq!(resp.status(), 405);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap_or_default()
            .starts_with("text/html")
    );
    // A path that climbs out of /static, asked by a program.
    let mut conn = connect_from("127.0.0.1", server.addr).await;
    conn.write_all(
        b"GET /static/..%2fCargo.toml HTTP/1.1\r\nHost: protocheck\r\nConnection: close\r\n\r\n",
    )
    .await
    .expect("write");
    let mut answer = String::new();
    let _ = tokio::time::timeout(PATIENCE, conn.read_to_string(&mut answer)).await;
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("content-type: application/problem+json"),
        "{answer}"
    );
}

/// #31 item 6: a request head larger than `MAX_HEAD_BYTES` is answered 431
/// and its connection closed, instead of being buffered to ~400 KB.
#[tokio::test]
async fn an_oversized_head_is_answered_431() {
    let server = start(ConnLimits::default(), WebOptions::default()).await;
    let mut conn = connect_from("127.0.0.1", server.addr).await;
    let filler = "a".repeat(protocheck::web::serve::MAX_HEAD_BYTES * 3);
    // The head never ends: the server must refuse it from what it has read.
    let _ = conn
        .write_all(
            format!("GET /healthz HTTP/1.1\r\nHost: protocheck\r\nX-Filler: {filler}").as_bytes(),
        )
        .await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(PATIENCE, conn.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    // A head of ordinary size is served.
    assert_eq!(
        healthz_from("127.0.0.1", server.addr).await,
        "HTTP/1.1 200 OK"
    );
}

/// Sends `head` and then `body` on a new connection the way a client that
/// writes its whole request before it reads does (Python's urllib), then
/// reads the answer to the end: its status line, or what went wrong (a write
/// or a read the server cut short with a reset).
async fn write_then_read(server: SocketAddr, head: &[u8], body: &[u8]) -> String {
    let mut conn = connect_from("127.0.0.1", server).await;
    let written = async {
        conn.write_all(head).await?;
        conn.write_all(body).await
    };
    if let Err(e) = tokio::time::timeout(PATIENCE, written)
        .await
        .expect("the server reads the request")
    {
        return format!("write failed: {e}");
    }
    let mut answer = Vec::new();
    let read = tokio::time::timeout(PATIENCE, conn.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes");
    match (read, answer.is_empty()) {
        (Err(e), true) => format!("read failed: {e}"),
        _ => String::from_utf8_lossy(&answer)
            .lines()
            .next()
            .unwrap_or("(closed)")
            .to_owned(),
    }
}

/// #53 item 2: an upload refused for its size gets its 413, ten times of
/// ten, at 1 MB and 8 MB, on the form and on the API, though the client
/// writes the whole body before it reads; and a head too large, written
/// whole, gets its 431. The service answers at once and then reads and
/// discards the rest (a lingering close), so the client's writes are not cut
/// short by a reset that would destroy the answer.
#[tokio::test]
async fn refused_uploads_written_whole_receive_their_answer() {
    let server = start(ConnLimits::default(), WebOptions::default()).await;
    for size in [1 << 20, 8 << 20] {
        let body = vec![b'a'; size];
        for (path, content_type) in [
            ("/", "application/x-www-form-urlencoded"),
            ("/api/v1/runs", "application/json"),
        ] {
            let head = format!(
                "POST {path} HTTP/1.1\r\nHost: protocheck\r\nContent-Type: {content_type}\r\n\
                 Content-Length: {size}\r\n\r\n"
            );
            let mut answers = Vec::new();
            for _ in 0..10 {
                answers.push(write_then_read(server.addr, head.as_bytes(), &body).await);
            }
            assert!(
                answers.iter().all(|a| a.starts_with("HTTP/1.1 413")),
                "{size} bytes to {path}: {answers:?}"
            );
        }
    }
    let filler = "a".repeat(1 << 20);
    let head = format!("GET /healthz HTTP/1.1\r\nHost: protocheck\r\nX-Filler: {filler}\r\n\r\n");
    let mut answers = Vec::new();
    for _ in 0..10 {
        answers.push(write_then_read(server.addr, head.as_bytes(), b"").await);
    }
    assert!(
        answers.iter().all(|a| a.starts_with("HTTP/1.1 431")),
        "a 1 MB head: {answers:?}"
    );
}
