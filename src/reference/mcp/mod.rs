//! The MCP reference server: MCP 2026-07-28 over Streamable HTTP (or stdio,
//! `stdio`), stateless,
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
//! era detection of the suite ([`ReferenceEra`]), and a slow one
//! (`--latency-ms`, [`McpReferenceConfig::with_latency`]).
//!
//! This file holds the configuration (fault switches, era, allowed
//! behaviours), the state shared by every request, the router and the
//! listeners. A POST goes through `protocol` (Origin, JSON-RPC framing, the
//! choice of era, and the answer's rendering as JSON or SSE), then, for a
//! 2026-07-28 request, through `validate` (headers and `_meta`, all before
//! dispatch) to `methods` and `tools`; a 2025-11-25 one goes to `legacy`.
//! `auth` serves the OAuth side of `--auth`, `tls` makes the certificates of
//! `--tls`, and `spelling` records how clients spell header names.

use crate::suite::mcp::client::Spelling;
use crate::suite::mcp::wire::{LEGACY_VERSION, PROTOCOL_VERSION};
use crate::suite::mcp::{McpRule, aut, cac, dep, dsc, err, hdr, reg, res, sch, sec, stl};
use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit};
use axum::routing::{get, post};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) mod auth;
mod authorization;
mod legacy;
mod methods;
mod protocol;
mod spelling;
mod stdio;
mod tls;
mod tools;
mod validate;

pub use auth::{ISSUER_PATH, SCOPE_READ, SCOPE_TOOLS};
/// Lent to the 2025-11-25 reference server ([`crate::reference::mcp2025`]).
pub(crate) use methods::{ICON, server_info};
pub(crate) use protocol::origin_allowed;
pub use stdio::serve_mcp_stdio;
pub use tls::{CertificateFault, TestCertificate};

/// Largest request body accepted.
const MAX_BODY: usize = 1024 * 1024;
/// The user of the built-in authorization server unless `--auth-user` names one.
pub const DEFAULT_USER: (&str, &str) = ("alice", "wonderland");
/// Most connections (and legacy sessions) remembered; older ones are forgotten.
const MAX_TRACKED: usize = 4096;

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
    /// With `--auth`: `server/discover` is answered without a token (a
    /// method the server leaves open); every other request needs one and is
    /// refused with the usual challenge.
    OpenDiscover,
    /// With `--auth`: the RFC 8414 URL of the built-in authorization server
    /// serves a document naming another issuer, and the OpenID Connect URL
    /// after it the right one; a client skips the first (RFC 8414 §3.3) and
    /// goes on.
    ForeignIssuerFirst,
}

/// Authorization shapes the AUT rules must find wrong, beside the rules'
/// own fault switches (`--break MCP-AUT-…`). Each applies with `--auth` only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AuthShape {
    /// `server/discover` is answered without a token, and every other
    /// request without a good token gets 401 with no `WWW-Authenticate`.
    OpenDiscoverBareChallenge,
    /// The challenge's `resource_metadata` names a URL that answers 404,
    /// while the well-known URIs serve the metadata.
    DeadResourceMetadata,
    /// The protected resource metadata's `scopes_supported` is one string,
    /// not an array of strings.
    ScopesNotStrings,
    /// The protected resource metadata lists a second authorization server
    /// (`/as2`) that publishes no discovery metadata.
    SecondIssuerWithoutMetadata,
}

/// Faults beyond each rule's one `--break` switch: further shapes a rule
/// must catch, or (where named) accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Variant {
    /// The read of a resource reached only through the template
    /// `ref://topics/{topic}` lacks `ttlMs` (MCP-CAC-001 must fail).
    TemplateReadWithoutTtl,
    /// The read of the sixth listed resource lacks `cacheScope`
    /// (MCP-CAC-002 must fail).
    SixthReadWithoutScope,
    /// `completion/complete` answers `resultType: "deferred"`, a value of no
    /// extension protocheck knows, beside the advertised extension
    /// `dev.protocheck/reference`: not a fault (MCP-RES-002 must accept it,
    /// naming the value and the extension as an inference).
    ExtensionResultType,
}

