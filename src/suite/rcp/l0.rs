//! RCP/1 L0 "Base" (spec §14.1), `spec` profile: the catalogue and the checks.
//!
//! The checks run in one conversation, in the order lifecycle demands: the
//! pre-initialize checks, the handshake, the post-initialize checks, the parse
//! error probe, `shutdown` last, and then the rules judged over every reply of
//! the run. Findings are emitted as each check completes, except the few whose
//! meaning depends on how the server keeps sessions (decisions 3 and 4), which
//! are emitted once that is known, right after the repeat-`initialize` probe.

use super::client::{Failure, Notified, RcpClient, Reply};
use crate::suite::runner::{EngineError, Reporter, Stopwatch};
use crate::suite::{Exchange, Finding, Outcome, Rule, SpecLevel};
use crate::transport::TransportError;
use serde_json::{Map, Value, json};

const fn must(id: &'static str, title: &'static str, spec_ref: &'static str) -> Rule {
    Rule {
        id,
        title,
        level: SpecLevel::Must,
        on_failure: Outcome::Fail,
        spec_ref,
        group: "L0",
    }
}

/// A rule that reports a fact about the server rather than a violation.
const fn note(id: &'static str, title: &'static str, spec_ref: &'static str) -> Rule {
    Rule {
        id,
        title,
        level: SpecLevel::May,
        on_failure: Outcome::Info,
        spec_ref,
        group: "L0",
    }
}

pub const INFO_BEFORE_INIT: Rule = must(
    "RCP-L0-001",
    "`info` answers before `initialize`",
    "RCP/1 §14.1(1), §7.2",
);
pub const PING_NUMERIC_NONCE: Rule = must(
    "RCP-L0-002",
    "`ping` before `initialize` echoes a numeric nonce",
    "RCP/1 §14.1(1)",
);
pub const PING_STRING_NONCE: Rule = must(
    "RCP-L0-003",
    "`ping` before `initialize` echoes a string nonce",
    "RCP/1 §14.1(1)",
);
pub const GATED_BEFORE_INIT: Rule = must(
    "RCP-L0-004",
    "a gated call before `initialize` is rejected with -32001",
    "RCP/1 §14.1(3), §12",
);
pub const NOTIFY_GATED: Rule = must(
    "RCP-L0-005",
    "a notification for a gated method is not answered",
    "RCP/1 §4.5, §14.1(6)",
);
pub const NOTIFY_OPEN: Rule = must(
    "RCP-L0-006",
    "a notification for an open method (`info`) is not answered",
    "RCP/1 §4.5, §14.1(6)",
);
pub const NOTIFY_UNKNOWN: Rule = must(
    "RCP-L0-007",
    "a notification for an unknown method is not answered",
    "RCP/1 §4.5, §14.1(6)",
);
pub const CANCEL_UNKNOWN_ID: Rule = must(
    "RCP-L0-008",
    "`notifications/cancel` for an unknown id is not answered",
    "RCP/1 §14.1(6)",
);
pub const VERSION_ZERO_REJECTED: Rule = must(
    "RCP-L0-009",
    "`initialize` with protocolVersion 0 is rejected with -32002",
    "RCP/1 §7.1, §12",
);
pub const FAILED_HANDSHAKE_UNINITIALIZED: Rule = must(
    "RCP-L0-010",
    "a failed handshake leaves the session uninitialized",
    "RCP/1 §7.1, §14.1(3)",
);
pub const INITIALIZE_NEGOTIATES: Rule = must(
    "RCP-L0-011",
    "`initialize` negotiates a protocolVersion ≥ 1 and ≤ the client's",
    "RCP/1 §7.1, §14.1(1)",
);
pub const RETRIEVAL_CAPABILITY: Rule = must(
    "RCP-L0-012",
    "advertises at least one of embed, rerank, retrieve, graph",
    "RCP/1 §14.1(2)",
);
pub const SERVER_IDENTITY: Rule = must(
    "RCP-L0-013",
    "`server.name` is a non-empty string",
    "RCP/1 §7.1 (PeerInfo)",
);
pub const DECLARES_LEVEL: Rule = must(
    "RCP-L0-014",
    "declares `_meta.conformance` as L0, L1 or L2",
    "RCP/1 §14; protocheck decision 1",
);
pub const REPEAT_INIT_REJECTED: Rule = must(
    "RCP-L0-015",
    "a repeated `initialize` is rejected with -32600",
    "RCP/1 §7.1, §12",
);
pub const TOLERATES_UNKNOWN: Rule = must(
    "RCP-L0-016",
    "unknown fields, capability keys and `_meta` are tolerated",
    "RCP/1 §14.1(7), §4.6",
);
pub const UNKNOWN_METHOD: Rule = must(
    "RCP-L0-017",
    "an undefined method is rejected with -32004",
    "RCP/1 §14.1(4), §12",
);
pub const UNADVERTISED_METHOD: Rule = must(
    "RCP-L0-018",
    "an unadvertised capability method is rejected with -32003",
    "RCP/1 §14.1(4), §12",
);
pub const UNSUPPORTED_OPTION: Rule = must(
    "RCP-L0-019",
    "an unsupported option of an advertised method is rejected with -32005",
    "RCP/1 §14.1(4), §12",
);
pub const MALFORMED_PARAMS: Rule = must(
    "RCP-L0-020",
    "malformed params are rejected with -32602",
    "RCP/1 §14.1(5), §12",
);
pub const INFO_AFTER_INIT: Rule = must(
    "RCP-L0-021",
    "`info` after `initialize` reports the session's capabilities",
    "RCP/1 §7.2, §13.2",
);
pub const PARSE_ERROR: Rule = must(
    "RCP-L0-022",
    "an unparseable frame gets -32700 with id null",
    "RCP/1 §4, §12, §5 (HTTP 400)",
);
pub const SHUTDOWN: Rule = must("RCP-L0-023", "`shutdown` answers `{}`", "RCP/1 §13");
pub const NUMERIC_ID_ECHO: Rule = must(
    "RCP-L0-024",
    "numeric request ids are echoed with the same type and value",
    "RCP/1 §14.1(5), §4.2",
);
pub const STRING_ID_ECHO: Rule = must(
    "RCP-L0-025",
    "string request ids are echoed with the same type and value",
    "RCP/1 §14.1(5), §4.2",
);
pub const WELL_FORMED: Rule = must(
    "RCP-L0-026",
    "every reply is well-formed JSON-RPC 2.0",
    "RCP/1 §14.1(5), §4",
);
pub const PER_SESSION_INIT: Rule = note(
    "RCP-L0-027",
    "initialization is per session, not process-wide",
    "RCP/1 §5 (sessions); protocheck decision 3",
);
pub const STATEFUL_HTTP: Rule = note(
    "RCP-L0-028",
    "the HTTP server keeps session state",
    "RCP/1 §5 (sessions); protocheck decision 4",
);
pub const HIGHER_LEVEL_NOT_JUDGED: Rule = note(
    "RCP-L0-029",
    "a declared L1 or L2 is not judged by this suite version",
    "RCP/1 §14.2, §14.3",
);
pub const BATCH: Rule = must(
    "RCP-L0-030",
    "a batch gets one reply per request and none for its notifications",
    "RCP/1 §11; protocheck decision 10",
);
pub const EMPTY_BATCH: Rule = must(
    "RCP-L0-031",
    "an empty batch gets a single -32600 with id null",
    "RCP/1 §11, §12",
);
pub const CANCEL_WITH_ID: Rule = must(
    "RCP-L0-032",
    "`notifications/cancel` sent with an id is rejected with -32600",
    "RCP/1 §12, §7 (notifications/cancel)",
);

/// The L0 catalogue, by id. (Run order differs: see the module comment.)
pub static RULES: &[Rule] = &[
    INFO_BEFORE_INIT,
    PING_NUMERIC_NONCE,
    PING_STRING_NONCE,
    GATED_BEFORE_INIT,
    NOTIFY_GATED,
    NOTIFY_OPEN,
    NOTIFY_UNKNOWN,
    CANCEL_UNKNOWN_ID,
    VERSION_ZERO_REJECTED,
    FAILED_HANDSHAKE_UNINITIALIZED,
    INITIALIZE_NEGOTIATES,
    RETRIEVAL_CAPABILITY,
    SERVER_IDENTITY,
    DECLARES_LEVEL,
    REPEAT_INIT_REJECTED,
    TOLERATES_UNKNOWN,
    UNKNOWN_METHOD,
    UNADVERTISED_METHOD,
    UNSUPPORTED_OPTION,
    MALFORMED_PARAMS,
    INFO_AFTER_INIT,
    PARSE_ERROR,
    SHUTDOWN,
    NUMERIC_ID_ECHO,
    STRING_ID_ECHO,
    WELL_FORMED,
    PER_SESSION_INIT,
    STATEFUL_HTTP,
    HIGHER_LEVEL_NOT_JUDGED,
    BATCH,
    EMPTY_BATCH,
    CANCEL_WITH_ID,
];

/// The skip reason of decision 3 (process-wide initialization).
pub const ALREADY_INITIALIZED: &str =
    "not verifiable on a server that is already initialized (spec §11.3 decision)";
/// The skip reason of decision 4 (stateless HTTP).
pub const STATELESS: &str = "stateless HTTP server (spec §5)";

