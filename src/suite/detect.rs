//! `suite: "auto"`: ask the target, politely, which protocol it speaks; and
//! for MCP, which revision's suite judges it.

use super::context::{Endpoint, EngineError, RunContext};
use super::{McpRevision, SuiteId};
use crate::transport::sse::{SseReader, is_event_stream};
use crate::transport::stdio::StdioChild;
use crate::transport::{HttpRequest, Limits, StreamingResponse, TransportError};
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
/// judged on 2026-07-28, unless the revisions its answer lists
/// (`supportedVersions`, or a -32022 refusal's `supported`) leave 2026-07-28
/// out: then on the newest listed one protocheck judges (see [`Discovered`]).
/// One that answers only a 2025-11-25 `initialize` is judged on 2025-11-25;
/// one that answers neither on 2026-07-28, whose first rule says that
/// `server/discover` is missing. The probes carry the run's bearer token: a
/// protected server is judged on the revision it speaks, as without one. Over stdio the child is asked
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
                STDIO_FALLBACK
            });
        }
    };
    match discover(url, ctx).await {
        Ok((Discovered::Speaks2026, _)) => return Ok(Route::Mcp2026),
        Ok((Discovered::Lists { v2025_11_25: true }, _)) => return Ok(Route::Mcp2025),
        Ok(_) => {}
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
pub const STDIO_ROUTES: &[Route] = &[Route::Mcp2026, Route::Mcp2025];

/// The suite a stdio child that answers no MCP probe is judged with: the
/// 2025-11-25 one, whose era check says what the child speaks (the HTTP
/// fallback is 2026-07-28, whose first rule says `server/discover` is
/// missing; over stdio a 2025-11-25 server answers that with -32601 too).
const STDIO_FALLBACK: Route = Route::Mcp2025;

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
/// speaks 2026-07-28 (unless the revisions it lists leave it out), and one
/// that lists 2025-11-25 or answers a 2025-11-25 `initialize` speaks
/// 2025-11-25 (a dual-era server both); one that answers neither is judged
/// as `newest` judges it, on 2026-07-28 alone, with nothing left out. Over
/// stdio the same, among the suites of [`STDIO_ROUTES`]: a child that
/// speaks none of their revisions is judged as `newest` judges it (see
/// [`STDIO_FALLBACK`]), and the revisions no suite judges over stdio are
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
                    routes: vec![STDIO_FALLBACK],
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
    let discovered = match discover(url, ctx).await {
        Ok((discovered, _)) => discovered,
        Err(e @ TransportError::Forbidden { .. }) => return Err(EngineError::Forbidden(e)),
        Err(e) if e.is_transient() => return Err(EngineError::Unreachable(e)),
        Err(_) => Discovered::NotModern,
    };
    let modern = discovered == Discovered::Speaks2026;
    let legacy = discovered == (Discovered::Lists { v2025_11_25: true })
        || matches!(initialize_over_http(url, ctx).await, Ok(Some(_)));
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
        Ok((Discovered::Speaks2026, _)) => return Ok(asked.unwrap_or(Route::Mcp2026)),
        Ok((Discovered::Lists { v2025_11_25: true }, _)) => {
            return Ok(asked.unwrap_or(Route::Mcp2025));
        }
        Ok((Discovered::Lists { .. }, status)) => tried.push(format!(
            "MCP `server/discover` at {url} answered HTTP {status}, listing no revision \
             protocheck judges"
        )),
        Ok((Discovered::NotModern, 401)) => match protected_mcp(url, ctx).await {
            Some(why) => {
                tracing::info!(target = %url, "judged as MCP: {why}");
                return Ok(asked.unwrap_or(Route::Mcp2026));
            }
            None => tried.push(format!(
                "MCP `server/discover` at {url} answered HTTP 401 with no Bearer challenge \
                 naming resource_metadata and no protected resource metadata at the \
                 well-known URIs"
            )),
        },
        Ok((Discovered::NotModern, status)) => tried.push(format!(
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

    let info_url = super::rcp::join_method(url, "info");
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

/// What `url` answers `server/discover` says of the revisions it speaks (see
/// [`Discovered`]), and the HTTP status it answered with. The answer is read as
/// [`read_answer`] reads it: a JSON body or an SSE stream, as a server MAY
/// answer any request (streamable-http, "Sending Messages": "The client MUST
/// support both").
async fn discover(url: &url::Url, ctx: &RunContext) -> Result<(Discovered, u16), TransportError> {
    let body = discover_request(1);
    let req = HttpRequest::post_json(url.clone(), &body)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MCP_REVISION)
        .header("mcp-method", "server/discover")
        .timeout(ctx.options.request_timeout());
    let req = with_credentials(req, ctx);
    let resp = ctx.http.send_streaming(&req).await?;
    let status = resp.status;
    let limits = ctx.http.limits().clone();
    let answer = read_answer(resp, &limits, &body["id"], ctx.options.request_timeout()).await;
    let discovered = answer.map_or(Discovered::NotModern, |v| {
        Discovered::read(&v, Some(status))
    });
    Ok((discovered, status))
}

/// `req` with the run's bearer token, if it has one. A protected server
/// refuses a probe without it, and the revision a run is judged on must be
/// the one the server speaks with credentials as without (#56): the suites
/// send the token on every request, and the probes that choose between them
/// do too.
fn with_credentials(req: HttpRequest, ctx: &RunContext) -> HttpRequest {
    match &ctx.options.bearer_token {
        Some(token) => req.header("authorization", format!("Bearer {}", token.expose())),
        None => req,
    }
}

/// What an answer to `server/discover` says of the revisions a server
/// speaks. The versioning page has a server list them: a `DiscoverResult`'s
/// `supportedVersions`, or the `supported` list of a -32022 refusal of the
/// requested version. A server of the 2026-07-28 era that lists revisions
/// without 2026-07-28 (a Go SDK server that speaks 2025-11-25 and older,
/// say) speaks what it lists, not 2026-07-28: the run goes to the newest
/// listed revision protocheck judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Discovered {
    /// Not the answer of a 2026-07-28-era server.
    NotModern,
    /// A 2026-07-28 answer whose list names 2026-07-28, or that lists none
    /// (-32020, -32021).
    Speaks2026,
    /// A list without 2026-07-28; whether it names 2025-11-25.
    Lists { v2025_11_25: bool },
}

impl Discovered {
    fn read(v: &Value, status: Option<u16>) -> Self {
        let refused_version =
            v.pointer("/error/code").and_then(Value::as_i64) == Some(UNSUPPORTED_VERSION);
        let list = match v.pointer("/result/supportedVersions") {
            Some(list) => Some(list),
            None if refused_version => v.pointer("/error/data/supported"),
            None => None,
        }
        .and_then(Value::as_array);
        // A -32022 that lists what the server speaks says so at any status;
        // the status the 2026-07-28 text asks for is judged by its rules.
        let of_the_era = modern_discover(v, status) || refused_version && list.is_some();
        if !of_the_era {
            return Self::NotModern;
        }
        let Some(list) = list else {
            return Self::Speaks2026;
        };
        let lists = |revision: &str| list.iter().any(|v| v.as_str() == Some(revision));
        if lists(MCP_REVISION) {
            Self::Speaks2026
        } else {
            Self::Lists {
                v2025_11_25: lists(crate::suite::mcp2025::SPEC_REVISION),
            }
        }
    }

    /// A 2026-07-28 server: the answer is of its era and lists 2026-07-28.
    fn modern(self) -> bool {
        self == Self::Speaks2026
    }
}

/// UnsupportedProtocolVersion: its `data.supported` lists what the server
/// speaks.
const UNSUPPORTED_VERSION: i64 = -32022;

/// Why a URL that refused `server/discover` with 401 is a protected MCP
/// server, if it is one: the MCP authorization spec makes such a server an
/// OAuth 2.1 resource server that MUST publish RFC 9728 protected resource
/// metadata, named by `resource_metadata` in its Bearer challenge or served
/// at the well-known URIs for the endpoint. Either is as clear a sign of an
/// MCP server as an answer; the revision is the newest one (a challenge
/// names none), unless the run asks for another.
async fn protected_mcp(url: &url::Url, ctx: &RunContext) -> Option<String> {
    let timeout = ctx.options.request_timeout();
    let req = HttpRequest::post_json(url.clone(), &discover_request(1))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MCP_REVISION)
        .header("mcp-method", "server/discover")
        .timeout(timeout);
    let resp = ctx.http.send(&req).await.ok()?;
    if resp.status != 401 {
        return None;
    }
    let challenge = resp
        .header("www-authenticate")
        .and_then(super::mcp::aut_survey::parse_bearer_challenge);
    if let Some(metadata) = challenge.as_ref().and_then(|c| c.get("resource_metadata")) {
        return Some(format!(
            "`server/discover` at {url} answered HTTP 401 with a Bearer challenge naming \
             resource_metadata {metadata}"
        ));
    }
    challenge.as_ref()?;
    for well_known in super::mcp::aut_survey::prm_well_known(url) {
        let req = HttpRequest::get(well_known.clone())
            .header("accept", "application/json")
            .timeout(timeout);
        let Ok(resp) = ctx.http.send(&req).await else {
            continue;
        };
        if resp.status == 200
            && resp
                .json()
                .is_some_and(|doc| doc.get("authorization_servers").is_some())
        {
            return Some(format!(
                "`server/discover` at {url} answered HTTP 401 with a Bearer challenge, and \
                 {well_known} serves protected resource metadata"
            ));
        }
    }
    None
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

/// Whether the child `command` speaks the revision `route` judges: it
/// answers a 2025-11-25 `initialize`, or `server/discover` as a 2026-07-28
/// server. Each probe has a child of its own, spawned for it and stopped:
/// a server may bind its process to the revision of its first message.
pub async fn speaks_over_stdio(
    route: Route,
    command: &str,
    ctx: &RunContext,
) -> Result<bool, EngineError> {
    match route {
        Route::Rcp => Ok(false),
        Route::Mcp2025 => Ok(ask_fresh(command, initialize_request(), ctx)
            .await?
            .as_ref()
            .and_then(mcp_initialize_version)
            .is_some()),
        Route::Mcp2026 => {
            // A child may answer any first line as the `initialize` it
            // expects: a result naming a `protocolVersion` is not a
            // `DiscoverResult`.
            let answer = ask_fresh(command, discover_request(1), ctx).await?;
            Ok(answer.as_ref().is_some_and(|a| {
                Discovered::read(a, None).modern() && a.pointer("/result/protocolVersion").is_none()
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

/// The JSON-RPC response to the request `id` in `resp`, the one reading of an
/// answer every detection probe over HTTP shares: the JSON body, or on a
/// `text/event-stream` the first event carrying a response (a message
/// without `method`) to `id` (or with a null id: an error the server could
/// not tie to a request), after any notifications. Bounded by the run's body
/// limit, [`MAX_EVENTS`] events and `timeout` counted from the request; the
/// events are parsed by [`SseReader`], as the engine's client parses them.
async fn read_answer(
    resp: StreamingResponse,
    limits: &Limits,
    id: &Value,
    timeout: Duration,
) -> Option<Value> {
    let deadline = tokio::time::Instant::from_std(resp.started) + timeout;
    let read = async {
        if is_event_stream(&resp.headers) {
            let mut reader = SseReader::new(resp, limits);
            for _ in 0..MAX_EVENTS {
                let Ok(Some(event)) = reader.next_event().await else {
                    break;
                };
                let Ok(message) = serde_json::from_str::<Value>(&event.data) else {
                    continue;
                };
                let answers = message.get("method").is_none()
                    && message.get("id").is_some_and(|v| v == id || v.is_null());
                if answers {
                    return Some(message);
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
                .filter(Value::is_object)
        }
    };
    tokio::time::timeout_at(deadline, read).await.ok().flatten()
}

/// Sends a 2025-11-25 `initialize` to `url`; the version an MCP server
/// answered with, if it did. A session it opened is ended at once.
async fn initialize_over_http(
    url: &url::Url,
    ctx: &RunContext,
) -> Result<Option<String>, TransportError> {
    let timeout = ctx.options.request_timeout();
    let body = initialize_request();
    let req = HttpRequest::post_json(url.clone(), &body)
        .header("accept", "application/json, text/event-stream")
        .timeout(timeout);
    let req = with_credentials(req, ctx);
    let resp = ctx.http.send_streaming(&req).await?;
    let session = resp
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let limits = ctx.http.limits().clone();
    let version = read_answer(resp, &limits, &body["id"], timeout)
        .await
        .as_ref()
        .and_then(mcp_initialize_version);
    if let Some(session) = session {
        end_session(ctx, url, &session, version.as_deref()).await;
    }
    Ok(version)
}

/// Ends the session a detection probe opened (streamable-http, "Session
/// Management": a client that no longer needs a session SHOULD send DELETE).
async fn end_session(ctx: &RunContext, url: &url::Url, session: &str, version: Option<&str>) {
    let mut req = HttpRequest {
        method: http::Method::DELETE,
        ..HttpRequest::get(url.clone())
    }
    .header("mcp-session-id", session)
    .timeout(ctx.options.request_timeout());
    if let Some(version) = version {
        req = req.header("mcp-protocol-version", version);
    }
    let req = with_credentials(req, ctx);
    // Best effort: a server that keeps the session only keeps it longer.
    let _ = ctx.http.send(&req).await;
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
    let modern = discover
        .as_ref()
        .is_some_and(|v| Discovered::read(v, None).modern());
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

/// Spawns `command`, asks it `request` alone and stops it.
async fn ask_fresh(
    command: &str,
    request: Value,
    ctx: &RunContext,
) -> Result<Option<Value>, EngineError> {
    let mut child =
        StdioChild::spawn(command, ctx.http.limits()).map_err(EngineError::from_transport)?;
    let answer = ask_line(&mut child, request, ctx.options.request_timeout()).await;
    child.close().await;
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::RunOptions;
    use crate::transport::{AddressPolicy, HttpClient, Limits};

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

    #[test]
    fn the_revisions_a_discover_answer_lists_decide_whether_it_speaks_2026_07_28() {
        let read = |v: Value, status| Discovered::read(&v, status);
        let legacy = Discovered::Lists { v2025_11_25: true };
        for (answer, status, expected) in [
            (
                json!({"result": {"supportedVersions": ["2026-07-28", "2025-11-25"], "capabilities": {}}}),
                Some(200),
                Discovered::Speaks2026,
            ),
            (
                json!({"result": {"supportedVersions": ["2025-11-25", "2025-06-18"], "capabilities": {}}}),
                Some(200),
                legacy,
            ),
            (
                json!({"error": {"code": -32022, "message": "unsupported",
                    "data": {"supported": ["2025-11-25", "2025-03-26"], "requested": "2026-07-28"}}}),
                Some(400),
                legacy,
            ),
            // The list says what the server speaks whatever status carries it.
            (
                json!({"error": {"code": -32022, "message": "unsupported",
                    "data": {"supported": ["2025-11-25"], "requested": "2026-07-28"}}}),
                Some(200),
                legacy,
            ),
            (
                json!({"error": {"code": -32022, "message": "unsupported",
                    "data": {"supported": ["2025-06-18"], "requested": "2026-07-28"}}}),
                None,
                Discovered::Lists { v2025_11_25: false },
            ),
            (
                json!({"error": {"code": -32020, "message": "mismatch"}}),
                Some(400),
                Discovered::Speaks2026,
            ),
            (
                json!({"error": {"code": -32022, "message": "no list"}}),
                Some(400),
                Discovered::Speaks2026,
            ),
            (
                json!({"error": {"code": -32601, "message": "no such method"}}),
                Some(404),
                Discovered::NotModern,
            ),
        ] {
            assert_eq!(
                read(answer.clone(), status),
                expected,
                "{answer} {status:?}"
            );
        }
    }
}
