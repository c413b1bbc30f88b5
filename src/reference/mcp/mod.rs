//! The MCP reference server: MCP 2026-07-28 over Streamable HTTP, stateless,
//! correct by default. `--break RULE-ID` switches on a fault that breaks exactly
//! that rule of protocheck's MCP suite, so each rule can be shown to fail.
//!
//! What it serves at `/mcp`: `server/discover`; tools (`get_forecast` mirrors
//! its `region` argument into `Mcp-Param-Region`; `count` streams progress over
//! SSE; `ask_name` asks for input through MRTR and needs the elicitation
//! capability; `set_reminder` is the one tool with a side effect); resources
//! and a template; a prompt with argument completion; caching hints on every
//! cacheable result; `subscriptions/listen`; header validation before dispatch;
//! and the 2026-07-28 error codes. `/server.json` is its registry entry.
//!
//! It can also play a dual-era or a legacy-only (2025-11-25) server, for the
//! era detection of the suite ([`ReferenceEra`]).

use crate::suite::mcp::wire::{
    self, H_LAST_EVENT_ID, H_METHOD, H_NAME, H_PROTOCOL_VERSION, H_SESSION_ID, LEGACY_VERSION,
    LEGACY_VERSIONS, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION,
    META_SERVER_INFO, META_SUBSCRIPTION_ID, PROTOCOL_VERSION, code,
};
use crate::suite::mcp::{McpRule, aut, cac, dep, dsc, err, hdr, reg, res, sch, sec, stl};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::StreamExt;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod auth;
mod spelling;
mod tls;

pub use auth::{ISSUER_PATH, SCOPE_READ, SCOPE_TOOLS};
pub use tls::{CertificateFault, TestCertificate};

/// Largest request body accepted.
const MAX_BODY: usize = 1024 * 1024;
/// Most connections (and legacy sessions) remembered; older ones are forgotten.
const MAX_TRACKED: usize = 4096;
/// Keep-alive period and lifetime of a `subscriptions/listen` stream.
const LISTEN_KEEPALIVE: Duration = Duration::from_secs(15);
const LISTEN_KEEPALIVES: u32 = 40;
/// Pause between progress notifications of the `count` tool.
const COUNT_STEP: Duration = Duration::from_millis(20);

/// Which era the reference server plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReferenceEra {
    /// 2026-07-28 only (the default).
    #[default]
    Modern,
    /// 2026-07-28, and 2025-11-25 after an `initialize`.
    DualEra,
    /// 2025-11-25 only: `initialize`, sessions, no `server/discover`.
    LegacyOnly,
}

/// Behaviours the specification allows that a checker can misjudge. None is a
/// fault: a server with any of them is still correct, and protocheck must
/// grade it so (each one stands for a false verdict protocheck once gave).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Allowed {
    /// Dual-era only: a POST without `MCP-Protocol-Version` is a 2025-03-26
    /// request (streamable-http, "Protocol Version Header": a server supporting
    /// older clients MAY treat a request without the header as 2025-03-26), so
    /// `server/discover` sent that way is answered 200 with -32601.
    MissingVersionIsLegacy,
    /// The 403 to an invalid Origin has a `text/plain` body: the spec names the
    /// status, and the body MAY be a JSON-RPC error (so may be anything).
    PlainForbidden,
    /// `-32022`'s `data.supported` also names the legacy revisions the server
    /// once spoke, though `server/discover` lists 2026-07-28 only.
    LegacyInSupported,
    /// `ttlMs` written with a zero fraction (`300000.0`): an integer in JSON
    /// Schema 2020-12.
    IntegralFloatTtl,
    /// `tools/call` of a tool that does not exist is answered -32602 before
    /// `Mcp-Name` is looked at: the spec does not order the two checks.
    ToolLookupFirst,
}

/// How the reference server behaves: correct, or with some rules broken.
#[derive(Debug, Clone)]
pub struct McpReferenceConfig {
    faults: BTreeSet<String>,
    allowed: BTreeSet<Allowed>,
    /// The name half of MCP-HDR-006's fault alone (see [`Self::case_sensitive_names`]).
    case_sensitive_names: bool,
    era: ReferenceEra,
    tools_only: bool,
    side_effects: Arc<AtomicUsize>,
    /// Requests answered, shared by every server built from this configuration.
    requests: Arc<AtomicUsize>,
    /// With `--auth`: the key that signs and checks bearer tokens.
    auth: Option<Arc<[u8; 32]>>,
    /// Whether the server is reached over HTTPS (the scheme of its own URLs).
    tls: bool,
}

/// The rules whose fault the reference server can switch on.
const FAULTS: &[&McpRule] = &[
    &aut::CHALLENGE,
    &aut::PRM_SERVED,
    &aut::PRM_RESOURCE,
    &aut::AS_METADATA,
    &aut::ISS_PARAMETER,
    &aut::CHALLENGE_SCOPE,
    &aut::INSUFFICIENT_SCOPE,
    &aut::AUDIENCE,
    &aut::NO_OFFLINE_ACCESS,
    &aut::PKCE_S256,
    &aut::CIMD,
    &dsc::DISCOVER,
    &dsc::VERSIONS,
    &dsc::CURRENT_REVISION,
    &dsc::EXTENSION_IDS,
    &dsc::SERVER_INFO,
    &hdr::MISSING_METHOD,
    &hdr::MISSING_NAME,
    &hdr::NAME_MATCHES,
    &hdr::MISSING_VERSION,
    &hdr::VERSION_MATCHES,
    &hdr::CASE,
    &hdr::BASE64,
    &hdr::PARAM_MATCHES,
    &hdr::PARAM_CHARACTERS,
    &hdr::BEFORE_DISPATCH,
    &stl::NO_SESSION_ID,
    &stl::SESSION_IGNORED,
    &stl::COLD_REQUEST,
    &stl::NO_CONNECTION_STATE,
    &stl::GET_405,
    &stl::DELETE_405,
    &stl::LAST_EVENT_ID,
    &stl::LIST_PER_CONNECTION,
    &res::RESULT_TYPE,
    &res::RESULT_TYPE_KNOWN,
    &res::NO_SERVER_REQUESTS,
    &res::NOTIFICATION_202,
    &res::CONTENT_TYPE,
    &res::ACCEL_BUFFERING,
    &res::DETERMINISTIC_ORDER,
    &err::UNSUPPORTED_VERSION,
    &err::UNKNOWN_METHOD,
    &err::RESOURCE_NOT_FOUND,
    &err::NO_32042,
    &err::RESERVED_RANGE,
    &err::MISSING_META,
    &err::MISSING_CAPABILITY,
    &err::LEGACY_RANGE,
    &cac::TTL_PRESENT,
    &cac::SCOPE_PRESENT,
    &cac::SCOPE_VALUE,
    &cac::TTL_VALUE,
    &cac::PUBLIC_NOT_PERSONAL,
    &sch::HEADER_TOKEN,
    &sch::HEADER_CONTROLS,
    &sch::HEADER_UNIQUE,
    &sch::HEADER_TYPE,
    &sch::HEADER_REACHABLE,
    &sch::SCHEMA_VALID,
    &sch::HEADER_SAFE_NAMES,
    &sec::ORIGIN_403,
    &sec::HTTPS,
    &sec::NO_ECHO,
    &sec::ICONS,
    &sec::NETWORK_REF,
    &sec::SCHEMA_BOUNDS,
    &sec::NO_AUTH_REFLECTION,
    &dep::NO_PING,
    &dep::NO_SET_LEVEL,
    &dep::NO_SUBSCRIBE,
    &dep::NO_LEGACY_SSE,
    &dep::NO_DEPRECATED_CAPABILITIES,
    &dep::ACCEPTS_INITIALIZE,
    &dep::INITIALIZE_ERROR,
    &reg::SERVER_JSON_VALID,
    &reg::NAMESPACE,
    &reg::SEMVER,
    &reg::REMOTE_MATCHES,
];

/// The ids `--break` accepts.
pub fn supported_faults() -> Vec<&'static str> {
    FAULTS.iter().map(|r| r.rule.id).collect()
}

impl McpReferenceConfig {
    /// A configuration breaking the rules in `faults`; refuses ids it does not know.
    pub fn new(faults: BTreeSet<String>) -> Result<Self, String> {
        let known = supported_faults();
        if let Some(unknown) = faults.iter().find(|f| !known.contains(&f.as_str())) {
            return Err(format!(
                "`{unknown}` is not a rule the MCP reference server can break; known: {}",
                known.join(", ")
            ));
        }
        Ok(Self {
            faults,
            allowed: BTreeSet::new(),
            case_sensitive_names: false,
            era: ReferenceEra::Modern,
            tools_only: false,
            side_effects: Arc::new(AtomicUsize::new(0)),
            requests: Arc::new(AtomicUsize::new(0)),
            auth: None,
            tls: false,
        })
    }

