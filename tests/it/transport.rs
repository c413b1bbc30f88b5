//! The guarded HTTP client and the SSE reader against real HTTP servers.
//!
//! Every server here listens on loopback, inside the test. No test sends a packet
//! anywhere else: the private and metadata addresses below are IP literals, which
//! `HttpClient` refuses (`check_literal`, before a request is built) without
//! opening a socket; `localhost` resolves from /etc/hosts.

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use bytes::Bytes;
use futures::{Stream, StreamExt};
use protocheck::transport::sse::{SseEvent, SseReader, is_event_stream};
use protocheck::transport::{
    AddressPolicy, HttpClient, HttpRequest, Limits, StreamingResponse, TransportError,
};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::JoinHandle;
use url::Url;

/// No test should take long; one that would hang fails here instead.
async fn bounded<F: Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .expect("test step took over 20 s")
}

/// A loopback server that counts the connections it accepted and the requests it
/// answered. Stopped when dropped.
struct TestServer {
    addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    requests: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TestServer {
    async fn start(router: Router) -> Self {
        Self::start_on("127.0.0.1:0", router)
            .await
            .expect("bind 127.0.0.1")
    }

    async fn start_on(bind: &str, router: Router) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(bind).await?;
        let addr = listener.local_addr()?;
        assert!(
            addr.ip().is_loopback(),
            "test servers listen on loopback only"
        );
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(AtomicUsize::new(0));
        let conns = connections.clone();
        let listener = listener.tap_io(move |_| {
            conns.fetch_add(1, Ordering::SeqCst);
        });
        let reqs = requests.clone();
        let router = router.layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                reqs.fetch_add(1, Ordering::SeqCst);
                next.run(req)
            },
        ));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Ok(Self {
            addr,
            connections,
            requests,
            task,
        })
    }

    fn url(&self, path: &str) -> Url {
        Url::parse(&format!("http://{}{path}", self.addr)).expect("server URL")
    }

    fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Asserts that nothing reached the server before now. A control request from
    /// a client allowed to reach it goes through first: connections are accepted
    /// in order, so once it is answered any earlier connection has been counted.
    async fn assert_untouched(&self) {
        let control = client(AddressPolicy::AllowPrivate, limits());
        let resp = bounded(control.send(&HttpRequest::get(self.url("/")))).await;
        assert!(resp.is_ok(), "control request failed: {resp:?}");
        assert_eq!(
            self.connections.load(Ordering::SeqCst),
            1,
            "connections besides the control"
        );
        assert_eq!(
            self.requests.load(Ordering::SeqCst),
            1,
            "requests besides the control"
        );
    }
}

fn hello() -> Router {
    Router::new().route("/", get(|| async { "hello" }))
}

fn limits() -> Limits {
    Limits {
        connect_timeout: Duration::from_secs(2),
        request_timeout: Duration::from_secs(5),
        max_body_bytes: 1024,
        sse_max_frame_bytes: 1024,
        sse_max_duration: Duration::from_secs(5),
        sse_max_events: 100,
        evidence_bytes: 64,
        ..Limits::default()
    }
}

fn client(policy: AddressPolicy, limits: Limits) -> HttpClient {
    HttpClient::new(policy, limits).expect("build client")
}

fn url(s: &str) -> Url {
    Url::parse(s).expect("test URL")
}

fn assert_forbidden(
    result: Result<impl std::fmt::Debug, TransportError>,
    host: &str,
    reason: &str,
) {
    match result {
        Err(TransportError::Forbidden { host: h, reason: r }) => {
            assert_eq!(h, host);
            assert!(r.contains(reason), "reason {r:?} should mention {reason:?}");
        }
        other => panic!("expected Forbidden for {host}, got {other:?}"),
    }
}

/// A body made of `chunks`, sent without a Content-Length (chunked encoding).
fn chunked<S>(content_type: &str, chunks: S) -> Response
where
    S: Stream<Item = Bytes> + Send + 'static,
{
    let body = Body::from_stream(chunks.map(Ok::<_, Infallible>));
    ([(header::CONTENT_TYPE, content_type.to_owned())], body).into_response()
}

