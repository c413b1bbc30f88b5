//! `suite: "auto"`: ask the target, politely, which protocol it speaks; and
//! for MCP, which revision's suite judges it.

use super::runner::{Endpoint, EngineError, RunContext};
use super::{McpRevision, SuiteId};
use crate::transport::sse::{SseReader, is_event_stream};
use crate::transport::stdio::StdioChild;
use crate::transport::{HttpClient, HttpRequest, TransportError};
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;

/// The MCP revision the detection probe announces: the suite's own.
use super::mcp::wire::PROTOCOL_VERSION as MCP_REVISION;

/// The suite a run goes to: RCP, or MCP of one revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Rcp,
    /// The MCP 2026-07-28 suite (`suite::mcp`).
    Mcp2026,
    /// The MCP 2025-11-25 suite (`suite::mcp2025`).
    Mcp2025,
}

impl Route {
    pub fn suite(self) -> SuiteId {
        match self {
            Self::Rcp => SuiteId::Rcp,
            Self::Mcp2026 | Self::Mcp2025 => SuiteId::Mcp,
        }
    }

    fn of(revision: McpRevision) -> Option<Self> {
        match revision {
            McpRevision::Newest => None,
            McpRevision::V2026_07_28 => Some(Self::Mcp2026),
            McpRevision::V2025_11_25 => Some(Self::Mcp2025),
        }
    }
}

/// The MCP suite that judges `endpoint`: the revision the run asks for, else
/// the newest the server speaks. Over HTTP a server that answers
/// `server/discover` as a 2026-07-28 server does (a dual-era server too) is
/// judged on 2026-07-28; one that answers only a 2025-11-25 `initialize` on
/// 2025-11-25; one that answers neither on 2026-07-28, whose first rule
/// says that `server/discover` is missing. Over stdio the child is asked
/// `server/discover`: a 2026-07-28 answer is judged on 2026-07-28, anything
/// else (another error, no answer) on 2025-11-25, whose era check says what
/// the server speaks.
pub async fn mcp_route(endpoint: &Endpoint, ctx: &RunContext) -> Result<Route, EngineError> {
    if let Some(route) = Route::of(ctx.options.mcp_revision.unwrap_or_default()) {
        return Ok(route);
    }
    let url = match endpoint {
        Endpoint::Http(url) => url,
        Endpoint::Stdio(command) => {
            let asked = ask_over_stdio(command, ctx, false).await?;
            return Ok(if asked.modern {
                Route::Mcp2026
            } else {
                Route::Mcp2025
            });
        }
    };
    match discover(url, ctx).await {
        Ok((true, _)) => return Ok(Route::Mcp2026),
        Ok((false, _)) => {}
        Err(e @ TransportError::Forbidden { .. }) => return Err(EngineError::Forbidden(e)),
        Err(e) if e.is_transient() => return Err(EngineError::Unreachable(e)),
        Err(_) => {}
    }
    Ok(match initialize_over_http(url, ctx).await {
        Ok(Some(_)) => Route::Mcp2025,
        _ => Route::Mcp2026,
    })
}