    /// Require OAuth bearer tokens on `/mcp` and serve the discovery documents
    /// (basic/authorization). Tokens come from [`Self::mint_token`].
    pub fn with_auth(mut self) -> Self {
        self.auth = Some(Arc::new(rand::random()));
        self
    }

    /// Whether tokens are required.
    pub fn requires_auth(&self) -> bool {
        self.auth.is_some()
    }

    /// A token this server accepts when `audience` is its canonical URI
    /// (`http://host:port/mcp`), with the space-separated `scope`; `None`
    /// without [`Self::with_auth`].
    pub fn mint_token(&self, audience: &str, scope: &str, lifetime: Duration) -> Option<String> {
        let key = self.auth.as_deref()?;
        Some(auth::mint(key, audience, scope, lifetime))
    }

    /// HTTP requests answered so far by servers built from this configuration
    /// (benchmarks report requests per run with it).
    pub fn requests_served(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }

    /// Looks the `Mcp-Method` header up case-sensitively, as `mcp-method`: a
    /// request spelling it `Mcp-Method` (as the spec does) is refused as
    /// lacking it. One half of `--break MCP-HDR-006` (the other compares header
    /// values case-insensitively), for tests that need this half alone. Plain
    /// HTTP served by [`serve_mcp_reference`] only: names are read as they
    /// arrive on the connection.
    pub fn case_sensitive_names(mut self) -> Self {
        self.case_sensitive_names = true;
        self
    }

    /// The same server with a behaviour the spec allows (see [`Allowed`]).
    pub fn allowing(mut self, behaviour: Allowed) -> Self {
        self.allowed.insert(behaviour);
        self
    }

    pub fn with_era(mut self, era: ReferenceEra) -> Self {
        self.era = era;
        self
    }

    /// Offer tools only: no resources, prompts, completion or list-change
    /// notifications, like many real servers.
    pub fn tools_only(mut self) -> Self {
        self.tools_only = true;
        self
    }

    pub fn faults(&self) -> &BTreeSet<String> {
        &self.faults
    }

    /// How many times a tool with a side effect (`set_reminder`) has run.
    pub fn side_effect_calls(&self) -> usize {
        self.side_effects.load(Ordering::SeqCst)
    }
}

/// What the server remembers about one TCP connection: only what a fault needs.
#[derive(Debug, Default, Clone)]
struct Connection {
    ordinal: usize,
    capabilities: Option<Value>,
}

struct Inner {
    config: McpReferenceConfig,
    /// Key of the HMAC that protects `requestState` (mrtr page: attacker-controlled).
    state_key: [u8; 32],
    discovered: AtomicBool,
    list_calls: AtomicUsize,
    next_connection: AtomicUsize,
    connections: Mutex<HashMap<SocketAddr, Connection>>,
    legacy_sessions: Mutex<HashSet<String>>,
    /// How clients spelled `Mcp-*` header names, per connection.
    spellings: spelling::Spellings,
}

type Shared = Arc<Inner>;

impl Inner {
    fn breaks(&self, rule: &McpRule) -> bool {
        self.config.faults.contains(rule.rule.id)
    }

    fn allows(&self, behaviour: Allowed) -> bool {
        self.config.allowed.contains(&behaviour)
    }

    /// Whether the server, looking `name` up case-sensitively in lower case,
    /// fails to find it though the client sent it in another spelling.
    fn misses_by_case(&self, peer: Option<SocketAddr>, name: &str) -> bool {
        if !(self.breaks(&hdr::CASE) || self.config.case_sensitive_names) {
            return false;
        }
        let Some(names) = peer.and_then(|p| self.spellings.of(p)) else {
            return false;
        };
        names.iter().any(|n| n.eq_ignore_ascii_case(name)) && !names.iter().any(|n| n == name)
    }

    /// Called when a connection is accepted: it starts with no history.
    fn accepted(&self, peer: SocketAddr) {
        let ordinal = self.next_connection.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut map) = self.connections.lock() {
            if map.len() >= MAX_TRACKED {
                map.clear();
            }
            map.insert(
                peer,
                Connection {
                    ordinal,
                    capabilities: None,
                },
            );
        }
    }

    fn connection(&self, peer: Option<SocketAddr>) -> Option<Connection> {
        let peer = peer?;
        self.connections.lock().ok()?.get(&peer).cloned()
    }

    fn remember_capabilities(&self, peer: Option<SocketAddr>, caps: &Value) {
        if let (Some(peer), Ok(mut map)) = (peer, self.connections.lock())
            && let Some(conn) = map.get_mut(&peer)
        {
            conn.capabilities = Some(caps.clone());
        }
    }

    /// The versions `server/discover` and -32022 name.
    fn advertised_versions(&self) -> Vec<&'static str> {
        if self.breaks(&dsc::CURRENT_REVISION) {
            vec!["DRAFT-2026-v1"]
        } else if self.breaks(&dep::ACCEPTS_INITIALIZE) || self.config.era == ReferenceEra::DualEra
        {
            vec![PROTOCOL_VERSION, LEGACY_VERSION]
        } else {
            vec![PROTOCOL_VERSION]
        }
    }
}

/// The server's icon: a `data:` URI, so it is same-origin by construction
/// (basic/index#icons).
const ICON: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn server_info() -> Value {
    json!({
        "name": "protocheck-reference-mcp",
        "version": env!("CARGO_PKG_VERSION"),
        "icons": [{"src": ICON, "mimeType": "image/png", "sizes": ["1x1"]}]
    })
}

/// The router, for tests that serve it themselves. Connection-scoped faults
/// (STL-004, STL-008) need [`serve_mcp_reference`], which tracks connections.
pub fn mcp_router(config: McpReferenceConfig) -> Router {
    router(Arc::new(Inner::new(config)))
}

impl Inner {
    fn new(config: McpReferenceConfig) -> Self {
        Self {
            config,
            state_key: rand::random(),
            discovered: AtomicBool::new(false),
            list_calls: AtomicUsize::new(0),
            next_connection: AtomicUsize::new(0),
            connections: Mutex::new(HashMap::new()),
            legacy_sessions: Mutex::new(HashSet::new()),
            spellings: spelling::Spellings::default(),
        }
    }
}

fn router(state: Shared) -> Router {
    let requests = state.config.requests.clone();
    Router::new()
        .route(
            "/mcp",
            get(handle_get).post(handle_post).delete(handle_delete),
        )
        .route("/sse", get(handle_legacy_sse))
        .route("/server.json", get(handle_server_json))
        .route(
            "/.well-known/oauth-protected-resource",
            get(handle_protected_resource),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(handle_protected_resource),
        )
        .route(
            "/.well-known/oauth-authorization-server/as",
            get(handle_authorization_server),
        )
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                requests.fetch_add(1, Ordering::Relaxed);
                next.run(req)
            },
        ))
        .with_state(state)
}