fn pause(ms: u64) -> impl Future<Output = ()> {
    tokio::time::sleep(Duration::from_millis(ms))
}

// --- The address guard -------------------------------------------------------

#[tokio::test]
async fn public_only_refuses_loopback_literals_without_connecting() {
    let server = TestServer::start(hello()).await;
    let c = client(AddressPolicy::PublicOnly, limits());
    let port = server.port();
    for (u, host) in [
        (format!("http://127.0.0.1:{port}/"), "127.0.0.1"),
        // The URL parser reads these as 127.0.0.1 too.
        (format!("http://2130706433:{port}/"), "127.0.0.1"),
        (format!("http://0x7f.1:{port}/"), "127.0.0.1"),
        (
            format!("http://[::ffff:127.0.0.1]:{port}/"),
            "::ffff:127.0.0.1",
        ),
    ] {
        assert_forbidden(
            bounded(c.send(&HttpRequest::get(url(&u)))).await,
            host,
            "loopback",
        );
        let streaming = bounded(c.send_streaming(&HttpRequest::get(url(&u)))).await;
        assert_forbidden(streaming.map(|r| r.status), host, "loopback");
    }
    server.assert_untouched().await;
}

#[tokio::test]
async fn public_only_refuses_localhost_in_the_resolver() {
    let server = TestServer::start(hello()).await;
    let c = client(AddressPolicy::PublicOnly, limits());
    let u = url(&format!("http://localhost:{}/", server.port()));
    // A name, not a literal: this refusal comes from the resolver, at connect time.
    assert_forbidden(
        bounded(c.send(&HttpRequest::get(u))).await,
        "localhost",
        "loopback",
    );
    server.assert_untouched().await;
}

#[tokio::test]
async fn public_only_refuses_ipv6_loopback() {
    let c = client(AddressPolicy::PublicOnly, limits());
    // Listen on [::1] when the machine has IPv6 loopback, to show nothing arrives.
    match TestServer::start_on("[::1]:0", hello()).await {
        Ok(server) => {
            let u = url(&format!("http://[::1]:{}/", server.port()));
            assert_forbidden(
                bounded(c.send(&HttpRequest::get(u))).await,
                "::1",
                "loopback",
            );
            server.assert_untouched().await;
        }
        Err(e) => {
            eprintln!("no IPv6 loopback ({e}): checking the refusal only");
            let u = url("http://[::1]:9/");
            assert_forbidden(
                bounded(c.send(&HttpRequest::get(u))).await,
                "::1",
                "loopback",
            );
        }
    }
}

#[tokio::test]
async fn public_only_refuses_private_and_metadata_literals_before_connecting() {
    // IP literals only: the client refuses them before building a request, so no
    // packet is sent to these addresses.
    let c = client(AddressPolicy::PublicOnly, limits());
    for (u, host, reason) in [
        ("http://10.0.0.1/", "10.0.0.1", "private"),
        ("http://192.168.1.1/", "192.168.1.1", "private"),
        ("http://172.16.0.1:8080/", "172.16.0.1", "private"),
        (
            "http://169.254.169.254/latest/meta-data/",
            "169.254.169.254",
            "metadata",
        ),
        ("http://[fd00:ec2::254]/", "fd00:ec2::254", "metadata"),
        ("http://[fe80::1]/", "fe80::1", "link-local"),
        ("http://[::ffff:10.0.0.1]/", "::ffff:10.0.0.1", "private"),
        ("http://0.0.0.0/", "0.0.0.0", "unspecified"),
    ] {
        assert_forbidden(
            bounded(c.send(&HttpRequest::get(url(u)))).await,
            host,
            reason,
        );
        let streaming = bounded(c.send_streaming(&HttpRequest::get(url(u)))).await;
        assert_forbidden(streaming.map(|r| r.status), host, reason);
    }
}

