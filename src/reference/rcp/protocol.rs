//! The wire protocol of the reference server: batches, notifications,
//! lifecycle and gating (spec §4, §7.1, §11, §13; gating order of digest §3),
//! and the dispatch to the capability methods. Each L0 fault switch bends
//! exactly the behaviour its rule checks.

use super::engine::Index;
use super::methods::{self, LOG_LEVELS, Side};
use super::{FrameCtx, RcpReferenceConfig, Session};
use crate::suite::rcp::{harness, l0, l2, outside};
use serde_json::{Map, Value, json};
use std::sync::Mutex;

/// The one protocol version this server speaks.
const PROTOCOL_VERSION: i64 = 1;

/// The level this server declares in `_meta.conformance` (spec §14), and
/// certifies in protocheck's `spec` profile.
const DECLARED_LEVEL: &str = "L2";

/// What one server process holds: its configuration and its index, shared by
/// every session (writes are visible to all, as in any real engine).
pub(super) struct Server {
    pub config: RcpReferenceConfig,
    pub index: Mutex<Index>,
}

impl Server {
    pub fn new(config: RcpReferenceConfig) -> Self {
        Self {
            config,
            index: Mutex::new(Index::builtin()),
        }
    }

    fn index(&self) -> std::sync::MutexGuard<'_, Index> {
        // A panic while holding the lock cannot leave the index half-written
        // in a way later requests could not read, so a poisoned lock is used.
        self.index
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

pub(super) fn parse_error(config: &RcpReferenceConfig) -> Value {
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
pub(super) fn handle_body(
    server: &Server,
    session: &mut Session,
    body: &Value,
    ctx: &mut FrameCtx,
) -> Option<Value> {
    let config = &server.config;
    let Value::Array(batch) = body else {
        return handle_message(server, session, body, ctx);
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
            let reply = handle_message(server, session, member, ctx);
            // The fault answers notifications for methods RCP defines; an
            // undefined one stays unanswered, so that only RCP-L0-030 fails
            // (an answered undefined notification is RCP-L0-007's fault).
            let notification = member.get("id").is_none()
                && member
                    .get("method")
                    .and_then(Value::as_str)
                    .is_some_and(|m| {
                        OPEN_METHODS.contains(&m) || GATED_METHODS.iter().any(|(g, _)| *g == m)
                    });
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
    server: &Server,
    session: &mut Session,
    message: &Value,
    ctx: &mut FrameCtx,
) -> Option<Value> {
    let config = &server.config;
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
        && !config.has(&outside::PATH_MATCHES_BODY)
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
    Some(dispatch(server, session, method, params, id, ctx))
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
    } else if GATED_METHODS.iter().any(|(m, _)| *m == method) {
        // The methods RCP defines; a vendor method's notification
        // (`x-<vendor>/…`) is an undefined one here, as RCP-L0-007 sends it.
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
    server: &Server,
    session: &mut Session,
    method: &str,
    params: &Map<String, Value>,
    id: Value,
    ctx: &mut FrameCtx,
) -> Value {
    let config = &server.config;
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
                caps.insert("catalog".into(), json!({"engines": 1}));
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
    let result = match method {
        "retrieve" => {
            let mut side = side_for(config, session, params, ctx);
            let result = methods::retrieve(config, &server.index(), params, &mut side);
            ctx.frames.append(&mut side.frames);
            result
        }
        "rerank" => methods::rerank(config, params),
        "embed/sparse" => methods::embed_sparse(config, &server.index(), params),
        "embed/multi" => methods::embed_multi(config, params),
        "query/transform" => methods::transform(config, &server.index(), params),
        "graph" => methods::graph(config, &server.index(), params),
        "index/add" => methods::index_add(config, &mut server.index(), params),
        "index/delete" => methods::index_delete(config, &mut server.index(), params),
        _ => Err((
            -32003,
            format!("capability `{cap}` is not advertised"),
            Value::Null,
        )),
    };
    match result {
        Ok(result) => success(config, id, result),
        Err((code, message, Value::Null)) => error_reply(config, id, code, &message),
        Err((code, message, data)) => error_with_data(config, id, code, &message, data),
    }
}

/// Which notifications a request may produce (spec §7.1: only those the client
/// opted into; §5.2: over HTTP only inside an event stream the client asked for).
fn side_for(
    config: &RcpReferenceConfig,
    session: &Session,
    params: &Map<String, Value>,
    ctx: &FrameCtx,
) -> Side {
    if !ctx.may_notify {
        return Side::default();
    }
    let meta = params.get("_meta");
    let mut progress = meta
        .and_then(|m| m.get("progressToken"))
        .filter(|t| (t.is_string() || t.is_i64() || t.is_u64()) && config.offers("streaming"))
        .cloned();
    // The fault of RCP-OUT-006: progress for every request, token or not.
    if config.has(&outside::UNSOLICITED) && progress.is_none() {
        progress = Some(json!("protocheck-reference-unsolicited"));
    }
    let meta_log = meta.and_then(|m| m.get("logLevel")).map(log_level);
    let log = if config.variants.log_needs_capability {
        // The variant: only a client that advertised the `log` capability
        // gets logs (§17.1), at the level it asks for.
        meta_log.or(session.log).filter(|_| session.log_capability)
    } else {
        meta_log.or(session.log)
    }
    .filter(|_| config.offers("log"));
    Side {
        // The variant streams the final response only (§5.2: "zero or more").
        progress: progress.filter(|_| !config.variants.no_progress),
        log,
        frames: Vec::new(),
        overshoot: config.has(&l2::STREAMING_PROGRESS),
        bad_level: config.has(&l2::LOG),
    }
}

/// The index of a `logLevel` in [`LOG_LEVELS`]; an unknown one means "info".
fn log_level(level: &Value) -> usize {
    level
        .as_str()
        .and_then(|l| LOG_LEVELS.iter().position(|x| *x == l))
        .unwrap_or(1)
}

/// A digest of `initialize` params, to tell an identical repeat apart.
fn params_digest(params: &Map<String, Value>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    Value::Object(params.clone()).to_string().hash(&mut hasher);
    hasher.finish()
}

fn initialize(
    config: &RcpReferenceConfig,
    session: &mut Session,
    params: &Map<String, Value>,
    id: Value,
    ctx: &mut FrameCtx,
) -> Value {
    let stateless = config.has(&l0::STATEFUL_HTTP);
    let digest = params_digest(params);
    let idempotent_repeat =
        config.has(&l0::REPEAT_INIT_REJECTED) && session.handshake == Some(digest);
    if session.initialized && !stateless && !idempotent_repeat {
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
    session.handshake = Some(digest);
    // Spec §7.1 and §17.1: a client opts into logs with its `log` capability
    // or `_meta.logLevel`; without either it gets none.
    let meta_level = params.get("_meta").and_then(|m| m.get("logLevel"));
    let log_cap = params
        .get("capabilities")
        .and_then(|c| c.get("log"))
        .is_some_and(|l| !l.is_null());
    session.log = meta_level.map(log_level).or(log_cap.then_some(1));
    session.log_capability = log_cap;
    let mut result = server_description(config, ctx.new_token.as_deref());
    result["protocolVersion"] = if config.has(&harness::PROTOCOL_VERSION) {
        json!(0)
    } else {
        json!(negotiated)
    };
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
        let level = config.declared.as_deref().unwrap_or(DECLARED_LEVEL);
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

/// The capability set (spec §6): everything §14.2 asks of L1 and a broad
/// selection of §14.3's L2 features.
pub(super) fn advertised(config: &RcpReferenceConfig) -> Map<String, Value> {
    let mut caps = all_capabilities(config);
    for withheld in &config.withheld {
        match withheld.split_once('.') {
            Some((cap, field)) => {
                if let Some(meta) = caps.get_mut(cap).and_then(Value::as_object_mut) {
                    meta.remove(field);
                }
            }
            None => {
                caps.remove(withheld);
            }
        }
    }
    caps
}

fn all_capabilities(config: &RcpReferenceConfig) -> Map<String, Value> {
    let mut caps = Map::new();
    if config.has(&l0::RETRIEVAL_CAPABILITY) {
        return caps;
    }
    caps.insert(
        "retrieve".into(),
        json!({
            "maxK": methods::max_k(config),
            "modes": ["dense", "sparse", "hybrid"],
            "defaultMode": "hybrid",
            "fusion": ["rrf", "weighted"],
            "rerankBuiltin": true,
            "deterministic": true,
            "snapshots": true,
            "scoreScale": "unbounded",
        }),
    );
    caps.insert("filter".into(), super::filter::capability(config));
    caps.insert("citations".into(), json!({}));
    caps.insert(
        "rerank".into(),
        json!({"methods": methods::RERANK_METHODS, "maxCandidates": methods::MAX_CANDIDATES}),
    );
    caps.insert(
        "sparseEmbed".into(),
        json!({"identity": "protocheck-reference-bm25-hashed", "vocabulary": super::engine::SPARSE_VOCABULARY}),
    );
    caps.insert(
        "multiVector".into(),
        json!({"dimension": super::engine::MULTI_DIM, "identity": "protocheck-reference-token-trigrams", "similarity": "cosine"}),
    );
    caps.insert(
        "transform".into(),
        json!({"methods": methods::TRANSFORM_METHODS}),
    );
    caps.insert("graph".into(), json!({"ops": methods::GRAPH_OPS}));
    caps.insert("index".into(), json!({"writable": true}));
    caps.insert("streaming".into(), json!({}));
    caps.insert("pagination".into(), json!({}));
    caps.insert("log".into(), json!({"levels": LOG_LEVELS}));
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

fn success(config: &RcpReferenceConfig, id: Value, result: Value) -> Value {
    finish(
        config,
        json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
}

pub(super) fn error_reply(
    config: &RcpReferenceConfig,
    id: Value,
    code: i64,
    message: &str,
) -> Value {
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
        Some(Value::String(s)) if config.has(&harness::STRING_ID) => Some(json!(format!("id-{s}"))),
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