/// Serves the reference server on `listener` until the future is dropped,
/// tracking connections so that connection-scoped faults work.
pub async fn serve_mcp_reference(
    listener: tokio::net::TcpListener,
    config: McpReferenceConfig,
) -> std::io::Result<()> {
    let state = Arc::new(Inner::new(config));
    let app = router(state.clone());
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(_) => {
                // Out of descriptors or a reset before accept: wait, go on.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        state.accepted(peer);
        let stream = spelling::Recording::new(tcp, peer, state.spellings.clone());
        let app = app.clone().layer(axum::Extension(ConnectInfo(peer)));
        tokio::spawn(async move {
            let service = hyper_util::service::TowerToHyperService::new(app);
            let _ =
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .serve_connection_with_upgrades(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
        });
    }
}

/// Serves the reference server over HTTPS with `certificate` until the future
/// is dropped, tracking connections like [`serve_mcp_reference`].
pub async fn serve_mcp_reference_tls(
    listener: tokio::net::TcpListener,
    mut config: McpReferenceConfig,
    certificate: TestCertificate,
) -> std::io::Result<()> {
    config.tls = true;
    let state = Arc::new(Inner::new(config));
    let acceptor = tokio_rustls::TlsAcceptor::from(certificate.server.clone());
    let app = router(state.clone());
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(_) => {
                // Out of descriptors or a reset before accept: wait, go on.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        state.accepted(peer);
        let acceptor = acceptor.clone();
        let app = app.clone().layer(axum::Extension(ConnectInfo(peer)));
        tokio::spawn(async move {
            // A client that refuses the certificate ends the handshake.
            let Ok(stream) = acceptor.accept(tcp).await else {
                return;
            };
            let service = hyper_util::service::TowerToHyperService::new(app);
            let _ =
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .serve_connection_with_upgrades(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
        });
    }
}

/// `protocheck reference mcp`.
#[derive(Debug, clap::Args)]
pub struct McpReferenceArgs {
    /// Port to listen on.
    #[arg(long, default_value_t = 8765)]
    pub port: u16,
    /// Address to bind; keep the loopback default unless you mean to expose it.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: String,
    /// Break one rule of the MCP suite (repeatable), e.g. `--break MCP-HDR-001`.
    #[arg(long = "break", value_name = "RULE-ID")]
    pub faults: Vec<String>,
    /// Require OAuth bearer tokens; serve protected resource metadata and a
    /// built-in authorization server's discovery documents. Test tokens are
    /// printed at start-up.
    #[arg(long)]
    pub auth: bool,
    /// Serve HTTPS with a certificate authority and a certificate for
    /// localhost made at start-up; the CA is printed so a client can trust it.
    /// With `--break MCP-SEC-002` the certificate is expired.
    #[arg(long)]
    pub tls: bool,
}

pub async fn run_mcp_reference(args: McpReferenceArgs) -> anyhow::Result<()> {
    let mut config = McpReferenceConfig::new(args.faults.into_iter().collect())
        .map_err(|e| anyhow::anyhow!(e))?;
    if args.auth {
        config = config.with_auth();
    }
    let listener = tokio::net::TcpListener::bind((args.bind.as_str(), args.port)).await?;
    let addr = listener.local_addr()?;
    let scheme = if args.tls { "https" } else { "http" };
    let broken = if config.faults().is_empty() {
        "correct".to_owned()
    } else {
        format!(
            "breaking {}",
            config
                .faults()
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    eprintln!("MCP {PROTOCOL_VERSION} reference server ({broken}) on {scheme}://{addr}/mcp");
    if config.requires_auth() {
        // Test tokens for this process only: the key dies with it.
        let audience = format!("{scheme}://{addr}/mcp");
        let lifetime = Duration::from_secs(3600);
        let full = config.mint_token(&audience, &format!("{SCOPE_READ} {SCOPE_TOOLS}"), lifetime);
        let low = config.mint_token(&audience, SCOPE_READ, lifetime);
        if let (Some(full), Some(low)) = (full, low) {
            eprintln!("bearer token (all scopes, 1 h):  {full}");
            eprintln!("bearer token ({SCOPE_READ} only, 1 h): {low}");
        }
    }
    if args.tls {
        let fault = if config.faults().contains(sec::HTTPS.rule.id) {
            CertificateFault::Expired
        } else {
            CertificateFault::None
        };
        let certificate = TestCertificate::generate(fault).map_err(|e| anyhow::anyhow!(e))?;
        eprintln!(
            "test CA certificate (DER, hex; trust it for this server only): {}",
            hex::encode(&certificate.ca_der)
        );
        tokio::select! {
            served = serve_mcp_reference_tls(listener, config, certificate) => served?,
            _ = tokio::signal::ctrl_c() => {}
        }
    } else {
        tokio::select! {
            served = serve_mcp_reference(listener, config) => served?,
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Responses

/// What a request is answered with, before it becomes HTTP.
enum Out {
    Json {
        status: StatusCode,
        body: Value,
        content_type: &'static str,
        session: Option<String>,
    },
    Empty(StatusCode),
    /// An SSE response: frames sent with a pause before each.
    Stream(Vec<Value>),
    /// A `subscriptions/listen` stream: the acknowledgement, keep-alives, the final result.
    Listen {
        ack: Value,
        last: Value,
    },
}

impl Out {
    fn json(status: StatusCode, body: Value) -> Self {
        Self::Json {
            status,
            body,
            content_type: "application/json",
            session: None,
        }
    }
}

fn rpc_error(
    status: StatusCode,
    id: &Value,
    code: i64,
    message: impl Into<String>,
    data: Option<Value>,
) -> Out {
    let mut error = json!({"code": code, "message": message.into()});
    if let Some(data) = data {
        error["data"] = data;
    }
    let mut body = json!({"jsonrpc": "2.0", "error": error});
    // An id that could not be read is left out (basic/index#error-responses).
    if !id.is_null() {
        body["id"] = id.clone();
    }
    Out::json(status, body)
}

fn mismatch(id: &Value, message: impl Into<String>) -> Out {
    rpc_error(
        StatusCode::BAD_REQUEST,
        id,
        code::HEADER_MISMATCH,
        message,
        None,
    )
}

fn invalid_params(id: &Value, message: impl Into<String>, data: Option<Value>) -> Out {
    rpc_error(
        StatusCode::BAD_REQUEST,
        id,
        code::INVALID_PARAMS,
        message,
        data,
    )
}

fn method_not_found(state: &Inner, id: &Value, method: &str) -> Out {
    let status = if state.breaks(&err::UNKNOWN_METHOD) && !REMOVED.contains(&method) {
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    };
    rpc_error(
        status,
        id,
        code::METHOD_NOT_FOUND,
        format!("Method not found: {method}"),
        None,
    )
}

fn sse_bytes(frame: &Value) -> Bytes {
    Bytes::from(format!("event: message\ndata: {frame}\n\n"))
}

fn respond(state: &Inner, out: Out) -> Response {
    let mut resp = match out {
        Out::Json {
            status,
            body,
            content_type,
            session,
        } => {
            // A plain-text body is written as it is, not as a JSON string.
            let text = match &body {
                Value::String(t) if !content_type.contains("json") => t.clone(),
                other => other.to_string(),
            };
            let mut resp = (status, text).into_response();
            resp.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
            if let Some(sid) = session
                && let Ok(v) = HeaderValue::from_str(&sid)
            {
                resp.headers_mut().insert(H_SESSION_ID, v);
            }
            resp
        }
        Out::Empty(status) => status.into_response(),
        Out::Stream(frames) => {
            let stream = futures::stream::iter(frames).then(|frame| async move {
                tokio::time::sleep(COUNT_STEP).await;
                Ok::<_, Infallible>(sse_bytes(&frame))
            });
            sse_response(state, Body::from_stream(stream))
        }
        Out::Listen { ack, last } => {
            let ack = sse_bytes(&ack);
            let last = sse_bytes(&last);
            let stream = futures::stream::unfold(0u32, move |n| {
                let (ack, last) = (ack.clone(), last.clone());
                async move {
                    match n {
                        0 => Some((Ok::<_, Infallible>(ack), 1)),
                        n if n > LISTEN_KEEPALIVES => None,
                        n => {
                            tokio::time::sleep(LISTEN_KEEPALIVE).await;
                            // The graceful end: a final result with the subscription id.
                            let frame = if n == LISTEN_KEEPALIVES {
                                last
                            } else {
                                Bytes::from_static(b":\n\n")
                            };
                            Some((Ok(frame), n + 1))
                        }
                    }
                }
            });
            sse_response(state, Body::from_stream(stream))
        }
    };
    if state.breaks(&stl::NO_SESSION_ID) {
        let minted = format!("{:032x}", rand::random::<u128>());
        if let Ok(v) = HeaderValue::from_str(&minted) {
            resp.headers_mut().insert(H_SESSION_ID, v);
        }
    }
    resp
}

fn sse_response(state: &Inner, body: Body) -> Response {
    let mut resp = Response::new(body);
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if !state.breaks(&res::ACCEL_BUFFERING) {
        h.insert(wire::H_ACCEL_BUFFERING, HeaderValue::from_static("no"));
    }
    resp
}

// ---------------------------------------------------------------------------
// HTTP handlers

async fn handle_protected_resource(State(state): State<Shared>, headers: HeaderMap) -> Response {
    auth::protected_resource(&state, &headers)
}

async fn handle_authorization_server(State(state): State<Shared>, headers: HeaderMap) -> Response {
    auth::authorization_server(&state, &headers)
}

async fn handle_get(State(state): State<Shared>, headers: HeaderMap) -> Response {
    if let Some(refused) = auth::check(&state, &headers, None) {
        return refused;
    }
    if state.breaks(&stl::GET_405) {
        // The 2025-11-25 standalone stream: open, a comment, then closed.
        return sse_response(&state, Body::from(":stream\n\n"));
    }
    method_not_allowed()
}

async fn handle_delete(State(state): State<Shared>, headers: HeaderMap) -> Response {
    if let Some(refused) = auth::check(&state, &headers, None) {
        return refused;
    }
    if state.config.era == ReferenceEra::LegacyOnly
        && let Some(sid) = headers.get(H_SESSION_ID).and_then(|v| v.to_str().ok())
        && let Ok(mut sessions) = state.legacy_sessions.lock()
        && sessions.remove(sid)
    {
        return StatusCode::OK.into_response();
    }
    if state.breaks(&stl::DELETE_405) {
        return StatusCode::OK.into_response();
    }
    method_not_allowed()
}

fn method_not_allowed() -> Response {
    let mut resp = StatusCode::METHOD_NOT_ALLOWED.into_response();
    resp.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    resp
}

async fn handle_legacy_sse(State(state): State<Shared>) -> Response {
    if !state.breaks(&dep::NO_LEGACY_SSE) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let session = format!("{:016x}", rand::random::<u64>());
    sse_response(
        &state,
        Body::from(format!(
            "event: endpoint\ndata: /messages?sessionId={session}\n\n"
        )),
    )
}

async fn handle_server_json(State(state): State<Shared>, headers: HeaderMap) -> Response {
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("127.0.0.1");
    let path = if state.breaks(&reg::REMOTE_MATCHES) {
        "/mcp-v2"
    } else {
        "/mcp"
    };
    let description = if state.breaks(&reg::SERVER_JSON_VALID) {
        "protocheck's MCP reference server. ".repeat(5)
    } else {
        "protocheck's MCP 2026-07-28 reference server".to_owned()
    };
    let name = if state.breaks(&reg::NAMESPACE) {
        "protocheck-reference/mcp"
    } else {
        "io.github.protocheck/reference-mcp"
    };
    let version = if state.breaks(&reg::SEMVER) {
        "v1.0"
    } else {
        "0.1.0"
    };
    let doc = json!({
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
        "name": name,
        "description": description,
        "version": version,
        "repository": {"url": "https://github.com/protocheck/protocheck", "source": "github"},
        "remotes": [{"type": "streamable-http", "url": format!("{}://{host}{path}", if state.config.tls { "https" } else { "http" })}]
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        doc.to_string(),
    )
        .into_response()
}

async fn handle_post(State(state): State<Shared>, req: Request) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    let headers = req.headers().clone();
    let body = match axum::body::to_bytes(req.into_body(), MAX_BODY).await {
        Ok(b) => b,
        Err(_) => {
            let out = rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                &Value::Null,
                code::INVALID_REQUEST,
                "request body too large",
                None,
            );
            return respond(&state, out);
        }
    };
    if state.config.auth.is_some() {
        let method = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|m| m.get("method").and_then(Value::as_str).map(str::to_owned));
        if let Some(refused) = auth::check(&state, &headers, method.as_deref()) {
            return refused;
        }
    }
    let out = process(&state, peer, &headers, &body);
    respond(&state, echo_faults(&state, &headers, out))
}

/// The faults of MCP-SEC-003 and MCP-SEC-007: error messages that repeat the
/// request's headers (all but Authorization) or its Authorization header.
fn echo_faults(state: &Inner, headers: &HeaderMap, mut out: Out) -> Out {
    let echo_headers = state.breaks(&sec::NO_ECHO);
    let echo_authorization = state.breaks(&sec::NO_AUTH_REFLECTION);
    if !echo_headers && !echo_authorization {
        return out;
    }
    if let Out::Json { status, body, .. } = &mut out
        && status.as_u16() >= 400
        && let Some(message) = body.pointer_mut("/error/message")
        && let Some(text) = message.as_str()
    {
        let mut text = text.to_owned();
        for (name, value) in headers {
            let is_authorization = *name == header::AUTHORIZATION;
            if (is_authorization && echo_authorization) || (!is_authorization && echo_headers) {
                text.push_str(&format!(
                    " [{name}: {}]",
                    value.to_str().unwrap_or("(not text)")
                ));
            }
        }
        *message = Value::String(text);
    }
    out
}

/// An `Origin` that is not this machine is refused (streamable-http, "Security
/// & Endpoint": DNS rebinding).
fn origin_allowed(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Some(host) = origin
        .to_str()
        .ok()
        .and_then(|o| url::Url::parse(o).ok())
        .and_then(|u| u.host_str().map(str::to_owned))
    else {
        return false;
    };
    matches!(host.as_str(), "localhost" | "127.0.0.1" | "[::1]")
}

fn process(state: &Inner, peer: Option<SocketAddr>, headers: &HeaderMap, body: &[u8]) -> Out {
    if !state.breaks(&sec::ORIGIN_403) && !origin_allowed(headers) {
        if state.allows(Allowed::PlainForbidden) {
            return Out::Json {
                status: StatusCode::FORBIDDEN,
                body: Value::String("Forbidden: Origin not allowed".into()),
                content_type: "text/plain; charset=utf-8",
                session: None,
            };
        }
        return rpc_error(
            StatusCode::FORBIDDEN,
            &Value::Null,
            code::INVALID_REQUEST,
            "Origin not allowed",
            None,
        );
    }
    let Ok(message) = serde_json::from_slice::<Value>(body) else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            &Value::Null,
            code::PARSE_ERROR,
            "Parse error",
            None,
        );
    };
    let Some(msg) = message.as_object() else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            &Value::Null,
            code::INVALID_REQUEST,
            "Invalid request: not a JSON-RPC object",
            None,
        );
    };
    let Some(method) = msg.get("method").and_then(Value::as_str) else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            &Value::Null,
            code::INVALID_REQUEST,
            "Invalid request: clients send requests and notifications only",
            None,
        );
    };
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    if !msg.contains_key("id") {
        // A notification (streamable-http, "Sending Messages" 5).
        return if state.breaks(&res::NOTIFICATION_202) {
            Out::Empty(StatusCode::NO_CONTENT)
        } else {
            Out::Empty(StatusCode::ACCEPTED)
        };
    }
    if !(id.is_string() || id.is_i64() || id.is_u64()) {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            &Value::Null,
            code::INVALID_REQUEST,
            "Invalid request: id must be a string or an integer",
            None,
        );
    }
    let legacy = match state.config.era {
        ReferenceEra::Modern => false,
        ReferenceEra::LegacyOnly => true,
        ReferenceEra::DualEra => {
            (state.allows(Allowed::MissingVersionIsLegacy)
                && !headers.contains_key(H_PROTOCOL_VERSION))
                || (headers.get(H_METHOD).is_none()
                    && (method == "initialize"
                        || headers
                            .get(H_PROTOCOL_VERSION)
                            .and_then(|v| v.to_str().ok())
                            .is_some_and(|v| LEGACY_VERSIONS.contains(&v))))
        }
    };
    let out = if legacy {
        legacy_request(state, headers, &id, method, msg.get("params"))
    } else {
        modern_request(state, peer, headers, &id, method, msg.get("params"))
    };
    if method == "initialize" && !legacy {
        return name_versions(state, out);
    }
    out
}