#[tokio::test]
async fn allow_private_reaches_loopback() {
    let server = TestServer::start(hello()).await;
    let c = client(AddressPolicy::AllowPrivate, limits());
    let resp = bounded(c.send(&HttpRequest::get(server.url("/"))))
        .await
        .expect("reachable");
    assert_eq!(resp.status, 200);
    assert_eq!(&resp.body[..], b"hello");
    assert_eq!(server.requests.load(Ordering::SeqCst), 1);
    // Through the resolver as well.
    let u = url(&format!("http://localhost:{}/", server.port()));
    let resp = bounded(c.send(&HttpRequest::get(u)))
        .await
        .expect("reachable by name");
    assert_eq!(resp.status, 200);
}

#[tokio::test]
async fn allow_private_still_refuses_metadata_addresses() {
    let c = client(AddressPolicy::AllowPrivate, limits());
    for (u, host) in [
        (
            "http://169.254.169.254/latest/meta-data/",
            "169.254.169.254",
        ),
        ("http://[::ffff:169.254.169.254]/", "::ffff:169.254.169.254"),
        ("http://169.254.170.2/v2/credentials", "169.254.170.2"),
        ("http://[fd00:ec2::254]/", "fd00:ec2::254"),
    ] {
        assert_forbidden(
            bounded(c.send(&HttpRequest::get(url(u)))).await,
            host,
            "metadata",
        );
    }
}

// --- Redirects, size and time ------------------------------------------------

#[tokio::test]
async fn redirect_is_returned_not_followed() {
    let target = TestServer::start(hello()).await;
    let location = target.url("/").to_string();
    let loc = location.clone();
    let redirector = TestServer::start(Router::new().route(
        "/",
        get(move || async move { (StatusCode::FOUND, [(header::LOCATION, loc)]) }),
    ))
    .await;
    let c = client(AddressPolicy::AllowPrivate, limits());
    let resp = bounded(c.send(&HttpRequest::get(redirector.url("/"))))
        .await
        .expect("302");
    assert_eq!(resp.status, 302);
    assert_eq!(resp.header("location"), Some(location.as_str()));
    target.assert_untouched().await;
}

fn sized_bodies() -> Router {
    let with_length = |n: usize| async move { vec![b'a'; n] };
    let without_length = |n: usize| async move {
        // 100-byte chunks, no Content-Length: the size is known only by reading.
        let chunks = futures::stream::iter((0..n).step_by(100))
            .map(move |start| Bytes::from(vec![b'b'; (n - start).min(100)]));
        chunked("application/octet-stream", chunks)
    };
    Router::new()
        .route("/length/fits", get(move || with_length(1024)))
        .route("/length/over", get(move || with_length(1025)))
        .route("/chunked/fits", get(move || without_length(1024)))
        .route("/chunked/over", get(move || without_length(1025)))
        .route(
            "/chunked/endless",
            get(|| async {
                let chunks = futures::stream::repeat(Bytes::from_static(&[b'c'; 512]));
                chunked("application/octet-stream", chunks)
            }),
        )
}

#[tokio::test]
async fn body_over_the_limit_is_too_large_with_content_length() {
    let server = TestServer::start(sized_bodies()).await;
    let c = client(AddressPolicy::AllowPrivate, limits());
    let ok = bounded(c.send(&HttpRequest::get(server.url("/length/fits"))))
        .await
        .expect("fits");
    assert_eq!(ok.header("content-length"), Some("1024"));
    assert_eq!(ok.body.len(), 1024);
    let err = bounded(c.send(&HttpRequest::get(server.url("/length/over")))).await;
    assert_eq!(
        err.map(|r| r.status),
        Err(TransportError::TooLarge { limit: 1024 })
    );
}