/// Probes `endpoint` and returns the suite that fits, or says what was tried.
///
/// MCP is tried first with `server/discover` on the URL itself (the MCP endpoint
/// is the URL), then with a 2025-11-25 `initialize` there; then RCP with `info`
/// at `<url>/info` (the URL is the RCP base). The probes are read-only; a
/// session the `initialize` opened is ended with DELETE. Over stdio the child
/// is asked `server/discover` (a 2026-07-28 answer is MCP 2026-07-28), then
/// `initialize` once: an MCP server answers with a date-like
/// `protocolVersion` string, an RCP server with a number (RCP/1 §7.1); the
/// child is then stopped and the run starts its own.
pub async fn detect(endpoint: &Endpoint, ctx: &RunContext) -> Result<Route, EngineError> {
    let asked = Route::of(ctx.options.mcp_revision.unwrap_or_default());
    let url = match endpoint {
        Endpoint::Http(url) => url,
        Endpoint::Stdio(command) => {
            let answers = ask_over_stdio(command, ctx, true).await?;
            return Ok(match answers {
                StdioAnswers { modern: true, .. } => asked.unwrap_or(Route::Mcp2026),
                StdioAnswers {
                    initialize: Some(_),
                    ..
                } => asked.unwrap_or(Route::Mcp2025),
                _ => Route::Rcp,
            });
        }
    };
    let timeout = ctx.options.request_timeout();
    let mut tried = Vec::new();

    match discover(url, ctx).await {
        Ok((true, _)) => return Ok(asked.unwrap_or(Route::Mcp2026)),
        Ok((false, status)) => tried.push(format!(
            "MCP `server/discover` at {url} answered HTTP {status}"
        )),
        Err(e @ TransportError::Forbidden { .. }) => return Err(EngineError::Forbidden(e)),
        Err(e) if e.is_transient() => return Err(EngineError::Unreachable(e)),
        Err(e) => tried.push(format!("MCP `server/discover` at {url}: {e}")),
    }

    match initialize_over_http(url, ctx).await {
        Ok(Some(_)) => return Ok(asked.unwrap_or(Route::Mcp2025)),
        Ok(None) => tried.push(format!(
            "MCP `initialize` at {url} got no initialize result"
        )),
        Err(e) => tried.push(format!("MCP `initialize` at {url}: {e}")),
    }

    let info_url = join_method(url, "info");
    let info = json!({"jsonrpc": "2.0", "id": 1, "method": "info", "params": {}});
    let req = HttpRequest::post_json(info_url.clone(), &info).timeout(timeout);
    match ctx.http.send(&req).await {
        Ok(resp) => {
            if resp
                .json()
                .is_some_and(|v| v.pointer("/result/server").is_some())
            {
                return Ok(Route::Rcp);
            }
            tried.push(format!(
                "RCP `info` at {info_url} answered HTTP {}",
                resp.status
            ));
        }
        Err(e) => tried.push(format!("RCP `info` at {info_url}: {e}")),
    }
    Err(EngineError::Detect(format!(
        "tried {}; choose the suite explicitly if the server speaks MCP or RCP",
        tried.join("; ")
    )))
}

/// Whether `url` answers `server/discover` as a 2026-07-28 server (a
/// `DiscoverResult`, or a 400 with one of the errors only a 2026-07-28 server
/// gives), and the HTTP status it answered with.
async fn discover(url: &url::Url, ctx: &RunContext) -> Result<(bool, u16), TransportError> {
    let body = discover_request(1);
    let req = HttpRequest::post_json(url.clone(), &body)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MCP_REVISION)
        .header("mcp-method", "server/discover")
        .timeout(ctx.options.request_timeout());
    let resp = ctx.http.send(&req).await?;
    let modern = resp
        .json()
        .is_some_and(|v| modern_discover(&v, Some(resp.status)));
    Ok((modern, resp.status))
}

/// A `server/discover` request as a 2026-07-28 client sends it, with `id`.
fn discover_request(id: i64) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "server/discover",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": MCP_REVISION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "protocheck", "version": env!("CARGO_PKG_VERSION")}
        }}
    })
}

/// Whether an answer to `server/discover` comes from a 2026-07-28 server: a
/// `DiscoverResult`, or -32020…-32022 (over HTTP with status 400; over stdio,
/// `status` is `None`, with no status to check).
fn modern_discover(v: &Value, status: Option<u16>) -> bool {
    v.pointer("/result/supportedVersions").is_some()
        || v.pointer("/result/capabilities").is_some() && v.pointer("/result/server").is_none()
        || matches!(
            v.pointer("/error/code").and_then(Value::as_i64),
            Some(-32022..=-32020)
        ) && status.is_none_or(|s| s == 400)
}

/// The 2025-11-25 `initialize` a client opens an MCP session with.
fn initialize_request() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": crate::suite::mcp2025::SPEC_REVISION,
            "capabilities": {},
            "clientInfo": {"name": "protocheck", "version": env!("CARGO_PKG_VERSION")}
        }
    })
}

/// The protocol version of an MCP `initialize` result: a string (MCP
/// revisions are dates), with capabilities and server information beside it.
fn mcp_initialize_version(message: &Value) -> Option<String> {
    let result = message.get("result")?;
    result.get("capabilities")?.as_object()?;
    result.get("serverInfo")?.as_object()?;
    result.get("protocolVersion")?.as_str().map(str::to_owned)
}

/// Most events read from an event stream while looking for the answer.
const MAX_EVENTS: usize = 16;