/// A modern-only server SHOULD name its versions in any error answering
/// `initialize` (versioning page): legacy clients cannot fall forward.
fn name_versions(state: &Inner, out: Out) -> Out {
    if state.breaks(&dep::INITIALIZE_ERROR) {
        return out;
    }
    match out {
        Out::Json {
            status,
            mut body,
            content_type,
            session,
        } => {
            let versions = state.advertised_versions();
            if let Some(error) = body.get_mut("error").and_then(Value::as_object_mut) {
                let message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                error.insert(
                    "message".into(),
                    json!(format!(
                        "{message}. This server does not use initialize: it speaks MCP {} \
                         (per-request _meta, server/discover)",
                        versions.join(", ")
                    )),
                );
                let data = error.entry("data").or_insert_with(|| json!({}));
                if let Some(d) = data.as_object_mut() {
                    d.insert("supported".into(), json!(versions));
                }
            }
            Out::Json {
                status,
                body,
                content_type,
                session,
            }
        }
        other => other,
    }
}

/// Methods 2026-07-28 removed; answered as unknown.
const REMOVED: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

const METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "subscriptions/listen",
];

/// A header's text: `None` when absent, `Err` when it is not visible ASCII.
fn header_text<'h>(headers: &'h HeaderMap, name: &str) -> Option<Result<&'h str, ()>> {
    headers.get(name).map(|v| v.to_str().map_err(|_| ()))
}

/// What a validated request carries.
struct Validated<'a> {
    id: &'a Value,
    method: &'a str,
    params: Map<String, Value>,
    capabilities: Value,
    client_name: Option<String>,
}

fn modern_request(
    state: &Inner,
    peer: Option<SocketAddr>,
    headers: &HeaderMap,
    id: &Value,
    method: &str,
    params: Option<&Value>,
) -> Out {
    match validate(state, peer, headers, id, method, params) {
        Ok(request) => dispatch(state, peer, request),
        Err(out) => out,
    }
}