/// The protocol version protocheck speaks, and so offers in `initialize`.
pub const CLIENT_PROTOCOL_VERSION: i64 = 1;

/// The level names `_meta.conformance` may carry (spec §14), case-sensitive.
pub const LEVELS: [&str; 3] = ["L0", "L1", "L2"];

/// Capabilities that count as "retrieval" for §14.1 rule 2.
const RETRIEVAL_CAPABILITIES: [&str; 4] = ["embed", "rerank", "retrieve", "graph"];

/// A numeric id at the edge of what the spec allows (integers within ±2^53, §1):
/// a server that narrows ids to 32 bits or re-encodes them is caught here.
const BIG_NUMERIC_ID: u64 = 9_007_199_254_740_991;
/// A string id that looks like a number: a server that coerces ids is caught here.
const NUMERIC_LOOKING_STRING_ID: &str = "017";
const REINIT_ID: &str = "protocheck-reinit";
/// Not an id protocheck ever uses, so the cancel refers to nothing (§14.1 rule 6).
const UNKNOWN_CANCEL_ID: u64 = 987_654_321;
const UNKNOWN_METHOD_NAME: &str = "does/not/exist";
const PROBE_QUERY: &str = "protocheck conformance probe";

/// What the L0 checks found out that the verdict needs.
#[derive(Debug, Clone, Default)]
pub struct L0Report {
    /// `_meta.conformance` as declared (bounded), when it is a string.
    pub declared: Option<String>,
}

/// How the server keeps the initialized state (spec §5; decisions 3 and 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SessionMode {
    /// Each session (stdio process, HTTP session token) starts uninitialized.
    PerSession,
    /// One initialized flag for the whole process, already set before this run.
    ProcessWide,
    /// Every request is treated as initialized.
    Stateless,
}

/// Where the initialize-result checks read their data from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InitSource {
    Initialize,
    /// The server was already initialized (process-wide) before this run.
    InfoAlreadyInitialized,
    /// The server accepted protocolVersion 0, which initialized this session.
    InfoAfterVersionZero,
}

struct Init {
    result: Map<String, Value>,
    exchange: Exchange,
    source: InitSource,
}

impl Init {
    fn capabilities(&self) -> Option<&Map<String, Value>> {
        self.result.get("capabilities").and_then(Value::as_object)
    }

    /// `supports(cap)`: the key is present and not null (spec §14).
    fn supports(&self, cap: &str) -> bool {
        self.capabilities()
            .and_then(|c| c.get(cap))
            .is_some_and(|v| !v.is_null())
    }

    /// String values of the array `capabilities.<cap>.<field>`, if it is one.
    fn advertised_list(&self, cap: &str, field: &str) -> Option<Vec<String>> {
        let list = self.capabilities()?.get(cap)?.get(field)?.as_array()?;
        Some(
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        )
    }

    fn read_from(&self) -> &'static str {
        match self.source {
            InitSource::Initialize => "",
            _ => " (read from `info`: this session was already initialized)",
        }
    }
}

type Sent = Result<Reply, Failure>;

/// One rule being checked: its clock and the exchanges that will be its evidence.
struct Check {
    rule: &'static Rule,
    watch: Stopwatch,
    evidence: Vec<Exchange>,
}

impl Check {
    fn new(rule: &'static Rule) -> Self {
        Self {
            rule,
            watch: Stopwatch::start(),
            evidence: Vec::new(),
        }
    }

    fn saw(&mut self, sent: &Sent) {
        self.evidence.push(exchange_of(sent).clone());
    }

    fn finding(self, outcome: Outcome, message: impl Into<String>) -> Finding {
        Finding {
            rule_id: self.rule.id.to_owned(),
            outcome,
            message: message.into(),
            evidence: self.evidence,
            duration_ms: self.watch.ms(),
        }
    }
}

fn exchange_of(sent: &Sent) -> &Exchange {
    match sent {
        Ok(reply) => &reply.exchange,
        Err(failure) => &failure.exchange,
    }
}

/// "answered with error -32601 (MethodNotFound)" or "got no answer: <error>".
fn outcome_words(sent: &Sent) -> String {
    match sent {
        Ok(reply) => format!("was answered with {}", reply.describe()),
        Err(failure) => format!("got no answer ({})", failure.error),
    }
}

fn code_of(sent: &Sent) -> Option<i64> {
    sent.as_ref().ok().and_then(Reply::error_code)
}

fn result_of(sent: &Sent) -> Option<&Value> {
    sent.as_ref().ok().and_then(Reply::result)
}

/// A JSON value as a finding shows it, bounded.
fn show(value: &Value) -> String {
    let text = value.to_string();
    let kind = match value {
        Value::String(_) => " (a string)",
        Value::Number(_) => " (a number)",
        _ => "",
    };
    if text.len() > 80 {
        let cut = crate::transport::excerpt(text.as_bytes(), 80).0;
        format!("{cut}…{kind}")
    } else {
        format!("{text}{kind}")
    }
}

/// Same JSON type and value; numbers compare by value (7 and 7.0 are one number).
fn same_id(sent: &Value, got: &Value) -> bool {
    match (sent, got) {
        (Value::Number(a), Value::Number(b)) => match (a.as_i64(), b.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (a.as_u64(), b.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => a.as_f64().zip(b.as_f64()).is_some_and(|(x, y)| x == y),
            },
        },
        (a, b) => a == b,
    }
}

/// Pairs a reply with its request even when the id's type was changed.
fn loose_id(sent: &Value, got: &Value) -> bool {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    same_id(sent, got) || text(sent) == text(got)
}

fn client_info() -> Value {
    json!({"name": "protocheck", "version": env!("CARGO_PKG_VERSION")})
}

/// The L0 run over one client.
struct L0<'a> {
    client: &'a mut RcpClient,
    reporter: &'a mut Reporter,
    /// The rule during which the target stopped answering for good; later checks
    /// that need the target are skipped rather than failed (no cascades).
    gone_during: Option<&'static str>,
}

/// Runs every L0 check, emitting findings through `reporter`.
pub(crate) async fn run(
    client: &mut RcpClient,
    reporter: &mut Reporter,
) -> Result<L0Report, EngineError> {
    let mut l0 = L0 {
        client,
        reporter,
        gone_during: None,
    };
    l0.run().await
}

