//! Streamable HTTP for the 2025-11-25 reference server
//! (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports):
//! the checks before a message is handled (Origin, session, the
//! `MCP-Protocol-Version` header), sessions minted by `initialize` and ended
//! by DELETE, answers as JSON or SSE, and the GET stream with its replay.

use super::engine::{self, Call, Incoming, Noted, Reply, Session};
use super::streams::Event;
use super::{Mcp25ReferenceConfig, SUPPORTED_VERSIONS, faults};
use crate::reference::mcp::origin_allowed;
use crate::suite::mcp::wire::{
    H_ACCEL_BUFFERING, H_LAST_EVENT_ID, H_PROTOCOL_VERSION, H_SESSION_ID,
};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::StreamExt;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

/// Largest request body read.
const MAX_BODY: usize = 1024 * 1024;
/// Most sessions kept; past it the oldest-looking half is forgotten.
const MAX_SESSIONS: usize = 4096;
/// Longest life of one SSE connection (a checker's GET stream ends by itself).
const STREAM_LIFETIME: Duration = Duration::from_secs(300);
/// The revision a request without `MCP-Protocol-Version` is taken to speak
/// (streamable-http, "Protocol Version Header").
const ASSUMED_VERSION: &str = "2025-03-26";
/// How long MCP25-LIF-006's fault tries to send its early request on a GET stream.
const EARLY_REQUEST_WINDOW: Duration = Duration::from_secs(1);
const EARLY_REQUEST_STEP: Duration = Duration::from_millis(50);

struct Server {
    config: Mcp25ReferenceConfig,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// Ids of sessions ended by DELETE (MCP25-HTP-016's fault tells them
    /// from ids never issued).
    ended: Mutex<HashSet<String>>,
    /// The one session of a server without sessions.
    shared: Arc<Session>,
}

type Shared = Arc<Server>;

/// The router serving `/mcp`, for tests that serve it themselves.
pub fn mcp25_router(config: Mcp25ReferenceConfig) -> Router {
    let latency = config.latency;
    let state = Arc::new(Server {
        config,
        sessions: Mutex::new(HashMap::new()),
        ended: Mutex::new(HashSet::new()),
        shared: Arc::new(Session::stateless()),
    });
    let auth = Arc::new(state.config.clone());
    Router::new()
        .route(
            "/mcp",
            get(handle_get).post(handle_post).delete(handle_delete),
        )
        .route_layer(axum::middleware::from_fn_with_state(
            auth.clone(),
            super::auth::guard,
        ))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn(
            move |req: Request, next: axum::middleware::Next| async move {
                if !latency.is_zero() {
                    tokio::time::sleep(latency).await;
                }
                next.run(req).await
            },
        ))
        .with_state(state)
        .merge(super::auth::discovery(auth))
}

/// Serves the reference server at `/mcp` on `listener` until the future is dropped.
pub async fn serve_mcp25_reference(
    listener: tokio::net::TcpListener,
    config: Mcp25ReferenceConfig,
) -> std::io::Result<()> {
    axum::serve(listener, mcp25_router(config)).await
}

fn status_error(state: &Server, status: StatusCode, code: i64, message: &str) -> Response {
    json_response(
        state,
        status,
        &engine::error(&Value::Null, code, message, None),
    )
}

fn json_response(state: &Server, status: StatusCode, reply: &Reply) -> Response {
    let content_type = if state.config.breaks(faults::CONTENT_TYPE) {
        "text/plain"
    } else {
        "application/json"
    };
    (
        status,
        [(header::CONTENT_TYPE, content_type)],
        engine::encode(&state.config, &reply.0),
    )
        .into_response()
}

/// A check's refusal: the response to send instead (boxed: it is large).
type Refusal = Box<Response>;

fn refuse(state: &Server, status: StatusCode, code: i64, message: &str) -> Refusal {
    Box::new(status_error(state, status, code, message))
}

/// The checks every method of `/mcp` starts with.
fn check_origin(state: &Server, headers: &HeaderMap) -> Result<(), Refusal> {
    if state.config.breaks(faults::ORIGIN)
        || origin_allowed(headers, state.config.origin_prefix_match)
    {
        return Ok(());
    }
    Err(refuse(
        state,
        StatusCode::FORBIDDEN,
        -32600,
        "Forbidden: Origin not allowed",
    ))
}

