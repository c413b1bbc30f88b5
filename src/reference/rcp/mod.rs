//! The RCP/1 reference server, over HTTP (`POST /rcp/{method}`, with SSE
//! streaming) and stdio: a small built-in corpus served by a real retrieval
//! engine (hashed character-trigram dense vectors, BM25, reciprocal rank
//! fusion, a rerank stage), with filters, citations, pagination, snapshots,
//! progress and logs, `index/add` and `index/delete`. Each rule has a fault
//! switch that breaks exactly that rule, so the suite can prove every rule can
//! fail (`protocheck reference rcp --break RCP-L0-004`).
//!
//! HTTP sessions: `initialize` issues a fresh token in `result._meta.session`,
//! sent back in the `RCP-Session` header. A request without a known token is in
//! an uninitialized session, so the pre-initialize checks work on every run
//! against a long-lived server (the Python and C++ reference servers keep one
//! process-wide flag instead, which protocheck decision 3 works around).

use crate::suite::Rule;
use crate::suite::rcp::{harness, l0, l1, l2, outside};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use protocol::Server;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};

mod corpus;
mod engine;
mod filter;
mod methods;
mod protocol;

/// Largest request body or stdio line the reference server reads.
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// Most live HTTP sessions kept; the oldest is forgotten first. A public demo
/// server must not grow without bound because clients never say `shutdown`.
const MAX_SESSIONS: usize = 4096;

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
        "unadvertised option values are served, not refused: retrieve unit, modality and fusion, rerank and transform methods, graph ops, embed/multi encodings and image inputs",
    ),
    (
        &l0::MALFORMED_PARAMS,
        "`retrieve` coerces a string `k`, clamps a negative one and reads a missing `query` as empty; `graph` reads a missing `op` as local",
    ),
    (
        &l0::INFO_AFTER_INIT,
        "`info` after `initialize` also reports `catalog`",
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
    (&l0::BATCH, "a batch's notifications get error replies too"),
    (
        &l0::EMPTY_BATCH,
        "an empty batch is answered with an empty array",
    ),
    (
        &l0::CANCEL_WITH_ID,
        "`notifications/cancel` with an id gets a result",
    ),
    (
        &l1::DENSE_MODE,
        "`retrieve` in mode `dense` fails with -32603",
    ),
    (
        &l1::SPARSE_MODE,
        "`retrieve` in mode `sparse` finds nothing",
    ),
    (
        &l1::HYBRID_MODE,
        "`retrieve` in mode `hybrid` fails with -32010",
    ),
    (
        &l1::FILTER_RESTRICTS,
        "filters are validated but not applied",
    ),
    (
        &l1::FILTER_VALIDATED,
        "a clause on an unadvertised field matches everything instead of -32602",
    ),
    (&l1::CITATIONS, "hits carry neither `citation` nor `trust`"),
    (
        &l1::SCORES_CONSISTENT,
        "hits come back in ascending score order",
    ),
    (
        &l1::K_HONOURED,
        "`retrieve` returns one hit more than `k` when `k` is 3 or less",
    ),
    (&l1::MIN_SCORE, "`minScore` is ignored"),
    (&l2::RERANK, "`rerank` scores relevance upside down"),
    (
        &l2::MULTI_VECTOR,
        "`embed/multi` rows are one number short of the dimension",
    ),
    (
        &l2::SPARSE_EMBED,
        "`embed/sparse` returns one value fewer than indices",
    ),
    (
        &l2::TRANSFORM,
        "`query/transform` with `hyde` returns no `hypothetical`",
    ),
    (&l2::GRAPH, "`graph` op `communities` fails with -32603"),
    (
        &l2::STREAMING_PROGRESS,
        "progress frames report progress above 1.0",
    ),
    (
        &l2::STREAMING_BUFFERED,
        "a request with a progressToken gets an event stream even without `Accept: text/event-stream`",
    ),
    (
        &l2::PAGINATION,
        "following `nextCursor` returns the first page again",
    ),
    (&l2::LOG, "log notifications carry level \"verbose\""),
    (
        &l2::DETERMINISTIC,
        "a `seed` does not fix the scores: each call shifts them",
    ),
    (
        &l2::SNAPSHOTS,
        "an unknown pinned `indexVersion` is served from the current snapshot",
    ),
    (
        &outside::PATH_MATCHES_BODY,
        "the HTTP path is ignored: a body naming another method is served",
    ),
    (
        &outside::STDIO_FRAMING,
        "stdio: each read is taken as a whole message, so a frame split across writes gets -32700",
    ),
    (
        &outside::HTTP_NOTIFICATION_STATUS,
        "HTTP: notifications get status 500 with an empty body",
    ),
    (
        &outside::HTTP_STATUS_200,
        "HTTP: JSON-RPC error responses come with status 400",
    ),
    (
        &outside::RESULT_SHAPES,
        "`retrieve` results carry `usage` as a string",
    ),
    (
        &outside::UNSOLICITED,
        "every `retrieve` also sends `notifications/progress`, with a progressToken or without",
    ),
    (
        &outside::INDEX_ADD,
        "`index/add` returns one id fewer than documents",
    ),
    (
        &outside::INDEX_DELETE,
        "`index/delete` counts absent ids as deleted",
    ),
    // The public harness's checks that no rule above breaks alone.
    (
        &harness::PROTOCOL_VERSION,
        "`initialize` returns protocolVersion 0",
    ),
    (
        &harness::STRING_ID,
        "string ids come back with an `id-` prefix",
    ),
    (
        &harness::HITS_ARRAY,
        "`retrieve` without `mode` returns `results` instead of `hits`",
    ),
    (&harness::ID_AND_SCORE, "hit scores are strings"),
    (&harness::UNIQUE_IDS, "the best hit is listed twice"),
    (
        &harness::MAX_K_CLAMPED,
        "a `k` above maxK is refused with -32602",
    ),
    (
        &harness::FUNNEL,
        "`candidateK` below `k` is accepted (the funnel is not enforced)",
    ),
    (
        &harness::RERANK,
        "`rerank` speaks the harness's shape: `documents` in, `results` out (digest Q1)",
    ),
    (
        &harness::INDEX_UPSERT,
        "re-adding an indexed id is refused with -32602",
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
    /// Capabilities left out of the advertised set (and so refused with
    /// -32003): a correct server that offers less, e.g. an L0 server without
    /// `filter`, or an L1 server without any L2 feature. `cap.field` leaves
    /// out one field of a capability, e.g. `retrieve.snapshots`.
    pub withheld: BTreeSet<String>,
    /// The level declared in `_meta.conformance` instead of "L2".
    pub declared: Option<String>,
    /// HTTP: one session for the whole process, starting uninitialized and
    /// staying initialized once a client initializes it, as the Python and C++
    /// reference servers keep it (protocheck decision 3). Correct per spec §5,
    /// but a second run finds it already initialized.
    pub process_wide: bool,
    /// `initialize` never succeeds: it is refused with -32600 as if the
    /// session were already initialized, and every gated method answers
    /// (over HTTP and stdio). A broken server that looks, to one run, like a
    /// process-wide server initialized by an earlier client; it must never be
    /// certified (decision 3 as narrowed on 2026-11-30).
    pub never_initialize: bool,
    /// Correct behaviours the spec allows besides the default ones.
    pub variants: RcpVariants,
}

/// Behaviours a correct server may also choose (each still certifies L2):
/// they prove protocheck accepts every reading of the spec, not only the
/// default server's. Named on the command line with `--variant`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RcpVariants {
    /// `no-progress`: event streams carry the final response only (§5.2:
    /// "zero or more `notifications/progress` frames").
    pub no_progress: bool,
    /// `buffered-streams`: a request that accepts an event stream still gets
    /// one buffered JSON response (§5.2: the server "MAY respond with
    /// `text/event-stream`").
    pub buffered_streams: bool,
    /// `log-needs-capability`: logs go only to a client whose `initialize`
    /// advertised the `log` capability; `_meta.logLevel` alone opts into
    /// nothing (§17.1: servers "SHOULD emit logs only when the client
    /// advertised the `log` capability").
    pub log_needs_capability: bool,
    /// `snapshot-conflict`: an unavailable pinned `indexVersion` fails with
    /// -32016, as §12's table says, instead of §7.7.1's -32010.
    pub snapshot_conflict: bool,
    /// `empty-last-page`: every non-empty page carries a `nextCursor`, so the
    /// last one leads to an empty page (§10 only says a missing `nextCursor`
    /// means no more results).
    pub empty_last_page: bool,
    /// `filter-operators=a,b,…`: only these filter operators are advertised;
    /// any other is refused with -32005 (§8).
    pub filter_operators: Option<Vec<String>>,
    /// `no-hit-meta`: hits carry no `meta` (it is optional, §7.7).
    pub no_hit_meta: bool,
    /// `reject-empty-set`: `in`/`nin` with an empty list are refused with
    /// -32602, as the SDKs' filter validator does (§8 does not define them).
    pub reject_empty_set: bool,
    /// `max-k=N`: `retrieve.maxK` is N instead of 50.
    pub max_k: Option<u64>,
}

