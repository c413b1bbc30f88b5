//! The RCP/1 reference server: a correct L0 server declaring `"L0"` and
//! advertising `retrieve` over a small built-in corpus, over HTTP
//! (`POST /rcp/{method}`) and stdio. Each L0 rule has a fault switch that breaks
//! exactly that rule, so the suite can prove every rule can fail
//! (`protocheck reference rcp --break RCP-L0-004`).
//!
//! HTTP sessions: `initialize` issues a fresh token in `result._meta.session`,
//! sent back in the `RCP-Session` header. A request without a known token is in
//! an uninitialized session, so the pre-initialize checks work on every run
//! against a long-lived server (the Python and C++ reference servers keep one
//! process-wide flag instead, which protocheck decision 3 works around).

use crate::suite::Rule;
use crate::suite::rcp::l0;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Map, Value, json};
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};

/// Largest request body or stdio line the reference server reads.
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// Most live HTTP sessions kept; the oldest is forgotten first. A public demo
/// server must not grow without bound because clients never say `shutdown`.
const MAX_SESSIONS: usize = 4096;

/// The one protocol version this server speaks.
const PROTOCOL_VERSION: i64 = 1;

/// `retrieve.maxK`: larger `k` values are clamped, not refused (spec §3).
const MAX_K: u64 = 50;

/// The snapshot id of the built-in corpus.
const INDEX_VERSION: &str = "reference-corpus-1";

/// The misbehaviour each fault switch turns on, by the rule it breaks.
static FAULTS: &[(&Rule, &str)] = &[
    (
        &l0::INFO_BEFORE_INIT,
        "`info` before `initialize` answers -32001",
    ),
    (
        &l0::PING_NUMERIC_NONCE,
        "`ping` echoes a numeric nonce as a string",
    ),
    (&l0::PING_STRING_NONCE, "`ping` drops a string nonce"),
    (
        &l0::GATED_BEFORE_INIT,
        "gated methods answer before `initialize`",
    ),
    (
        &l0::NOTIFY_GATED,
        "notifications for gated methods get an error reply",
    ),
    (
        &l0::NOTIFY_OPEN,
        "notifications for `info`, `ping`, `initialize`, `shutdown` get an error reply",
    ),
    (
        &l0::NOTIFY_UNKNOWN,
        "notifications for undefined methods get -32004",
    ),
    (
        &l0::CANCEL_UNKNOWN_ID,
        "`notifications/cancel` for an unknown id gets -32015",
    ),
    (
        &l0::VERSION_ZERO_REJECTED,
        "`initialize` accepts protocolVersion 0 and negotiates 1",
    ),
    (
        &l0::FAILED_HANDSHAKE_UNINITIALIZED,
        "a failed `initialize` opens the gated methods",
    ),
    (
        &l0::INITIALIZE_NEGOTIATES,
        "`initialize` negotiates a version above the client's",
    ),
    (
        &l0::RETRIEVAL_CAPABILITY,
        "no capability is advertised (and `retrieve` is refused with -32003)",
    ),
    (&l0::SERVER_IDENTITY, "`server.name` is empty"),
    (&l0::DECLARES_LEVEL, "`_meta.conformance` is missing"),
    (
        &l0::REPEAT_INIT_REJECTED,
        "a repeated `initialize` succeeds",
    ),
    (
        &l0::TOLERATES_UNKNOWN,
        "unknown params fields, capability keys and `_meta` keys get -32602",
    ),
    (
        &l0::UNKNOWN_METHOD,
        "undefined methods get -32601 instead of -32004",
    ),
    (
        &l0::UNADVERTISED_METHOD,
        "unadvertised methods get -32004 instead of -32003",
    ),
    (
        &l0::UNSUPPORTED_OPTION,
        "`retrieve` silently falls back on an unsupported `mode`",
    ),
    (
        &l0::MALFORMED_PARAMS,
        "`retrieve` coerces a string `k` and clamps a negative one",
    ),
    (
        &l0::INFO_AFTER_INIT,
        "`info` after `initialize` also reports `rerank`",
    ),
    (
        &l0::PARSE_ERROR,
        "invalid JSON gets -32600 instead of -32700",
    ),
    (&l0::SHUTDOWN, "`shutdown` gets -32004"),
    (&l0::NUMERIC_ID_ECHO, "numeric ids are echoed as strings"),
    (
        &l0::STRING_ID_ECHO,
        "string ids that look like numbers are echoed as numbers",
    ),
    (&l0::WELL_FORMED, "replies carry \"jsonrpc\": \"1.0\""),
    (
        &l0::PER_SESSION_INIT,
        "one process-wide session, already initialized at start",
    ),
    (
        &l0::STATEFUL_HTTP,
        "stateless: every request is initialized, `initialize` always succeeds",
    ),
    (
        &l0::HIGHER_LEVEL_NOT_JUDGED,
        "declares `_meta.conformance` \"L1\"",
    ),
    (&l0::BATCH, "a batch's notifications get error replies too"),
    (
        &l0::EMPTY_BATCH,
        "an empty batch is answered with an empty array",
    ),
    (
        &l0::CANCEL_WITH_ID,
        "`notifications/cancel` with an id gets a result",
    ),
];