/// Header and `_meta` validation, all of it before dispatch
/// (streamable-http#server-validation, basic/index#meta).
fn validate<'a>(
    state: &Inner,
    peer: Option<SocketAddr>,
    headers: &HeaderMap,
    id: &'a Value,
    method: &'a str,
    params: Option<&Value>,
) -> Result<Validated<'a>, Out> {
    if state.breaks(&hdr::BEFORE_DISPATCH) && !METHODS.contains(&method) {
        return Err(method_not_found(state, id, method));
    }
    let method_header = if state.misses_by_case(peer, H_METHOD) {
        None
    } else {
        header_text(headers, H_METHOD)
    };
    match method_header {
        // The fault: Mcp-Method required on server/discover only.
        None if state.breaks(&hdr::MISSING_METHOD) && method != "server/discover" => {}
        None => {
            return Err(mismatch(
                id,
                "Header mismatch: the Mcp-Method header is missing",
            ));
        }
        Some(Err(())) => {
            return Err(mismatch(
                id,
                "Header mismatch: Mcp-Method holds invalid characters",
            ));
        }
        Some(Ok(value)) => {
            let same = if state.breaks(&hdr::CASE) {
                value.eq_ignore_ascii_case(method)
            } else {
                value == method
            };
            if !same {
                return Err(mismatch(
                    id,
                    format!(
                        "Header mismatch: Mcp-Method header value '{value}' does not match body value '{method}'"
                    ),
                ));
            }
        }
    }

    let params = match params {
        None => Map::new(),
        Some(Value::Object(p)) => p.clone(),
        Some(_) => return Err(invalid_params(id, "params must be an object", None)),
    };
    let Some(meta) = params.get("_meta").and_then(Value::as_object) else {
        return Err(invalid_params(
            id,
            "Invalid params: params._meta is required",
            None,
        ));
    };
    let header_version = header_text(headers, H_PROTOCOL_VERSION);
    let meta_version = match meta.get(META_PROTOCOL_VERSION).and_then(Value::as_str) {
        Some(v) => v.to_owned(),
        None => match &header_version {
            Some(Ok(v)) if state.breaks(&err::MISSING_META) => (*v).to_owned(),
            _ => {
                return Err(invalid_params(
                    id,
                    format!(
                        "Invalid params: _meta is missing the required {META_PROTOCOL_VERSION}"
                    ),
                    None,
                ));
            }
        },
    };
    let connection = state.connection(peer);
    let capabilities = match meta.get(META_CLIENT_CAPABILITIES) {
        Some(c @ Value::Object(_)) => c.clone(),
        Some(_) => {
            return Err(invalid_params(
                id,
                format!("Invalid params: {META_CLIENT_CAPABILITIES} must be an object"),
                None,
            ));
        }
        None => match connection.and_then(|c| c.capabilities) {
            Some(remembered) if state.breaks(&stl::NO_CONNECTION_STATE) => remembered,
            _ => {
                return Err(invalid_params(
                    id,
                    format!(
                        "Invalid params: _meta is missing the required {META_CLIENT_CAPABILITIES}"
                    ),
                    None,
                ));
            }
        },
    };
    match header_version {
        None if state.breaks(&hdr::MISSING_VERSION) => {}
        None => {
            return Err(mismatch(
                id,
                "Header mismatch: the MCP-Protocol-Version header is missing",
            ));
        }
        Some(Err(())) => {
            return Err(mismatch(
                id,
                "Header mismatch: MCP-Protocol-Version holds invalid characters",
            ));
        }
        Some(Ok(v)) if v != meta_version && !state.breaks(&hdr::VERSION_MATCHES) => {
            return Err(mismatch(
                id,
                format!(
                    "Header mismatch: MCP-Protocol-Version header value '{v}' does not match _meta value '{meta_version}'"
                ),
            ));
        }
        Some(Ok(_)) => {}
    }
    if meta_version != PROTOCOL_VERSION {
        let data = if state.breaks(&err::UNSUPPORTED_VERSION) {
            json!({"requested": meta_version})
        } else {
            let mut supported = state.advertised_versions();
            if state.allows(Allowed::LegacyInSupported) {
                for v in LEGACY_VERSIONS {
                    if !supported.contains(v) {
                        supported.push(v);
                    }
                }
            }
            json!({"supported": supported, "requested": meta_version})
        };
        return Err(rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            code::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            Some(data),
        ));
    }
    if state.allows(Allowed::ToolLookupFirst)
        && method == "tools/call"
        && let Some(name) = params.get("name").and_then(Value::as_str)
        && !tools(state, None).iter().any(|t| t["name"] == name)
    {
        return Err(invalid_params(id, format!("Unknown tool: {name}"), None));
    }
    if let Some(field) = wire::name_field(method) {
        validate_name(state, headers, id, field, params.get(field))?;
    }
    if method == "tools/call"
        && let Some(tool) = params
            .get("name")
            .and_then(Value::as_str)
            .and_then(|n| tools(state, None).into_iter().find(|t| t["name"] == n))
    {
        let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
        validate_params(state, headers, id, &tool["inputSchema"], &arguments)?;
    }

    if state.breaks(&stl::SESSION_IGNORED) && headers.contains_key(H_SESSION_ID) {
        return Err(rpc_error(
            StatusCode::NOT_FOUND,
            id,
            code::INVALID_REQUEST,
            "Session not found",
            None,
        ));
    }
    if state.breaks(&stl::LAST_EVENT_ID) && headers.contains_key(H_LAST_EVENT_ID) {
        return Err(rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            code::INVALID_REQUEST,
            "Cannot resume: unknown Last-Event-ID",
            None,
        ));
    }
    if method == "server/discover" {
        state.discovered.store(true, Ordering::SeqCst);
    } else if state.breaks(&stl::COLD_REQUEST) && !state.discovered.load(Ordering::SeqCst) {
        return Err(rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            code::INVALID_REQUEST,
            "Not initialized: call server/discover first",
            None,
        ));
    }
    state.remember_capabilities(peer, &capabilities);
    let client_name = meta
        .get(META_CLIENT_INFO)
        .and_then(|i| i.get("name"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(Validated {
        id,
        method,
        params,
        capabilities,
        client_name,
    })
}

fn validate_name(
    state: &Inner,
    headers: &HeaderMap,
    id: &Value,
    field: &str,
    body: Option<&Value>,
) -> Result<(), Out> {
    let raw = match header_text(headers, H_NAME) {
        None if state.breaks(&hdr::MISSING_NAME) => return Ok(()),
        None => {
            return Err(mismatch(
                id,
                "Header mismatch: the Mcp-Name header is missing",
            ));
        }
        Some(Err(())) => {
            return Err(mismatch(
                id,
                "Header mismatch: Mcp-Name holds invalid characters",
            ));
        }
        Some(Ok(raw)) => raw,
    };
    let decoded = if state.breaks(&hdr::BASE64) {
        raw.to_owned()
    } else {
        wire::decode_header_value(raw.trim())
            .map_err(|e| mismatch(id, format!("Header mismatch: Mcp-Name: {e}")))?
    };
    let Some(body) = body.and_then(Value::as_str) else {
        return Ok(());
    };
    if decoded != body && !state.breaks(&hdr::NAME_MATCHES) {
        return Err(mismatch(
            id,
            format!(
                "Header mismatch: Mcp-Name header value '{decoded}' does not match body value '{body}' (params.{field})"
            ),
        ));
    }
    Ok(())
}

/// `Mcp-Param-*` validation for a known tool (streamable-http,
/// "Server Behavior for Custom Headers").
fn validate_params(
    state: &Inner,
    headers: &HeaderMap,
    id: &Value,
    schema: &Value,
    arguments: &Value,
) -> Result<(), Out> {
    for annotation in wire::header_annotations(schema) {
        let (Some(name), Some(path)) = (annotation.name(), annotation.path.as_ref()) else {
            continue;
        };
        let header_name = format!("{}{}", wire::H_PARAM_PREFIX, name.to_ascii_lowercase());
        let shown = format!("Mcp-Param-{name}");
        let body_value = wire::value_at(arguments, path);
        let Some(raw) = headers.get(&header_name) else {
            if body_value.is_some() {
                return Err(mismatch(
                    id,
                    format!("Header mismatch: the {shown} header is missing"),
                ));
            }
            continue;
        };
        let text = if state.breaks(&hdr::PARAM_CHARACTERS) {
            String::from_utf8_lossy(raw.as_bytes()).into_owned()
        } else {
            raw.to_str()
                .map_err(|_| {
                    mismatch(
                        id,
                        format!("Header mismatch: {shown} holds invalid characters"),
                    )
                })?
                .to_owned()
        };
        let decoded = wire::decode_header_value(text.trim())
            .map_err(|e| mismatch(id, format!("Header mismatch: {shown}: {e}")))?;
        if state.breaks(&hdr::PARAM_MATCHES) {
            continue;
        }
        let Some(body_value) = body_value else {
            return Err(mismatch(
                id,
                format!("Header mismatch: {shown} is set but the argument is absent"),
            ));
        };
        let same = match body_value {
            // Integers compare numerically (SHOULD, "Server Validation" note).
            Value::Number(n) => decoded.parse::<f64>().ok() == n.as_f64(),
            other => wire::header_text(other).as_deref() == Some(decoded.as_str()),
        };
        if !same {
            return Err(mismatch(
                id,
                format!(
                    "Header mismatch: {shown} header value '{decoded}' does not match body value '{body_value}'"
                ),
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Methods

/// Wraps a result: `resultType` and `_meta` serverInfo on every result.
fn complete(state: &Inner, id: &Value, method: &str, mut result: Map<String, Value>) -> Out {
    result
        .entry("resultType")
        .or_insert_with(|| json!("complete"));
    if state.breaks(&res::RESULT_TYPE) && method == "prompts/get" {
        result.remove("resultType");
    }
    if state.breaks(&res::RESULT_TYPE_KNOWN) && method == "completion/complete" {
        result.insert("resultType".into(), json!("completed"));
    }
    if !(state.breaks(&dsc::SERVER_INFO) && method == "tools/list") {
        let meta = result.entry("_meta").or_insert_with(|| json!({}));
        if let Some(m) = meta.as_object_mut() {
            m.insert(META_SERVER_INFO.into(), server_info());
        }
    }
    Out::json(
        StatusCode::OK,
        json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Caching hints (server/utilities/caching).
fn cached(mut result: Map<String, Value>, ttl_ms: i64, scope: &str) -> Map<String, Value> {
    result.insert("ttlMs".into(), json!(ttl_ms));
    result.insert("cacheScope".into(), json!(scope));
    result
}

/// Methods behind a capability the tools-only configuration does not advertise.
const NOT_TOOLS: &[&str] = &[
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
];

fn dispatch(state: &Inner, peer: Option<SocketAddr>, req: Validated<'_>) -> Out {
    let id = req.id;
    if state.config.tools_only && NOT_TOOLS.contains(&req.method) {
        // A method behind an unadvertised capability is an unknown method.
        return method_not_found(state, id, req.method);
    }
    match req.method {
        "server/discover" => discover(state, id),
        "tools/list" => {
            let mut list = tools(state, state.connection(peer).map(|c| c.ordinal));
            if state.breaks(&res::DETERMINISTIC_ORDER) && !list.is_empty() {
                let n = state.list_calls.fetch_add(1, Ordering::SeqCst) % list.len();
                list.rotate_left(n);
            }
            let ttl = if state.breaks(&cac::TTL_VALUE) {
                json!(-1)
            } else if state.allows(Allowed::IntegralFloatTtl) {
                json!(300_000.0)
            } else {
                json!(300_000)
            };
            let mut result = cached(object(json!({"tools": list})), 0, "public");
            result.insert("ttlMs".into(), ttl);
            complete(state, id, "tools/list", result)
        }
        "tools/call" => call_tool(state, &req),
        "resources/list" => {
            let list: Vec<Value> = RESOURCES.iter().map(|r| r.listing()).collect();
            let scope = if state.breaks(&cac::SCOPE_VALUE) {
                "shared"
            } else {
                "public"
            };
            complete(
                state,
                id,
                "resources/list",
                cached(object(json!({"resources": list})), 60_000, scope),
            )
        }
        "resources/templates/list" => {
            let mut result = cached(
                object(json!({"resourceTemplates": [{
                    "name": "docs", "title": "Reference documents",
                    "uriTemplate": "ref://docs/{name}", "mimeType": "text/markdown"
                }]})),
                60_000,
                "public",
            );
            if state.breaks(&cac::TTL_PRESENT) {
                result.remove("ttlMs");
            }
            let out = complete(state, id, "resources/templates/list", result);
            match out {
                Out::Json {
                    status,
                    body,
                    session,
                    ..
                } if state.breaks(&res::CONTENT_TYPE) => Out::Json {
                    status,
                    body,
                    content_type: "text/plain; charset=utf-8",
                    session,
                },
                other => other,
            }
        }
        "resources/read" => read_resource(state, &req),
        "prompts/list" => {
            let mut result = cached(
                object(json!({"prompts": [{
                    "name": "summarize", "title": "Summarize a topic",
                    "description": "Summarize what the MCP specification says about a topic",
                    "arguments": [{"name": "topic", "description": "The topic", "required": true}]
                }]})),
                60_000,
                "public",
            );
            if state.breaks(&cac::SCOPE_PRESENT) {
                result.remove("cacheScope");
            }
            complete(state, id, "prompts/list", result)
        }
        "prompts/get" => get_prompt(state, &req),
        "completion/complete" => completion(state, &req),
        "subscriptions/listen" => listen(state, &req),
        "ping" if state.breaks(&dep::NO_PING) => complete(state, id, "ping", Map::new()),
        "logging/setLevel" if state.breaks(&dep::NO_SET_LEVEL) => {
            complete(state, id, "logging/setLevel", Map::new())
        }
        "resources/subscribe" | "resources/unsubscribe" if state.breaks(&dep::NO_SUBSCRIBE) => {
            complete(state, id, req.method, Map::new())
        }
        other => method_not_found(state, id, other),
    }
}

fn discover(state: &Inner, id: &Value) -> Out {
    if state.breaks(&dsc::DISCOVER) {
        return method_not_found(state, id, "server/discover");
    }
    let extension = if state.breaks(&dsc::EXTENSION_IDS) {
        "dev.mcp/reference"
    } else {
        "dev.protocheck/reference"
    };
    let mut capabilities = json!({
        "tools": {"listChanged": true},
        "resources": {"subscribe": true, "listChanged": true},
        "prompts": {"listChanged": true},
        "completions": {},
        "extensions": {extension: {}}
    });
    if state.breaks(&dep::NO_DEPRECATED_CAPABILITIES) {
        capabilities["logging"] = json!({});
    }
    if state.config.tools_only {
        capabilities = json!({"tools": {}});
    }
    let mut result = cached(
        object(json!({
            "capabilities": capabilities,
            "instructions": "protocheck's MCP reference server: a demo target for conformance checks.",
        })),
        60_000,
        "public",
    );
    if !state.breaks(&dsc::VERSIONS) {
        result.insert(
            "supportedVersions".into(),
            json!(state.advertised_versions()),
        );
    }
    complete(state, id, "server/discover", result)
}

/// The tool list; `connection` is the ordinal of the asking connection, which
/// only the STL-008 fault looks at.
fn tools(state: &Inner, connection: Option<usize>) -> Vec<Value> {
    let mut list = vec![
        json!({
            "name": "get_forecast",
            "title": "Weather forecast",
            "description": "Forecast for a region; the region travels in the Mcp-Param-Region header too.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "region": {"type": "string", "description": "Region, e.g. us-west1", "x-mcp-header": "Region"},
                    "days": {"type": "integer", "minimum": 1, "maximum": 7}
                },
                "required": ["region"],
                "additionalProperties": false
            },
            "outputSchema": {
                "type": "object",
                "properties": {"region": {"type": "string"}, "summary": {"type": "string"}},
                "required": ["region", "summary"]
            },
            "icons": [{"src": ICON, "mimeType": "image/png"}],
            "annotations": {"readOnlyHint": true, "openWorldHint": false}
        }),
        json!({
            "name": "count",
            "title": "Count with progress",
            "description": "Counts to `to`, reporting progress when asked for it.",
            "inputSchema": {
                "type": "object",
                "properties": {"to": {"type": "integer", "minimum": 1, "maximum": 5}},
                "required": ["to"],
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": true}
        }),
        json!({
            "name": "ask_name",
            "title": "Greet by name",
            "description": "Asks the user's name (elicitation through MRTR) and greets them.",
            "inputSchema": {"type": "object", "additionalProperties": false},
            "annotations": {"readOnlyHint": true}
        }),
        json!({
            "name": "set_reminder",
            "title": "Set a reminder",
            "description": "Stores a reminder: the one tool with a side effect.",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"]
            },
            "annotations": {"readOnlyHint": false, "destructiveHint": false}
        }),
    ];
    // Each schema fault adds a tool that breaks only its rule; none is read-only,
    // so no probe ever calls one.
    let faulty = |name: &str, schema: Value| json!({"name": name, "inputSchema": schema});
    if state.breaks(&sch::HEADER_TOKEN) {
        list.push(faulty(
            "fault_header_token",
            json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region Code"}}}),
        ));
    }
    if state.breaks(&sch::HEADER_CONTROLS) {
        list.push(faulty(
            "fault_header_controls",
            json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region\r\nX-Injected"}}}),
        ));
    }
    if state.breaks(&sch::HEADER_UNIQUE) {
        list.push(faulty(
            "fault_header_unique",
            json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "string", "x-mcp-header": "REGION"}}}),
        ));
    }
    if state.breaks(&sch::HEADER_TYPE) {
        list.push(faulty(
            "fault_header_type",
            json!({"type": "object", "properties": {
            "ratio": {"type": "number", "x-mcp-header": "Ratio"}}}),
        ));
    }
    if state.breaks(&sch::HEADER_REACHABLE) {
        list.push(faulty(
            "fault_header_reachable",
            json!({"type": "object", "properties": {
            "regions": {"type": "array", "items": {"type": "string", "x-mcp-header": "Region"}}}}),
        ));
    }
    if state.breaks(&sch::SCHEMA_VALID) {
        list.push(faulty(
            "fault_schema_valid",
            json!({"type": "object", "properties": {
            "n": {"type": "integer", "minimum": "zero"}}}),
        ));
    }
    if state.breaks(&sch::HEADER_SAFE_NAMES) {
        list.push(faulty("météo du jour", json!({"type": "object"})));
    }
    if state.breaks(&sec::ICONS) {
        let mut tool = faulty("fault_icon", json!({"type": "object"}));
        tool["icons"] = json!([{"src": "javascript:alert(document.domain)"}]);
        list.push(tool);
    }
    if state.breaks(&sec::NETWORK_REF) {
        list.push(faulty(
            "fault_network_ref",
            json!({"type": "object", "properties": {
            "place": {"$ref": "https://schemas.example.com/place.json"}}}),
        ));
    }
    if state.breaks(&sec::SCHEMA_BOUNDS) {
        // 48 nested `items`: past protocheck's bound of 32, yet inside the JSON
        // nesting limit (128) of common parsers, so the list still reads.
        let mut schema = json!({"type": "string"});
        for _ in 0..48 {
            schema = json!({"type": "array", "items": schema});
        }
        list.push(faulty(
            "fault_deep_schema",
            json!({"type": "object", "properties": {"nested": schema}}),
        ));
    }
    if state.breaks(&stl::LIST_PER_CONNECTION)
        && let Some(n) = connection
    {
        list.push(faulty(&format!("scratch_{n}"), json!({"type": "object"})));
    }
    list
}

fn call_tool(state: &Inner, req: &Validated<'_>) -> Out {
    let id = req.id;
    let name = req
        .params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let args = req
        .params
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let text = |t: String| json!([{"type": "text", "text": t}]);
    match name {
        "get_forecast" => {
            let Some(region) = args.get("region").and_then(Value::as_str) else {
                return invalid_params(id, "get_forecast needs a string `region`", None);
            };
            let summary = format!("Forecast for {region}: mild and dry");
            complete(
                state,
                id,
                "tools/call",
                object(json!({
                    "content": text(summary.clone()),
                    "structuredContent": {"region": region, "summary": summary},
                    "isError": false
                })),
            )
        }
        "count" => {
            let to = args.get("to").and_then(Value::as_i64).unwrap_or(0);
            if !(1..=5).contains(&to) {
                return invalid_params(id, "count needs an integer `to` from 1 to 5", None);
            }
            let result = complete(
                state,
                id,
                "tools/call",
                object(json!({
                    "content": text(format!("Counted to {to}")), "isError": false
                })),
            );
            let token = req
                .params
                .get("_meta")
                .and_then(|m| m.get("progressToken"))
                .cloned();
            match (token, result) {
                (Some(token), Out::Json { body, .. }) => {
                    let mut frames: Vec<Value> = (1..=to)
                        .map(|i| {
                            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                            "params": {"progressToken": token, "progress": i, "total": to}})
                        })
                        .collect();
                    if state.breaks(&res::NO_SERVER_REQUESTS) {
                        frames.insert(0, json!({"jsonrpc": "2.0", "id": "server-1", "method": "roots/list", "params": {}}));
                    }
                    frames.push(body);
                    Out::Stream(frames)
                }
                (_, out) => out,
            }
        }
        "ask_name" => ask_name(state, req),
        "set_reminder" => {
            let Some(what) = args.get("text").and_then(Value::as_str) else {
                return invalid_params(id, "set_reminder needs a string `text`", None);
            };
            state.config.side_effects.fetch_add(1, Ordering::SeqCst);
            complete(
                state,
                id,
                "tools/call",
                object(json!({
                    "content": text(format!("Reminder set: {what}")), "isError": false
                })),
            )
        }
        other if tools(state, None).iter().any(|t| t["name"] == other) => complete(
            state,
            id,
            "tools/call",
            object(json!({"content": text("ok".into()), "isError": false})),
        ),
        other => {
            let code = if state.breaks(&err::RESERVED_RANGE) {
                -32050
            } else {
                code::INVALID_PARAMS
            };
            rpc_error(
                StatusCode::OK,
                id,
                code,
                format!("Unknown tool: {other}"),
                None,
            )
        }
    }
}