/// The variant names `--variant` takes, with what each changes.
pub const VARIANTS: &[(&str, &str)] = &[
    (
        "no-progress",
        "event streams carry no progress frame, only the final response",
    ),
    (
        "buffered-streams",
        "requests accepting an event stream get one buffered JSON response",
    ),
    (
        "log-needs-capability",
        "logs only for a client that advertised the `log` capability",
    ),
    (
        "snapshot-conflict",
        "an unavailable pinned `indexVersion` fails with -32016 (not -32010)",
    ),
    (
        "empty-last-page",
        "the last page carries a `nextCursor` that leads to an empty page",
    ),
    (
        "filter-operators=OPS",
        "only these comma-separated filter operators are advertised",
    ),
    ("no-hit-meta", "hits carry no `meta`"),
    (
        "reject-empty-set",
        "`in`/`nin` with an empty list are refused with -32602",
    ),
    ("max-k=N", "`retrieve.maxK` is N"),
];

impl RcpVariants {
    /// Parses `--variant` values; an unknown one is refused with the list.
    pub fn parse<I, S>(names: I) -> Result<Self, String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut v = Self::default();
        for name in names {
            let name = name.as_ref();
            let (key, value) = match name.split_once('=') {
                Some((k, val)) => (k, Some(val)),
                None => (name, None),
            };
            match (key, value) {
                ("no-progress", None) => v.no_progress = true,
                ("buffered-streams", None) => v.buffered_streams = true,
                ("log-needs-capability", None) => v.log_needs_capability = true,
                ("snapshot-conflict", None) => v.snapshot_conflict = true,
                ("empty-last-page", None) => v.empty_last_page = true,
                ("no-hit-meta", None) => v.no_hit_meta = true,
                ("reject-empty-set", None) => v.reject_empty_set = true,
                ("filter-operators", Some(ops)) => {
                    let ops: Vec<String> = ops.split(',').map(|o| o.trim().to_owned()).collect();
                    if let Some(bad) = ops
                        .iter()
                        .find(|o| !filter::OPERATORS.contains(&o.as_str()))
                    {
                        return Err(format!(
                            "`{bad}` is not a filter operator; operators: {}",
                            filter::OPERATORS.join(", ")
                        ));
                    }
                    v.filter_operators = Some(ops);
                }
                ("max-k", Some(n)) => match n.parse::<u64>() {
                    Ok(n) if n >= 1 => v.max_k = Some(n),
                    _ => return Err(format!("`max-k` takes an integer ≥ 1, not `{n}`")),
                },
                _ => {
                    let valid: Vec<&str> = VARIANTS.iter().map(|(n, _)| *n).collect();
                    return Err(format!(
                        "`{name}` is not a reference-server variant; variants: {}",
                        valid.join(", ")
                    ));
                }
            }
        }
        Ok(v)
    }
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
            ..Self::default()
        })
    }

    fn has(&self, rule: &Rule) -> bool {
        self.faults.contains(rule.id)
    }

    /// The session is initialized before any client says `initialize`: the
    /// fault of RCP-L0-027, or a server whose `initialize` never succeeds.
    fn initialized_at_start(&self) -> bool {
        self.never_initialize || self.has(&l0::PER_SESSION_INIT)
    }

    /// Whether `capability` is offered (not withheld).
    fn offers(&self, capability: &str) -> bool {
        !self.withheld.contains(capability)
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
    /// Leave a capability out of the advertised set (repeatable), e.g.
    /// `--without filter` for a correct server that does not reach L1.
    #[arg(long = "without", value_name = "CAPABILITY")]
    pub without: Vec<String>,
    /// Declare this level in `_meta.conformance` instead of L2.
    #[arg(long, value_name = "LEVEL")]
    pub declare: Option<String>,
    /// HTTP: keep one initialized flag for the whole process, as the Python
    /// and C++ reference servers do (a second run finds it initialized).
    #[arg(long)]
    pub process_wide: bool,
    /// Never let `initialize` succeed (-32600, as if already initialized)
    /// while answering every gated method: a server that must not certify.
    #[arg(long)]
    pub never_initialize: bool,
    /// Behave in another way the spec also allows (repeatable), e.g.
    /// `--variant no-progress` or `--variant filter-operators=gt,gte,lt,lte`.
    #[arg(long = "variant", value_name = "VARIANT")]
    pub variants: Vec<String>,
}