/// An `MCP-Protocol-Version` the server does not support is refused; none
/// at all means 2025-03-26, which it supports.
fn check_version(state: &Server, headers: &HeaderMap) -> Result<(), Refusal> {
    let Some(value) = headers.get(H_PROTOCOL_VERSION) else {
        debug_assert!(SUPPORTED_VERSIONS.contains(&ASSUMED_VERSION));
        return Ok(());
    };
    let known = value
        .to_str()
        .is_ok_and(|v| SUPPORTED_VERSIONS.contains(&v.trim()));
    if known || state.config.breaks(faults::VERSION_HEADER) {
        return Ok(());
    }
    Err(refuse(
        state,
        StatusCode::BAD_REQUEST,
        -32600,
        &format!(
            "Bad Request: unsupported MCP-Protocol-Version; supported: {}",
            SUPPORTED_VERSIONS.join(", ")
        ),
    ))
}

/// The session a request belongs to: 400 without `Mcp-Session-Id`, 404
/// for one the server does not know (or has ended).
fn session_of(state: &Server, headers: &HeaderMap) -> Result<Arc<Session>, Refusal> {
    if !state.config.sessions {
        return Ok(state.shared.clone());
    }
    let Some(sid) = headers.get(H_SESSION_ID) else {
        if state.config.breaks(faults::SESSION_REQUIRED) {
            // A missing id is taken for an unknown one.
            return Err(refuse(
                state,
                StatusCode::NOT_FOUND,
                -32001,
                "Session not found",
            ));
        }
        return Err(refuse(
            state,
            StatusCode::BAD_REQUEST,
            -32600,
            "Bad Request: Mcp-Session-Id header is required",
        ));
    };
    let sid = sid.to_str().unwrap_or_default();
    let found = state.sessions.lock().ok().and_then(|s| s.get(sid).cloned());
    let was_ended = || state.ended.lock().is_ok_and(|e| e.contains(sid));
    match found {
        Some(session) => Ok(session),
        // An id never issued is served, as if sessions were optional.
        None if state.config.breaks(faults::SESSION_UNKNOWN) && !was_ended() => {
            Ok(state.shared.clone())
        }
        None => Err(refuse(
            state,
            StatusCode::NOT_FOUND,
            -32001,
            "Session not found",
        )),
    }
}

fn new_session(state: &Server) -> (String, Arc<Session>) {
    // 128 random bits in hex: visible ASCII, unguessable.
    let mut sid = format!("{:032x}", rand::random::<u128>());
    if state.config.breaks(faults::SESSION_ID_REUSED) {
        sid = "protocheck-reference-session".to_owned();
    }
    if state.config.breaks(faults::SESSION_ID_ASCII) {
        sid = format!("session {sid}");
    }
    // With one id for every client (MCP25-HTP-013's fault), every client
    // shares one session that tolerates another initialize.
    let session = if state.config.breaks(faults::SESSION_ID_REUSED) {
        state.shared.clone()
    } else {
        Arc::new(Session::default())
    };
    if let Ok(mut sessions) = state.sessions.lock() {
        if sessions.len() >= MAX_SESSIONS {
            sessions.clear();
        }
        sessions.insert(sid.clone(), session.clone());
    }
    (sid, session)
}