/// The fault switches: `(rule id, misbehaviour)`.
pub fn faults() -> impl Iterator<Item = (&'static str, &'static str)> {
    FAULTS.iter().map(|(rule, what)| (rule.id, *what))
}

/// How the reference server behaves.
#[derive(Debug, Clone, Default)]
pub struct RcpReferenceConfig {
    /// Rule ids whose fault switch is on.
    pub faults: BTreeSet<String>,
    /// Delay before every reply (slow-run tests, benchmarks).
    pub latency: Duration,
}

impl RcpReferenceConfig {
    /// A configuration with these faults on; an id that is not an RCP rule with a
    /// fault switch is refused with the list of valid ones.
    pub fn new<I, S>(faults: I) -> Result<Self, String>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut set = BTreeSet::new();
        for id in faults {
            let id = id.into();
            if !FAULTS.iter().any(|(rule, _)| rule.id == id) {
                let valid: Vec<&str> = FAULTS.iter().map(|(rule, _)| rule.id).collect();
                return Err(format!(
                    "`{id}` is not an RCP rule with a fault switch; valid ids: {}",
                    valid.join(", ")
                ));
            }
            set.insert(id);
        }
        Ok(Self {
            faults: set,
            latency: Duration::ZERO,
        })
    }

    fn has(&self, rule: &Rule) -> bool {
        self.faults.contains(rule.id)
    }
}

/// Command-line arguments of `protocheck reference rcp`.
#[derive(Debug, Clone, clap::Args)]
pub struct RcpReferenceArgs {
    /// TCP port to listen on (HTTP).
    #[arg(long, default_value_t = 8766)]
    pub port: u16,
    /// Address to listen on (HTTP).
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub bind: IpAddr,
    /// Speak NDJSON on stdin/stdout instead of HTTP.
    #[arg(long)]
    pub stdio: bool,
    /// Break one rule on purpose (repeatable), e.g. `--break RCP-L0-004`.
    #[arg(long = "break", value_name = "RULE-ID")]
    pub breaks: Vec<String>,
    /// Delay every reply by this many milliseconds.
    #[arg(long, default_value_t = 0)]
    pub latency_ms: u64,
}

/// Runs the reference server until ctrl-c (HTTP) or EOF / `shutdown` (stdio).
pub async fn run_rcp_reference(args: RcpReferenceArgs) -> anyhow::Result<()> {
    let mut config = RcpReferenceConfig::new(args.breaks).map_err(anyhow::Error::msg)?;
    config.latency = Duration::from_millis(args.latency_ms);
    if args.stdio {
        let stdin = tokio::io::BufReader::new(tokio::io::stdin());
        serve_rcp_stdio(config, stdin, tokio::io::stdout()).await?;
        return Ok(());
    }
    let addr = SocketAddr::new(args.bind, args.port);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    let local = listener.local_addr()?;
    let broken: Vec<&str> = config.faults.iter().map(String::as_str).collect();
    tracing::info!(
        "RCP reference server at http://{local}/rcp{}",
        if broken.is_empty() {
            String::new()
        } else {
            format!(" (broken: {})", broken.join(", "))
        }
    );
    axum::serve(listener, rcp_router(config))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}

/// The initialized state of one session.
#[derive(Debug, Clone, Copy, Default)]
struct Session {
    initialized: bool,
    /// Gated methods answer although not initialized (the fault of RCP-L0-010).
    gates_open: bool,
}

/// Per-frame facts the transport knows.
#[derive(Debug, Default)]
struct FrameCtx {
    /// The method named by the HTTP path (spec §5: it must equal the body's).
    path_method: Option<String>,
    /// The token a successful `initialize` hands out (HTTP, tokenless request).
    new_token: Option<String>,
    /// Set once `shutdown` has been answered.
    shutdown: bool,
    /// The frame is a batch member: the single-notification faults stay off so
    /// that only the batch fault breaks the batch rule.
    in_batch: bool,
}

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
    config: RcpReferenceConfig,
    sessions: Mutex<Sessions>,
}

/// The HTTP binding: `POST /rcp/{method}` (spec §5).
pub fn rcp_router(config: RcpReferenceConfig) -> Router {
    let sessions = Sessions {
        global: Session {
            initialized: true,
            gates_open: false,
        },
        ..Sessions::default()
    };
    let state = Arc::new(ServerState {
        config,
        sessions: Mutex::new(sessions),
    });
    Router::new()
        .route("/rcp/{*method}", post(handle_post))
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
        .with_state(state)
}

