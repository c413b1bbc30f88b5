//! RCP/1 L0 "Base" (spec §14.1), `spec` profile: the catalogue and the checks.
//!
//! The checks run in one conversation, in the order lifecycle demands: the
//! pre-initialize checks, the handshake and the post-initialize checks
//! (`open`); then the later levels use the initialized session; then the
//! parse error probe, `shutdown` last, and the rules judged over every reply
//! of the run, the later levels' replies included (`close`). Findings are
//! emitted as each check completes, except the few whose meaning depends on
//! how the server keeps sessions (decisions 3 and 4), which are emitted once
//! that is known, right after the repeat-`initialize` probe.
//!
//! One file per rule category (`lifecycle`, `notifications`, `errors`,
//! `framing`), each rule's catalogue entry beside its check; this module holds
//! the catalogue in id order, the shared helpers and the run order.

use super::client::{Notified, Reply};
pub(crate) use super::conversation::{
    Check, Conversation, Init, InitSource, PROBE_QUERY, Sent, client_info, code_of, exchange_of,
    loose_id, outcome_words, result_of, same_id, show,
};
use crate::suite::context::{EngineError, HandshakeHistory};
use crate::suite::{Exchange, Outcome, Rule, SpecLevel};
use serde_json::{Map, Value, json};
use std::sync::{Mutex, PoisonError};

mod batches;
mod errors;
mod framing;
mod lifecycle;
mod notifications;
mod params;

pub use errors::{
    MALFORMED_PARAMS, TOLERATES_UNKNOWN, UNADVERTISED_METHOD, UNKNOWN_METHOD, UNSUPPORTED_OPTION,
};
pub use framing::{BATCH, EMPTY_BATCH, NUMERIC_ID_ECHO, PARSE_ERROR, STRING_ID_ECHO, WELL_FORMED};
pub use lifecycle::{
    DECLARES_LEVEL, FAILED_HANDSHAKE_UNINITIALIZED, GATED_BEFORE_INIT, INFO_AFTER_INIT,
    INFO_BEFORE_INIT, INITIALIZE_NEGOTIATES, PER_SESSION_INIT, PING_NUMERIC_NONCE,
    PING_STRING_NONCE, REPEAT_INIT_REJECTED, RETRIEVAL_CAPABILITY, SERVER_IDENTITY, SHUTDOWN,
    STATEFUL_HTTP, VERSION_ZERO_REJECTED,
};
use notifications::Heard;
pub use notifications::{
    CANCEL_UNKNOWN_ID, CANCEL_WITH_ID, NOTIFY_GATED, NOTIFY_OPEN, NOTIFY_UNKNOWN,
};

const fn must(id: &'static str, title: &'static str, spec_ref: &'static str) -> Rule {
    Rule {
        id,
        title,
        level: SpecLevel::Must,
        on_failure: Outcome::Fail,
        spec_ref,
        group: "L0",
        help: crate::suite::Help::NONE,
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
        help: crate::suite::Help::NONE,
    }
}

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
    // RCP-L0-029 is retired: it reported a declared L1 or L2 as "not judged"
    // while only L0 was checked. The levels are judged now, and the honesty of
    // the declaration is RCP-CERT-001.
    BATCH,
    EMPTY_BATCH,
    CANCEL_WITH_ID,
];

/// The skip reason of decision 3 (process-wide initialization).
pub const ALREADY_INITIALIZED: &str =
    "not verifiable on a server that is already initialized (spec §11.3 decision)";
/// How RCP-L0-011 begins when the handshake was never seen to succeed on a
/// server that was already initialized (decision 3, narrowed): the run
/// certifies no level.
pub const HANDSHAKE_NOT_OBSERVED: &str = "the handshake was not observed";
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
const REINIT_DIFFERING_ID: &str = "protocheck-reinit-differing";
/// Not an id protocheck ever uses, so the cancel refers to nothing (§14.1 rule 6).
const UNKNOWN_CANCEL_ID: u64 = 987_654_321;
const UNKNOWN_METHOD_NAME: &str = "does/not/exist";

