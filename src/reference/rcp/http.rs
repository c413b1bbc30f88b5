//! The HTTP binding (spec §5): `POST /rcp/{method}`, per-client sessions keyed
//! by the `RCP-Session` token, and the choice between one JSON body and an
//! event stream (§5.2).

use super::protocol::{self, Server};
use super::{FrameCtx, MAX_REQUEST_BYTES, RcpReferenceConfig, Session};
use crate::suite::rcp::{l0, l2, outside};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// Most live HTTP sessions kept; the oldest is forgotten first. A public demo
/// server must not grow without bound because clients never say `shutdown`.
const MAX_SESSIONS: usize = 4096;

#[derive(Default)]
struct Sessions {
    by_token: HashMap<String, Session>,
    order: VecDeque<String>,
    /// Requests without a known token share this never-initialized session.
    anonymous: Session,
    /// The single session of the process-wide fault.
    global: Session,
}

struct ServerState {
    server: Server,
    sessions: Mutex<Sessions>,
}

/// The HTTP binding: `POST /rcp/{method}` (spec §5).
pub fn rcp_router(config: RcpReferenceConfig) -> Router {
    let global = if config.initialized_at_start() {
        Session::initialized()
    } else {
        Session::default()
    };
    let sessions = Sessions {
        global,
        ..Sessions::default()
    };
    let state = Arc::new(ServerState {
        server: Server::new(config),
        sessions: Mutex::new(sessions),
    });
    Router::new()
        .route("/rcp/{*method}", post(handle_post))
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
        .with_state(state)
}

/// Whether the client accepts an event stream (spec §5.2 streaming).
fn accepts_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|media| {
            media
                .split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("text/event-stream"))
        })
}

async fn handle_post(
    State(state): State<Arc<ServerState>>,
    Path(method): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let server = &state.server;
    let config = &server.config;
    if !config.latency.is_zero() {
        tokio::time::sleep(config.latency).await;
    }
    let parsed: Result<Value, _> = serde_json::from_slice(&body);
    let Ok(message) = parsed else {
        // Spec §5: a body that is not JSON is a 400, with the -32700 reply (§12).
        return json_response(StatusCode::BAD_REQUEST, &protocol::parse_error(config));
    };
    let token = headers
        .get("rcp-session")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    // Streaming is advertised, so a single request that asks for an event
    // stream gets one (spec §5.2); a batch is always answered as one body.
    let stream = message.is_object()
        && config.offers("streaming")
        && !config.variants.buffered_streams
        && (accepts_event_stream(&headers)
            || (config.has(&l2::STREAMING_BUFFERED)
                && message.pointer("/params/_meta/progressToken").is_some()));
    let mut ctx = FrameCtx {
        path_method: Some(method),
        may_notify: stream,
        ..FrameCtx::default()
    };
    let reply = {
        let mut guard = state
            .sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let sessions = &mut *guard;
        if config.initialized_at_start() || config.process_wide {
            protocol::handle_body(server, &mut sessions.global, &message, &mut ctx)
        } else if let Some(session) = token.as_ref().and_then(|t| sessions.by_token.get_mut(t)) {
            let reply = protocol::handle_body(server, session, &message, &mut ctx);
            if ctx.shutdown
                && let Some(t) = &token
            {
                sessions.by_token.remove(t);
                sessions.order.retain(|o| o != t);
            }
            reply
        } else {
            if !config.has(&l0::STATEFUL_HTTP) {
                ctx.new_token = Some(uuid::Uuid::new_v4().simple().to_string());
            }
            let mut session = sessions.anonymous;
            let reply = protocol::handle_body(server, &mut session, &message, &mut ctx);
            if session.initialized {
                if let Some(t) = ctx.new_token.take() {
                    sessions.by_token.insert(t.clone(), session);
                    sessions.order.push_back(t);
                    while sessions.order.len() > MAX_SESSIONS {
                        if let Some(old) = sessions.order.pop_front() {
                            sessions.by_token.remove(&old);
                        }
                    }
                }
            } else {
                sessions.anonymous = session;
            }
            reply
        }
    };
    match reply {
        Some(reply) if stream => {
            let mut body = sse_response(&ctx.frames, &reply);
            // The fault of RCP-L2-006 with the `no-progress` variant (which
            // sends no progress to overshoot): a frame follows the final
            // response to a request that asked for progress.
            if config.has(&l2::STREAMING_PROGRESS)
                && config.variants.no_progress
                && message.pointer("/params/_meta/progressToken").is_some()
            {
                body.push_str(&sse_frame(&serde_json::json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": "late", "progress": 1.0},
                })));
            }
            (
                StatusCode::OK,
                [
                    (header::CONTENT_TYPE, "text/event-stream"),
                    (header::CACHE_CONTROL, "no-cache"),
                ],
                body,
            )
                .into_response()
        }
        Some(reply) if config.has(&outside::HTTP_STATUS_200) && reply.get("error").is_some() => {
            json_response(StatusCode::BAD_REQUEST, &reply)
        }
        Some(reply) => json_response(StatusCode::OK, &reply),
        None if config.has(&outside::HTTP_NOTIFICATION_STATUS) => {
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
        // Notifications get no JSON-RPC reply; 204 is what the reference servers send.
        None => StatusCode::NO_CONTENT.into_response(),
    }
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Spec §5.2: zero or more notification frames, then exactly one frame with
/// the response, each a `data:` line and a blank line; then the stream ends.
fn sse_response(frames: &[Value], reply: &Value) -> String {
    frames
        .iter()
        .chain(std::iter::once(reply))
        .map(sse_frame)
        .collect()
}

fn sse_frame(frame: &Value) -> String {
    format!("data: {frame}\n\n")
}