async fn handle_post(
    State(state): State<Arc<ServerState>>,
    Path(method): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let config = &state.config;
    if !config.latency.is_zero() {
        tokio::time::sleep(config.latency).await;
    }
    let parsed: Result<Value, _> = serde_json::from_slice(&body);
    let Ok(message) = parsed else {
        // Spec §5: a body that is not JSON is a 400, with the -32700 reply (§12).
        return json_response(StatusCode::BAD_REQUEST, &parse_error(config));
    };
    let token = headers
        .get("rcp-session")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let reply = {
        let mut guard = state
            .sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let sessions = &mut *guard;
        let mut ctx = FrameCtx {
            path_method: Some(method),
            ..FrameCtx::default()
        };
        if config.has(&l0::PER_SESSION_INIT) {
            handle_body(config, &mut sessions.global, &message, &mut ctx)
        } else if let Some(session) = token.as_ref().and_then(|t| sessions.by_token.get_mut(t)) {
            let reply = handle_body(config, session, &message, &mut ctx);
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
            let reply = handle_body(config, &mut session, &message, &mut ctx);
            if session.initialized {
                if let Some(t) = ctx.new_token.take() {
                    sessions.by_token.insert(
                        t.clone(),
                        Session {
                            initialized: true,
                            gates_open: false,
                        },
                    );
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
        Some(reply) => json_response(StatusCode::OK, &reply),
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

/// Serves NDJSON on `reader`/`writer` until EOF (an implicit `shutdown`, spec
/// §5) or until `shutdown` has been answered.
pub async fn serve_rcp_stdio<R, W>(
    config: RcpReferenceConfig,
    mut reader: R,
    mut writer: W,
) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut session = if config.has(&l0::PER_SESSION_INIT) {
        Session {
            initialized: true,
            gates_open: false,
        }
    } else {
        Session::default()
    };
    loop {
        let line = match read_line(&mut reader, MAX_REQUEST_BYTES).await? {
            None => return Ok(()),
            Some(Ok(line)) => line,
            Some(Err(TooLong)) => {
                let reply = error_reply(
                    &config,
                    Value::Null,
                    -32013,
                    "the frame exceeds the line limit",
                );
                write_frame(&config, &mut writer, &reply).await?;
                continue;
            }
        };
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let mut ctx = FrameCtx::default();
        let reply = match serde_json::from_str::<Value>(text) {
            Ok(message) => handle_body(&config, &mut session, &message, &mut ctx),
            Err(_) => Some(parse_error(&config)),
        };
        if let Some(reply) = reply {
            write_frame(&config, &mut writer, &reply).await?;
        }
        if ctx.shutdown {
            return Ok(());
        }
    }
}

async fn write_frame<W: AsyncWrite + Unpin>(
    config: &RcpReferenceConfig,
    writer: &mut W,
    reply: &Value,
) -> std::io::Result<()> {
    if !config.latency.is_zero() {
        tokio::time::sleep(config.latency).await;
    }
    let mut line = reply.to_string().into_bytes();
    line.push(b'\n');
    writer.write_all(&line).await?;
    writer.flush().await
}

struct TooLong;

/// One line without its newline; `None` at EOF. An over-long line is consumed
/// and reported, never buffered whole.
async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> std::io::Result<Option<Result<Vec<u8>, TooLong>>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            if line.is_empty() && !too_long {
                return Ok(None);
            }
            break;
        }
        let newline = buf.iter().position(|&b| b == b'\n');
        let end = newline.unwrap_or(buf.len());
        if !too_long {
            if line.len() + end > max {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(&buf[..end]);
            }
        }
        let consumed = newline.map_or(buf.len(), |i| i + 1);
        reader.consume(consumed);
        if newline.is_some() {
            break;
        }
    }
    Ok(Some(if too_long { Err(TooLong) } else { Ok(line) }))
}

fn parse_error(config: &RcpReferenceConfig) -> Value {
    if config.has(&l0::PARSE_ERROR) {
        error_reply(config, Value::Null, -32600, "invalid request")
    } else {
        error_reply(
            config,
            Value::Null,
            -32700,
            "parse error: the frame is not valid JSON",
        )
    }
}

/// One parsed body: a single message or a batch (spec §11).
fn handle_body(
    config: &RcpReferenceConfig,
    session: &mut Session,
    body: &Value,
    ctx: &mut FrameCtx,
) -> Option<Value> {
    let Value::Array(batch) = body else {
        return handle_message(config, session, body, ctx);
    };
    if batch.is_empty() {
        if config.has(&l0::EMPTY_BATCH) {
            return Some(json!([]));
        }
        return Some(error_reply(
            config,
            Value::Null,
            -32600,
            "an empty batch is not a request",
        ));
    }
    // The path names one method; a batch carries several, so it is not compared.
    ctx.path_method = None;
    ctx.in_batch = true;
    let replies: Vec<Value> = batch
        .iter()
        .filter_map(|member| {
            if ctx.shutdown {
                return None;
            }
            let reply = handle_message(config, session, member, ctx);
            let notification = member.get("id").is_none();
            if reply.is_none() && notification && config.has(&l0::BATCH) {
                return Some(error_reply(
                    config,
                    Value::Null,
                    -32600,
                    "a request needs an id",
                ));
            }
            reply
        })
        .collect();
    // A batch of notifications produces no output at all.
    (!replies.is_empty()).then_some(Value::Array(replies))
}

/// Methods that answer before `initialize` (spec §3 gating order, step 2).
const OPEN_METHODS: [&str; 4] = ["initialize", "info", "ping", "shutdown"];

/// Methods RCP/1 defines beyond the open ones, with the capability that gates each.
const GATED_METHODS: [(&str, &str); 13] = [
    ("embed", "embed"),
    ("embed/sparse", "sparseEmbed"),
    ("embed/multi", "multiVector"),
    ("rerank", "rerank"),
    ("retrieve", "retrieve"),
    ("query/transform", "transform"),
    ("graph", "graph"),
    ("index/add", "index"),
    ("index/delete", "index"),
    ("catalog/list", "catalog"),
    ("feedback", "feedback"),
    ("memory/build", "memory"),
    ("memory/recall", "memory"),
];

/// The capability gating `method`, or `None` when RCP does not define it.
/// Vendor methods `x-<vendor>/<name>` are gated by `x-<vendor>` (spec §1).
fn capability_of(method: &str) -> Option<String> {
    if let Some((_, cap)) = GATED_METHODS.iter().find(|(m, _)| *m == method) {
        return Some((*cap).to_owned());
    }
    let (vendor, name) = method.split_once('/')?;
    (vendor.starts_with("x-") && vendor.len() > 2 && !name.is_empty()).then(|| vendor.to_owned())
}

fn handle_message(
    config: &RcpReferenceConfig,
    session: &mut Session,
    message: &Value,
    ctx: &mut FrameCtx,
) -> Option<Value> {
    let Some(obj) = message.as_object() else {
        return Some(error_reply(
            config,
            Value::Null,
            -32600,
            "a request must be a JSON object",
        ));
    };
    let id = match obj.get("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id.clone()),
        // Spec §1: an id is a string or a number, never null.
        Some(_) => {
            return Some(error_reply(
                config,
                Value::Null,
                -32600,
                "`id` must be a string or a number",
            ));
        }
    };
    let reply_id = id.clone().unwrap_or(Value::Null);
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return id.map(|_| error_reply(config, reply_id, -32600, "`jsonrpc` must be \"2.0\""));
    }
    let Some(method) = obj.get("method").and_then(Value::as_str) else {
        return id.map(|_| error_reply(config, reply_id, -32600, "`method` must be a string"));
    };
    let Some(id) = id else {
        if ctx.in_batch {
            return None;
        }
        return answer_notification(config, session, method);
    };
    if let Some(path) = &ctx.path_method
        && path != method
    {
        return Some(error_reply(
            config,
            id,
            -32600,
            &format!("the path names `{path}` but the body names `{method}` (spec §5)"),
        ));
    }
    let empty = Map::new();
    let params = match obj.get("params") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(p)) => p,
        Some(_) => {
            return Some(invalid_params(
                config,
                id,
                "params",
                "`params` must be an object",
            ));
        }
    };
    if config.has(&l0::TOLERATES_UNKNOWN)
        && let Some(field) = unknown_field(method, params)
    {
        return Some(invalid_params(
            config,
            id,
            &field,
            &format!("unknown field `{field}`"),
        ));
    }
    Some(dispatch(config, session, method, params, id, ctx))
}