/// What the L0 checks found out that the later levels and the verdict need.
#[derive(Debug, Clone, Default)]
pub(crate) struct L0Report {
    /// `_meta.conformance` as declared (bounded), when it is a string.
    pub declared: Option<String>,
    /// The `initialize` result (or its stand-in from `info`), when there was one.
    pub init: Option<Init>,
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

/// What the handshake established.
struct Handshake {
    /// The `initialize` result, or its stand-in read from `info`.
    init: Option<Init>,
    /// The session model, when the handshake already revealed it.
    mode: SessionMode,
    /// How the first `initialize`, with unknown keys, fared (RCP-L0-016).
    tolerance: Option<Tolerance>,
    /// The params of the `initialize` that succeeded, sent again unchanged
    /// by the repeat probe (RCP-L0-015).
    params: Option<Value>,
}

impl Handshake {
    fn failed(mode: SessionMode) -> Self {
        Self {
            init: None,
            mode,
            tolerance: None,
            params: None,
        }
    }
}

/// The verdict of one tolerance probe, folded into RCP-L0-016.
#[derive(Clone)]
struct Tolerance {
    ok: bool,
    evidence: Vec<Exchange>,
    message: String,
}

/// The probes before `initialize` after the first `info`, in the order
/// their findings are emitted.
#[derive(Debug, Clone, Copy)]
enum Before {
    PingNumeric,
    PingString,
    Gated,
    GatedOthers,
    Batch,
    NotifyGated,
    NotifyOpen,
    CancelUnknown,
}

impl Before {
    const ALL: [Self; 8] = [
        Self::PingNumeric,
        Self::PingString,
        Self::Gated,
        Self::GatedOthers,
        Self::Batch,
        Self::NotifyGated,
        Self::NotifyOpen,
        Self::CancelUnknown,
    ];
}

/// What the probes before `initialize` found that is judged once the
/// session model is known, or with the same probes sent again after the
/// handshake.
#[derive(Default)]
struct BeforeInit {
    /// The result of the first `info`.
    info: Option<Value>,
    /// The gated `retrieve` (RCP-L0-004), unless the target was gone.
    gated: Mutex<Option<Sent>>,
    /// Every other method sent before `initialize` (RCP-L0-004): what was
    /// sent, the codes that pass, and what it got.
    others: Mutex<Vec<Gate>>,
    /// The `ping`s with a nonce (RCP-L0-002, RCP-L0-003).
    pings: Mutex<Vec<(Value, Sent)>>,
    /// The batch sent before `initialize`, its members as sent.
    batch: Mutex<Option<(Vec<Value>, Sent)>>,
    /// The `retrieve` notification (RCP-L0-005).
    notify_gated: Mutex<Option<Heard>>,
    /// The cancel for an id never used (RCP-L0-008).
    cancel: Mutex<Option<Heard>>,
}

/// A method sent before `initialize` (RCP-L0-004): what it was, the codes
/// that pass, and what it got.
pub(super) struct Gate {
    pub what: String,
    pub accepted: &'static [i64],
    pub sent: Sent,
}

/// The probes of the initialized session, in the order their findings are
/// emitted: none needs another's answer.
#[derive(Debug, Clone, Copy)]
enum AfterInit {
    Tolerance,
    Nonce,
    NotifyGated,
    CancelUnknown,
    UnknownMethod,
    UnadvertisedMethod,
    UnsupportedOption,
    IdEcho,
    MalformedParams,
    Info,
    NotifyUnknown,
    CancelWithId,
    Batch,
    EmptyBatch,
}

impl AfterInit {
    const ALL: [Self; 14] = [
        Self::Tolerance,
        Self::Nonce,
        Self::NotifyGated,
        Self::CancelUnknown,
        Self::UnknownMethod,
        Self::UnadvertisedMethod,
        Self::UnsupportedOption,
        Self::IdEcho,
        Self::MalformedParams,
        Self::Info,
        Self::NotifyUnknown,
        Self::CancelWithId,
        Self::Batch,
        Self::EmptyBatch,
    ];
}

/// What the probes of the initialized session read: the handshake, and the
/// undefined notifications sent before it.
struct AfterInitContext<'i> {
    init: Option<&'i Init>,
    tolerance: Option<Tolerance>,
    unknown_before: Vec<(&'static str, Heard)>,
    /// The `ping`s with a nonce sent before `initialize`.
    pings_before: Vec<(Value, Sent)>,
    /// The batch sent before `initialize`, its members as sent.
    batch_before: Option<(Vec<Value>, Sent)>,
    notify_gated_before: Option<Heard>,
    cancel_before: Option<Heard>,
    /// The result of the first `info`, sent before `initialize`.
    info_before: Option<Value>,
}

/// Runs the L0 checks that open the conversation, through the batch probes,
/// emitting findings through the conversation's reporter. The later levels run
/// next, on the initialized session; [`close`] ends the conversation.
pub(crate) async fn open(conv: &mut Conversation<'_>) -> Result<L0Report, EngineError> {
    conv.open().await
}

/// The L0 checks that end the conversation (the parse-error probe and
/// `shutdown`), then the rules judged over every reply of the run, the later
/// levels' replies included.
pub(crate) async fn close(conv: &mut Conversation<'_>) -> Result<(), EngineError> {
    conv.parse_error().await?;
    conv.shutdown().await?;
    conv.id_echo(&NUMERIC_ID_ECHO, Value::is_number, "numeric")
        .await?;
    conv.id_echo(&STRING_ID_ECHO, Value::is_string, "string")
        .await?;
    conv.well_formed().await
}

impl Conversation<'_> {
    async fn open(&mut self) -> Result<L0Report, EngineError> {
        // The first request alone: a target that does not answer it is
        // unreachable, and the other probes read what it advertises. It is
        // judged once the session's capabilities are known (RCP-L0-001).
        let info_before = self.info_before_init().await?;
        // The others need none of one another's answers, and get the same
        // answers on any connection: before `initialize` every connection
        // is uninitialized alike, whether the server keeps its handshake per
        // connection, behind a token (none yet) or for the whole process.
        let found = BeforeInit {
            info: self.info_seen(),
            ..BeforeInit::default()
        };
        self.side_by_side_before_initialize(&found, &Before::ALL, |conv, found, step| {
            Box::pin(conv.before_init(step, found))
        })
        .await?;
        // Probed now, judged once the session model is known (decisions 3 and 4).
        let gated = found
            .gated
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let gated_others = found
            .others
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let pings_before = found
            .pings
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let batch_before = found
            .batch
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let notify_gated_before = found
            .notify_gated
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let cancel_before = found
            .cancel
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        // The undefined notifications go last before the handshake, one
        // after another on the run's connection: a server they stop (§4.5
        // says they MUST be silently ignored) stops at the same point of
        // every run, after every other probe before `initialize` has its
        // answer. Judged after the handshake, with the same sent again then.
        let unknown_before = if self.gone().is_none() {
            self.unknown_notifications().await?
        } else {
            Vec::new()
        };

        let v0 = match self.gone() {
            None => Some(
                self.request(
                    &VERSION_ZERO_REJECTED,
                    "initialize",
                    json!({"protocolVersion": 0, "client": client_info(), "capabilities": {}}),
                )
                .await?,
            ),
            Some(_) => None,
        };
        let after_failed = if v0.as_ref().and_then(code_of) == Some(-32002) && self.gone().is_none()
        {
            Some(self.gated_probe(&FAILED_HANDSHAKE_UNINITIALIZED).await?)
        } else {
            None
        };

        let gated_open = gated.as_ref().is_some_and(|sent| {
            sent.as_ref()
                .is_ok_and(|r| r.error_code() != Some(-32001) && r.json().is_some())
        });
        let Handshake {
            init,
            mut mode,
            tolerance: init_tolerance,
            params: handshake_params,
        } = self
            .initialize(gated_open, v0.as_ref().and_then(result_of).is_some())
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
            for rule in [&RETRIEVAL_CAPABILITY, &SERVER_IDENTITY, &DECLARES_LEVEL] {
                let reason = self.gone().unwrap_or_else(no_init);
                self.skip(rule, reason).await?;
            }
        }
        self.info_before_judged(&info_before, init.as_ref()).await?;