fn hmac_sha256(key: &[u8; 32], message: &[u8]) -> [u8; 32] {
    let mut ipad = [0x36u8; 64];
    let mut opad = [0x5cu8; 64];
    for (i, k) in key.iter().enumerate() {
        ipad[i] ^= k;
        opad[i] ^= k;
    }
    let inner = Sha256::new()
        .chain_update(ipad)
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(opad)
        .chain_update(inner)
        .finalize()
        .into()
}

/// `requestState` is attacker-controlled (mrtr page): it is a nonce and an HMAC.
fn sign_state(state: &Inner, payload: &str) -> String {
    format!(
        "{payload}.{}",
        hex::encode(hmac_sha256(&state.state_key, payload.as_bytes()))
    )
}

fn verify_state(state: &Inner, token: &str) -> bool {
    token.rsplit_once('.').is_some_and(|(payload, mac)| {
        hex::decode(mac).is_ok_and(|m| m == hmac_sha256(&state.state_key, payload.as_bytes()))
    })
}

fn ask_name(state: &Inner, req: &Validated<'_>) -> Out {
    let id = req.id;
    if req.capabilities.get("elicitation").is_none() {
        // basic/index#meta: never rely on a capability the request did not declare.
        let data = if state.breaks(&err::MISSING_CAPABILITY) {
            json!({"requiredCapabilities": ["elicitation"]})
        } else {
            json!({"requiredCapabilities": {"elicitation": {}}})
        };
        return rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            code::MISSING_CLIENT_CAPABILITY,
            "Missing required client capability: elicitation",
            Some(data),
        );
    }
    let answered = req.params.get("inputResponses").and_then(|r| r.get("name"));
    if let Some(answer) = answered {
        let Some(token) = req.params.get("requestState").and_then(Value::as_str) else {
            return invalid_params(id, "requestState is required with inputResponses", None);
        };
        if !verify_state(state, token) {
            return invalid_params(id, "requestState failed its integrity check", None);
        }
        let who = match answer.get("action").and_then(Value::as_str) {
            Some("accept") => answer
                .pointer("/content/name")
                .and_then(Value::as_str)
                .unwrap_or("stranger")
                .to_owned(),
            _ => "stranger".to_owned(),
        };
        return complete(
            state,
            id,
            "tools/call",
            object(json!({
                "content": [{"type": "text", "text": format!("Hello, {who}!")}], "isError": false
            })),
        );
    }
    if state.breaks(&err::NO_32042) {
        return rpc_error(
            StatusCode::OK,
            id,
            code::RETIRED_URL_ELICITATION,
            "URL elicitation required",
            None,
        );
    }
    let nonce = format!("ask_name:{:016x}", rand::random::<u64>());
    complete(
        state,
        id,
        "tools/call",
        object(json!({
            "resultType": "input_required",
            "inputRequests": {"name": {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "What is your name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
                }
            }},
            "requestState": sign_state(state, &nonce)
        })),
    )
}