/// Notifications are never answered (spec §4.5), unless a fault says otherwise.
fn answer_notification(
    config: &RcpReferenceConfig,
    session: &Session,
    method: &str,
) -> Option<Value> {
    let (code, message) = if method == "notifications/cancel" {
        if !config.has(&l0::CANCEL_UNKNOWN_ID) {
            return None;
        }
        (-32015, "no request with that id")
    } else if method.starts_with("notifications/") {
        return None;
    } else if OPEN_METHODS.contains(&method) {
        if !config.has(&l0::NOTIFY_OPEN) {
            return None;
        }
        (-32600, "a request needs an id")
    } else if capability_of(method).is_some() {
        if !config.has(&l0::NOTIFY_GATED) {
            return None;
        }
        if session.initialized {
            (-32600, "a request needs an id")
        } else {
            (-32001, "not initialized")
        }
    } else {
        if !config.has(&l0::NOTIFY_UNKNOWN) {
            return None;
        }
        (-32004, "unknown method")
    };
    Some(error_reply(config, Value::Null, code, message))
}

fn dispatch(
    config: &RcpReferenceConfig,
    session: &mut Session,
    method: &str,
    params: &Map<String, Value>,
    id: Value,
    ctx: &mut FrameCtx,
) -> Value {
    let stateless = config.has(&l0::STATEFUL_HTTP);
    match method {
        "initialize" => return initialize(config, session, params, id, ctx),
        "info" => {
            if config.has(&l0::INFO_BEFORE_INIT) && !session.initialized && !stateless {
                return error_reply(config, id, -32001, "not initialized");
            }
            let mut result = server_description(config, None);
            if config.has(&l0::INFO_AFTER_INIT)
                && (session.initialized || stateless)
                && let Some(caps) = result
                    .get_mut("capabilities")
                    .and_then(Value::as_object_mut)
            {
                caps.insert("rerank".into(), json!({"methods": ["cross-encoder"]}));
            }
            return success(config, id, result);
        }
        "ping" => return ping(config, params, id),
        "shutdown" => {
            if config.has(&l0::SHUTDOWN) {
                return error_reply(config, id, -32004, "unknown method");
            }
            ctx.shutdown = true;
            return success(config, id, json!({}));
        }
        "notifications/cancel" if config.has(&l0::CANCEL_WITH_ID) => {
            return success(config, id, json!({}));
        }
        m if m.starts_with("notifications/") => {
            return error_reply(config, id, -32600, "notifications are sent without an id");
        }
        _ => {}
    }
    let open = session.initialized
        || session.gates_open
        || stateless
        || config.has(&l0::GATED_BEFORE_INIT);
    if !open {
        return error_reply(
            config,
            id,
            -32001,
            "not initialized: call `initialize` first",
        );
    }
    let Some(cap) = capability_of(method) else {
        let code = if config.has(&l0::UNKNOWN_METHOD) {
            -32601
        } else {
            -32004
        };
        return error_reply(config, id, code, &format!("RCP does not define `{method}`"));
    };
    if !advertised(config).contains_key(&cap) {
        let code = if config.has(&l0::UNADVERTISED_METHOD) {
            -32004
        } else {
            -32003
        };
        return error_reply(
            config,
            id,
            code,
            &format!("capability `{cap}` is not advertised"),
        );
    }
    match method {
        "retrieve" => match retrieve(config, params) {
            Ok(result) => success(config, id, result),
            Err((code, message, data)) => error_with_data(config, id, code, &message, data),
        },
        _ => error_reply(
            config,
            id,
            -32003,
            &format!("capability `{cap}` is not advertised"),
        ),
    }
}