async fn handle_post(State(state): State<Shared>, req: Request) -> Response {
    let headers = req.headers().clone();
    if let Err(refused) = check_origin(&state, &headers) {
        return *refused;
    }
    let Ok(body) = axum::body::to_bytes(req.into_body(), MAX_BODY).await else {
        return status_error(
            &state,
            StatusCode::PAYLOAD_TOO_LARGE,
            -32600,
            "request body too large",
        );
    };
    if body.first() == Some(&b'[')
        && let Ok(session) = session_of(&state, &headers)
        && let Some(answers) = engine::batch(&state.config, &session, &body).await
    {
        return json_response(&state, StatusCode::OK, &Reply(answers));
    }
    let incoming = match engine::classify(&state.config, &body) {
        Ok(incoming) => incoming,
        Err(reply) => {
            // Framing errors are 400 (a fault may make one a 200 result).
            let status = if reply.code().is_some() {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::OK
            };
            return json_response(&state, status, &reply);
        }
    };
    let (id, method, params) = match incoming {
        Incoming::Request { id, method, params } => (id, method, params),
        Incoming::Notification { method, params } => {
            let session =
                match check_version(&state, &headers).and_then(|()| session_of(&state, &headers)) {
                    Ok(session) => session,
                    Err(refused) => return *refused,
                };
            return match engine::notification(&state.config, &session, &method, &params) {
                Noted::Quiet => accepted(&state),
                Noted::Answer(reply) => json_response(&state, StatusCode::OK, &reply),
                Noted::End => {
                    end_session(&state, &headers, &session);
                    accepted(&state)
                }
            };
        }
        Incoming::Response => {
            if let Err(refused) = check_version(&state, &headers)
                .and_then(|()| session_of(&state, &headers).map(drop))
            {
                return *refused;
            }
            if state.config.breaks(faults::RESPONSE_200) {
                return json_response(&state, StatusCode::OK, &Reply(json!({"received": true})));
            }
            // Not `accepted`: MCP25-HTP-002's fault is about notifications.
            return StatusCode::ACCEPTED.into_response();
        }
    };
    let fresh = method == "initialize" && !headers.contains_key(H_SESSION_ID);
    let (minted, session) = if fresh && state.config.sessions {
        let (sid, session) = new_session(&state);
        (Some(sid), session)
    } else if fresh {
        (None, state.shared.clone())
    } else {
        match check_version(&state, &headers).and_then(|()| session_of(&state, &headers)) {
            Ok(session) => (None, session),
            Err(refused) => return *refused,
        }
    };
    let progress = params.pointer("/_meta/progressToken").is_some();
    let slow = method == "tools/call" && params.get("name") == Some(&json!("slow"));
    let stream = state.config.sse_responses || progress || slow;
    if method != "initialize" && (stream || engine::needs_stream(&state.config, &method)) {
        return streamed(state, session, id, method, params);
    }
    let (sink, mut side) = unbounded_channel();
    let cancel = session.begin(&id);
    let call = Call {
        config: &state.config,
        session: &session,
        id: &id,
        params: &params,
        cancel,
        sink: &sink,
    };
    let reply = engine::request(call, &method).await;
    session.finish(&id);
    drop(sink);
    // Messages the answer could not carry go to the GET stream, if open.
    while let Ok(message) = side.try_recv() {
        if let Ok(mut streams) = session.streams.lock() {
            streams.publish_standalone(message);
        }
    }
    let Some(reply) = reply else {
        return StatusCode::ACCEPTED.into_response();
    };
    let failed = reply.code().is_some();
    if let Some(sid) = &minted
        && failed
        && let Ok(mut sessions) = state.sessions.lock()
    {
        // An initialize that failed opens no session.
        sessions.remove(sid);
    }
    if method == "initialize"
        && !failed
        && let Some(early) = engine::early_request(&state.config)
    {
        send_early(session.clone(), early);
    }
    let mut resp = if state.config.sse_responses {
        let prime = !state.config.breaks(faults::PRIMING_EVENT);
        let Ok((number, rx)) = session.streams.lock().map(|mut s| s.open(false, prime)) else {
            return status_error(
                &state,
                StatusCode::INTERNAL_SERVER_ERROR,
                -32603,
                "Internal error",
            );
        };
        if let Ok(mut streams) = session.streams.lock() {
            streams.publish(number, reply.0);
            streams.close(number);
        }
        sse(&state, rx, &session, false)
    } else {
        json_response(&state, StatusCode::OK, &reply)
    };
    if let Some(sid) = minted.filter(|_| !failed)
        && let Ok(value) = HeaderValue::from_str(&sid)
    {
        resp.headers_mut().insert(H_SESSION_ID, value);
    }
    resp
}

/// 202 with no body, for a notification or a response.
fn accepted(state: &Server) -> Response {
    if state.config.breaks(faults::NOTIFICATION_202) {
        return StatusCode::OK.into_response();
    }
    StatusCode::ACCEPTED.into_response()
}