struct Resource {
    uri: &'static str,
    name: &'static str,
    mime: &'static str,
    /// Per caller: private unless the CAC-005 fault marks it public.
    personal: bool,
}

const RESOURCES: &[Resource] = &[
    Resource {
        uri: "ref://docs/readme",
        name: "readme",
        mime: "text/markdown",
        personal: false,
    },
    Resource {
        uri: "ref://me/greeting",
        name: "greeting",
        mime: "text/plain",
        personal: true,
    },
    Resource {
        uri: "ref://docs/logo",
        name: "logo",
        mime: "image/png",
        personal: false,
    },
];

/// A 1×1 transparent PNG.
const LOGO_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

impl Resource {
    fn listing(&self) -> Value {
        json!({"uri": self.uri, "name": self.name, "mimeType": self.mime})
    }
}

fn read_resource(state: &Inner, req: &Validated<'_>) -> Out {
    let id = req.id;
    let Some(uri) = req.params.get("uri").and_then(Value::as_str) else {
        return invalid_params(id, "resources/read needs a string `uri`", None);
    };
    let Some(resource) = RESOURCES.iter().find(|r| r.uri == uri) else {
        // resources#error-handling: -32602 since 2026-07-28 (was -32002).
        let code = if state.breaks(&err::RESOURCE_NOT_FOUND) {
            code::RETIRED_RESOURCE_NOT_FOUND
        } else {
            code::INVALID_PARAMS
        };
        return rpc_error(
            StatusCode::OK,
            id,
            code,
            format!("Resource not found: {uri}"),
            Some(json!({"uri": uri})),
        );
    };
    let contents = match resource.name {
        "logo" => json!([{"uri": uri, "mimeType": resource.mime, "blob": LOGO_PNG}]),
        "greeting" => {
            let who = req.client_name.as_deref().unwrap_or("anonymous");
            json!([{"uri": uri, "mimeType": resource.mime, "text": format!("Hello, {who}!")}])
        }
        _ => json!([{"uri": uri, "mimeType": resource.mime,
            "text": "# protocheck reference server\n\nA demo MCP 2026-07-28 server."}]),
    };
    let (ttl, scope) = if resource.personal && !state.breaks(&cac::PUBLIC_NOT_PERSONAL) {
        (0, "private")
    } else {
        (60_000, "public")
    };
    complete(
        state,
        id,
        "resources/read",
        cached(object(json!({"contents": contents})), ttl, scope),
    )
}