/// Runs the reference server until ctrl-c (HTTP) or EOF / `shutdown` (stdio).
pub async fn run_rcp_reference(args: RcpReferenceArgs) -> anyhow::Result<()> {
    let mut config = RcpReferenceConfig::new(args.breaks).map_err(anyhow::Error::msg)?;
    config.latency = Duration::from_millis(args.latency_ms);
    config.withheld = args.without.into_iter().collect();
    config.declared = args.declare;
    config.process_wide = args.process_wide;
    config.never_initialize = args.never_initialize;
    config.variants = RcpVariants::parse(&args.variants).map_err(anyhow::Error::msg)?;
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
    /// The lowest log severity the client opted into at `initialize` (§17.1).
    log: Option<usize>,
    /// The client's `initialize` advertised the `log` capability.
    log_capability: bool,
}

impl Session {
    fn initialized() -> Self {
        Self {
            initialized: true,
            ..Self::default()
        }
    }
}

/// Per-frame facts the transport knows, and what the frame produced besides
/// its reply.
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
    /// Notifications can reach the client: stdio, or an HTTP request that asked
    /// for an event stream (spec §5.2).
    may_notify: bool,
    /// Progress and log notifications to send before the reply.
    frames: Vec<Value>,
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
    let server = Server::new(config);
    let config = &server.config;
    let mut session = if config.initialized_at_start() {
        Session::initialized()
    } else {
        Session::default()
    };
    loop {
        let line = if config.has(&outside::STDIO_FRAMING) {
            read_chunk(&mut reader).await?
        } else {
            read_line(&mut reader, MAX_REQUEST_BYTES).await?
        };
        let line = match line {
            None => return Ok(()),
            Some(Ok(line)) => line,
            Some(Err(TooLong)) => {
                let reply = protocol::error_reply(
                    config,
                    Value::Null,
                    -32013,
                    "the frame exceeds the line limit",
                );
                write_frame(config, &mut writer, &reply).await?;
                continue;
            }
        };
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let mut ctx = FrameCtx {
            may_notify: true,
            ..FrameCtx::default()
        };
        let reply = match serde_json::from_str::<Value>(text) {
            Ok(message) => protocol::handle_body(&server, &mut session, &message, &mut ctx),
            Err(_) => Some(protocol::parse_error(config)),
        };
        for frame in &ctx.frames {
            write_frame(config, &mut writer, frame).await?;
        }
        if let Some(reply) = reply {
            write_frame(config, &mut writer, &reply).await?;
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

/// The fault of RCP-OUT-002: whatever one read returns, up to a newline, is
/// taken as a whole message.
async fn read_chunk<R: AsyncBufRead + Unpin>(
    reader: &mut R,
) -> std::io::Result<Option<Result<Vec<u8>, TooLong>>> {
    let buf = reader.fill_buf().await?;
    if buf.is_empty() {
        return Ok(None);
    }
    let newline = buf.iter().position(|&b| b == b'\n');
    let end = newline.unwrap_or(buf.len()).min(MAX_REQUEST_BYTES);
    let line = buf[..end].to_vec();
    reader.consume(newline.map_or(end, |i| i + 1));
    Ok(Some(Ok(line)))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::json;

    fn call(config: &RcpReferenceConfig, session: &mut Session, frame: Value) -> Option<Value> {
        let server = Server::new(config.clone());
        protocol::handle_body(&server, session, &frame, &mut FrameCtx::default())
    }

    #[test]
    fn every_rule_has_a_fault_and_unknown_ids_are_refused() {
        // Every rule but the derived honesty verdict can be broken on purpose.
        for rule in crate::suite::rcp::rules() {
            if rule.id == crate::suite::rcp::DECLARATION_HONEST.id {
                continue;
            }
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
        let mut session = Session::initialized();
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

    fn ask(
        server: &Server,
        session: &mut Session,
        method: &str,
        params: Value,
    ) -> (Value, Vec<Value>) {
        let mut ctx = FrameCtx {
            may_notify: true,
            ..FrameCtx::default()
        };
        let frame = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        let reply = protocol::handle_body(server, session, &frame, &mut ctx).expect("a reply");
        (reply, ctx.frames)
    }

    #[test]
    fn pages_follow_each_other_without_overlap_and_end() {
        let server = Server::new(RcpReferenceConfig::default());
        let mut session = Session::initialized();
        let params = json!({"query": "retrieval passages", "k": 3, "mode": "dense"});
        let (first, _) = ask(&server, &mut session, "retrieve", params.clone());
        let mut seen: Vec<Value> = first["result"]["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].clone())
            .collect();
        let mut cursor = first["result"]["nextCursor"].clone();
        let mut pages = 1;
        while let Some(c) = cursor.as_str() {
            let mut next = params.clone();
            next["cursor"] = json!(c);
            let (page, _) = ask(&server, &mut session, "retrieve", next);
            for h in page["result"]["hits"].as_array().expect("hits") {
                assert!(!seen.contains(&h["id"]), "{h} repeated");
                seen.push(h["id"].clone());
            }
            cursor = page["result"]["nextCursor"].clone();
            pages += 1;
            assert!(pages < 20);
        }
        assert_eq!(
            seen.len(),
            corpus::CORPUS.len(),
            "dense mode ranks every passage"
        );
        let mut other = params.clone();
        other["query"] = json!("something else");
        other["cursor"] = first["result"]["nextCursor"].clone();
        let (refused, _) = ask(&server, &mut session, "retrieve", other);
        assert_eq!(refused["error"]["code"], -32015);
    }

    #[test]
    fn progress_and_logs_only_when_asked() {
        let server = Server::new(RcpReferenceConfig::default());
        let mut session = Session::initialized();
        let (_, frames) = ask(
            &server,
            &mut session,
            "retrieve",
            json!({"query": "rerank", "k": 2}),
        );
        assert!(frames.is_empty(), "{frames:?}");
        let (reply, frames) = ask(
            &server,
            &mut session,
            "retrieve",
            json!({"query": "rerank", "k": 2, "rerank": {"topN": 5}, "_meta": {"progressToken": "t", "logLevel": "debug"}}),
        );
        assert!(reply["result"]["hits"].is_array());
        let progress: Vec<&Value> = frames
            .iter()
            .filter(|f| f["method"] == "notifications/progress")
            .collect();
        assert!(progress.len() >= 3);
        assert!(progress.iter().all(|f| f["params"]["progressToken"] == "t"));
        assert!(frames.iter().any(|f| f["method"] == "notifications/log"));
    }

    #[test]
    fn rerank_scores_align_with_passages() {
        let server = Server::new(RcpReferenceConfig::default());
        let mut session = Session::initialized();
        let (reply, _) = ask(
            &server,
            &mut session,
            "rerank",
            json!({"query": "sparse retrieval bm25", "passages": ["zebra", "BM25 sparse retrieval scores terms", "dense"]}),
        );
        let scores = reply["result"]["scores"].as_array().expect("scores");
        assert_eq!(scores.len(), 3);
        assert_eq!(reply["result"]["order"][0], 1);
        let (reply, _) = ask(
            &server,
            &mut session,
            "rerank",
            json!({"query": "q", "documents": ["a"]}),
        );
        assert_eq!(
            reply["error"]["code"], -32602,
            "the spec names `passages`, not `documents`"
        );
    }
}