fn initialize(
    config: &RcpReferenceConfig,
    session: &mut Session,
    params: &Map<String, Value>,
    id: Value,
    ctx: &mut FrameCtx,
) -> Value {
    let stateless = config.has(&l0::STATEFUL_HTTP);
    if session.initialized && !stateless && !config.has(&l0::REPEAT_INIT_REJECTED) {
        return error_reply(config, id, -32600, "the session is already initialized");
    }
    let version = match params.get("protocolVersion") {
        Some(v @ Value::Number(_)) if v.is_i64() || v.is_u64() => v.as_i64().unwrap_or(i64::MAX),
        _ => {
            return invalid_params(
                config,
                id,
                "protocolVersion",
                "`protocolVersion` must be an integer",
            );
        }
    };
    for field in ["client", "capabilities", "_meta"] {
        if params
            .get(field)
            .is_some_and(|v| !v.is_object() && !v.is_null())
        {
            return invalid_params(config, id, field, &format!("`{field}` must be an object"));
        }
    }
    if version < 1 && !config.has(&l0::VERSION_ZERO_REJECTED) {
        if config.has(&l0::FAILED_HANDSHAKE_UNINITIALIZED) {
            session.gates_open = true;
        }
        return error_with_data(
            config,
            id,
            -32002,
            "no common protocol version",
            json!({"detail": format!("this server speaks protocolVersion {PROTOCOL_VERSION}")}),
        );
    }
    let negotiated = if config.has(&l0::INITIALIZE_NEGOTIATES) {
        version.max(1).saturating_add(1)
    } else {
        version.clamp(1, PROTOCOL_VERSION)
    };
    session.initialized = true;
    let mut result = server_description(config, ctx.new_token.as_deref());
    result["protocolVersion"] = json!(negotiated);
    success(config, id, result)
}