/// MCP25-LIF-006's fault: a request on the session's GET stream, as soon as
/// one is open within a second of the initialize answer.
fn send_early(session: Arc<Session>, early: Value) {
    tokio::spawn(async move {
        let deadline = tokio::time::Instant::now() + EARLY_REQUEST_WINDOW;
        while tokio::time::Instant::now() < deadline {
            let sent = session
                .streams
                .lock()
                .is_ok_and(|mut s| s.publish_standalone(early.clone()));
            if sent {
                return;
            }
            tokio::time::sleep(EARLY_REQUEST_STEP).await;
        }
    });
}

/// Forgets a session and stops what it runs.
fn end_session(state: &Server, headers: &HeaderMap, session: &Session) {
    let Some(sid) = headers.get(H_SESSION_ID).and_then(|v| v.to_str().ok()) else {
        return;
    };
    let removed = state.sessions.lock().ok().and_then(|mut s| s.remove(sid));
    if removed.is_some() {
        if let Ok(mut ended) = state.ended.lock() {
            if ended.len() >= MAX_SESSIONS {
                ended.clear();
            }
            ended.insert(sid.to_owned());
        }
        session.ended.cancel();
    }
}

/// Answers a request over an SSE stream of its own: its notifications, then
/// its answer (none if it is cancelled), then the stream ends.
fn streamed(
    state: Shared,
    session: Arc<Session>,
    id: Value,
    method: String,
    params: Value,
) -> Response {
    let prime = !state.config.breaks(faults::PRIMING_EVENT);
    let Ok((number, rx)) = session.streams.lock().map(|mut s| s.open(false, prime)) else {
        return status_error(
            &state,
            StatusCode::INTERNAL_SERVER_ERROR,
            -32603,
            "Internal error",
        );
    };
    let cut = state.config.breaks(faults::NO_RETRY);
    let resp = sse(&state, rx, &session, cut);
    let cancel = session.begin(&id);
    let task_session = session.clone();
    tokio::spawn(async move {
        let session = task_session;
        let (sink, mut side) = unbounded_channel::<Value>();
        let forward = async {
            while let Some(message) = side.recv().await {
                if let Ok(mut streams) = session.streams.lock() {
                    streams.publish(number, message);
                }
            }
        };
        let answer = async {
            let call = Call {
                config: &state.config,
                session: &session,
                id: &id,
                params: &params,
                cancel,
                sink: &sink,
            };
            let reply = engine::request(call, &method).await;
            session.finish(&id);
            // Through the sink, so that it follows what the call sent.
            if let Some(reply) = reply.filter(|_| !state.config.breaks(faults::SSE_NO_RESPONSE)) {
                let _ = sink.send(reply.0);
            }
            drop(sink);
        };
        // Waits for what a tool still sends after its answer (a fault's).
        tokio::join!(answer, forward);
        if !state.config.breaks(faults::SSE_NOT_ENDED)
            && let Ok(mut streams) = session.streams.lock()
        {
            streams.close(number);
        }
    });
    resp
}

fn sse_frame(config: &Mcp25ReferenceConfig, (id, message): Event) -> Bytes {
    let id = match id.split_once('-') {
        // Without the stream's number, ids repeat across streams.
        Some((_, seq)) if config.breaks(faults::EVENT_IDS) => seq.to_owned(),
        _ => id,
    };
    let mut frame = format!("id: {id}\n").into_bytes();
    match message {
        Some(m) => {
            frame.extend_from_slice(b"event: message\ndata: ");
            frame.extend_from_slice(&engine::encode(config, &m));
            frame.extend_from_slice(b"\n\n");
        }
        None => frame.extend_from_slice(b"data: \n\n"),
    }
    Bytes::from(frame)
}