        // §13: a second `initialize` after a success MUST get -32600 whatever
        // its params, so the repeat goes twice: as the handshake was (a
        // server that treats an identical repeat as idempotent is caught),
        // and differing from it (no `log`, no unknown keys).
        let mut reinit: Vec<(&'static str, Sent)> = Vec::new();
        if init.is_some() {
            if let Some(params) = handshake_params {
                reinit.push((
                    "a repeat of the handshake's `initialize`, params unchanged,",
                    self.call(
                        &REPEAT_INIT_REJECTED,
                        json!(REINIT_ID),
                        "initialize",
                        params,
                    )
                    .await?,
                ));
            }
            if self.gone().is_none() {
                reinit.push((
                    "a second `initialize` with other params (no client capabilities)",
                    self.call(
                        &REPEAT_INIT_REJECTED,
                        json!(REINIT_DIFFERING_ID),
                        "initialize",
                        json!({"protocolVersion": CLIENT_PROTOCOL_VERSION, "client": client_info(), "capabilities": {}}),
                    )
                    .await?,
                ));
            }
        }
        if mode == SessionMode::PerSession
            && self.client.is_http()
            && gated_open
            && reinit.iter().any(|(_, r)| result_of(r).is_some())
        {
            mode = SessionMode::Stateless;
        }
        self.client.set_shared_state(matches!(
            mode,
            SessionMode::ProcessWide | SessionMode::Stateless
        ));
        self.session_dependent(
            mode,
            gated.as_ref(),
            (&gated_others, batch_before.as_ref()),
            v0.as_ref(),
            after_failed.as_ref(),
            &reinit,
        )
        .await?;

        // The probes of the initialized session need none of one another's
        // answers: side by side where the session allows it.
        let context = AfterInitContext {
            init: init.as_ref(),
            tolerance: init_tolerance,
            unknown_before,
            pings_before,
            batch_before,
            notify_gated_before,
            cancel_before,
            info_before: found.info,
        };
        self.side_by_side(&context, &AfterInit::ALL, |conv, context, step| {
            Box::pin(conv.after_init(step, context))
        })
        .await?;
        report.init = init;
        Ok(report)
    }