#[tokio::test]
async fn body_over_the_limit_is_too_large_without_content_length() {
    let server = TestServer::start(sized_bodies()).await;
    let c = client(AddressPolicy::AllowPrivate, limits());
    let ok = bounded(c.send(&HttpRequest::get(server.url("/chunked/fits"))))
        .await
        .expect("fits");
    assert_eq!(
        ok.header("content-length"),
        None,
        "the server must not announce a length"
    );
    assert_eq!(ok.body.len(), 1024);
    for path in ["/chunked/over", "/chunked/endless"] {
        let err = bounded(c.send(&HttpRequest::get(server.url(path)))).await;
        assert_eq!(
            err.map(|r| r.status),
            Err(TransportError::TooLarge { limit: 1024 }),
            "{path}"
        );
    }
}

/// Accepts connections on loopback and never writes a byte.
async fn silent_server() -> (SocketAddr, JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    (addr, task)
}

#[tokio::test]
async fn server_that_never_answers_times_out() {
    let (addr, task) = silent_server().await;
    let u = url(&format!("http://{addr}/"));
    let short = Duration::from_millis(300);

    let c = client(
        AddressPolicy::AllowPrivate,
        Limits {
            request_timeout: short,
            ..limits()
        },
    );
    let err = bounded(c.send(&HttpRequest::get(u.clone()))).await;
    assert_eq!(err.map(|r| r.status), Err(TransportError::Timeout(short)));
    let err = bounded(c.send_streaming(&HttpRequest::get(u.clone()))).await;
    assert_eq!(err.map(|r| r.status), Err(TransportError::Timeout(short)));

    // A per-request timeout overrides the client's (5 s here).
    let c = client(AddressPolicy::AllowPrivate, limits());
    let err = bounded(c.send(&HttpRequest::get(u).timeout(short))).await;
    assert_eq!(err.map(|r| r.status), Err(TransportError::Timeout(short)));
    task.abort();
}

#[tokio::test]
async fn slow_drip_body_times_out() {
    // Headers at once, then a byte every 50 ms: each read is quick, the whole is not.
    let server = TestServer::start(Router::new().route(
        "/",
        get(|| async {
            let drip = futures::stream::repeat(Bytes::from_static(b"x"))
                .then(|b| async move {
                    pause(50).await;
                    b
                })
                .take(200);
            chunked("text/plain", drip)
        }),
    ))
    .await;
    let short = Duration::from_millis(300);
    let c = client(
        AddressPolicy::AllowPrivate,
        Limits {
            request_timeout: short,
            ..limits()
        },
    );
    let err = bounded(c.send(&HttpRequest::get(server.url("/")))).await;
    assert_eq!(err.map(|r| r.status), Err(TransportError::Timeout(short)));
}

// --- Evidence ----------------------------------------------------------------

#[tokio::test]
async fn exchange_redacts_credentials_and_truncates_the_body() {
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen_by_server = seen.clone();
    let server = TestServer::start(Router::new().route(
        "/",
        get(move |headers: HeaderMap| async move {
            if let Some(auth) = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
            {
                seen_by_server.lock().expect("lock").push(auth.to_owned());
            }
            "é".repeat(2000)
        }),
    ))
    .await;
    let c = client(
        AddressPolicy::AllowPrivate,
        Limits {
            max_body_bytes: 8192,
            ..limits()
        },
    );

    let req = HttpRequest::get(server.url("/")).header("Authorization", "Bearer s3cret-token");
    let (exchange, result) = bounded(c.exchange(&req)).await;
    let resp = result.expect("response");
    assert_eq!(
        resp.body.len(),
        4000,
        "the probe itself sees the whole body"
    );
    assert!(
        exchange
            .request
            .headers
            .contains(&("authorization".into(), "Bearer ‹redacted›".into()))
    );
    let recorded = exchange.response.as_ref().expect("response record");
    assert!(recorded.truncated);
    assert!(
        recorded.body.len() <= 64,
        "excerpt of {} bytes",
        recorded.body.len()
    );
    // Cut on a character boundary: 32 whole "é".
    assert_eq!(recorded.body, "é".repeat(32));
    let json = serde_json::to_string(&exchange).expect("serialise");
    assert!(!json.contains("s3cret"), "{json}");

    // Credentials in the URL become a Basic header: neither may reach evidence.
    let mut with_userinfo = server.url("/");
    with_userinfo.set_username("alice").expect("user");
    with_userinfo
        .set_password(Some("hunter2"))
        .expect("password");
    let (exchange, result) = bounded(c.exchange(&HttpRequest::get(with_userinfo))).await;
    assert_eq!(result.expect("response").status, 200);
    let json = serde_json::to_string(&exchange).expect("serialise");
    assert!(
        !json.contains("hunter2") && !json.contains("alice"),
        "{json}"
    );

    // Redaction is for evidence only: the target got the real credentials.
    let seen = seen.lock().expect("lock").clone();
    assert_eq!(seen[0], "Bearer s3cret-token");
    assert!(seen[1].starts_with("Basic "), "{seen:?}");

    // A refused request is evidence too: the error, and no response.
    let refusing = client(AddressPolicy::PublicOnly, limits());
    let (exchange, result) = bounded(refusing.exchange(&HttpRequest::get(server.url("/")))).await;
    assert!(matches!(result, Err(TransportError::Forbidden { .. })));
    assert!(exchange.response.is_none());
    assert!(exchange.error.expect("error").contains("refused"));
}

