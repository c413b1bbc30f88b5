//! protocheck's MCP client against crafted answers from a loopback server:
//! what it reads from JSON and SSE responses, and the bounds it keeps.

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use futures::StreamExt;
use protocheck::suite::mcp::client::{McpClient, Probe, Watches};
use protocheck::transport::{AddressPolicy, HttpClient, Limits};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

fn sse(frames: Vec<String>, stay_open: bool) -> Response {
    let head = futures::stream::iter(
        frames
            .into_iter()
            .map(|f| Ok::<_, Infallible>(Bytes::from(f))),
    );
    let body = if stay_open {
        // Keep-alive comments for a long time after the last frame.
        let tail = futures::stream::unfold((), |()| async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            Some((Ok::<_, Infallible>(Bytes::from_static(b":\n\n")), ()))
        });
        Body::from_stream(head.chain(tail))
    } else {
        Body::from_stream(head)
    };
    let mut resp = Response::new(body);
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    resp
}

fn frame(v: Value) -> String {
    format!("data: {v}\n\n")
}

/// Answers by path; every answer is for request id 1.
fn app() -> Router {
    Router::new()
        .route("/json", post(|| async {
            ([(header::CONTENT_TYPE, "application/json")], json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}}).to_string())
        }))
        .route("/plain", post(|| async {
            ([(header::CONTENT_TYPE, "text/plain")], json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}}).to_string())
        }))
        .route("/sse", post(|| async {
            sse(vec![
                frame(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "t", "progress": 1}})),
                frame(json!({"jsonrpc": "2.0", "id": "s1", "method": "roots/list"})),
                frame(json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}})),
            ], false)
        }))
        .route("/open", post(|| async {
            sse(vec![frame(json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}}))], true)
        }))
        .route("/huge", post(|| async { (StatusCode::OK, vec![b' '; 2 * 1024 * 1024]).into_response() }))
        .route("/slow", post(|| async {
            let now = IN_FLIGHT.fetch_add(1, Ordering::SeqCst) + 1;
            MAX_IN_FLIGHT.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(100)).await;
            IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
            ([(header::CONTENT_TYPE, "application/json")], json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}}).to_string())
        }))
}

/// A legacy HTTP+SSE stream: its `endpoint` event, then kept open.
fn watched() -> Router {
    Router::new().route(
        "/watched",
        get(|| async {
            WATCHED.fetch_add(1, Ordering::SeqCst);
            sse(
                vec!["event: endpoint\ndata: /messages\n\n".to_owned()],
                true,
            )
        }),
    )
}

static WATCHED: AtomicUsize = AtomicUsize::new(0);
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static MAX_IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

async fn client(path: &str) -> (McpClient, tokio::task::JoinHandle<()>) {
    client_with(path, 4).await
}

async fn client_with(path: &str, limit: usize) -> (McpClient, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app().merge(watched())).await;
    });
    let http = HttpClient::new(AddressPolicy::AllowPrivate, Limits::default()).expect("client");
    let url = format!("http://{addr}{path}").parse().expect("url");
    (
        McpClient::new(http, url, Duration::from_secs(5), limit),
        task,
    )
}

#[tokio::test]
async fn json_answers_are_read_and_logged() {
    let (c, task) = client("/json").await;
    let probe = c.request("server/discover", json!({}));
    assert_eq!(probe.id(), Some(&json!(1)));
    let reply = c.send(&probe).await;
    assert!(reply.ok() && !reply.sse, "{}", reply.describe());
    assert_eq!(reply.content_type.as_deref(), Some("application/json"));
    let seen = c.seen().await;
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, "server/discover");
    task.abort();
}

#[tokio::test]
async fn a_wrong_media_type_is_recorded_but_the_body_still_read() {
    let (c, task) = client("/plain").await;
    let reply = c.send(&c.request("tools/list", json!({}))).await;
    assert_eq!(reply.content_type.as_deref(), Some("text/plain"));
    assert!(reply.result().is_some());
    task.abort();
}

#[tokio::test]
async fn sse_streams_are_split_into_notifications_requests_and_the_answer() {
    let (c, task) = client("/sse").await;
    let reply = c.send(&c.request("tools/call", json!({"name": "x"}))).await;
    assert!(reply.sse);
    assert_eq!(reply.notifications.len(), 1);
    assert_eq!(reply.server_requests.len(), 1);
    assert!(reply.result().is_some());
    assert_eq!(reply.terminated, Some(true));
    let evidence = reply.exchange.response.expect("response").body;
    assert!(evidence.contains("roots/list"), "{evidence}");
    task.abort();
}