/// The `initialize` / `info` result (spec §3: the same shape).
fn server_description(config: &RcpReferenceConfig, session_token: Option<&str>) -> Value {
    let name = if config.has(&l0::SERVER_IDENTITY) {
        ""
    } else {
        "protocheck-reference-rcp"
    };
    let mut meta = Map::new();
    if !config.has(&l0::DECLARES_LEVEL) {
        let level = if config.has(&l0::HIGHER_LEVEL_NOT_JUDGED) {
            "L1"
        } else {
            "L0"
        };
        meta.insert("conformance".into(), json!(level));
    }
    if let Some(token) = session_token {
        meta.insert("session".into(), json!(token));
    }
    json!({
        "protocolVersion": PROTOCOL_VERSION,
        "server": {"name": name, "version": env!("CARGO_PKG_VERSION")},
        "capabilities": Value::Object(advertised(config)),
        "_meta": Value::Object(meta),
    })
}

fn advertised(config: &RcpReferenceConfig) -> Map<String, Value> {
    let mut caps = Map::new();
    if !config.has(&l0::RETRIEVAL_CAPABILITY) {
        caps.insert(
            "retrieve".into(),
            json!({
                "maxK": MAX_K,
                "modes": ["dense"],
                "defaultMode": "dense",
                "deterministic": true,
                "scoreScale": "unbounded",
            }),
        );
    }
    caps
}

fn ping(config: &RcpReferenceConfig, params: &Map<String, Value>, id: Value) -> Value {
    let nonce = match params.get("nonce") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if config.has(&l0::PING_NUMERIC_NONCE) => Some(json!(n.to_string())),
        Some(Value::String(_)) if config.has(&l0::PING_STRING_NONCE) => None,
        Some(n @ (Value::String(_) | Value::Number(_))) => Some(n.clone()),
        Some(_) => {
            return invalid_params(config, id, "nonce", "`nonce` must be a string or a number");
        }
    };
    let result = match nonce {
        Some(n) => json!({"nonce": n}),
        None => json!({}),
    };
    success(config, id, result)
}

/// Fields each method understands, for the fault of RCP-L0-016 only: a correct
/// server ignores unknown fields (spec §1).
fn unknown_field(method: &str, params: &Map<String, Value>) -> Option<String> {
    let known: &[&str] = match method {
        "initialize" => &["protocolVersion", "client", "capabilities", "_meta"],
        "ping" => &["nonce", "_meta"],
        "info" | "shutdown" => &["_meta"],
        "retrieve" => &[
            "query",
            "k",
            "mode",
            "modality",
            "candidateK",
            "fusion",
            "rerank",
            "mmr",
            "rewrite",
            "filter",
            "minScore",
            "recency",
            "unit",
            "level",
            "tokenBudget",
            "sessionId",
            "includeText",
            "includeVectors",
            "seed",
            "indexVersion",
            "strict",
            "cursor",
            "_meta",
        ],
        _ => return None,
    };
    if let Some(field) = params.keys().find(|k| !known.contains(&k.as_str())) {
        return Some(field.clone());
    }
    if let Some(meta) = params.get("_meta").and_then(Value::as_object)
        && let Some(key) = meta
            .keys()
            .find(|k| !["progressToken", "logLevel", "idempotencyKey"].contains(&k.as_str()))
    {
        return Some(format!("_meta.{key}"));
    }
    if method == "initialize"
        && let Some(caps) = params.get("capabilities").and_then(Value::as_object)
        && let Some(key) = caps
            .keys()
            .find(|k| !["streaming", "log"].contains(&k.as_str()))
    {
        return Some(format!("capabilities.{key}"));
    }
    None
}

type RpcError = (i64, String, Value);

fn bad_param(field: &str, message: impl Into<String>) -> RpcError {
    (-32602, message.into(), json!({"field": field}))
}

/// `k`-like fields: an integer ≥ 1, booleans and strings refused (spec §3).
fn positive_int(
    config: &RcpReferenceConfig,
    params: &Map<String, Value>,
    field: &str,
) -> Result<Option<u64>, RpcError> {
    let Some(value) = params.get(field).filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    if field == "k" && config.has(&l0::MALFORMED_PARAMS) {
        // The fault: coerce whatever arrives into something usable.
        let n = match value {
            Value::String(s) => s.trim().parse::<i64>().unwrap_or(1),
            other => other.as_i64().unwrap_or(1),
        };
        return Ok(Some(n.max(1).unsigned_abs()));
    }
    match value.as_u64() {
        Some(n) if n >= 1 => Ok(Some(n)),
        _ => Err(bad_param(
            field,
            format!("`{field}` must be an integer ≥ 1"),
        )),
    }
}