// --- Server-sent events --------------------------------------------------------

async fn open_sse(server: &TestServer, path: &str, limits: &Limits) -> SseReader {
    let c = client(AddressPolicy::AllowPrivate, limits.clone());
    let resp: StreamingResponse = bounded(
        c.send_streaming(&HttpRequest::get(server.url(path)).header("accept", "text/event-stream")),
    )
    .await
    .expect("stream opens");
    assert_eq!(resp.status, 200);
    assert!(is_event_stream(&resp.headers));
    SseReader::new(resp, limits)
}

/// Reads until the end or an error; the events read before either.
async fn read_all(reader: &mut SseReader) -> (Vec<SseEvent>, Result<(), TransportError>) {
    let mut events = Vec::new();
    loop {
        match bounded(reader.next_event()).await {
            Ok(Some(ev)) => events.push(ev),
            Ok(None) => return (events, Ok(())),
            Err(e) => return (events, Err(e)),
        }
    }
}

fn event_stream<S>(chunks: S) -> Response
where
    S: Stream<Item = Bytes> + Send + 'static,
{
    chunked("text/event-stream; charset=utf-8", chunks)
}

fn sse_servers() -> Router {
    Router::new()
        .route(
            "/awkward",
            get(|| async {
                // Chunk boundaries inside a CRLF and inside a field, with pauses so
                // they arrive as separate reads.
                let parts: [&'static [u8]; 6] = [
                    b"data: one\r",
                    b"\n\r\nevent: tick\nid: 2\nda",
                    b"ta: two\n",
                    b"data: more\n\n: a comment\n\n",
                    b"data: caf\xc3",
                    b"\xa9\n\ndata: never dispatched",
                ];
                event_stream(futures::stream::iter(parts).then(|p| async move {
                    pause(10).await;
                    Bytes::from_static(p)
                }))
            }),
        )
        .route(
            "/axum",
            get(|| async {
                let events = futures::stream::iter(0..3).map(|i| {
                    Ok::<_, Infallible>(
                        axum::response::sse::Event::default()
                            .event("n")
                            .id(i.to_string())
                            .data(format!("line {i}\nsecond line")),
                    )
                });
                axum::response::sse::Sse::new(events)
            }),
        )
        .route(
            "/forever/slow",
            get(|| async {
                event_stream(futures::stream::unfold(0u64, |i| async move {
                    pause(20).await;
                    Some((Bytes::from(format!("data: {i}\n\n")), i + 1))
                }))
            }),
        )
        .route(
            "/forever/fast",
            get(|| async {
                event_stream(futures::stream::repeat(Bytes::from_static(
                    b"data: tick\n\n",
                )))
            }),
        )
        .route(
            "/forever/comments",
            get(|| async {
                event_stream(futures::stream::repeat(Bytes::from_static(b": ping\n")))
            }),
        )
        .route(
            "/silent",
            get(|| async { event_stream(futures::stream::pending()) }),
        )
        .route(
            "/giant/line",
            get(|| async {
                let head = futures::stream::once(async { Bytes::from_static(b"data: ") });
                event_stream(head.chain(futures::stream::repeat(Bytes::from_static(&[b'x'; 256]))))
            }),
        )
        .route(
            "/giant/lines",
            get(|| async {
                event_stream(futures::stream::repeat(Bytes::from_static(
                    b"data: a modest line, one of very many in one event\n",
                )))
            }),
        )
}