#[tokio::test]
async fn a_stream_left_open_is_noted_once_and_not_waited_on_again() {
    let (c, task) = client("/open").await;
    let started = Instant::now();
    let first = c.send(&c.request("tools/call", json!({"name": "x"}))).await;
    assert!(first.result().is_some());
    assert_eq!(first.terminated, Some(false));
    // The crafted server always answers id 1.
    let second = c
        .send(&Probe::request(1, "tools/call", json!({"name": "x"})))
        .await;
    assert!(second.result().is_some());
    assert_eq!(second.terminated, None, "not judged again");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    task.abort();
}

#[tokio::test]
async fn oversized_bodies_are_cut_off() {
    let (c, task) = client("/huge").await;
    let reply = c.send(&c.request("tools/list", json!({}))).await;
    assert!(matches!(
        reply.transport_error,
        Some(protocheck::transport::TransportError::TooLarge { .. })
    ));
    assert!(reply.message.is_none());
    task.abort();
}

#[tokio::test]
async fn requests_in_flight_stay_within_the_limit() {
    let (c, task) = client_with("/slow", 2).await;
    // Clones (and new connections) share the limit.
    let fresh = c.fresh_connection().expect("fresh");
    let sends = (0..8).map(|i| {
        let c = if i % 2 == 0 { c.clone() } else { fresh.clone() };
        async move { c.send(&Probe::request(1, "tools/list", json!({}))).await }
    });
    let replies = futures::future::join_all(sends).await;
    assert!(replies.iter().all(|r| r.ok()));
    assert_eq!(MAX_IN_FLIGHT.load(Ordering::SeqCst), 2);
    task.abort();
}

#[tokio::test]
async fn answers_to_invalid_probes_never_reach_the_run_wide_rules() {
    use protocheck::suite::mcp::client::{Intent, Invalidity};
    // A server answering everything in text/plain: only the answer to the
    // valid request may be judged by "every response" rules.
    let (c, task) = client("/plain").await;
    let valid = c.request("tools/list", json!({}));
    assert_eq!(valid.intent, Intent::Valid);
    let bent = [
        (
            c.request("server/discover", json!({}))
                .with_header("origin", "https://x.invalid"),
            Invalidity::Origin,
        ),
        (
            c.request("server/discover", json!({}))
                .without_header("Mcp-Method"),
            Invalidity::MissingHeader,
        ),
        (
            c.request("server/discover", json!({}))
                .with_header("mcp-method", "tools/list"),
            Invalidity::HeaderMismatch,
        ),
        (
            c.request("protocheck/unknown", json!({})),
            Invalidity::UnknownMethod,
        ),
        (
            c.request("server/discover", json!({}))
                .with_version("1900-01-01"),
            Invalidity::UnsupportedVersion,
        ),
        (
            c.request("server/discover", json!({}))
                .without_meta("io.modelcontextprotocol/protocolVersion"),
            Invalidity::MissingMeta,
        ),
        (
            c.request("server/discover", json!({}))
                .with_body_method("tools/list"),
            Invalidity::HeaderMismatch,
        ),
    ];
    for (probe, why) in &bent {
        assert_eq!(probe.intent, Intent::Invalid(*why), "{:?}", probe.headers);
        let reply = c.send(probe).await;
        // The rule that sent it still gets the whole answer.
        assert_eq!(reply.intent, Intent::Invalid(*why));
        assert_eq!(reply.status, Some(200));
    }
    // Conforming bends keep a probe valid: the same version, mirrored headers.
    let same = c
        .request("tools/call", json!({"name": "a", "arguments": {}}))
        .with_version("2026-07-28")
        .with_header("mcp-name", "a")
        .with_capabilities(json!({"elicitation": {}}));
    assert_eq!(same.intent, Intent::Valid);
    let _ = c.send(&valid).await;
    let seen = c.seen().await;
    assert_eq!(seen.len(), 1, "only the valid probe's answer is logged");
    assert_eq!(seen[0].method, "tools/list");
    task.abort();
}

#[tokio::test]
async fn a_watch_is_sent_once_and_shared_by_every_check_that_awaits_it() {
    let (c, task) = client("/json").await;
    let url = c.url().join("/watched").expect("url");
    let watches = Watches::default();
    let first = watches.start(&c, axum::http::Method::GET, &url);
    let again = watches.start(&c, axum::http::Method::GET, &url);
    let (a, b) = tokio::join!(first, again);
    assert_eq!(WATCHED.load(Ordering::SeqCst), 1, "one GET for both");
    for reply in [&a, &b] {
        assert_eq!(reply.status, Some(200));
        assert!(reply.sse);
        // Read as far as the first event, though the stream stays open.
        let event = reply.first_event.as_ref().expect("the first event");
        assert_eq!(event.event.as_deref(), Some("endpoint"));
        assert_eq!(event.data, "/messages");
    }
    // Another method on the same URL is another watch.
    let delete = watches.start(&c, axum::http::Method::DELETE, &url).await;
    assert_eq!(delete.status, Some(405));
    assert_eq!(WATCHED.load(Ordering::SeqCst), 1);
    task.abort();
}