    /// One probe before `initialize` (see [`Before`]); what is judged later
    /// goes into `found`.
    async fn before_init(&mut self, step: Before, found: &BeforeInit) -> Result<(), EngineError> {
        match step {
            Before::PingNumeric | Before::PingString => {
                let (rule, nonce) = match step {
                    Before::PingNumeric => (&PING_NUMERIC_NONCE, json!(777)),
                    _ => (&PING_STRING_NONCE, json!("protocheck-nonce-7")),
                };
                if self.gone().is_none() {
                    let sent = self.request(rule, "ping", json!({"nonce": nonce})).await?;
                    let mut pings = found.pings.lock().unwrap_or_else(PoisonError::into_inner);
                    pings.push((nonce, sent));
                }
                Ok(())
            }
            Before::Batch => {
                if self.gone().is_none() {
                    let sent = self.batch_before_init().await?;
                    *found.batch.lock().unwrap_or_else(PoisonError::into_inner) = Some(sent);
                }
                Ok(())
            }
            Before::Gated => {
                if self.gone().is_none() {
                    let sent = self.gated_probe(&GATED_BEFORE_INIT).await?;
                    *found.gated.lock().unwrap_or_else(PoisonError::into_inner) = Some(sent);
                }
                Ok(())
            }
            Before::GatedOthers => {
                let sent = self
                    .gated_others(&GATED_BEFORE_INIT, found.info.as_ref())
                    .await?;
                *found.others.lock().unwrap_or_else(PoisonError::into_inner) = sent;
                Ok(())
            }
            // Judged after the handshake, with the same sent again then.
            Before::NotifyGated => {
                if self.gone().is_none() {
                    let gated_params = json!({"query": PROBE_QUERY, "k": 1});
                    let heard = self
                        .notify_once(&NOTIFY_GATED, "retrieve", gated_params)
                        .await?;
                    *found
                        .notify_gated
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) = Some(heard);
                }
                Ok(())
            }
            Before::NotifyOpen => self.notification(&NOTIFY_OPEN, "info", json!({})).await,
            Before::CancelUnknown => {
                if self.gone().is_none() {
                    let cancel = json!({"id": UNKNOWN_CANCEL_ID, "reason": "protocheck probe"});
                    let heard = self
                        .notify_once(&CANCEL_UNKNOWN_ID, "notifications/cancel", cancel)
                        .await?;
                    *found.cancel.lock().unwrap_or_else(PoisonError::into_inner) = Some(heard);
                }
                Ok(())
            }
        }
    }

    /// One probe of the initialized session (see [`AfterInit`]).
    async fn after_init(
        &mut self,
        step: AfterInit,
        context: &AfterInitContext<'_>,
    ) -> Result<(), EngineError> {
        let init = context.init;
        match step {
            AfterInit::Nonce => {
                self.nonces(&context.pings_before, context.batch_before.as_ref(), init)
                    .await
            }
            AfterInit::NotifyGated => {
                self.notify_gated_judged(context.notify_gated_before.clone(), init)
                    .await
            }
            AfterInit::CancelUnknown => {
                self.cancel_judged(context.cancel_before.clone(), init)
                    .await
            }
            AfterInit::NotifyUnknown => {
                self.unknown_notifications_judged(context.unknown_before.clone(), init)
                    .await
            }
            AfterInit::Tolerance => self.tolerance(context.tolerance.clone(), init).await,
            AfterInit::UnknownMethod => self.unknown_method(init).await,
            AfterInit::UnadvertisedMethod => self.unadvertised_method(init).await,
            AfterInit::UnsupportedOption => self.unsupported_option(init).await,
            AfterInit::IdEcho => {
                // Judged at the end with every other reply of the run: the
                // largest numeric id, and a string id (a plain one, and one
                // that looks like a number) on `ping`, `info` and each
                // advertised read-only capability method (§4.7: every reply).
                if self.gone_during.is_none() {
                    let mut calls = vec![
                        (json!(BIG_NUMERIC_ID), "ping".to_owned(), json!({})),
                        (
                            json!(NUMERIC_LOOKING_STRING_ID),
                            "info".to_owned(),
                            json!({}),
                        ),
                        (json!("0100"), "ping".to_owned(), json!({})),
                        (json!("protocheck-id-ping"), "ping".to_owned(), json!({})),
                        (json!("protocheck-id-info"), "info".to_owned(), json!({})),
                    ];
                    if let Some(init) = init.filter(|_| self.blocked(init).is_none()) {
                        for m in params::METHODS
                            .iter()
                            .filter(|m| init.supports(m.capability))
                        {
                            calls.push((
                                json!(format!("protocheck-id-{}", m.name)),
                                m.name.to_owned(),
                                Value::Object(params::base(m.name, init)),
                            ));
                        }
                    }
                    let _ = self.call_all(&STRING_ID_ECHO, calls).await?;
                }
                Ok(())
            }
            AfterInit::MalformedParams => self.malformed_params(init).await,
            AfterInit::Info => {
                let after = self.info_after_init(init).await?;
                match init {
                    Some(init) => {
                        self.declaration(init, context.info_before.as_ref(), after.as_ref())
                            .await
                    }
                    None => Ok(()),
                }
            }
            AfterInit::CancelWithId => self.cancel_with_id().await,
            AfterInit::Batch => {
                let (problems, evidence) =
                    self.batch_members(context.batch_before.as_ref()).await?;
                self.batch(problems, evidence).await
            }
            AfterInit::EmptyBatch => self.empty_batch().await,
        }
    }

    /// The reason a post-initialize check cannot run, if any.
    pub(crate) fn blocked(&self, init: Option<&Init>) -> Option<String> {
        self.gone().or_else(|| init.is_none().then(no_init))
    }
}

pub(crate) fn no_init() -> String {
    format!(
        "not verified: {} failed (no successful `initialize`)",
        INITIALIZE_NEGOTIATES.id
    )
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
        // Numbered from 001 up, with the retired RCP-L0-029 left out.
        let expected: Vec<String> = (1..=32)
            .filter(|n| *n != 29)
            .map(|n| format!("RCP-L0-{n:03}"))
            .collect();
        assert_eq!(ids, expected);
        // The declaration is §14's preamble, outside the levels.
        for rule in RULES {
            let group = if rule.id == DECLARES_LEVEL.id {
                "outside"
            } else {
                "L0"
            };
            assert_eq!(rule.group, group, "{}", rule.id);
        }
    }
}