#[tokio::test]
async fn sse_events_arrive_in_order() {
    let server = TestServer::start(sse_servers()).await;
    let mut reader = open_sse(&server, "/awkward", &limits()).await;
    let (events, end) = read_all(&mut reader).await;
    assert_eq!(end, Ok(()));
    let ev = |event: Option<&str>, data: &str, id: Option<&str>| SseEvent {
        event: event.map(Into::into),
        data: data.into(),
        id: id.map(Into::into),
    };
    assert_eq!(
        events,
        [
            ev(None, "one", None),
            ev(Some("tick"), "two\nmore", Some("2")),
            ev(None, "café", None),
        ]
    );
    assert_eq!(reader.last_event_id(), "2");
}

#[tokio::test]
async fn sse_from_axum_encoder() {
    let server = TestServer::start(sse_servers()).await;
    let mut reader = open_sse(&server, "/axum", &limits()).await;
    let (events, end) = read_all(&mut reader).await;
    assert_eq!(end, Ok(()));
    let got: Vec<_> = events
        .iter()
        .map(|e| (e.event.as_deref(), e.id.as_deref(), e.data.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (Some("n"), Some("0"), "line 0\nsecond line"),
            (Some("n"), Some("1"), "line 1\nsecond line"),
            (Some("n"), Some("2"), "line 2\nsecond line"),
        ]
    );
}

#[tokio::test]
async fn endless_sse_is_cut_by_duration() {
    let server = TestServer::start(sse_servers()).await;
    let limits = Limits {
        sse_max_duration: Duration::from_millis(300),
        ..limits()
    };
    for path in ["/forever/slow", "/forever/comments", "/silent"] {
        let mut reader = open_sse(&server, path, &limits).await;
        let (events, end) = read_all(&mut reader).await;
        assert_eq!(
            end,
            Err(TransportError::Timeout(Duration::from_millis(300))),
            "{path}"
        );
        if path == "/forever/slow" {
            assert!(!events.is_empty(), "some events arrive before the cut");
            assert_eq!(events[0].data, "0");
        } else {
            assert!(events.is_empty(), "{path}");
        }
    }
}

#[tokio::test]
async fn endless_sse_is_cut_by_event_count() {
    let server = TestServer::start(sse_servers()).await;
    let limits = Limits {
        sse_max_events: 5,
        ..limits()
    };
    let mut reader = open_sse(&server, "/forever/fast", &limits).await;
    let (events, end) = read_all(&mut reader).await;
    assert_eq!(events.len(), 5);
    match end {
        Err(TransportError::Protocol(msg)) => assert!(msg.contains("5-event limit"), "{msg}"),
        other => panic!("expected the event limit, got {other:?}"),
    }
}

#[tokio::test]
async fn giant_sse_event_is_too_large() {
    let server = TestServer::start(sse_servers()).await;
    for path in ["/giant/line", "/giant/lines"] {
        let mut reader = open_sse(&server, path, &limits()).await;
        let (events, end) = read_all(&mut reader).await;
        assert!(events.is_empty(), "{path}");
        assert_eq!(end, Err(TransportError::TooLarge { limit: 1024 }), "{path}");
    }
}