/// Sends a 2025-11-25 `initialize` to `url`; the version an MCP server
/// answered with, if it did. A session it opened is ended at once.
async fn initialize_over_http(
    url: &url::Url,
    ctx: &RunContext,
) -> Result<Option<String>, TransportError> {
    let timeout = ctx.options.request_timeout();
    let req = HttpRequest::post_json(url.clone(), &initialize_request())
        .header("accept", "application/json, text/event-stream")
        .timeout(timeout);
    let resp = ctx.http.send_streaming(&req).await?;
    let session = resp
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let limits = ctx.http.limits().clone();
    let read = async {
        if is_event_stream(&resp.headers) {
            let mut reader = SseReader::new(resp, &limits);
            for _ in 0..MAX_EVENTS {
                let Ok(Some(event)) = reader.next_event().await else {
                    break;
                };
                let message = serde_json::from_str::<Value>(&event.data).ok();
                if let Some(version) = message.as_ref().and_then(mcp_initialize_version) {
                    return Some(version);
                }
            }
            None
        } else {
            let mut body = Vec::new();
            let mut stream = resp.body;
            while let Some(Ok(chunk)) = stream.next().await {
                body.extend_from_slice(&chunk);
                if body.len() > limits.max_body_bytes {
                    return None;
                }
            }
            serde_json::from_slice::<Value>(&body)
                .ok()
                .as_ref()
                .and_then(mcp_initialize_version)
        }
    };
    let version = tokio::time::timeout(timeout, read).await.ok().flatten();
    if let Some(session) = session {
        end_session(&ctx.http, url, &session, version.as_deref(), timeout).await;
    }
    Ok(version)
}

/// Ends the session a detection probe opened (streamable-http, "Session
/// Management": a client that no longer needs a session SHOULD send DELETE).
async fn end_session(
    http: &HttpClient,
    url: &url::Url,
    session: &str,
    version: Option<&str>,
    timeout: Duration,
) {
    let mut req = HttpRequest {
        method: http::Method::DELETE,
        ..HttpRequest::get(url.clone())
    }
    .header("mcp-session-id", session)
    .timeout(timeout);
    if let Some(version) = version {
        req = req.header("mcp-protocol-version", version);
    }
    // Best effort: a server that keeps the session only keeps it longer.
    let _ = http.send(&req).await;
}

/// What a child answered the detection probes over stdio.
struct StdioAnswers {
    /// It answered `server/discover` as a 2026-07-28 server.
    modern: bool,
    /// The version an MCP server answered `initialize` with, if asked.
    initialize: Option<String>,
}

/// Spawns `command` and asks it `server/discover`: a `DiscoverResult`, or
/// one of the errors only a 2026-07-28 server gives, is a modern answer (over
/// stdio, -32601 is what a 2025-11-25 server answers too, so it is not). With
/// `then_initialize`, a child that did not answer so is then sent a
/// 2025-11-25 `initialize`. The child is stopped either way.
async fn ask_over_stdio(
    command: &str,
    ctx: &RunContext,
    then_initialize: bool,
) -> Result<StdioAnswers, EngineError> {
    let timeout = ctx.options.request_timeout();
    let mut child =
        StdioChild::spawn(command, ctx.http.limits()).map_err(EngineError::from_transport)?;
    let discover = ask_line(&mut child, discover_request(2), timeout).await;
    let modern = discover.as_ref().is_some_and(|v| modern_discover(v, None));
    let mut initialize = None;
    if then_initialize && !modern {
        initialize = ask_line(&mut child, initialize_request(), timeout)
            .await
            .as_ref()
            .and_then(mcp_initialize_version);
    }
    child.close().await;
    Ok(StdioAnswers { modern, initialize })
}

/// Writes `request` as one line and reads lines until the one answering its
/// id, within `timeout`; `None` when none came.
async fn ask_line(child: &mut StdioChild, request: Value, timeout: Duration) -> Option<Value> {
    let id = request.get("id").cloned();
    child.write_line(&request.to_string()).await.ok()?;
    let deadline = tokio::time::Instant::now() + timeout;
    for _ in 0..MAX_EVENTS {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let line = child.read_line(left).await.ok()?;
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if message.get("id") == id.as_ref() && message.get("method").is_none() {
            return Some(message);
        }
    }
    None
}

/// `<base>/<method>`, the RCP HTTP binding's request path (spec §5).
pub fn join_method(base: &url::Url, method: &str) -> url::Url {
    let mut url = base.clone();
    let path = format!("{}/{}", base.path().trim_end_matches('/'), method);
    url.set_path(&path);
    url
}