fn query_text(query: &Value) -> Option<String> {
    match query {
        Value::String(s) => Some(s.clone()),
        Value::Object(block) => (block.get("type").and_then(Value::as_str) == Some("text"))
            .then(|| block.get("text")?.as_str().map(str::to_owned))?,
        Value::Array(blocks) if !blocks.is_empty() => {
            let texts: Option<Vec<String>> = blocks.iter().map(query_text).collect();
            texts.map(|t| t.join(" "))
        }
        _ => None,
    }
}

/// `retrieve` over the built-in corpus: term overlap, so hits are real, ranked
/// by descending score, unique, and never more than `k` (spec §5).
fn retrieve(config: &RcpReferenceConfig, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let query = params.get("query").and_then(query_text).ok_or_else(|| {
        bad_param(
            "query",
            "`query` must be a string, a text Content block or a list of them",
        )
    })?;
    let k = positive_int(config, params, "k")?.ok_or_else(|| bad_param("k", "`k` is required"))?;
    let candidate_k = positive_int(config, params, "candidateK")?;
    positive_int(config, params, "tokenBudget")?;
    if candidate_k.is_some_and(|c| c < k) {
        return Err(bad_param("candidateK", "`candidateK` must be ≥ `k`"));
    }
    let strict = match params.get("strict") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(bad_param("strict", "`strict` must be a boolean")),
    };
    let include_text = match params.get("includeText") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(bad_param("includeText", "`includeText` must be a boolean")),
    };
    let min_score = match params.get("minScore") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_f64()
                .ok_or_else(|| bad_param("minScore", "`minScore` must be a number"))?,
        ),
    };
    if let Some(version) = params.get("indexVersion").and_then(Value::as_str)
        && version != INDEX_VERSION
    {
        return Err((
            -32010,
            format!("snapshot `{version}` is not available"),
            json!({"retryable": false}),
        ));
    }
    let mut notes = Vec::new();
    let mut unsupported = Vec::new();
    match params.get("mode") {
        None | Some(Value::Null) => {}
        Some(Value::String(m)) if m == "dense" => {}
        Some(Value::String(m)) => {
            unsupported.push(("mode", format!("mode `{m}` is not advertised")))
        }
        Some(_) => return Err(bad_param("mode", "`mode` must be a string")),
    }
    if let Some(m) = params.get("modality").and_then(Value::as_str)
        && m != "text"
    {
        unsupported.push(("modality", format!("modality `{m}` is not advertised")));
    }
    for option in [
        "unit", "filter", "fusion", "mmr", "cursor", "level", "recency",
    ] {
        if params.get(option).is_some_and(|v| !v.is_null()) {
            unsupported.push((option, format!("`{option}` is not advertised")));
        }
    }
    for option in ["rerank", "rewrite"] {
        if params
            .get(option)
            .is_some_and(|v| !v.is_null() && *v != Value::Bool(false))
        {
            unsupported.push((option, format!("`{option}` is not advertised")));
        }
    }
    if let Some((option, message)) = unsupported.first()
        && strict
        && !config.has(&l0::UNSUPPORTED_OPTION)
    {
        return Err((-32005, message.clone(), json!({"option": option})));
    }
    // `strict:false` falls back openly, noting it (spec §5); the fault of
    // RCP-L0-019 falls back silently.
    if !strict {
        notes.extend(
            unsupported
                .iter()
                .map(|(_, m)| format!("{m}; ignored (strict:false)")),
        );
    }
    let k = k.min(MAX_K);
    let terms = tokens(&query);
    let mut scored: Vec<(f64, &str, &str)> = CORPUS
        .iter()
        .filter_map(|(doc_id, text)| {
            let words = tokens(text);
            let overlap = terms.iter().filter(|t| words.contains(*t)).count();
            let score = overlap as f64 / (words.len().max(1) as f64).sqrt();
            (overlap > 0 && min_score.is_none_or(|m| score >= m)).then_some((score, *doc_id, *text))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let candidates = scored.len();
    let hits: Vec<Value> = scored
        .into_iter()
        .take(usize::try_from(k).unwrap_or(usize::MAX))
        .map(|(score, doc_id, text)| {
            let score = (score * 10_000.0).round() / 10_000.0;
            if include_text {
                json!({"id": doc_id, "score": score, "text": text})
            } else {
                json!({"id": doc_id, "score": score})
            }
        })
        .collect();
    let mut usage = json!({"candidates": candidates});
    if !notes.is_empty() {
        usage["notes"] = json!(notes);
    }
    Ok(json!({"hits": hits, "indexVersion": INDEX_VERSION, "usage": usage}))
}

fn tokens(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 1)
        .map(str::to_lowercase)
        .collect()
}