/// An SSE response carrying `rx`'s events until the stream ends, the
/// session ends or [`STREAM_LIFETIME`] passes; with `cut` (MCP25-HTP-007's
/// fault) the connection closes after the first event, without `retry`.
fn sse(state: &Server, rx: UnboundedReceiver<Event>, session: &Session, cut: bool) -> Response {
    let ended = session.ended.clone().cancelled_owned();
    let deadline = tokio::time::sleep(STREAM_LIFETIME);
    let config = state.config.clone();
    let events = tokio_stream::wrappers::UnboundedReceiverStream::new(rx);
    let events = if cut {
        events.take(1).boxed()
    } else {
        events.boxed()
    };
    let stream = events
        .take_until(async move {
            tokio::select! {
                _ = ended => {}
                _ = deadline => {}
            }
        })
        .enumerate()
        .map(move |(n, event)| {
            let mut frame = sse_frame(&config, event).to_vec();
            if n == 0 && config.breaks(faults::INVALID_UTF8) {
                // MCP25-RPC-011's fault: a comment holding a lone Latin-1
                // byte (0xE9, "é"), which UTF-8 writes in two.
                frame.extend_from_slice(b": caf\xe9\n\n");
            }
            Ok::<_, Infallible>(Bytes::from(frame))
        });
    let mut resp = Response::new(Body::from_stream(stream));
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(H_ACCEL_BUFFERING, HeaderValue::from_static("no"));
    resp
}

/// The GET stream: server-initiated messages (a `notifications/message`
/// shortly after it opens), or, with `Last-Event-ID`, the resumption of a
/// stream the client lost.
async fn handle_get(State(state): State<Shared>, headers: HeaderMap) -> Response {
    let session = match check_origin(&state, &headers)
        .and_then(|()| check_version(&state, &headers))
        .and_then(|()| session_of(&state, &headers))
    {
        Ok(session) => session,
        Err(refused) => return *refused,
    };
    if state.config.breaks(faults::GET_NOT_SSE) {
        return json_response(&state, StatusCode::OK, &Reply(json!({})));
    }
    // Only an `Accept` that rules the stream out is refused; none at all
    // is served (the client's MUST is not the server's to enforce).
    let mut accepts = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .peekable();
    let accepts_sse = accepts.peek().is_none()
        || accepts.any(|v| v.contains("text/event-stream") || v.contains("*/*"));
    if !accepts_sse {
        return status_error(
            &state,
            StatusCode::NOT_ACCEPTABLE,
            -32600,
            "Not Acceptable: the GET stream is text/event-stream",
        );
    }
    let last = headers.get(H_LAST_EVENT_ID).and_then(|v| v.to_str().ok());
    if let Some(last) = last {
        let mixed = state.config.breaks(faults::REPLAY_OTHER_STREAM);
        let resumed = session
            .streams
            .lock()
            .ok()
            .and_then(|mut s| s.resume(last, mixed));
        if let Some(rx) = resumed {
            return sse(&state, rx, &session, false);
        }
    }
    let prime = !state.config.breaks(faults::PRIMING_EVENT);
    let Ok((number, rx)) = session.streams.lock().map(|mut s| s.open(true, prime)) else {
        return status_error(
            &state,
            StatusCode::INTERNAL_SERVER_ERROR,
            -32603,
            "Internal error",
        );
    };
    let greeting = state.config.stream_greeting;
    let breaks_get_response = state.config.breaks(faults::GET_RESPONSE);
    let greeted = session.clone();
    tokio::spawn(async move {
        tokio::time::sleep(greeting).await;
        let message = if breaks_get_response {
            json!({"jsonrpc": "2.0", "id": 0, "result": {}})
        } else {
            json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "logger": "stream", "data": "the GET stream is open"}})
        };
        if let Ok(mut streams) = greeted.streams.lock() {
            streams.publish(number, message);
        }
    });
    sse(&state, rx, &session, false)
}

/// DELETE ends the session: later requests naming it get 404.
async fn handle_delete(State(state): State<Shared>, headers: HeaderMap) -> Response {
    if let Err(refused) =
        check_origin(&state, &headers).and_then(|()| check_version(&state, &headers))
    {
        return *refused;
    }
    // With one session id for every client (MCP25-HTP-013's fault), one
    // client's DELETE would end every other's: termination is not offered.
    if !state.config.sessions || state.config.breaks(faults::SESSION_ID_REUSED) {
        let mut resp = StatusCode::METHOD_NOT_ALLOWED.into_response();
        resp.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, POST"));
        return resp;
    }
    let session = match session_of(&state, &headers) {
        Ok(session) => session,
        Err(refused) => return *refused,
    };
    if !state.config.breaks(faults::DELETE_KEEPS) {
        // Its requests stop and its streams close.
        end_session(&state, &headers, &session);
    }
    StatusCode::NO_CONTENT.into_response()
}