/// A server behind a rate limiter: the first `refused` requests get `status`
/// with `Retry-After: retry` (when given), every later one "hello".
fn limited(refused: usize, status: StatusCode, retry: Option<&'static str>) -> Router {
    let seen = Arc::new(AtomicUsize::new(0));
    Router::new().route(
        "/",
        get(move || {
            let seen = seen.clone();
            async move {
                if seen.fetch_add(1, Ordering::SeqCst) >= refused {
                    return "hello".into_response();
                }
                let mut headers = HeaderMap::new();
                if let Some(retry) = retry {
                    headers.insert(header::RETRY_AFTER, retry.parse().expect("header value"));
                }
                (status, headers, r#"{"error":"rate_limited"}"#).into_response()
            }
        }),
    )
}

/// A run's 429 (or 503 with `Retry-After`, seconds or an HTTP-date) is the
/// limiter's: waited out and the request sent again, on the plain and the
/// streaming path, and counted in the run's figures.
#[tokio::test]
async fn a_rate_limit_is_waited_out_and_the_request_sent_again() {
    for (status, retry) in [
        (StatusCode::TOO_MANY_REQUESTS, Some("0")),
        (
            StatusCode::TOO_MANY_REQUESTS,
            Some("Sun, 06 Nov 1994 08:49:37 GMT"),
        ),
        (StatusCode::SERVICE_UNAVAILABLE, Some("0")),
    ] {
        let server = TestServer::start(limited(2, status, retry)).await;
        let run = client(AddressPolicy::AllowPrivate, limits())
            .for_run(std::time::Instant::now() + Duration::from_secs(60));
        let resp = bounded(run.send(&HttpRequest::get(server.url("/"))))
            .await
            .expect("answered");
        assert_eq!(
            (resp.status, &resp.body[..]),
            (200, &b"hello"[..]),
            "{status} {retry:?}"
        );
        assert_eq!(server.requests.load(Ordering::SeqCst), 3);
        assert_eq!(run.throttle().figures().0, 2);

        let server = TestServer::start(limited(1, status, retry)).await;
        let streamed = bounded(run.send_streaming(&HttpRequest::get(server.url("/"))))
            .await
            .expect("answered");
        assert_eq!(streamed.status, 200);
        assert_eq!(server.requests.load(Ordering::SeqCst), 2);
    }
}

/// Outside a run nothing is waited for, a 503 without `Retry-After` is an
/// outage (the server's answer), and a wait that does not fit the run fails
/// the request as rate limited, after one request.
#[tokio::test]
async fn a_rate_limit_past_the_deadline_is_no_answer_and_outside_a_run_nothing_waits() {
    let server = TestServer::start(limited(5, StatusCode::TOO_MANY_REQUESTS, Some("0"))).await;
    let plain = client(AddressPolicy::AllowPrivate, limits());
    let resp = bounded(plain.send(&HttpRequest::get(server.url("/"))))
        .await
        .expect("answered");
    assert_eq!(resp.status, 429);
    assert_eq!(server.requests.load(Ordering::SeqCst), 1);

    let run = plain.for_run(std::time::Instant::now() + Duration::from_secs(60));
    let server = TestServer::start(limited(5, StatusCode::SERVICE_UNAVAILABLE, None)).await;
    let resp = bounded(run.send(&HttpRequest::get(server.url("/"))))
        .await
        .expect("answered");
    assert_eq!(resp.status, 503);
    assert_eq!(server.requests.load(Ordering::SeqCst), 1);

    let server = TestServer::start(limited(5, StatusCode::TOO_MANY_REQUESTS, Some("3600"))).await;
    let err = bounded(run.send(&HttpRequest::get(server.url("/"))))
        .await
        .expect_err("a wait of an hour is not taken");
    assert!(
        matches!(
            &err,
            TransportError::RateLimited {
                status: 429,
                wait_s: 3600,
                resend_after: None,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("rate limited: the target answered HTTP 429 with Retry-After 3600 s"),
        "{err}"
    );
    assert_eq!(server.requests.load(Ordering::SeqCst), 1);
}