fn get_prompt(state: &Inner, req: &Validated<'_>) -> Out {
    let id = req.id;
    let name = req
        .params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name != "summarize" {
        let code = if state.breaks(&err::LEGACY_RANGE) {
            -32000
        } else {
            code::INVALID_PARAMS
        };
        return rpc_error(
            StatusCode::OK,
            id,
            code,
            format!("Unknown prompt: {name}"),
            None,
        );
    }
    let Some(topic) = req
        .params
        .get("arguments")
        .and_then(|a| a.get("topic"))
        .and_then(Value::as_str)
    else {
        return invalid_params(id, "prompt `summarize` needs the argument `topic`", None);
    };
    complete(
        state,
        id,
        "prompts/get",
        object(json!({
            "description": "Summarize a topic",
            "messages": [{"role": "user", "content": {"type": "text",
                "text": format!("Summarize what the MCP specification says about {topic}.")}}]
        })),
    )
}

fn completion(state: &Inner, req: &Validated<'_>) -> Out {
    let id = req.id;
    let reference = req.params.get("ref").cloned().unwrap_or(Value::Null);
    let argument = req.params.get("argument").cloned().unwrap_or(Value::Null);
    let prefix = argument
        .get("value")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let candidates: &[&str] = match (
        reference.get("type").and_then(Value::as_str),
        argument.get("name").and_then(Value::as_str),
    ) {
        (Some("ref/prompt"), Some("topic")) if reference["name"] == "summarize" => {
            &["caching", "headers", "statelessness", "subscriptions"]
        }
        (Some("ref/resource"), Some("name")) if reference["uri"] == "ref://docs/{name}" => {
            &["logo", "readme"]
        }
        _ => {
            return invalid_params(
                id,
                "nothing to complete for that reference and argument",
                None,
            );
        }
    };
    let values: Vec<&str> = candidates
        .iter()
        .copied()
        .filter(|c| c.starts_with(prefix))
        .collect();
    complete(
        state,
        id,
        "completion/complete",
        object(json!({
            "completion": {"values": values, "total": values.len(), "hasMore": false}
        })),
    )
}

fn listen(state: &Inner, req: &Validated<'_>) -> Out {
    let id = req.id;
    let Some(filter) = req.params.get("notifications").and_then(Value::as_object) else {
        return invalid_params(
            id,
            "subscriptions/listen needs a `notifications` filter",
            None,
        );
    };
    // The acknowledgement names the subset honoured (patterns/subscriptions).
    let mut honoured = Map::new();
    for key in [
        "toolsListChanged",
        "promptsListChanged",
        "resourcesListChanged",
    ] {
        if filter.get(key) == Some(&json!(true)) {
            honoured.insert(key.into(), json!(true));
        }
    }
    if let Some(uris) = filter
        .get("resourceSubscriptions")
        .and_then(Value::as_array)
    {
        let known: Vec<&Value> = uris
            .iter()
            .filter(|u| RESOURCES.iter().any(|r| Some(r.uri) == u.as_str()))
            .collect();
        honoured.insert("resourceSubscriptions".into(), json!(known));
    }
    let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": honoured, "_meta": {META_SUBSCRIPTION_ID: id}}});
    let last = match complete(
        state,
        id,
        "subscriptions/listen",
        object(json!({"_meta": {META_SUBSCRIPTION_ID: id}})),
    ) {
        Out::Json { body, .. } => body,
        _ => Value::Null,
    };
    Out::Listen { ack, last }
}

// ---------------------------------------------------------------------------
// The legacy era (2025-11-25), for the suite's era detection.

fn legacy_request(
    state: &Inner,
    headers: &HeaderMap,
    id: &Value,
    method: &str,
    params: Option<&Value>,
) -> Out {
    let ok = |result: Value| {
        Out::json(
            StatusCode::OK,
            json!({"jsonrpc": "2.0", "id": id, "result": result}),
        )
    };
    if method == "initialize" {
        let asked = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str)
            .unwrap_or(LEGACY_VERSION);
        let negotiated = if LEGACY_VERSIONS.contains(&asked) {
            asked
        } else {
            LEGACY_VERSION
        };
        let mut out = ok(json!({
            "protocolVersion": negotiated,
            "capabilities": {"tools": {}},
            "serverInfo": server_info()
        }));
        if state.config.era == ReferenceEra::LegacyOnly {
            let sid = format!("{:032x}", rand::random::<u128>());
            if let Ok(mut sessions) = state.legacy_sessions.lock() {
                if sessions.len() >= MAX_TRACKED {
                    sessions.clear();
                }
                sessions.insert(sid.clone());
            }
            if let Out::Json { session, .. } = &mut out {
                *session = Some(sid);
            }
        }
        return out;
    }
    if state.config.era == ReferenceEra::LegacyOnly {
        let known = headers
            .get(H_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|sid| state.legacy_sessions.lock().is_ok_and(|s| s.contains(sid)));
        if !known {
            // What a 2025-11-25 SDK answers a request outside a session: not a
            // modern error, so a modern client falls back to initialize.
            return rpc_error(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                -32000,
                "Bad Request: No valid session ID provided",
                None,
            );
        }
    }
    match method {
        "ping" => ok(json!({})),
        "tools/list" => {
            ok(json!({"tools": [{"name": "get_forecast", "inputSchema": {"type": "object"}}]}))
        }
        _ => rpc_error(
            StatusCode::OK,
            id,
            code::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
            None,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_faults_are_refused() {
        let known = hdr::MISSING_METHOD.rule.id.to_owned();
        assert!(McpReferenceConfig::new(BTreeSet::from([known])).is_ok());
        assert!(McpReferenceConfig::new(BTreeSet::from(["MCP-HDR-999".to_owned()])).is_err());
    }

    #[test]
    fn cli_arguments_take_repeated_faults() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            args: McpReferenceArgs,
        }
        let cli = Cli::parse_from(["reference", "--break", "A", "--break", "B", "--port", "9"]);
        assert_eq!(cli.args.faults, ["A", "B"]);
        assert_eq!((cli.args.port, cli.args.bind.as_str()), (9, "127.0.0.1"));
        let cli = Cli::parse_from(["reference"]);
        assert_eq!(cli.args.port, 8765);
        assert!(cli.args.faults.is_empty());
    }

    #[test]
    fn request_state_is_integrity_protected() {
        let state = Inner::new(McpReferenceConfig::new(BTreeSet::new()).expect("config"));
        let token = sign_state(&state, "ask_name:1");
        assert!(verify_state(&state, &token));
        assert!(!verify_state(
            &state,
            &token.replace("ask_name:1", "ask_name:2")
        ));
        assert!(!verify_state(&state, "garbage"));
    }
}