/// The built-in corpus: short passages about retrieval, so queries find something.
const CORPUS: [(&str, &str); 10] = [
    (
        "ref-01",
        "Dense retrieval embeds queries and documents into vectors and ranks by cosine similarity.",
    ),
    (
        "ref-02",
        "Sparse retrieval such as BM25 scores documents by weighted term overlap with the query.",
    ),
    (
        "ref-03",
        "Hybrid retrieval fuses dense and sparse rankings, often with reciprocal rank fusion.",
    ),
    (
        "ref-04",
        "A cross-encoder reranker reads the query and a passage together to score relevance.",
    ),
    (
        "ref-05",
        "Chunking splits long documents into passages small enough to embed and retrieve.",
    ),
    (
        "ref-06",
        "Maximal marginal relevance trades relevance against diversity among retrieved passages.",
    ),
    (
        "ref-07",
        "Citations let an answer point back to the source passage and its position.",
    ),
    (
        "ref-08",
        "A conformance probe checks that a server follows the protocol it claims to speak.",
    ),
    (
        "ref-09",
        "Knowledge graphs link entities so retrieval can follow relations between them.",
    ),
    (
        "ref-10",
        "Query rewriting turns a vague question into a precise search for better recall.",
    ),
];

fn success(config: &RcpReferenceConfig, id: Value, result: Value) -> Value {
    finish(
        config,
        json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
}

fn error_reply(config: &RcpReferenceConfig, id: Value, code: i64, message: &str) -> Value {
    finish(
        config,
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
    )
}

fn error_with_data(
    config: &RcpReferenceConfig,
    id: Value,
    code: i64,
    message: &str,
    data: Value,
) -> Value {
    finish(
        config,
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message, "data": data}}),
    )
}

fn invalid_params(config: &RcpReferenceConfig, id: Value, field: &str, message: &str) -> Value {
    error_with_data(config, id, -32602, message, json!({"field": field}))
}

/// Applies the faults that bend every reply.
fn finish(config: &RcpReferenceConfig, mut reply: Value) -> Value {
    let echoed = match reply.get("id") {
        Some(Value::Number(n)) if config.has(&l0::NUMERIC_ID_ECHO) => Some(json!(n.to_string())),
        Some(Value::String(s)) if config.has(&l0::STRING_ID_ECHO) => {
            s.parse::<u64>().ok().map(|n| json!(n))
        }
        _ => None,
    };
    if let Some(id) = echoed {
        reply["id"] = id;
    }
    if config.has(&l0::WELL_FORMED) {
        reply["jsonrpc"] = json!("1.0");
    }
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(config: &RcpReferenceConfig, session: &mut Session, frame: Value) -> Option<Value> {
        handle_body(config, session, &frame, &mut FrameCtx::default())
    }

    #[test]
    fn every_rule_has_a_fault_and_unknown_ids_are_refused() {
        for rule in l0::RULES {
            assert!(
                RcpReferenceConfig::new([rule.id]).is_ok(),
                "{} has no fault switch",
                rule.id
            );
        }
        let err = RcpReferenceConfig::new(["RCP-L9-999"]).unwrap_err();
        assert!(err.contains("RCP-L0-001"), "{err}");
    }

    #[test]
    fn retrieve_ranks_real_hits_and_honours_k() {
        let config = RcpReferenceConfig::default();
        let mut session = Session {
            initialized: true,
            gates_open: false,
        };
        let reply = call(
            &config,
            &mut session,
            json!({"jsonrpc": "2.0", "id": 1, "method": "retrieve", "params": {"query": "dense sparse retrieval", "k": 2}}),
        )
        .unwrap();
        let hits = reply["result"]["hits"].as_array().unwrap();
        assert_eq!(hits.len(), 2);
        assert!(hits[0]["score"].as_f64().unwrap() >= hits[1]["score"].as_f64().unwrap());
        assert_ne!(hits[0]["id"], hits[1]["id"]);
    }

    #[test]
    fn batches_and_gating_follow_the_spec() {
        let config = RcpReferenceConfig::default();
        let mut session = Session::default();
        let reply = call(&config, &mut session, json!([])).unwrap();
        assert_eq!(reply["error"]["code"], -32600);
        let reply = call(
            &config,
            &mut session,
            json!([
                {"jsonrpc": "2.0", "id": 1, "method": "retrieve", "params": {"query": "x", "k": 1}},
                {"jsonrpc": "2.0", "method": "retrieve", "params": {"query": "x", "k": 1}},
                {"jsonrpc": "2.0", "id": "p", "method": "ping", "params": {"nonce": 5}}
            ]),
        )
        .unwrap();
        let replies = reply.as_array().unwrap();
        assert_eq!(replies.len(), 2);
        assert_eq!(replies[0]["error"]["code"], -32001);
        assert_eq!(replies[1]["result"]["nonce"], 5);
        assert!(
            call(
                &config,
                &mut session,
                json!([{"jsonrpc": "2.0", "method": "info"}])
            )
            .is_none()
        );
    }
}