/// Subtler shapes of the header rules' faults (MCP-HDR-006, -008), each
/// breaking one rule in a way only a wider probe shows; set with
/// [`McpReferenceConfig::with_header_fault`]. `--break` plays the plain
/// fault of each rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum HeaderFault {
    /// Header names are found in three spellings only: lower-case, as the
    /// spec writes them and upper-case; `mCp-MeThOd` is not found (MCP-HDR-006).
    ThreeSpellings,
    /// `Mcp-Name` compared without letter case on `prompts/get` only
    /// (MCP-HDR-006, MCP-HDR-003).
    PromptNameWithoutCase,
    /// `Mcp-Param-*` values compared without letter case (MCP-HDR-006).
    ParamValueWithoutCase,
    /// A missing `Mcp-Param-*` refused even when its argument is absent or
    /// null (MCP-HDR-008).
    ExpectsAbsentParams,
    /// Integer `Mcp-Param-*` values compared as text, so `7.0` differs from 7
    /// (MCP-HDR-008's SHOULD).
    IntegerParamsAsText,
}

/// How the reference server behaves: correct, or with some rules broken.
#[derive(Debug, Clone)]
pub struct McpReferenceConfig {
    faults: BTreeSet<String>,
    variants: BTreeSet<Variant>,
    allowed: BTreeSet<Allowed>,
    /// Authorization shapes played (see [`AuthShape`]).
    shapes: BTreeSet<AuthShape>,
    header_faults: BTreeSet<HeaderFault>,
    /// Whether `tools/list` also offers `lookup_zone` (see [`Self::with_annotated_tools`]).
    annotated_tools: bool,
    /// The name half of MCP-HDR-006's fault alone (see [`Self::case_sensitive_names`]).
    case_sensitive_names: bool,
    /// Origins compared by prefix (see [`Self::with_origin_prefix_match`]).
    origin_prefix_match: bool,
    /// `subscriptions/listen` refused on a connection that carried no
    /// `server/discover` yet (see [`Self::gating_listen_on_discover`]).
    listen_needs_discover: bool,
    /// A connection that carried another protocol version lists fewer
    /// tools (see [`Self::keeping_version_per_connection`]).
    version_per_connection: bool,
    /// Event streams carry ids and are resumed on `Last-Event-ID` (see
    /// [`Self::replaying_on_last_event_id`]).
    replays_events: bool,
    era: ReferenceEra,
    tools_only: bool,
    side_effects: Arc<AtomicUsize>,
    /// Requests answered, shared by every server built from this configuration.
    requests: Arc<AtomicUsize>,
    /// With `--auth`: the key that signs and checks bearer tokens.
    auth: Option<Arc<[u8; 32]>>,
    /// The user who may sign in at the built-in authorization server:
    /// name and password (see [`Self::with_auth_user`]).
    user: (String, String),
    /// Whether the server is reached over HTTPS (the scheme of its own URLs).
    tls: bool,
    /// Delay before every answer, and between the headers and the first
    /// event of the streams a fault opens (see [`Self::with_latency`]).
    latency: Duration,
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
            variants: BTreeSet::new(),
            allowed: BTreeSet::new(),
            shapes: BTreeSet::new(),
            header_faults: BTreeSet::new(),
            annotated_tools: false,
            case_sensitive_names: false,
            origin_prefix_match: false,
            listen_needs_discover: false,
            version_per_connection: false,
            replays_events: false,
            era: ReferenceEra::Modern,
            tools_only: false,
            side_effects: Arc::new(AtomicUsize::new(0)),
            requests: Arc::new(AtomicUsize::new(0)),
            auth: None,
            user: (DEFAULT_USER.0.to_owned(), DEFAULT_USER.1.to_owned()),
            tls: false,
            latency: Duration::ZERO,
        })
    }

    /// Require OAuth bearer tokens on `/mcp` and serve the discovery documents
    /// (basic/authorization) and a built-in authorization server: client
    /// registration, a login page, the authorization code grant with PKCE.
    /// Tests can also mint tokens directly with [`Self::mint_token`].
    pub fn with_auth(mut self) -> Self {
        self.auth = Some(Arc::new(rand::random()));
        self
    }

    /// The user who signs in on the login page of the built-in
    /// authorization server (`alice` / `wonderland` unless set).
    pub fn with_auth_user(mut self, name: &str, password: &str) -> Self {
        self.user = (name.to_owned(), password.to_owned());
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

    /// Lets in any `Origin` that starts with `http://localhost`,
    /// `http://127.0.0.1` or `http://[::1]`, and refuses the rest with 403:
    /// the subtler half of MCP-SEC-001's fault (`--break` checks no Origin at
    /// all), which only a look-alike Origin shows.
    pub fn with_origin_prefix_match(mut self) -> Self {
        self.origin_prefix_match = true;
        self
    }

    /// The same server with a further fault (see [`Variant`]).
    pub fn with_variant(mut self, variant: Variant) -> Self {
        self.variants.insert(variant);
        self
    }

    /// The same server with an authorization shape the AUT rules must find
    /// wrong (see [`AuthShape`]).
    pub fn with_auth_shape(mut self, shape: AuthShape) -> Self {
        self.shapes.insert(shape);
        self
    }

    /// The same server with one of the subtler header faults (see [`HeaderFault`]).
    pub fn with_header_fault(mut self, fault: HeaderFault) -> Self {
        self.header_faults.insert(fault);
        self
    }

    /// Also offer `lookup_zone`, a read-only tool whose schema mirrors a
    /// string, an integer and a boolean argument into `Mcp-Param-*` headers.
    pub fn with_annotated_tools(mut self) -> Self {
        self.annotated_tools = true;
        self
    }

    /// Refuses `subscriptions/listen` (400, -32600) on a connection that has
    /// not carried a `server/discover` yet: the listen half of MCP-STL-003's
    /// fault (`--break` gates every method on a discover anywhere in the
    /// process), which only a listen sent first on a new connection shows.
    /// Plain HTTP served by [`serve_mcp_reference`] only.
    pub fn gating_listen_on_discover(mut self) -> Self {
        self.listen_needs_discover = true;
        self
    }

    /// Once a request on a connection carried another protocol version (a
    /// `server/discover` asking for it, or a legacy `initialize`), lists one
    /// tool fewer in every later `tools/list` on that connection, as if it
    /// served that version's tools: a version taken from a prior request on
    /// the connection (MCP-STL-004), which only a warm-up declaring another
    /// version shows. Plain HTTP served by [`serve_mcp_reference`] only.
    pub fn keeping_version_per_connection(mut self) -> Self {
        self.version_per_connection = true;
        self
    }

    /// Labels every event of its streams with an id (`s<stream>-<event>`),
    /// keeps the recent streams, and resumes one on `Last-Event-ID` as a
    /// 2025-era event store does: a POST carrying a kept id gets the events
    /// that followed it replayed before its own answer, a GET carrying one
    /// gets them on a stream instead of 405. The replay half of
    /// MCP-STL-007's fault (`--break` refuses any `Last-Event-ID`), which
    /// only an id the server itself sent shows. Plain HTTP only.
    pub fn replaying_on_last_event_id(mut self) -> Self {
        self.replays_events = true;
        self
    }

    /// The same server with a behaviour the spec allows (see [`Allowed`]).
    pub fn allowing(mut self, behaviour: Allowed) -> Self {
        self.allowed.insert(behaviour);
        self
    }

    /// A slow server: every answer comes `latency` late, and the first
    /// event of the streams its faults open (the legacy transport's
    /// `endpoint` event, the GET stream's first frame) another `latency`
    /// after the headers, so that a client watching those streams for less
    /// than that misses what a fault sends.
    pub fn with_latency(mut self, latency: Duration) -> Self {
        self.latency = latency;
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
    /// A `server/discover` came on this connection.
    discovered: bool,
    /// Another protocol version a request on this connection carried.
    other_version: Option<String>,
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
    /// The recent event streams and their frames, for the fault of
    /// `replaying_on_last_event_id` (the oldest forgotten first).
    streams: Mutex<std::collections::VecDeque<(usize, Vec<Value>)>>,
    next_stream: AtomicUsize,
    /// How clients spelled `Mcp-*` header names, per connection.
    spellings: spelling::Spellings,
    /// Served over stdio: no headers are validated (there are none).
    stdio: bool,
    /// Clients and codes of the built-in authorization server (`--auth`).
    oauth: authorization::Store,
}

type Shared = Arc<Inner>;

impl Inner {
    fn breaks(&self, rule: &McpRule) -> bool {
        self.config.faults.contains(rule.rule.id)
    }

    fn has(&self, variant: Variant) -> bool {
        self.config.variants.contains(&variant)
    }

    fn allows(&self, behaviour: Allowed) -> bool {
        self.config.allowed.contains(&behaviour)
    }

    fn shaped(&self, shape: AuthShape) -> bool {
        self.config.shapes.contains(&shape)
    }

    fn has_header_fault(&self, fault: HeaderFault) -> bool {
        self.config.header_faults.contains(&fault)
    }

    /// Whether the server, looking `name` up case-sensitively in lower case,
    /// fails to find it though the client sent it in another spelling.
    fn misses_by_case(&self, peer: Option<SocketAddr>, name: &str) -> bool {
        let three = self.has_header_fault(HeaderFault::ThreeSpellings);
        if !(self.breaks(&hdr::CASE) || self.config.case_sensitive_names || three) {
            return false;
        }
        let Some(names) = peer.and_then(|p| self.spellings.of(p)) else {
            return false;
        };
        let found = |n: &String| {
            if three {
                [Spelling::Lower, Spelling::Spec, Spelling::Upper]
                    .iter()
                    .any(|s| *n == s.name(name))
            } else {
                n == name
            }
        };
        names.iter().any(|n| n.eq_ignore_ascii_case(name)) && !names.iter().any(found)
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
                    ..Connection::default()
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

    /// Records what the connection-scoped faults remember of a request.
    fn remember(&self, peer: Option<SocketAddr>, note: impl FnOnce(&mut Connection)) {
        if let (Some(peer), Ok(mut map)) = (peer, self.connections.lock())
            && let Some(conn) = map.get_mut(&peer)
        {
            note(conn);
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
            streams: Mutex::new(std::collections::VecDeque::new()),
            next_stream: AtomicUsize::new(0),
            spellings: spelling::Spellings::default(),
            stdio: false,
            oauth: authorization::Store::default(),
        }
    }
}

fn router(state: Shared) -> Router {
    let requests = state.config.requests.clone();
    let latency = state.config.latency;
    Router::new()
        .route(
            "/mcp",
            get(protocol::handle_get)
                .post(protocol::handle_post)
                .delete(protocol::handle_delete),
        )
        .route("/sse", get(legacy::handle_legacy_sse))
        .route("/server.json", get(protocol::handle_server_json))
        .route(
            "/.well-known/oauth-protected-resource",
            get(protocol::handle_protected_resource),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(protocol::handle_protected_resource),
        )
        .route(
            "/.well-known/oauth-authorization-server/as",
            get(protocol::handle_authorization_server),
        )
        .route(
            "/.well-known/openid-configuration/as",
            get(protocol::handle_openid_configuration),
        )
        .route(
            "/as/register",
            post(authorization::register).layer(DefaultBodyLimit::max(authorization::MAX_FORM)),
        )
        .route(
            "/as/authorize",
            get(authorization::authorize_page)
                .post(authorization::authorize_submit)
                .layer(DefaultBodyLimit::max(authorization::MAX_FORM)),
        )
        .route(
            "/as/token",
            post(authorization::token).layer(DefaultBodyLimit::max(authorization::MAX_FORM)),
        )
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                requests.fetch_add(1, Ordering::Relaxed);
                async move {
                    if !latency.is_zero() {
                        tokio::time::sleep(latency).await;
                    }
                    next.run(req).await
                }
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
    /// built-in authorization server at /as (metadata, client registration,
    /// a login page, the authorization code grant with PKCE S256). Test
    /// tokens are printed at start-up.
    #[arg(long)]
    pub auth: bool,
    /// With `--auth`: the user who may sign in on the login page, as
    /// NAME:PASSWORD (a test account; the password is not secret).
    #[arg(long, value_name = "NAME:PASSWORD", default_value = "alice:wonderland")]
    pub auth_user: String,
    /// Serve HTTPS with a certificate authority and a certificate for
    /// localhost made at start-up; the CA is printed so a client can trust it.
    /// With `--break MCP-SEC-002` the certificate is expired.
    #[arg(long)]
    pub tls: bool,
    /// With --tls: write the test CA certificate as PEM to this file, for
    /// `protocheck check --ca-cert FILE` (or `PROTOCHECK_CA_CERT` of a service).
    #[arg(long, value_name = "PATH", requires = "tls")]
    pub ca_out: Option<std::path::PathBuf>,
    /// Delay every answer by this many milliseconds, and the first event of
    /// a fault's stream (the legacy `endpoint` event, the GET stream's first
    /// frame) by as much again after its headers.
    #[arg(long, default_value_t = 0)]
    pub latency_ms: u64,
    /// The MCP revision to play: 2026-07-28, or 2025-11-25 (initialize,
    /// sessions; its faults are the `MCP25-…` rules).
    #[arg(long, default_value = PROTOCOL_VERSION, value_parser = [PROTOCOL_VERSION, LEGACY_VERSION])]
    pub revision: String,
    /// Speak newline-delimited JSON-RPC on stdin/stdout instead of HTTP
    /// (logs go to stderr); `--break` works for the rules that apply over
    /// stdio.
    #[arg(long)]
    pub stdio: bool,
    /// 2025-11-25 only: issue no `Mcp-Session-Id` (a stateless server).
    #[arg(long)]
    pub no_sessions: bool,
    /// 2025-11-25 only: answer every request over SSE, not only those that
    /// stream progress.
    #[arg(long)]
    pub sse: bool,
    /// 2025-11-25 only: declare the experimental `tasks` capability, serve
    /// `tasks/…` and a tool that runs only as a task.
    #[arg(long)]
    pub tasks: bool,
}

pub async fn run_mcp_reference(args: McpReferenceArgs) -> anyhow::Result<()> {
    if args.revision != PROTOCOL_VERSION || args.no_sessions || args.sse || args.tasks {
        anyhow::bail!(
            "--no-sessions, --sse and --tasks need --revision {LEGACY_VERSION}; the \
             {PROTOCOL_VERSION} reference server has no sessions and answers streams itself"
        );
    }
    if args.stdio && (args.auth || args.tls) {
        anyhow::bail!("--auth and --tls apply to HTTP only; stdio carries neither");
    }
    let mut config = McpReferenceConfig::new(args.faults.into_iter().collect())
        .map_err(|e| anyhow::anyhow!(e))?;
    if args.stdio {
        config = config.with_latency(Duration::from_millis(args.latency_ms));
        eprintln!(
            "MCP {PROTOCOL_VERSION} reference server ({}) on stdio",
            describe_faults(&config)
        );
        serve_mcp_stdio(config, tokio::io::stdin(), tokio::io::stdout()).await?;
        return Ok(());
    }
    if args.auth {
        let Some((name, password)) = args
            .auth_user
            .split_once(':')
            .filter(|(n, p)| !n.is_empty() && !p.is_empty())
        else {
            anyhow::bail!("--auth-user takes NAME:PASSWORD, both non-empty");
        };
        config = config.with_auth().with_auth_user(name, password);
        eprintln!("sign in at the built-in authorization server as `{name}`");
    }
    config = config.with_latency(Duration::from_millis(args.latency_ms));
    let listener = tokio::net::TcpListener::bind((args.bind.as_str(), args.port)).await?;
    let addr = listener.local_addr()?;
    let scheme = if args.tls { "https" } else { "http" };
    let broken = describe_faults(&config);
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
        match &args.ca_out {
            Some(path) => {
                std::fs::write(path, &certificate.ca_pem).map_err(|e| {
                    anyhow::anyhow!("writing the test CA to {}: {e}", path.display())
                })?;
                eprintln!(
                    "test CA certificate (PEM) written to {}; check this server with:\n  \
                     protocheck check --ca-cert {} https://{addr}/mcp",
                    path.display(),
                    path.display()
                );
            }
            None => eprintln!(
                "test CA certificate (DER, hex; trust it for this server only; \
                 --ca-out PATH writes it as PEM for `check --ca-cert`): {}",
                hex::encode(&certificate.ca_der)
            ),
        }
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

/// "correct", or the faults the server plays.
fn describe_faults(config: &McpReferenceConfig) -> String {
    if config.faults().is_empty() {
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
    }
}

/// HMAC-SHA-256 (RFC 2104): it signs the bearer tokens of `--auth` and the
/// `requestState` of `ask_name`.
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
}
