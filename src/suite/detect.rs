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

    /// The MCP revision a route judges; `None` for RCP.
    pub fn mcp_revision(self) -> Option<McpRevision> {
        match self {
            Self::Rcp => None,
            Self::Mcp2026 => Some(McpRevision::V2026_07_28),
            Self::Mcp2025 => Some(McpRevision::V2025_11_25),
        }
    }

    fn of(revision: McpRevision) -> Option<Self> {
        match revision {
            McpRevision::Newest | McpRevision::All => None,
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
/// says that `server/discover` is missing. Over stdio the 2026-07-28 suite is
/// not available yet, so a stdio server is judged on 2025-11-25 (whose era
/// check says so when the server speaks only 2026-07-28).
pub async fn mcp_route(endpoint: &Endpoint, ctx: &RunContext) -> Result<Route, EngineError> {
    if let Some(route) = Route::of(ctx.options.mcp_revision.unwrap_or_default()) {
        return Ok(route);
    }
    let url = match endpoint {
        Endpoint::Http(url) => url,
        Endpoint::Stdio(_) => return Ok(Route::Mcp2025),
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

/// The MCP suites protocheck judges a server with over stdio, newest first:
/// `mcp_revision: all` runs those whose revision a stdio server speaks
/// (see [`speaks_over_stdio`]).
pub const STDIO_ROUTES: &[Route] = &[Route::Mcp2025];

/// The MCP suites every revision is judged with, newest first.
const MCP_ROUTES: [Route; 2] = [Route::Mcp2026, Route::Mcp2025];

/// What `mcp_revision: all` judges a server on: the suites to run, newest
/// first, and the revisions left out with why (`2025-11-25: not spoken`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpRoutes {
    pub routes: Vec<Route>,
    pub not_judged: Vec<String>,
}

/// The MCP suites that judge `endpoint` on every revision it speaks. Over
/// HTTP a server that answers `server/discover` as a 2026-07-28 server does
/// speaks 2026-07-28, and one that answers a 2025-11-25 `initialize` speaks
/// 2025-11-25 (a dual-era server both); one that answers neither is judged
/// as `newest` judges it, on 2026-07-28 alone, with nothing left out. Over
/// stdio the same, among the suites of [`STDIO_ROUTES`]: a child that
/// speaks none of their revisions is judged by the first (whose era check
/// says what it speaks), and the revisions no suite judges over stdio are
/// named as such.
pub async fn mcp_routes(endpoint: &Endpoint, ctx: &RunContext) -> Result<McpRoutes, EngineError> {
    let url = match endpoint {
        Endpoint::Http(url) => url,
        Endpoint::Stdio(command) => {
            let mut spoken = Vec::new();
            for route in STDIO_ROUTES {
                if speaks_over_stdio(*route, command, ctx).await? {
                    spoken.push(*route);
                }
            }
            let unavailable = MCP_ROUTES
                .into_iter()
                .filter(|r| !STDIO_ROUTES.contains(r))
                .filter_map(Route::mcp_revision)
                .map(|r| format!("{}: not judged over stdio", r.as_str()));
            if spoken.is_empty() {
                return Ok(McpRoutes {
                    routes: STDIO_ROUTES.iter().take(1).copied().collect(),
                    not_judged: unavailable.collect(),
                });
            }
            let not_spoken = STDIO_ROUTES
                .iter()
                .filter(|r| !spoken.contains(r))
                .filter_map(|r| r.mcp_revision())
                .map(|r| format!("{}: not spoken", r.as_str()));
            let not_judged = not_spoken.chain(unavailable).collect();
            return Ok(McpRoutes {
                routes: spoken,
                not_judged,
            });
        }
    };
    let modern = match discover(url, ctx).await {
        Ok((modern, _)) => modern,
        Err(e @ TransportError::Forbidden { .. }) => return Err(EngineError::Forbidden(e)),
        Err(e) if e.is_transient() => return Err(EngineError::Unreachable(e)),
        Err(_) => false,
    };
    let legacy = matches!(initialize_over_http(url, ctx).await, Ok(Some(_)));
    let spoken: Vec<Route> = MCP_ROUTES
        .into_iter()
        .filter(|r| match r {
            Route::Mcp2026 => modern,
            Route::Mcp2025 => legacy,
            Route::Rcp => false,
        })
        .collect();
    if spoken.is_empty() {
        return Ok(McpRoutes {
            routes: vec![Route::Mcp2026],
            not_judged: Vec::new(),
        });
    }
    let not_judged = MCP_ROUTES
        .into_iter()
        .filter(|r| !spoken.contains(r))
        .filter_map(Route::mcp_revision)
        .map(|r| format!("{}: not spoken", r.as_str()))
        .collect();
    Ok(McpRoutes {
        routes: spoken,
        not_judged,
    })
}

/// Probes `endpoint` and returns the suite that fits, or says what was tried.
///
/// MCP is tried first with `server/discover` on the URL itself (the MCP endpoint
/// is the URL), then with a 2025-11-25 `initialize` there; then RCP with `info`
/// at `<url>/info` (the URL is the RCP base). The probes are read-only; a
/// session the `initialize` opened is ended with DELETE. Over stdio the child
/// is asked `initialize` once: an MCP server answers with a date-like
/// `protocolVersion` string, an RCP server with a number (RCP/1 §7.1); the
/// child is then stopped and the run starts its own.
pub async fn detect(endpoint: &Endpoint, ctx: &RunContext) -> Result<Route, EngineError> {
    let asked = Route::of(ctx.options.mcp_revision.unwrap_or_default());
    let url = match endpoint {
        Endpoint::Http(url) => url,
        Endpoint::Stdio(command) => {
            return Ok(match initialize_over_stdio(command, ctx).await? {
                Some(_) => asked.unwrap_or(Route::Mcp2025),
                None => Route::Rcp,
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
    let req = HttpRequest::post_json(url.clone(), &discover_request())
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MCP_REVISION)
        .header("mcp-method", "server/discover")
        .timeout(ctx.options.request_timeout());
    let resp = ctx.http.send(&req).await?;
    let modern = resp.json().is_some_and(|v| {
        discover_result(&v)
            || matches!(
                v.pointer("/error/code").and_then(Value::as_i64),
                Some(-32022..=-32020)
            ) && resp.status == 400
    });
    Ok((modern, resp.status))
}

/// The `server/discover` request of the detection probes.
fn discover_request() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": MCP_REVISION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "protocheck", "version": env!("CARGO_PKG_VERSION")}
        }}
    })
}

/// Whether `message` answers `server/discover` as the detection reads a
/// 2026-07-28 `DiscoverResult`: `supportedVersions`, or `capabilities`
/// without the `server` of an RCP `info` result.
fn discover_result(message: &Value) -> bool {
    message.pointer("/result/supportedVersions").is_some()
        || message.pointer("/result/capabilities").is_some()
            && message.pointer("/result/server").is_none()
}

/// Whether the child `command` speaks the revision `route` judges: it
/// answers a 2025-11-25 `initialize`, or `server/discover` with a
/// `DiscoverResult`. The child is spawned for the probe and stopped.
pub async fn speaks_over_stdio(
    route: Route,
    command: &str,
    ctx: &RunContext,
) -> Result<bool, EngineError> {
    match route {
        Route::Rcp => Ok(false),
        Route::Mcp2025 => Ok(initialize_over_stdio(command, ctx).await?.is_some()),
        Route::Mcp2026 => {
            // A child may answer any first line as the `initialize` it
            // expects: a result naming a `protocolVersion` is not a
            // `DiscoverResult`.
            let answer = ask_over_stdio(command, &discover_request(), ctx).await?;
            Ok(answer.as_ref().is_some_and(|a| {
                discover_result(a) && a.pointer("/result/protocolVersion").is_none()
            }))
        }
    }
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

/// Spawns `command`, sends it a 2025-11-25 `initialize` and reads its first
/// lines for the answer; the version an MCP server answered with, if it did.
/// The child is stopped either way.
async fn initialize_over_stdio(
    command: &str,
    ctx: &RunContext,
) -> Result<Option<String>, EngineError> {
    let answer = ask_over_stdio(command, &initialize_request(), ctx).await?;
    Ok(answer.as_ref().and_then(mcp_initialize_version))
}

/// Spawns `command`, sends it `request` (id 1) and reads its first lines for
/// the message with that id, if one comes within the request timeout. The
/// child is stopped either way.
async fn ask_over_stdio(
    command: &str,
    request: &Value,
    ctx: &RunContext,
) -> Result<Option<Value>, EngineError> {
    let timeout = ctx.options.request_timeout();
    let mut child =
        StdioChild::spawn(command, ctx.http.limits()).map_err(EngineError::from_transport)?;
    let mut answer = None;
    if child.write_line(&request.to_string()).await.is_ok() {
        let deadline = tokio::time::Instant::now() + timeout;
        for _ in 0..MAX_EVENTS {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let Ok(line) = child.read_line(left).await else {
                break;
            };
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message.get("id") == Some(&json!(1)) {
                answer = Some(message);
                break;
            }
        }
    }
    child.close().await;
    Ok(answer)
}

/// `<base>/<method>`, the RCP HTTP binding's request path (spec §5).
pub fn join_method(base: &url::Url, method: &str) -> url::Url {
    let mut url = base.clone();
    let path = format!("{}/{}", base.path().trim_end_matches('/'), method);
    url.set_path(&path);
    url
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::RunOptions;
    use crate::transport::{AddressPolicy, Limits};

    fn ctx() -> RunContext {
        let http = HttpClient::new(AddressPolicy::AllowPrivate, Limits::default()).expect("client");
        RunContext::new(http, RunOptions::default())
    }

    /// A child that answers its first line with `answer`.
    fn answering(answer: &str) -> String {
        format!("sh -c 'read -r line; echo \"$0\"' '{answer}'")
    }

    #[tokio::test]
    async fn a_stdio_child_speaks_the_revisions_whose_probe_it_answers() {
        let ctx = ctx();
        let discover = answering(
            r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{}}}"#,
        );
        let initialize = answering(
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#,
        );
        let refusal =
            answering(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#);
        for (command, modern, legacy) in [
            (&discover, true, false),
            (&initialize, false, true),
            (&refusal, false, false),
        ] {
            let speaks = |route| speaks_over_stdio(route, command, &ctx);
            assert_eq!(speaks(Route::Mcp2026).await, Ok(modern), "{command}");
            assert_eq!(speaks(Route::Mcp2025).await, Ok(legacy), "{command}");
            assert_eq!(speaks(Route::Rcp).await, Ok(false), "{command}");
        }
    }
}