impl L0<'_> {
    async fn emit(&mut self, finding: Finding) -> Result<(), EngineError> {
        self.reporter.emit(finding).await
    }

    async fn skip(
        &mut self,
        rule: &'static Rule,
        reason: impl Into<String>,
    ) -> Result<(), EngineError> {
        self.emit(Check::new(rule).finding(Outcome::Skip, reason))
            .await
    }

    /// The skip reason when the target is gone.
    fn gone(&self) -> Option<String> {
        self.gone_during
            .map(|id| format!("not verified: the server stopped answering during {id}"))
    }

    /// Classifies a send: a failure before anything ever came back ends the run
    /// (the target is unreachable, not non-conformant); a failure showing the
    /// target has gone is remembered so later checks skip instead of cascading.
    fn sent(&mut self, rule: &'static Rule, sent: Sent) -> Result<Sent, EngineError> {
        if let Err(failure) = &sent {
            if !self.client.has_answered() {
                return Err(EngineError::from_transport(failure.error.clone()));
            }
            let gone =
                self.client.is_closed() || matches!(failure.error, TransportError::Connect(_));
            if gone && self.gone_during.is_none() {
                self.gone_during = Some(rule.id);
            }
        }
        Ok(sent)
    }

    async fn call(
        &mut self,
        rule: &'static Rule,
        id: Value,
        method: &str,
        params: Value,
    ) -> Result<Sent, EngineError> {
        let sent = self.client.call(id, method, params).await;
        self.sent(rule, sent)
    }

    async fn request(
        &mut self,
        rule: &'static Rule,
        method: &str,
        params: Value,
    ) -> Result<Sent, EngineError> {
        let id = self.client.next_id();
        self.call(rule, id, method, params).await
    }

    async fn run(&mut self) -> Result<L0Report, EngineError> {
        self.info_before_init().await?;
        self.ping_nonce(&PING_NUMERIC_NONCE, json!(777)).await?;
        self.ping_nonce(&PING_STRING_NONCE, json!("protocheck-nonce-7"))
            .await?;

        // Probed now, judged once the session model is known (decisions 3 and 4).
        let gated = self.gated_probe(&GATED_BEFORE_INIT).await?;

        let gated_params = json!({"query": PROBE_QUERY, "k": 1});
        self.notification(&NOTIFY_GATED, "retrieve", gated_params)
            .await?;
        self.notification(&NOTIFY_OPEN, "info", json!({})).await?;
        self.notification(&NOTIFY_UNKNOWN, UNKNOWN_METHOD_NAME, json!({}))
            .await?;
        let cancel = json!({"id": UNKNOWN_CANCEL_ID, "reason": "protocheck probe"});
        self.notification(&CANCEL_UNKNOWN_ID, "notifications/cancel", cancel)
            .await?;

        let v0 = self
            .request(
                &VERSION_ZERO_REJECTED,
                "initialize",
                json!({"protocolVersion": 0, "client": client_info(), "capabilities": {}}),
            )
            .await?;
        let after_failed = if code_of(&v0) == Some(-32002) {
            Some(self.gated_probe(&FAILED_HANDSHAKE_UNINITIALIZED).await?)
        } else {
            None
        };

        let gated_open = gated
            .as_ref()
            .is_ok_and(|r| r.error_code() != Some(-32001) && r.json().is_some());
        let (init, mut mode, init_tolerance) = self
            .initialize(gated_open, result_of(&v0).is_some())
            .await?;
        let mut report = L0Report::default();
        if let Some(init) = &init {
            if init.source == InitSource::Initialize {
                let token = init
                    .result
                    .get("_meta")
                    .and_then(|m| m.get("session"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                self.client.set_session(token);
            }
            report.declared = self.init_result_checks(init).await?;
        } else {
            for rule in [
                &RETRIEVAL_CAPABILITY,
                &SERVER_IDENTITY,
                &DECLARES_LEVEL,
                &HIGHER_LEVEL_NOT_JUDGED,
            ] {
                self.skip(rule, no_init()).await?;
            }
        }

        let reinit = match &init {
            Some(_) => Some(
                self.call(
                    &REPEAT_INIT_REJECTED,
                    json!(REINIT_ID),
                    "initialize",
                    json!({"protocolVersion": CLIENT_PROTOCOL_VERSION, "client": client_info(), "capabilities": {}}),
                )
                .await?,
            ),
            None => None,
        };
        if mode == SessionMode::PerSession
            && self.client.is_http()
            && gated_open
            && reinit.as_ref().is_some_and(|r| result_of(r).is_some())
        {
            mode = SessionMode::Stateless;
        }
        self.session_dependent(mode, &gated, &v0, after_failed.as_ref(), reinit.as_ref())
            .await?;

        self.tolerance(init_tolerance).await?;
        let init = init.as_ref();
        self.unknown_method(init).await?;
        self.unadvertised_method(init).await?;
        self.unsupported_option(init).await?;
        // Judged at the end with every other reply of the run.
        if self.gone_during.is_none() {
            let _ = self
                .call(&NUMERIC_ID_ECHO, json!(BIG_NUMERIC_ID), "ping", json!({}))
                .await?;
            let _ = self
                .call(
                    &STRING_ID_ECHO,
                    json!(NUMERIC_LOOKING_STRING_ID),
                    "info",
                    json!({}),
                )
                .await?;
        }
        self.malformed_params(init).await?;
        self.info_after_init(init).await?;
        self.cancel_with_id().await?;
        self.batch().await?;
        self.empty_batch().await?;
        self.parse_error().await?;
        self.shutdown().await?;
        self.id_echo(&NUMERIC_ID_ECHO, Value::is_number, "numeric")
            .await?;
        self.id_echo(&STRING_ID_ECHO, Value::is_string, "string")
            .await?;
        self.well_formed().await?;
        Ok(report)
    }

    async fn info_before_init(&mut self) -> Result<(), EngineError> {
        let rule = &INFO_BEFORE_INIT;
        let mut check = Check::new(rule);
        let sent = self.request(rule, "info", json!({})).await?;
        check.saw(&sent);
        let finding = match result_of(&sent) {
            Some(result) if result.get("server").is_some_and(Value::is_object) => {
                check.finding(Outcome::Pass, "`info` answered before `initialize` with a `server` object")
            }
            Some(_) => check.finding(
                rule.on_failure,
                "`info` before `initialize` was answered with a result that has no `server` object; \
                 `info` has the shape of the `initialize` result and must answer at any time (§7.2, §14.1 rule 1)",
            ),
            None => check.finding(
                rule.on_failure,
                format!(
                    "`info` before `initialize` {}; the spec requires `info` to answer at any time, \
                     before `initialize` too, with a result carrying `server` (§7.2, §14.1 rule 1)",
                    outcome_words(&sent)
                ),
            ),
        };
        self.emit(finding).await
    }

    async fn ping_nonce(&mut self, rule: &'static Rule, nonce: Value) -> Result<(), EngineError> {
        if let Some(reason) = self.gone() {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let sent = self.request(rule, "ping", json!({"nonce": nonce})).await?;
        check.saw(&sent);
        let finding = match result_of(&sent) {
            Some(result) => match result.get("nonce") {
                Some(got) if same_id(&nonce, got) => check.finding(
                    Outcome::Pass,
                    format!("`ping` before `initialize` echoed the nonce {}", show(&nonce)),
                ),
                Some(got) => check.finding(
                    rule.on_failure,
                    format!(
                        "`ping` with nonce {} echoed {}; the nonce MUST be echoed with the same type and value (§14.1 rule 1)",
                        show(&nonce),
                        show(got)
                    ),
                ),
                None => check.finding(
                    rule.on_failure,
                    format!(
                        "`ping` with nonce {} was answered without a `nonce`; the nonce MUST be echoed (§14.1 rule 1)",
                        show(&nonce)
                    ),
                ),
            },
            None => check.finding(
                rule.on_failure,
                format!(
                    "`ping` before `initialize` {}; `ping` MUST answer at any time, echoing its nonce (§14.1 rule 1)",
                    outcome_words(&sent)
                ),
            ),
        };
        self.emit(finding).await
    }

    /// `retrieve` while the session should be uninitialized.
    async fn gated_probe(&mut self, rule: &'static Rule) -> Result<Sent, EngineError> {
        self.request(rule, "retrieve", json!({"query": PROBE_QUERY, "k": 1}))
            .await
    }

    async fn notification(
        &mut self,
        rule: &'static Rule,
        method: &str,
        params: Value,
    ) -> Result<(), EngineError> {
        if let Some(reason) = self.gone() {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let notified = self.client.notify(method, params).await;
        let notified = match notified {
            Ok(n) => n,
            Err(failure) => {
                check.evidence.push(failure.exchange.clone());
                let _ = self.sent(rule, Err(failure.clone()))?;
                let finding = check.finding(
                    rule.on_failure,
                    format!(
                        "sending a notification for `{method}` failed ({}); over HTTP a notification \
                         must still get 204 or an empty 200/202 (protocheck decision 6)",
                        failure.error
                    ),
                );
                return self.emit(finding).await;
            }
        };
        let finding = match notified {
            Notified::Silent(exchange) => {
                let how = match exchange.response.as_ref().and_then(|r| r.status) {
                    Some(status) => format!("HTTP {status} with an empty body"),
                    None => "no line within the wait".to_owned(),
                };
                check.evidence.push(exchange);
                check.finding(
                    Outcome::Pass,
                    format!("a notification (no `id`) for `{method}` was not answered ({how})"),
                )
            }
            Notified::Answered(reply) => {
                let what = reply.describe();
                check.evidence.push(reply.exchange);
                check.finding(
                    rule.on_failure,
                    format!(
                        "a notification (no `id`) for `{method}` was answered with {what}; \
                         notifications MUST NOT be answered, not even with an error, whatever the method (§4.5, §14.1 rule 6)"
                    ),
                )
            }
        };
        self.emit(finding).await
    }

    /// The handshake. The first `initialize` carries an unknown client capability
    /// key and an unknown `_meta` key (§14.1 rule 7); when it fails, a plain one
    /// tells intolerance apart from a broken handshake. Returns the result (or
    /// its stand-in from `info`), the session model if already known, and the
    /// tolerance verdict of the first `initialize`, if it could be judged.
    async fn initialize(
        &mut self,
        gated_open: bool,
        v0_accepted: bool,
    ) -> Result<
        (
            Option<Init>,
            SessionMode,
            Option<(bool, Vec<Exchange>, String)>,
        ),
        EngineError,
    > {
        let rule = &INITIALIZE_NEGOTIATES;
        let mut check = Check::new(rule);
        if let Some(reason) = self.gone() {
            self.skip(rule, reason).await?;
            return Ok((None, SessionMode::PerSession, None));
        }
        let tolerant = json!({
            "protocolVersion": CLIENT_PROTOCOL_VERSION,
            "client": client_info(),
            "capabilities": {"x-protocheck-probe": {"note": "an unknown client capability key"}},
            "_meta": {"x-protocheck-unknown": {"note": "an unknown _meta key"}},
        });
        let plain = json!({
            "protocolVersion": CLIENT_PROTOCOL_VERSION,
            "client": client_info(),
            "capabilities": {},
        });
        let first = self.request(rule, "initialize", tolerant).await?;
        check.saw(&first);
        if let Some(result) = result_of(&first).and_then(Value::as_object) {
            let init = Init {
                result: result.clone(),
                exchange: exchange_of(&first).clone(),
                source: InitSource::Initialize,
            };
            let note = "`initialize` carrying an unknown client capability key and an unknown `_meta` key succeeded".to_owned();
            self.negotiation(check, &init).await?;
            return Ok((
                Some(init),
                SessionMode::PerSession,
                Some((true, vec![exchange_of(&first).clone()], note)),
            ));
        }
        let first_code = code_of(&first);
        let mut mode = SessionMode::PerSession;
        let tolerance = None;
        let source = if first_code == Some(-32600) && v0_accepted {
            InitSource::InfoAfterVersionZero
        } else if first.is_ok() {
            let second = self.request(rule, "initialize", plain).await?;
            check.saw(&second);
            if let Some(result) = result_of(&second).and_then(Value::as_object) {
                let init = Init {
                    result: result.clone(),
                    exchange: exchange_of(&second).clone(),
                    source: InitSource::Initialize,
                };
                let message = format!(
                    "`initialize` carrying an unknown client capability key (`x-protocheck-probe`) and an unknown \
                     `_meta` key {}, while the same `initialize` without them succeeded; unknown fields, capability \
                     keys and `_meta` MUST be ignored, never rejected (§14.1 rule 7, §4.6)",
                    outcome_words(&first)
                );
                let evidence = vec![exchange_of(&first).clone(), exchange_of(&second).clone()];
                self.negotiation(check, &init).await?;
                return Ok((Some(init), mode, Some((false, evidence, message))));
            }
            if first_code == Some(-32600)
                && code_of(&second) == Some(-32600)
                && gated_open
                && self.client.is_http()
            {
                mode = SessionMode::ProcessWide;
                InitSource::InfoAlreadyInitialized
            } else {
                let finding = check.finding(
                    rule.on_failure,
                    format!(
                        "`initialize` with protocolVersion {CLIENT_PROTOCOL_VERSION} {} (and {} without the unknown keys); \
                         the spec requires a result with the negotiated protocolVersion ≥ 1, `server` and `capabilities` (§7.1, §14.1 rule 1)",
                        outcome_words(&first),
                        outcome_words(&second).replacen("was answered", "answered", 1)
                    ),
                );
                self.emit(finding).await?;
                return Ok((None, mode, tolerance));
            }
        } else {
            let finding = check.finding(
                rule.on_failure,
                format!(
                    "`initialize` {}; the spec requires a result with the negotiated protocolVersion (§7.1, §14.1 rule 1)",
                    outcome_words(&first)
                ),
            );
            self.emit(finding).await?;
            return Ok((None, mode, tolerance));
        };

        // The session was initialized before this handshake: read its result from `info`.
        let info = self.request(rule, "info", json!({})).await?;
        check.saw(&info);
        let reason = match source {
            InitSource::InfoAfterVersionZero => format!(
                "not verified: {} failed (the server accepted protocolVersion 0, which initialized this session, \
                 so `initialize` was rightly refused with -32600)",
                VERSION_ZERO_REJECTED.id
            ),
            _ => ALREADY_INITIALIZED.to_owned(),
        };
        match result_of(&info).and_then(Value::as_object) {
            Some(result) => {
                let init = Init {
                    result: result.clone(),
                    exchange: exchange_of(&info).clone(),
                    source,
                };
                self.emit(check.finding(Outcome::Skip, reason)).await?;
                Ok((Some(init), mode, tolerance))
            }
            None => {
                let finding = check.finding(
                    rule.on_failure,
                    format!(
                        "`initialize` was refused with -32600 as if the session were already initialized, and `info` {} \
                         so no capability set could be read (§7.1, §7.2)",
                        outcome_words(&info)
                    ),
                );
                self.emit(finding).await?;
                Ok((None, mode, tolerance))
            }
        }
    }

    /// Judges the negotiated version of a successful `initialize`.
    async fn negotiation(&mut self, check: Check, init: &Init) -> Result<(), EngineError> {
        let rule = check.rule;
        let finding = match init.result.get("protocolVersion") {
            Some(v) => match v.as_i64() {
                Some(n) if (1..=CLIENT_PROTOCOL_VERSION).contains(&n) => check.finding(
                    Outcome::Pass,
                    format!("`initialize` negotiated protocolVersion {n}"),
                ),
                Some(n) if n > CLIENT_PROTOCOL_VERSION => check.finding(
                    rule.on_failure,
                    format!(
                        "`initialize` negotiated protocolVersion {n}, above the {CLIENT_PROTOCOL_VERSION} protocheck offered; \
                         the negotiated version is min(client, server) (§7.1)"
                    ),
                ),
                _ => check.finding(
                    rule.on_failure,
                    format!(
                        "`initialize` returned protocolVersion {}; it MUST be an integer ≥ 1 (§7.1, §14.1 rule 1)",
                        show(v)
                    ),
                ),
            },
            None => check.finding(
                rule.on_failure,
                "the `initialize` result has no `protocolVersion`; it MUST carry the negotiated version (§7.1, §14.1 rule 1)",
            ),
        };
        self.emit(finding).await
    }

    /// Checks on the `initialize` result; returns the declared level.
    async fn init_result_checks(&mut self, init: &Init) -> Result<Option<String>, EngineError> {
        let from = init.read_from();
        let evidence = vec![init.exchange.clone()];

        let mut check = Check::new(&RETRIEVAL_CAPABILITY);
        check.evidence = evidence.clone();
        let finding = match init.capabilities() {
            None => check.finding(
                RETRIEVAL_CAPABILITY.on_failure,
                format!("the `initialize` result{from} has no `capabilities` object (§7.1)"),
            ),
            Some(caps) => {
                let found: Vec<&str> = RETRIEVAL_CAPABILITIES
                    .into_iter()
                    .filter(|c| init.supports(c))
                    .collect();
                if found.is_empty() {
                    let keys: Vec<&str> = caps.keys().map(String::as_str).collect();
                    check.finding(
                        RETRIEVAL_CAPABILITY.on_failure,
                        format!(
                            "the server{from} advertises none of `embed`, `rerank`, `retrieve`, `graph` \
                             (capabilities: [{}]); an L0 server MUST advertise at least one retrieval capability (§14.1 rule 2)",
                            keys.join(", ")
                        ),
                    )
                } else {
                    check.finding(
                        Outcome::Pass,
                        format!("advertises {}{from}", found.join(", ")),
                    )
                }
            }
        };
        self.emit(finding).await?;

        let mut check = Check::new(&SERVER_IDENTITY);
        check.evidence = evidence.clone();
        let name = init.result.get("server").and_then(|s| s.get("name"));
        let finding = match name {
            Some(Value::String(n)) if !n.trim().is_empty() => {
                check.finding(Outcome::Pass, format!("the server names itself {}{from}", crate::transport::excerpt(json!(n).to_string().as_bytes(), 80).0))
            }
            Some(other) => check.finding(
                SERVER_IDENTITY.on_failure,
                format!(
                    "`server.name`{from} is {}; it MUST be a non-empty string identifying the server (§7.1)",
                    show(other)
                ),
            ),
            None => check.finding(
                SERVER_IDENTITY.on_failure,
                format!("the `initialize` result{from} has no `server.name`; it is required (§7.1)"),
            ),
        };
        self.emit(finding).await?;

        let mut check = Check::new(&DECLARES_LEVEL);
        check.evidence = evidence.clone();
        let declared = init.result.get("_meta").and_then(|m| m.get("conformance"));
        let (finding, level) = match declared {
            Some(Value::String(level)) if LEVELS.contains(&level.as_str()) => (
                check.finding(Outcome::Pass, format!("declares `_meta.conformance` = \"{level}\"{from}")),
                Some(level.clone()),
            ),
            Some(other) => (
                check.finding(
                    DECLARES_LEVEL.on_failure,
                    format!(
                        "`_meta.conformance`{from} is {}, which is not one of \"L0\", \"L1\", \"L2\" (case-sensitive); \
                         a server MUST state its level (§14; protocheck decision 1)",
                        show(other)
                    ),
                ),
                other.as_str().map(|s| crate::transport::excerpt(s.as_bytes(), 32).0),
            ),
            None => (
                check.finding(
                    DECLARES_LEVEL.on_failure,
                    format!(
                        "the `initialize` result{from} has no `_meta.conformance`; a server MUST state its level \
                         as \"L0\", \"L1\" or \"L2\" in `initialize` and `info` (§14; protocheck decision 1)"
                    ),
                ),
                None,
            ),
        };
        self.emit(finding).await?;

        let mut check = Check::new(&HIGHER_LEVEL_NOT_JUDGED);
        check.evidence = evidence;
        let finding = match level.as_deref() {
            Some(l @ ("L1" | "L2")) => check.finding(
                Outcome::Info,
                format!(
                    "the server declares {l}; the L1 and L2 checks arrive in a later version of this suite, \
                     so only L0 is certified and the {l} declaration is not judged yet"
                ),
            ),
            Some("L0") => check.finding(Outcome::Pass, "the server declares L0, the level this suite version checks"),
            _ => {
                Check::new(&HIGHER_LEVEL_NOT_JUDGED)
                    .finding(Outcome::Skip, format!("not verified: {} failed", DECLARES_LEVEL.id))
            }
        };
        self.emit(finding).await?;
        Ok(level)
    }

    /// Emits the checks whose meaning depends on the session model.
    async fn session_dependent(
        &mut self,
        mode: SessionMode,
        gated: &Sent,
        v0: &Sent,
        after_failed: Option<&Sent>,
        reinit: Option<&Sent>,
    ) -> Result<(), EngineError> {
        // Repeat initialize.
        let rule = &REPEAT_INIT_REJECTED;
        let mut check = Check::new(rule);
        let finding = match (mode, reinit) {
            (SessionMode::Stateless, _) => check.finding(Outcome::Skip, STATELESS),
            (_, None) => check.finding(Outcome::Skip, self.gone().unwrap_or_else(no_init)),
            (_, Some(sent)) => {
                check.saw(sent);
                if code_of(sent) == Some(-32600) {
                    check.finding(
                        Outcome::Pass,
                        "a second `initialize` was rejected with -32600",
                    )
                } else {
                    check.finding(
                        rule.on_failure,
                        format!(
                            "a second `initialize` after a successful one {}; the spec requires error -32600 \
                             (InvalidRequest) once the session is initialized (§7.1)",
                            outcome_words(sent)
                        ),
                    )
                }
            }
        };
        self.emit(finding).await?;

        // Pre-initialize gating.
        let rule = &GATED_BEFORE_INIT;
        let mut check = Check::new(rule);
        check.saw(gated);
        let gated_passed = code_of(gated) == Some(-32001);
        let finding = match mode {
            SessionMode::ProcessWide => check.finding(Outcome::Skip, ALREADY_INITIALIZED),
            SessionMode::Stateless => check.finding(Outcome::Skip, STATELESS),
            SessionMode::PerSession if gated_passed => {
                check.finding(Outcome::Pass, "`retrieve` before `initialize` was rejected with -32001")
            }
            SessionMode::PerSession => check.finding(
                rule.on_failure,
                format!(
                    "`retrieve` before `initialize` {}; the spec requires error -32001 (NotInitialized) \
                     until a successful `initialize` (§14.1 rule 3)",
                    outcome_words(gated)
                ),
            ),
        };
        self.emit(finding).await?;

        // Version 0.
        let rule = &VERSION_ZERO_REJECTED;
        let mut check = Check::new(rule);
        check.saw(v0);
        let v0_passed = code_of(v0) == Some(-32002);
        let finding = if v0_passed {
            check.finding(
                Outcome::Pass,
                "`initialize` with protocolVersion 0 was rejected with -32002",
            )
        } else if mode == SessionMode::ProcessWide {
            check.finding(Outcome::Skip, ALREADY_INITIALIZED)
        } else {
            check.finding(
                rule.on_failure,
                format!(
                    "`initialize` with protocolVersion 0 {}; with no common version ≥ 1 the spec requires \
                     error -32002 (VersionMismatch) (§7.1)",
                    outcome_words(v0)
                ),
            )
        };
        self.emit(finding).await?;

        // A failed handshake leaves the session uninitialized.
        let rule = &FAILED_HANDSHAKE_UNINITIALIZED;
        let mut check = Check::new(rule);
        let finding = match (mode, after_failed) {
            (SessionMode::ProcessWide, _) => check.finding(Outcome::Skip, ALREADY_INITIALIZED),
            (SessionMode::Stateless, _) => check.finding(Outcome::Skip, STATELESS),
            _ if !gated_passed => check.finding(
                Outcome::Skip,
                format!("not verified: {} failed", GATED_BEFORE_INIT.id),
            ),
            (_, None) => check.finding(
                Outcome::Skip,
                format!("not verified: {} failed", VERSION_ZERO_REJECTED.id),
            ),
            (_, Some(sent)) => {
                check.saw(sent);
                if code_of(sent) == Some(-32001) {
                    check.finding(
                        Outcome::Pass,
                        "after `initialize` failed with -32002, `retrieve` was still rejected with -32001",
                    )
                } else {
                    check.finding(
                        rule.on_failure,
                        format!(
                            "after `initialize` failed with -32002, `retrieve` {}; only a successful `initialize` \
                             initializes a session, so the spec still requires -32001 (NotInitialized) (§7.1)",
                            outcome_words(sent)
                        ),
                    )
                }
            }
        };
        self.emit(finding).await?;

        // The session model, reported as facts (decisions 3 and 4).
        let http_only =
            "applies to HTTP targets only: over stdio the session is the process (spec §5)";
        let mut check = Check::new(&PER_SESSION_INIT);
        let finding = match mode {
            _ if !self.client.is_http() => check.finding(Outcome::Skip, http_only),
            SessionMode::PerSession => check.finding(
                Outcome::Pass,
                "the server was not already initialized when this run started",
            ),
            SessionMode::Stateless => check.finding(Outcome::Skip, STATELESS),
            SessionMode::ProcessWide => {
                check.saw(gated);
                check.finding(
                    Outcome::Info,
                    "the server was already initialized when this run started: `retrieve` before `initialize` got an \
                     answer and `initialize` got -32600. It keeps one initialized flag for the whole process (as the \
                     reference Python and C++ servers do), so the pre-initialize checks cannot be verified on this run. \
                     Restart the server before a run, or keep the initialized state per session (a token in \
                     `_meta.session`, sent back in `RCP-Session`), to have them checked (spec §5; protocheck decision 3)",
                )
            }
        };
        self.emit(finding).await?;

        let mut check = Check::new(&STATEFUL_HTTP);
        let finding = match mode {
            _ if !self.client.is_http() => check.finding(Outcome::Skip, http_only),
            SessionMode::PerSession => check.finding(
                Outcome::Pass,
                "the server keeps initialized state between requests",
            ),
            SessionMode::ProcessWide => check.finding(Outcome::Skip, ALREADY_INITIALIZED),
            SessionMode::Stateless => {
                check.saw(gated);
                if let Some(sent) = reinit {
                    check.saw(sent);
                }
                check.finding(
                    Outcome::Info,
                    "the server treats every request as initialized and accepts `initialize` more than once, as a \
                     stateless HTTP server may (spec §5); the pre-initialize and repeat-initialize checks are skipped \
                     (protocheck decision 4)",
                )
            }
        };
        self.emit(finding).await
    }

    /// Unknown fields: the first `initialize` (judged there) and a `ping` with an
    /// unknown top-level params field.
    async fn tolerance(
        &mut self,
        init: Option<(bool, Vec<Exchange>, String)>,
    ) -> Result<(), EngineError> {
        let rule = &TOLERATES_UNKNOWN;
        if let Some(reason) = self.gone() {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let sent = self
            .request(
                rule,
                "ping",
                json!({"x-protocheck-unknown-field": {"nested": [1, "two"]}}),
            )
            .await?;
        let mut problems = Vec::new();
        let mut notes = Vec::new();
        if let Some((ok, evidence, message)) = init {
            check.evidence.extend(evidence);
            if ok {
                notes.push(message)
            } else {
                problems.push(message)
            }
        }
        check.saw(&sent);
        if result_of(&sent).is_some_and(Value::is_object) {
            notes.push("`ping` with an unknown params field succeeded".to_owned());
        } else {
            problems.push(format!(
                "`ping` with an unknown params field (`x-protocheck-unknown-field`) {}; unknown fields MUST be \
                 ignored (§14.1 rule 7, §4.6)",
                outcome_words(&sent)
            ));
        }
        let finding = if problems.is_empty() {
            check.finding(Outcome::Pass, notes.join("; "))
        } else {
            check.finding(rule.on_failure, problems.join("; "))
        };
        self.emit(finding).await
    }

    /// The reason a post-initialize check cannot run, if any.
    fn blocked(&self, init: Option<&Init>) -> Option<String> {
        self.gone().or_else(|| init.is_none().then(no_init))
    }

    async fn unknown_method(&mut self, init: Option<&Init>) -> Result<(), EngineError> {
        let rule = &UNKNOWN_METHOD;
        if let Some(reason) = self.blocked(init) {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let sent = self.request(rule, UNKNOWN_METHOD_NAME, json!({})).await?;
        check.saw(&sent);
        let finding = if code_of(&sent) == Some(-32004) {
            check.finding(
                Outcome::Pass,
                format!("`{UNKNOWN_METHOD_NAME}` was rejected with -32004"),
            )
        } else {
            check.finding(
                rule.on_failure,
                format!(
                    "`{UNKNOWN_METHOD_NAME}`, a method RCP does not define, {} after `initialize`; the spec requires \
                     error -32004 (UnknownMethod), not -32601 (§14.1 rule 4, §12)",
                    outcome_words(&sent)
                ),
            )
        };
        self.emit(finding).await
    }

    async fn unadvertised_method(&mut self, init: Option<&Init>) -> Result<(), EngineError> {
        let rule = &UNADVERTISED_METHOD;
        let Some(init) = init.filter(|_| self.blocked(init).is_none()) else {
            let reason = self.blocked(init).unwrap_or_else(no_init);
            return self.skip(rule, reason).await;
        };
        // Read-only methods only: a probe never writes to the target (decision 7),
        // even one that should be refused.
        let candidates = [
            ("catalog/list", "catalog", json!({})),
            (
                "query/transform",
                "transform",
                json!({"query": PROBE_QUERY, "method": "rewrite"}),
            ),
            (
                "embed/sparse",
                "sparseEmbed",
                json!({"texts": [PROBE_QUERY]}),
            ),
            (
                "embed/multi",
                "multiVector",
                json!({"inputs": [PROBE_QUERY]}),
            ),
            ("memory/recall", "memory", json!({"query": PROBE_QUERY})),
            (
                "graph",
                "graph",
                json!({"op": "local", "query": PROBE_QUERY}),
            ),
            ("embed", "embed", json!({"inputs": [PROBE_QUERY]})),
            (
                "rerank",
                "rerank",
                json!({"query": PROBE_QUERY, "passages": ["a"]}),
            ),
            (
                "retrieve",
                "retrieve",
                json!({"query": PROBE_QUERY, "k": 1}),
            ),
        ];
        let Some((method, cap, params)) = candidates
            .into_iter()
            .find(|(_, cap, _)| !init.supports(cap))
        else {
            return self
                .skip(
                    rule,
                    "every read-only RCP method is advertised, so none could be probed without writing to the target",
                )
                .await;
        };
        let mut check = Check::new(rule);
        let sent = self.request(rule, method, params).await?;
        check.saw(&sent);
        let finding = if code_of(&sent) == Some(-32003) {
            check.finding(
                Outcome::Pass,
                format!("`{method}` (capability `{cap}` not advertised) was rejected with -32003"),
            )
        } else {
            check.finding(
                rule.on_failure,
                format!(
                    "`{method}` is defined by RCP but its capability `{cap}` is not advertised, and it {}; \
                     the spec requires error -32003 (CapabilityMissing) (§14.1 rule 4, §12)",
                    outcome_words(&sent)
                ),
            )
        };
        self.emit(finding).await
    }

    async fn unsupported_option(&mut self, init: Option<&Init>) -> Result<(), EngineError> {
        let rule = &UNSUPPORTED_OPTION;
        let Some(init) = init.filter(|_| self.blocked(init).is_none()) else {
            let reason = self.blocked(init).unwrap_or_else(no_init);
            return self.skip(rule, reason).await;
        };
        let Some((method, params, what)) = option_probe(init) else {
            return self
                .skip(
                    rule,
                    "no advertised method lists its options (retrieve.modes or units, embed.encodings, \
                     rerank.methods) with one left out, so no unsupported option could be chosen",
                )
                .await;
        };
        let mut check = Check::new(rule);
        let sent = self.request(rule, method, params).await?;
        check.saw(&sent);
        let finding = if code_of(&sent) == Some(-32005) {
            check.finding(
                Outcome::Pass,
                format!("`{method}` with {what} was rejected with -32005"),
            )
        } else {
            check.finding(
                rule.on_failure,
                format!(
                    "`{method}` with {what} {}; the spec requires error -32005 (OptionUnsupported) for an \
                     unadvertised option value unless the request sets `strict:false` (§14.1 rule 4, §12)",
                    outcome_words(&sent)
                ),
            )
        };
        self.emit(finding).await
    }

    async fn malformed_params(&mut self, init: Option<&Init>) -> Result<(), EngineError> {
        let rule = &MALFORMED_PARAMS;
        let Some(init) = init.filter(|_| self.blocked(init).is_none()) else {
            let reason = self.blocked(init).unwrap_or_else(no_init);
            return self.skip(rule, reason).await;
        };
        let probes: Vec<(&str, Value, &str)> = if init.supports("retrieve") {
            vec![
                ("retrieve", json!({"query": PROBE_QUERY, "k": -5}), "k = -5"),
                (
                    "retrieve",
                    json!({"query": PROBE_QUERY, "k": "3"}),
                    "k = \"3\" (a string)",
                ),
            ]
        } else if init.supports("embed") {
            vec![
                (
                    "embed",
                    json!({"inputs": PROBE_QUERY}),
                    "`inputs` as a string instead of an array",
                ),
                ("embed", json!({"kind": "query"}), "no `inputs` at all"),
            ]
        } else if init.supports("rerank") {
            vec![
                (
                    "rerank",
                    json!({"query": PROBE_QUERY, "passages": "a"}),
                    "`passages` as a string",
                ),
                (
                    "rerank",
                    json!({"query": PROBE_QUERY}),
                    "no `passages` at all",
                ),
            ]
        } else if init.supports("graph") {
            vec![
                (
                    "graph",
                    json!({"op": 5, "query": PROBE_QUERY}),
                    "`op` = 5 (a number)",
                ),
                ("graph", json!({"query": PROBE_QUERY}), "no `op` at all"),
            ]
        } else {
            return self
                .skip(
                    rule,
                    format!(
                        "not verified: {} failed (no retrieval method to probe)",
                        RETRIEVAL_CAPABILITY.id
                    ),
                )
                .await;
        };
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let mut done = Vec::new();
        for (method, params, what) in probes {
            let sent = self.request(rule, method, params).await?;
            check.saw(&sent);
            if code_of(&sent) == Some(-32602) {
                done.push(format!("`{method}` with {what}"));
            } else {
                problems.push(format!("`{method}` with {what} {}", outcome_words(&sent)));
            }
        }
        let finding = if problems.is_empty() {
            check.finding(
                Outcome::Pass,
                format!("{} were rejected with -32602", done.join(" and ")),
            )
        } else {
            check.finding(
                rule.on_failure,
                format!(
                    "{}; the spec requires error -32602 (InvalidParams) for malformed params, e.g. a `k` that is not \
                     an integer ≥ 1 (§14.1 rule 5, §12)",
                    problems.join("; ")
                ),
            )
        };
        self.emit(finding).await
    }

    async fn info_after_init(&mut self, init: Option<&Init>) -> Result<(), EngineError> {
        let rule = &INFO_AFTER_INIT;
        let Some(init) = init.filter(|_| self.blocked(init).is_none()) else {
            let reason = self.blocked(init).unwrap_or_else(no_init);
            return self.skip(rule, reason).await;
        };
        match init.source {
            InitSource::Initialize => {}
            InitSource::InfoAlreadyInitialized => {
                return self.skip(rule, ALREADY_INITIALIZED).await;
            }
            InitSource::InfoAfterVersionZero => {
                return self
                    .skip(
                        rule,
                        format!("not verified: {} failed", VERSION_ZERO_REJECTED.id),
                    )
                    .await;
            }
        }
        let mut check = Check::new(rule);
        check.evidence.push(init.exchange.clone());
        let sent = self.request(rule, "info", json!({})).await?;
        check.saw(&sent);
        let empty = Map::new();
        let before = init.capabilities().unwrap_or(&empty);
        let finding = match result_of(&sent).and_then(|r| r.get("capabilities")).and_then(Value::as_object) {
            Some(after) => {
                let added: Vec<&str> =
                    after.keys().filter(|k| !before.contains_key(*k)).map(String::as_str).collect();
                let removed: Vec<&str> =
                    before.keys().filter(|k| !after.contains_key(*k)).map(String::as_str).collect();
                let changed: Vec<&str> = before
                    .iter()
                    .filter(|(k, v)| after.get(*k).is_some_and(|a| a != *v))
                    .map(|(k, _)| k.as_str())
                    .collect();
                if added.is_empty() && removed.is_empty() && changed.is_empty() {
                    check.finding(
                        Outcome::Pass,
                        "`info` after `initialize` reports the same capabilities as `initialize`",
                    )
                } else {
                    let mut diffs = Vec::new();
                    for (label, keys) in [("adds", added), ("drops", removed), ("changes", changed)] {
                        if !keys.is_empty() {
                            diffs.push(format!("{label} `{}`", keys.join("`, `")));
                        }
                    }
                    check.finding(
                        rule.on_failure,
                        format!(
                            "`info` after `initialize` {} compared with the capabilities `initialize` advertised; \
                             after `initialize`, `info` MUST report the session's set, which is fixed for the \
                             session (§7.2, §13.2)",
                            diffs.join(", ")
                        ),
                    )
                }
            }
            None => check.finding(
                rule.on_failure,
                format!(
                    "`info` after `initialize` {} without a `capabilities` object; it MUST report the session's \
                     capabilities (§7.2)",
                    outcome_words(&sent)
                ),
            ),
        };
        self.emit(finding).await
    }

    async fn parse_error(&mut self) -> Result<(), EngineError> {
        let rule = &PARSE_ERROR;
        if let Some(reason) = self.gone() {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        // Cut off mid-object, with no id the server could recover.
        let body = r#"{"jsonrpc": "2.0", "method": "ping", "params": {"nonce": "#;
        let sent = self.client.send_raw("ping", body).await;
        let sent = self.sent(rule, sent)?;
        check.saw(&sent);
        let verdict = match &sent {
            Err(_) => Err(outcome_words(&sent)),
            Ok(reply) => judge_parse_error(reply),
        };
        let finding = match verdict {
            Ok(how) => check.finding(Outcome::Pass, format!("an unparseable frame was answered with {how}")),
            Err(what) => check.finding(
                rule.on_failure,
                format!(
                    "a frame that is not valid JSON {what}; the spec requires error -32700 (ParseError) with \
                     `id: null` (over HTTP, status 400 or 200) (§4, §12, §5)"
                ),
            ),
        };
        self.emit(finding).await
    }

    async fn shutdown(&mut self) -> Result<(), EngineError> {
        let rule = &SHUTDOWN;
        if let Some(reason) = self.gone() {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let sent = self.request(rule, "shutdown", json!({})).await?;
        check.saw(&sent);
        let finding = if result_of(&sent).is_some_and(Value::is_object) {
            check.finding(
                Outcome::Pass,
                "`shutdown` was answered with a result object",
            )
        } else {
            check.finding(
                rule.on_failure,
                format!(
                    "`shutdown` {}; the spec requires the result `{{}}`, at any time (§13)",
                    outcome_words(&sent)
                ),
            )
        };
        self.emit(finding).await
    }

    /// Every reply to a request whose id has this type must echo it (§4.2).
    async fn id_echo(
        &mut self,
        rule: &'static Rule,
        kind: fn(&Value) -> bool,
        label: &str,
    ) -> Result<(), EngineError> {
        let mut check = Check::new(rule);
        let mut judged = 0;
        let mut problems = Vec::new();
        for reply in self.client.replies() {
            // Batch members are matched by id within their batch, by RCP-L0-030.
            let Some(sent) = reply
                .request_id
                .as_ref()
                .filter(|id| kind(id) && !reply.batch)
            else {
                continue;
            };
            let Some(obj) = reply
                .json()
                .and_then(Value::as_object)
                .filter(|_| reply.framed)
            else {
                continue;
            };
            judged += 1;
            let problem = match obj.get("id") {
                Some(got) if same_id(sent, got) => continue,
                Some(got) => {
                    format!(
                        "the reply to `{}` with id {sent} carried {}",
                        reply.method,
                        show(got)
                    )
                }
                None => format!("the reply to `{}` with id {sent} had no `id`", reply.method),
            };
            if problems.len() < 5 {
                check.evidence.push(reply.exchange.clone());
            }
            problems.push(problem);
        }
        let finding = if judged == 0 {
            check.finding(
                Outcome::Skip,
                format!("no JSON reply to a request with a {label} id was received"),
            )
        } else if problems.is_empty() {
            check.finding(
                Outcome::Pass,
                format!("all {judged} replies to {label} ids echoed them unchanged"),
            )
        } else {
            let shown: Vec<&str> = problems.iter().take(5).map(String::as_str).collect();
            check.finding(
                rule.on_failure,
                format!(
                    "{} of {judged} replies to {label} ids did not echo the id unchanged: {}; the server MUST echo \
                     `id` with the same JSON type and value (§14.1 rule 5, §4.2)",
                    problems.len(),
                    shown.join("; ")
                ),
            )
        };
        self.emit(finding).await
    }

    async fn cancel_with_id(&mut self) -> Result<(), EngineError> {
        let rule = &CANCEL_WITH_ID;
        if let Some(reason) = self.gone() {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let params = json!({"id": UNKNOWN_CANCEL_ID});
        let sent = self.request(rule, "notifications/cancel", params).await?;
        check.saw(&sent);
        let finding = if code_of(&sent) == Some(-32600) {
            check.finding(
                Outcome::Pass,
                "`notifications/cancel` with an id was rejected with -32600",
            )
        } else {
            check.finding(
                rule.on_failure,
                format!(
                    "`notifications/cancel` sent as a request (with an id) {}; it is a notification, and the spec \
                     requires error -32600 (InvalidRequest) when it carries an id (§12)",
                    outcome_words(&sent)
                ),
            )
        };
        self.emit(finding).await
    }

    /// A batch of two pings around a notification, then a batch of notifications only.
    async fn batch(&mut self) -> Result<(), EngineError> {
        let rule = &BATCH;
        if let Some(reason) = self.gone() {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let (first, second) = (self.client.next_id(), self.client.next_id());
        let frames = vec![
            json!({"jsonrpc": "2.0", "id": first, "method": "ping", "params": {"nonce": 1}}),
            json!({"jsonrpc": "2.0", "method": "info", "params": {}}),
            json!({"jsonrpc": "2.0", "id": second, "method": "ping", "params": {"nonce": 2}}),
        ];
        let sent = self.client.send_batch("ping", frames).await;
        let sent = self.sent(rule, sent)?;
        check.saw(&sent);
        let mut problems = Vec::new();
        match sent.as_ref().ok().and_then(Reply::json) {
            Some(Value::Array(members)) => {
                let ids: Vec<&Value> = members.iter().filter_map(|m| m.get("id")).collect();
                // Matched loosely (7 and "7" pair up): exact echo is RCP-L0-024/025's
                // concern, this rule's is one reply per request.
                let answered = |id: &Value| ids.iter().filter(|got| loose_id(id, got)).count();
                if members.len() != 2 || answered(&first) != 1 || answered(&second) != 1 {
                    let shown: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
                    problems.push(format!(
                        "a batch of two requests (ids {first} and {second}) and one notification was answered \
                         with {} entries (ids: [{}]); it needs exactly one reply per request and none for the \
                         notification",
                        members.len(),
                        shown.join(", ")
                    ));
                }
                let failed: Vec<String> =
                    members.iter().filter(|m| m.get("result").is_none()).map(Value::to_string).collect();
                if !failed.is_empty() {
                    problems.push(format!(
                        "the batched `ping`s were not both answered with results: {}",
                        crate::transport::excerpt(failed.join(", ").as_bytes(), 300).0
                    ));
                }
            }
            _ => problems.push(format!(
                "a batch of two requests and one notification {}; a batch MUST get back an array with one reply \
                 per request",
                outcome_words(&sent)
            )),
        }
        if self.gone().is_none() {
            let only_notifications = json!([
                {"jsonrpc": "2.0", "method": "info", "params": {}},
                {"jsonrpc": "2.0", "method": "ping", "params": {}},
            ]);
            match self
                .client
                .send_unanswered("info", only_notifications.to_string())
                .await
            {
                Ok(Notified::Silent(exchange)) => check.evidence.push(exchange),
                Ok(Notified::Answered(reply)) => {
                    problems.push(format!(
                        "a batch of notifications only was answered with {}; it MUST produce no output at all",
                        reply.describe()
                    ));
                    check.evidence.push(reply.exchange);
                }
                Err(failure) => {
                    problems.push(format!(
                        "a batch of notifications only got no HTTP answer ({})",
                        failure.error
                    ));
                    check.evidence.push(failure.exchange.clone());
                    let _ = self.sent(rule, Err(failure))?;
                }
            }
        }
        let finding = if problems.is_empty() {
            check.finding(
                Outcome::Pass,
                "a batch got one reply per request and none for its notification; a batch of notifications got none",
            )
        } else {
            check.finding(rule.on_failure, format!("{} (§11)", problems.join("; ")))
        };
        self.emit(finding).await
    }

    async fn empty_batch(&mut self) -> Result<(), EngineError> {
        let rule = &EMPTY_BATCH;
        if let Some(reason) = self.gone() {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let sent = self.client.send_batch("ping", Vec::new()).await;
        let sent = self.sent(rule, sent)?;
        check.saw(&sent);
        let verdict = match &sent {
            Err(_) => Err(outcome_words(&sent)),
            Ok(reply) => judge_empty_batch(reply),
        };
        let finding = match verdict {
            Ok(how) => check.finding(Outcome::Pass, format!("an empty batch was answered with {how}")),
            Err(what) => check.finding(
                rule.on_failure,
                format!(
                    "an empty batch `[]` {what}; the spec requires a single, non-array error -32600 \
                     (InvalidRequest) with `id: null` (§11)"
                ),
            ),
        };
        self.emit(finding).await
    }

    async fn well_formed(&mut self) -> Result<(), EngineError> {
        let rule = &WELL_FORMED;
        let mut check = Check::new(rule);
        let mut judged = 0;
        let mut problems = Vec::new();
        for reply in self.client.replies().iter().filter(|r| r.framed) {
            let Some(value) = reply.json() else {
                judged += 1;
                if problems.len() < 5 {
                    check.evidence.push(reply.exchange.clone());
                }
                problems.push(format!("the reply to `{}` is not JSON", reply.method));
                continue;
            };
            // A batch's reply is an array of replies, judged one by one (§11).
            let frames = match value {
                Value::Array(members) if reply.batch => members.iter().collect(),
                single => vec![single],
            };
            judged += frames.len();
            let found: Vec<String> = frames.into_iter().flat_map(frame_problems).collect();
            if found.is_empty() {
                continue;
            }
            if problems.len() < 5 {
                check.evidence.push(reply.exchange.clone());
            }
            let id = reply
                .request_id
                .as_ref()
                .map(|id| format!(" with id {id}"))
                .unwrap_or_default();
            problems.push(format!(
                "the reply to `{}`{id} {}",
                reply.method,
                found.join(", ")
            ));
        }
        let finding = if judged == 0 {
            check.finding(Outcome::Skip, "no reply was received")
        } else if problems.is_empty() {
            check.finding(
                Outcome::Pass,
                format!("all {judged} replies are well-formed JSON-RPC 2.0"),
            )
        } else {
            let shown: Vec<&str> = problems.iter().take(5).map(String::as_str).collect();
            check.finding(
                rule.on_failure,
                format!(
                    "{} of {judged} replies are not well-formed JSON-RPC 2.0: {}; every reply MUST carry \
                     \"jsonrpc\": \"2.0\", the id, and exactly one of `result` (an object) or `error` \
                     (integer `code`, string `message`) (§14.1 rule 5, §4)",
                    problems.len(),
                    shown.join("; ")
                ),
            )
        };
        self.emit(finding).await
    }
}

fn no_init() -> String {
    format!(
        "not verified: {} failed (no successful `initialize`)",
        INITIALIZE_NEGOTIATES.id
    )
}

/// Picks an option value the server does not advertise for a method it does:
/// `(method, params, words for the finding)`.
fn option_probe(init: &Init) -> Option<(&'static str, Value, String)> {
    let missing = |all: &[&'static str], advertised: &[String]| {
        all.iter()
            .copied()
            .find(|v| !advertised.iter().any(|a| a == v))
    };
    if init.supports("retrieve") {
        if let Some(modes) = init.advertised_list("retrieve", "modes")
            && let Some(mode) = missing(&["dense", "sparse", "hybrid"], &modes)
        {
            return Some((
                "retrieve",
                json!({"query": PROBE_QUERY, "k": 1, "mode": mode}),
                format!(
                    "mode \"{mode}\", which `retrieve.modes` ({}) does not list,",
                    show(&json!(modes))
                ),
            ));
        }
        if let Some(units) = init.advertised_list("retrieve", "units") {
            let all = [
                "chunk",
                "passage",
                "document",
                "node",
                "triplet",
                "path",
                "subgraph",
                "community",
                "tree-node",
                "page",
            ];
            if let Some(unit) = missing(&all, &units) {
                return Some((
                    "retrieve",
                    json!({"query": PROBE_QUERY, "k": 1, "unit": unit}),
                    format!(
                        "unit \"{unit}\", which `retrieve.units` ({}) does not list,",
                        show(&json!(units))
                    ),
                ));
            }
        }
    }
    if init.supports("embed")
        && let Some(encodings) = init.advertised_list("embed", "encodings")
        && let Some(encoding) = missing(&["json", "f32-base64"], &encodings)
    {
        return Some((
            "embed",
            json!({"inputs": [PROBE_QUERY], "encoding": encoding}),
            format!(
                "encoding \"{encoding}\", which `embed.encodings` ({}) does not list,",
                show(&json!(encodings))
            ),
        ));
    }
    if init.supports("rerank")
        && let Some(methods) = init.advertised_list("rerank", "methods")
        && let Some(method) = missing(&["cross-encoder", "colbert", "llm"], &methods)
    {
        return Some((
            "rerank",
            json!({"query": PROBE_QUERY, "passages": ["a", "b"], "method": method}),
            format!(
                "method \"{method}\", which `rerank.methods` ({}) does not list,",
                show(&json!(methods))
            ),
        ));
    }
    None
}

/// Over HTTP, spec §5 maps "body is not JSON" to status 400, and -32700 with a null
/// id is the JSON-RPC answer (§12). The two are read together: 400 with or without
/// a JSON-RPC body, or 200 with the -32700 body, all pass; a JSON-RPC body with
/// another code or a non-null id fails whatever the status.
fn judge_parse_error(reply: &Reply) -> Result<String, String> {
    let rpc_error = reply
        .json()
        .and_then(Value::as_object)
        .filter(|o| o.get("error").is_some_and(|e| e.get("code").is_some()));
    match (reply.status, rpc_error) {
        (status, Some(obj)) if status.is_none() || status == Some(200) || status == Some(400) => {
            let code = obj
                .get("error")
                .and_then(|e| e.get("code"))
                .and_then(Value::as_i64);
            match (code, obj.get("id")) {
                (Some(-32700), Some(Value::Null)) => Ok(format!(
                    "error -32700 and id null{}",
                    status.map(|s| format!(" (HTTP {s})")).unwrap_or_default()
                )),
                (Some(-32700), Some(id)) => Err(format!(
                    "was answered with -32700 but with id {}; the id must be null when the frame could not be parsed",
                    show(id)
                )),
                (Some(-32700), None) => Err(
                    "was answered with -32700 but without an `id` member (it must be null)"
                        .to_owned(),
                ),
                _ => Err(format!("was answered with {}", reply.describe())),
            }
        }
        (Some(400), None) => Ok("HTTP 400 (spec §5: the body is not JSON)".to_owned()),
        _ => Err(format!("was answered with {}", reply.describe())),
    }
}

/// Read like the parse error: spec §5 maps "not a JSON-RPC request" to HTTP 400,
/// so 400 alone passes; a JSON-RPC body must be the single -32600 with id null.
fn judge_empty_batch(reply: &Reply) -> Result<String, String> {
    let status = reply.status;
    match reply.json() {
        Some(Value::Object(obj))
            if status.is_none() || status == Some(200) || status == Some(400) =>
        {
            let code = obj
                .get("error")
                .and_then(|e| e.get("code"))
                .and_then(Value::as_i64);
            match (code, obj.get("id")) {
                (Some(-32600), Some(Value::Null)) => Ok("error -32600 and id null".to_owned()),
                (Some(-32600), _) => {
                    Err("was answered with -32600 but without `id: null`".to_owned())
                }
                _ => Err(format!("was answered with {}", reply.describe())),
            }
        }
        Some(Value::Array(members)) => Err(format!(
            "was answered with an array of {} entries instead of a single error object",
            members.len()
        )),
        None if status == Some(400) => Ok("HTTP 400 (spec §5: not a JSON-RPC request)".to_owned()),
        _ => Err(format!("was answered with {}", reply.describe())),
    }
}

/// What makes a reply not well-formed JSON-RPC 2.0 (§4; schema `JsonRpcSuccess`
/// and `JsonRpcError`), in words.
fn frame_problems(value: &Value) -> Vec<String> {
    let Some(obj) = value.as_object() else {
        return vec!["is not a JSON object".to_owned()];
    };
    let mut problems = Vec::new();
    match obj.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        Some(other) => problems.push(format!("has \"jsonrpc\": {}", show(other))),
        None => problems.push("has no `jsonrpc` member".to_owned()),
    }
    match (obj.get("result"), obj.get("error")) {
        (Some(_), Some(_)) => problems.push("has both `result` and `error`".to_owned()),
        (None, None) => problems.push("has neither `result` nor `error`".to_owned()),
        (Some(result), None) => {
            if !result.is_object() {
                problems.push(format!(
                    "has a `result` that is not an object ({})",
                    show(result)
                ));
            }
            if !obj
                .get("id")
                .is_some_and(|id| id.is_string() || id.is_number())
            {
                problems.push("is a success without a string or number `id`".to_owned());
            }
        }
        (None, Some(error)) => {
            match error.get("code") {
                Some(code) if code.is_i64() => {}
                Some(code) => problems.push(format!(
                    "has an `error.code` that is not an integer ({})",
                    show(code)
                )),
                None => problems.push("has an `error` without `code`".to_owned()),
            }
            if !error.get("message").is_some_and(Value::is_string) {
                problems.push("has an `error` without a string `message`".to_owned());
            }
            if !obj
                .get("id")
                .is_some_and(|id| id.is_string() || id.is_number() || id.is_null())
            {
                problems.push("is an error without an `id` (null is allowed)".to_owned());
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn rule_ids_are_unique_and_in_order() {
        let ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        let unique: HashSet<&&str> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len());
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, ids);
        for (n, rule) in RULES.iter().enumerate() {
            assert_eq!(rule.id, format!("RCP-L0-{:03}", n + 1));
            assert_eq!(rule.group, "L0");
        }
    }

    fn reply(status: Option<u16>, body: &str) -> Reply {
        let body = match serde_json::from_str(body) {
            Ok(v) => super::super::client::Body::Json(v),
            Err(_) if body.is_empty() => super::super::client::Body::Empty,
            Err(_) => super::super::client::Body::NotJson,
        };
        Reply {
            method: "ping".into(),
            request_id: None,
            exchange: Exchange {
                request: crate::suite::RequestRecord {
                    line: "stdin".into(),
                    headers: Vec::new(),
                    body: String::new(),
                },
                response: None,
                error: None,
            },
            status,
            body,
            framed: true,
            batch: false,
        }
    }

    #[test]
    fn parse_errors_accept_the_status_mapping_and_the_json_rpc_answer() {
        let rpc = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#;
        assert!(judge_parse_error(&reply(Some(400), rpc)).is_ok());
        assert!(judge_parse_error(&reply(Some(200), rpc)).is_ok());
        assert!(judge_parse_error(&reply(None, rpc)).is_ok());
        assert!(judge_parse_error(&reply(Some(400), "")).is_ok());
        assert!(judge_parse_error(&reply(Some(400), "<html>bad</html>")).is_ok());
        let wrong = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}"#;
        assert!(judge_parse_error(&reply(Some(400), wrong)).is_err());
        let with_id = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32700,"message":"x"}}"#;
        assert!(judge_parse_error(&reply(None, with_id)).is_err());
        assert!(judge_parse_error(&reply(Some(500), rpc)).is_err());
        assert!(judge_parse_error(&reply(Some(200), "")).is_err());
    }

    #[test]
    fn frame_problems_name_what_is_wrong() {
        assert!(frame_problems(&json!({"jsonrpc": "2.0", "id": 1, "result": {}})).is_empty());
        assert!(
            frame_problems(
                &json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "m"}})
            )
            .is_empty()
        );
        let both = frame_problems(&json!({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}}));
        assert_eq!(both, ["has both `result` and `error`"]);
        let bad = frame_problems(&json!({"id": null, "result": 5}));
        assert_eq!(bad.len(), 3, "{bad:?}");
        let code = frame_problems(
            &json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -1.5, "message": 3}}),
        );
        assert_eq!(code.len(), 2, "{code:?}");
    }

    #[test]
    fn ids_compare_by_type_and_value() {
        assert!(same_id(&json!(7), &json!(7)));
        assert!(same_id(&json!(7), &json!(7.0)));
        assert!(same_id(&json!(BIG_NUMERIC_ID), &json!(BIG_NUMERIC_ID)));
        assert!(!same_id(&json!(7), &json!("7")));
        assert!(!same_id(&json!("017"), &json!(17)));
        assert!(same_id(&json!("017"), &json!("017")));
    }
}
