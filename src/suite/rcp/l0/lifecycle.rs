//! Lifecycle (spec §7.1, §7.2, §13, §14.1 rules 1–3): `info` and `ping` at any
//! time, gating before `initialize`, the handshake and what its result must
//! carry, the session model (decisions 3 and 4), `info` after `initialize`, and
//! `shutdown`.

use super::*;

pub const INFO_BEFORE_INIT: Rule = must(
    "RCP-L0-001",
    "`info` answers before `initialize`",
    "RCP/1 §14.1(1), §7.2",
)
.help(
    "The conversation opens with `info` with empty params, sent before any `initialize` (over \
     HTTP a `POST` to `<base>/info`, over stdio the first line the server reads). The result must \
     carry a `server` object and, once the handshake has succeeded, `capabilities` holding every \
     key `initialize` advertised: before `initialize`, `info` reports the default (maximum) set.",
    "The server gates `info` behind the handshake like the capability methods (most often \
     answering -32001), does not route the `info` method at all, answers with a result that \
     lacks `server`, or reports fewer capabilities before the handshake than it then offers. If nothing at all comes back, the run stops and the target is reported \
     unreachable.",
    "Exempt `info` (with `ping` and `shutdown`) from the initialization gate and answer it at any \
     time with the shape of the `initialize` result: a `server` object with at least a `name`, \
     and `capabilities`.",
);
pub const PING_NUMERIC_NONCE: Rule = must(
    "RCP-L0-002",
    "`ping` echoes a numeric nonce at any time",
    "RCP/1 §14.1(1)",
)
.help(
    "protocheck sends `ping` with a numeric nonce before `initialize` (`{\"nonce\": 777}`), \
     inside a batch before it, after it alone and inside a batch after it, and reads each result's \
     `nonce`: it must be the number sent (7 and 7.0 count as the same number, \"777\" does not).",
    "The server gates `ping` until the handshake (answering -32001), returns an empty result \
     without `nonce`, or echoes the nonce converted to a string, which usually comes from a \
     handler that stringifies params or a typed model that declares the nonce as a string.",
    "Let `ping` through before `initialize` and return `{\"nonce\": <the value received>}`, \
     copying the JSON value as is rather than re-encoding it; in a typed params model, declare \
     the nonce as a string or a number.",
);
pub const PING_STRING_NONCE: Rule = must(
    "RCP-L0-003",
    "`ping` echoes a string nonce at any time",
    "RCP/1 §14.1(1)",
)
.help(
    "protocheck sends `ping` with a string nonce (such as `{\"nonce\": \"protocheck-nonce-7\"}`) \
     before `initialize`, inside a batch before it, after it alone and inside a batch after it, and \
     reads each result's `nonce`: it must be that exact string.",
    "Most often the same causes as for the numeric nonce: `ping` is gated until the handshake, or \
     the handler drops the nonce or coerces it. When only this rule fails, the server usually \
     accepts numeric nonces only (a model typed as an integer rejects or converts the string).",
    "Answer `ping` at any time with `{\"nonce\": …}` holding the value received, unchanged in \
     type and content; if a typed model parses the params, let the nonce be a string or a number.",
);
pub const GATED_BEFORE_INIT: Rule = must(
    "RCP-L0-004",
    "a gated call before `initialize` is rejected with -32001",
    "RCP/1 §14.1(3), §12",
)
.help(
    "Before `initialize`, protocheck sends `retrieve` with a query and `k` = 1, every other \
     read-only method RCP defines with valid params, `index/add` and `index/delete` with empty \
     lists (they write nothing), two undefined methods (-32004 passes for those too) and a \
     `retrieve` inside a batch; each must get error -32001. It is judged once the session model \
     is known, and skipped on a server already initialized or stateless over HTTP.",
    "The server runs capability methods without checking that the session is initialized (common \
     when handlers are registered straight on a router, or when batch members skip the gate), or \
     refuses them with another code such as -32600, -32003 or -32002. Over HTTP, a framework status without a JSON-RPC body fails too.",
    "Keep an initialized flag per session (the stdio process, the HTTP connection or a session \
     token) and reject every request except `info`, `ping` and `shutdown` with `{\"code\": \
     -32001}` (NotInitialized) until an `initialize` has succeeded.",
);
pub const VERSION_ZERO_REJECTED: Rule = must(
    "RCP-L0-009",
    "`initialize` with protocolVersion 0 is rejected with -32002",
    "RCP/1 §7.1, §12",
)
.help(
    "Before the real handshake, protocheck sends `initialize` with `\"protocolVersion\": 0`, its \
     client info and empty capabilities; with no common version ≥ 1 the answer must be error \
     -32002. On a server found to be already initialized when the run started, an answer other \
     than -32002 is skipped.",
    "The server accepts any version and initializes the session (it echoes or ignores \
     `protocolVersion`), or rejects it with -32602 or -32600 instead of -32002. A server that \
     accepts version 0 is also left initialized, so its real handshake is read from `info` \
     instead.",
    "Negotiate min(client, server) and, when that is below 1 (no common version), answer \
     `{\"code\": -32002}` (VersionMismatch) and leave the session uninitialized.",
);
pub const FAILED_HANDSHAKE_UNINITIALIZED: Rule = must(
    "RCP-L0-010",
    "a failed handshake leaves the session uninitialized",
    "RCP/1 §7.1, §14.1(3)",
)
.help(
    "When `initialize` with protocolVersion 0 was rejected with -32002, protocheck sends \
     `retrieve` again, still before any successful handshake; it must still get -32001. It is \
     skipped when the gating or version-zero check failed, and on a server already initialized or \
     stateless over HTTP.",
    "The server marks the session initialized as soon as `initialize` arrives, before negotiating \
     the version, so a failed handshake still opens the gate. Setting the flag at the top of the \
     handler instead of after the result is built is the usual cause.",
    "Set the session's initialized flag only once `initialize` has succeeded and its result is \
     built; an `initialize` that ends in an error (-32002 or any other) must leave the session \
     exactly as it was.",
);
pub const INITIALIZE_NEGOTIATES: Rule = must(
    "RCP-L0-011",
    "`initialize` negotiates a protocolVersion ≥ 1 and ≤ the client's",
    "RCP/1 §7.1, §14.1(1)",
)
.help(
    "protocheck sends `initialize` with `protocolVersion` 1, its client info, the client `log` \
     capability, an unknown capability key and an unknown `_meta` key, and retries without the \
     unknown keys if that fails. The result must carry an integer `protocolVersion` of at least 1 \
     and not above the 1 offered.",
    "The server errors on `initialize`, omits `protocolVersion`, or returns its own newer version \
     instead of the negotiated minimum. When both attempts get -32600 on an HTTP server that \
     served gated calls before, it was initialized by an earlier client: the rule is skipped and \
     no level is certified unless an earlier run saw the handshake.",
    "Answer `initialize` with a result holding `protocolVersion` = min(client's, server's) as an \
     integer, with `server` and `capabilities`. On a long-lived HTTP server, keep the initialized \
     state per session rather than per process, or restart it before a run, so protocheck can see \
     the handshake.",
);
pub const RETRIEVAL_CAPABILITY: Rule = must(
    "RCP-L0-012",
    "advertises at least one of embed, rerank, retrieve, graph",
    "RCP/1 §14.1(2)",
)
.help(
    "protocheck reads the `capabilities` object of the `initialize` result (or of `info`, when \
     the session was already initialized) and looks for at least one of `embed`, `rerank`, \
     `retrieve` or `graph`, present with a value that is neither null nor false.",
    "The server advertises its features under other names (such as `search` or `vectorSearch`), \
     nests them under another key, writes `false` or `null` for them, or returns no \
     `capabilities` object at all.",
    "List each method the server implements under its RCP capability key in `capabilities`, with \
     an object of metadata (an empty `{}` is enough), for example `\"retrieve\": {\"modes\": \
     [\"dense\"]}`; an L0 server needs at least one of the four.",
);
pub const SERVER_IDENTITY: Rule = must(
    "RCP-L0-013",
    "`server.name` is a non-empty string",
    "RCP/1 §7.1 (PeerInfo)",
)
.help(
    "protocheck reads `server.name` in the `initialize` result (or in `info`, when the session \
     was already initialized); it must be a string that is neither empty nor blank.",
    "The result has no `server` object, names it differently (`serverInfo`, as MCP does, or a \
     top-level `name`), or leaves the name empty, often because a placeholder from a template or \
     an SDK default was never filled in.",
    "Return `\"server\": {\"name\": \"<your server>\", …}` in the `initialize` result and the \
     same object from `info`; the name is any non-empty string that identifies the \
     implementation.",
);
/// §14's preamble, not §14.1's list: a MUST outside the levels (see
/// `certify::OUTSIDE_THE_LEVELS`), reported in the `outside` group under its
/// long-standing id.
pub const DECLARES_LEVEL: Rule = Rule {
    group: "outside",
    help: crate::suite::Help {
        probe: "protocheck reads `_meta.conformance` in the `initialize` result (or in `info`, \
                when the session was already initialized); it must be exactly the string \"L0\", \
                \"L1\" or \"L2\", case-sensitive, and the `info` replies before and after \
                `initialize` must state the same. The value is then compared with the level the \
                run certifies (RCP-CERT-001).",
        failure: "The server states no level, puts it elsewhere (a top-level `conformance`, or \
                  inside `server`), or writes another form such as \"l1\", \"Level 1\" or a \
                  number. It is a MUST outside the levels: the certified level stands, but the \
                  run fails.",
        fix: "Add `\"_meta\": {\"conformance\": \"L1\"}`, with the level you actually meet, to \
              the `initialize` result and to `info`. Declare no more than protocheck certifies, \
              or RCP-CERT-001 fails.",
    },
    ..must(
        "RCP-L0-014",
        "declares `_meta.conformance` as L0, L1 or L2",
        "RCP/1 §14 (preamble; not in §14.1's list)",
    )
};
pub const REPEAT_INIT_REJECTED: Rule = must(
    "RCP-L0-015",
    "a repeated `initialize` is rejected with -32600",
    "RCP/1 §7.1, §12",
)
.help(
    "After a successful handshake, protocheck sends a second `initialize` with protocolVersion 1 \
     on the same session, with the string id \"protocheck-reinit\"; it must get error -32600. The \
     rule is skipped for a stateless HTTP server (decision 4).",
    "The server runs the handshake again and answers a new result, which usually means \
     `initialize` does not look at the session's initialized flag, or it refuses with another \
     code such as -32002 or -32603.",
    "In `initialize`, check the session first: once it is initialized, answer `{\"code\": \
     -32600}` (InvalidRequest) and keep the session and its negotiated capabilities unchanged.",
);
pub const INFO_AFTER_INIT: Rule = must(
    "RCP-L0-021",
    "`info` after `initialize` reports the session's capabilities",
    "RCP/1 §7.2, §13.2",
)
.help(
    "After a successful `initialize`, protocheck sends `info` and compares its `capabilities` \
     with those `initialize` returned, key by key and value by value; any key added, dropped or \
     changed fails the rule.",
    "`info` builds its capabilities independently of the session, for example listing everything \
     the server could offer while `initialize` negotiated less, or recomputing metadata such as \
     counts on each call; or `info` returns no `capabilities` object.",
    "Store the capability set `initialize` returned with the session and have `info` return that \
     same object for the rest of the session; keep values that change over time out of the \
     capability metadata.",
);
pub const SHUTDOWN: Rule = must("RCP-L0-023", "`shutdown` answers `{}`", "RCP/1 §13").help(
    "The last request of the conversation is `shutdown` with empty params; protocheck passes it \
     when the result is a JSON object (the spec's `{}`). It is skipped only when the server has \
     already stopped answering.",
    "The server does not implement `shutdown` and answers it with an error (-32004, -32601, or \
     -32001 from the initialization gate), returns `null` or `true` as the result, or exits \
     before writing the reply.",
    "Answer `shutdown` at any time, initialized or not, with `\"result\": {}`; write and flush \
     the reply, and only then release resources or exit, so that the client sees the answer.",
);
pub const PER_SESSION_INIT: Rule = note(
    "RCP-L0-027",
    "initialization is per session, not process-wide",
    "RCP/1 §5 (sessions); protocheck decision 3",
)
.help(
    "Over HTTP only, protocheck reads the opening exchanges: when `retrieve` before this run's \
     `initialize` got an answer other than -32001, and `initialize`, on a connection that had \
     carried none, got -32600, the server was already initialized when the run started. Otherwise \
     the rule passes; a stateless server is skipped here.",
    "An `info` outcome is a fact, not a violation: the server keeps one initialized flag for the \
     whole process, set by an earlier client, so the pre-initialize checks are skipped and a \
     level is certified only if an earlier run saw the handshake succeed.",
    "Nothing is wrong with the server. To have the pre-initialize checks judged, restart it \
     before a run, or keep the initialized state per session: per connection, or a token returned \
     in `_meta.session` that the client sends back in the `RCP-Session` header.",
);
pub const STATEFUL_HTTP: Rule = note(
    "RCP-L0-028",
    "the HTTP server keeps session state",
    "RCP/1 §5 (sessions); protocheck decision 4",
)
.help(
    "Over HTTP only, protocheck reads the opening exchanges: when a gated `retrieve` sent before \
     `initialize` was served, and a second `initialize` after the handshake succeeded too, the \
     server treats every request as initialized. Otherwise the rule passes.",
    "An `info` outcome is a fact, not a violation: the server is stateless, as the spec allows \
     over HTTP, so the pre-initialize and repeat-initialize checks (RCP-L0-004, RCP-L0-010 and \
     RCP-L0-015) are skipped rather than judged.",
    "Nothing needs fixing. To have those checks judged, keep session state: mark a session \
     initialized after `initialize`, for example with a token in `_meta.session` that the client \
     sends back in `RCP-Session`, and gate other methods until then.",
);

impl Conversation<'_> {
    /// The run's first request, `info` before `initialize`; judged by
    /// [`Self::info_before_judged`] once the session's set is known.
    pub(super) async fn info_before_init(&mut self) -> Result<Sent, EngineError> {
        self.request(&INFO_BEFORE_INIT, "info", json!({})).await
    }

    /// RCP-L0-001: the first `info` carries a `server` object, and "before
    /// init it reports the default (maximum) capability set" (§7.2), so every
    /// capability key the session's `initialize` advertises is in it. Only
    /// the keys are compared: a session may negotiate a narrower value of a
    /// capability than the server's maximum.
    pub(super) async fn info_before_judged(
        &mut self,
        sent: &Sent,
        init: Option<&Init>,
    ) -> Result<(), EngineError> {
        let rule = &INFO_BEFORE_INIT;
        let mut check = Check::new(rule);
        check.saw(sent);
        let result = result_of(sent);
        let finding = match result {
            Some(result) if result.get("server").is_some_and(Value::is_object) => {
                let before = result.get("capabilities").and_then(Value::as_object);
                match init.filter(|i| i.source == InitSource::Initialize) {
                    Some(init) => {
                        check.evidence.push(init.exchange.clone());
                        let session: Vec<&str> = init
                            .capabilities()
                            .map(|c| c.keys().map(String::as_str).collect())
                            .unwrap_or_default();
                        let missing: Vec<&str> = session
                            .iter()
                            .copied()
                            .filter(|k| !before.is_some_and(|b| b.contains_key(*k)))
                            .collect();
                        if missing.is_empty() {
                            check.finding(
                                Outcome::Pass,
                                format!(
                                    "`info` answered before `initialize` with a `server` object and capabilities \
                                     that include every key `initialize` then advertised ({})",
                                    if session.is_empty() { "none".to_owned() } else { format!("`{}`", session.join("`, `")) }
                                ),
                            )
                        } else {
                            check.finding(
                                rule.on_failure,
                                format!(
                                    "`info` before `initialize` reported capabilities {} without `{}`, which \
                                     `initialize` then advertised; before `initialize`, `info` reports the server's \
                                     default (maximum) capability set, of which a session's set is a part (§7.2, §13.2)",
                                    before.map_or_else(|| "(none)".to_owned(), |b| format!("[{}]", b.keys().map(String::as_str).collect::<Vec<_>>().join(", "))),
                                    missing.join("`, `")
                                ),
                            )
                        }
                    }
                    None => check.finding(
                        Outcome::Pass,
                        format!(
                            "`info` answered before `initialize` with a `server` object; its capabilities were not \
                             compared with a session's ({})",
                            match init {
                                Some(_) => "the session was initialized before this run, so this `info` was not before \
                                            its `initialize`".to_owned(),
                                None => self.gone().unwrap_or_else(no_init),
                            }
                        ),
                    ),
                }
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
                    outcome_words(sent)
                ),
            ),
        };
        self.emit(finding).await
    }

    /// RCP-L0-002 and RCP-L0-003: `ping` echoes its nonce "at any time"
    /// (§14.1 rule 1), so each nonce class goes before `initialize` and on
    /// the initialized session, alone and inside a batch (§11: a batch member
    /// is answered as the same request alone). `before` holds the `ping`s
    /// sent before `initialize`, `batch` the batch sent then.
    pub(super) async fn nonces(
        &mut self,
        before: &[(Value, Sent)],
        batch: Option<&(Vec<Value>, Sent)>,
        init: Option<&Init>,
    ) -> Result<(), EngineError> {
        let initialized = self.blocked(init).is_none();
        let mut after: Vec<(Value, Sent)> = Vec::new();
        let mut batch_after: Option<(Vec<Value>, Sent)> = None;
        if initialized {
            let alone = [json!(4242), json!("protocheck-nonce-after")];
            let requests = alone
                .iter()
                .map(|nonce| {
                    let rule = if nonce.is_number() {
                        &PING_NUMERIC_NONCE
                    } else {
                        &PING_STRING_NONCE
                    };
                    (rule, "ping", json!({"nonce": nonce}))
                })
                .collect();
            let sent = self.request_each(requests).await?;
            after = alone.into_iter().zip(sent).collect();
            if self.gone().is_none() {
                let frames = vec![
                    json!({"jsonrpc": "2.0", "id": self.client.next_id(), "method": "ping", "params": {"nonce": 4243}}),
                    json!({"jsonrpc": "2.0", "id": "protocheck-ping-in-batch", "method": "ping", "params": {"nonce": "protocheck-nonce-in-batch"}}),
                ];
                let sent = self.client.send_batch("ping", frames.clone()).await;
                let sent = self.sent(&PING_NUMERIC_NONCE, sent)?;
                batch_after = Some((frames, sent));
            }
        }
        for (rule, kind, label) in [
            (
                &PING_NUMERIC_NONCE,
                Value::is_number as fn(&Value) -> bool,
                "numeric",
            ),
            (
                &PING_STRING_NONCE,
                Value::is_string as fn(&Value) -> bool,
                "string",
            ),
        ] {
            let mut check = Check::new(rule);
            let mut problems = Vec::new();
            let mut seen = Vec::new();
            let mut judge_alone = |when: &str, list: &[(Value, Sent)], check: &mut Check| {
                // A request that got no answer at all meets protocheck's
                // limits or a target gone: not judged here.
                for (nonce, sent) in list.iter().filter(|(n, s)| kind(n) && s.is_ok()) {
                    check.saw(sent);
                    seen.push(format!("{} {when}", show(nonce)));
                    if let Err(what) = batches::nonce_echoed(nonce, result_of(sent)) {
                        let what = if result_of(sent).is_some() {
                            what
                        } else {
                            outcome_words(sent)
                        };
                        problems.push(format!("`ping` {when} with nonce {} {what}", show(nonce)));
                    }
                }
            };
            judge_alone("before `initialize`", before, &mut check);
            judge_alone("after `initialize`", &after, &mut check);
            for (when, batch) in [
                ("before `initialize`", batch),
                ("after `initialize`", batch_after.as_ref()),
            ] {
                let Some((frames, sent)) = batch else {
                    continue;
                };
                let Some(entries) = batches::members(sent) else {
                    continue;
                };
                for frame in frames
                    .iter()
                    .filter(|f| f.get("method").and_then(Value::as_str) == Some("ping"))
                {
                    let (Some(id), Some(nonce)) = (frame.get("id"), frame.pointer("/params/nonce"))
                    else {
                        continue;
                    };
                    if !kind(nonce) {
                        continue;
                    }
                    let Some(entry) = batches::member(entries, id) else {
                        continue;
                    };
                    check.saw(sent);
                    seen.push(format!("{} in a batch {when}", show(nonce)));
                    if let Err(what) = batches::nonce_echoed(nonce, entry.get("result")) {
                        let what = if entry.get("result").is_some() {
                            what
                        } else {
                            batches::entry_words(entry)
                        };
                        problems.push(format!(
                            "`ping` inside a batch {when} with nonce {} {what}",
                            show(nonce)
                        ));
                    }
                }
            }
            let finding = if !problems.is_empty() {
                check.verdict(
                    &problems,
                    "",
                    "`ping` MUST answer at any time, echoing its nonce with the same JSON type and value (§7.15, §14.1 rule 1)",
                )
            } else if let Some(reason) = self.gone() {
                check.finding(Outcome::Skip, reason)
            } else if seen.is_empty() {
                check.finding(
                    Outcome::Skip,
                    format!("no `ping` with a {label} nonce was answered"),
                )
            } else {
                let not_after = if initialized {
                    ""
                } else {
                    " (no handshake succeeded, so not after it)"
                };
                check.finding(
                    Outcome::Pass,
                    format!(
                        "`ping` echoed each {label} nonce unchanged: {}{not_after}",
                        seen.join(", ")
                    ),
                )
            };
            self.emit(finding).await?;
        }
        Ok(())
    }

    /// The batch sent before `initialize` (§11: "Batching composes with
    /// capability gating … exactly as for singleton requests"): a gated
    /// `retrieve` (RCP-L0-004), and `ping`s with a string and a numeric
    /// nonce under a string and a numeric-looking string id (RCP-L0-002,
    /// RCP-L0-003, RCP-L0-024, RCP-L0-025). Its shape is RCP-L0-030's.
    pub(super) async fn batch_before_init(&mut self) -> Result<(Vec<Value>, Sent), EngineError> {
        let frames = vec![
            json!({"jsonrpc": "2.0", "id": self.client.next_id(), "method": "retrieve", "params": {"query": PROBE_QUERY, "k": 1}}),
            json!({"jsonrpc": "2.0", "id": "protocheck-batch-ping", "method": "ping", "params": {"nonce": "protocheck-nonce-batch"}}),
            json!({"jsonrpc": "2.0", "id": "778", "method": "ping", "params": {"nonce": 778}}),
        ];
        let sent = self.client.send_batch("retrieve", frames.clone()).await;
        let sent = self.sent(&GATED_BEFORE_INIT, sent)?;
        Ok((frames, sent))
    }

    /// `retrieve` while the session should be uninitialized.
    pub(super) async fn gated_probe(&mut self, rule: &'static Rule) -> Result<Sent, EngineError> {
        self.request(rule, "retrieve", json!({"query": PROBE_QUERY, "k": 1}))
            .await
    }

    /// §14.1 rule 3 gates every request but `info` and `ping` (and
    /// `shutdown`, §13), whatever the method: beside `retrieve`
    /// ([`Self::gated_probe`]), every other read-only method RCP defines is
    /// sent once before `initialize`, with params valid for it, so that
    /// nothing but the gate can refuse it, advertised or not (the gate comes
    /// before the capability check, §13); `index/add` and `index/delete` with
    /// empty lists, which write nothing even on a server that serves them;
    /// and two undefined methods, one in a namespace of the protocol's own,
    /// for which -32004 passes too (§12: a server "MUST prefer `-32004`
    /// when both apply", a reading a careful author may take before
    /// `initialize` as well). `info` is the pre-initialize `info`.
    pub(super) async fn gated_others(
        &mut self,
        rule: &'static Rule,
        info: Option<&Value>,
    ) -> Result<Vec<Gate>, EngineError> {
        const GATE: &[i64] = &[-32001];
        const GATE_OR_UNKNOWN: &[i64] = &[-32001, -32004];
        let caps = info.and_then(|i| i.get("capabilities"));
        let graph_op = caps
            .and_then(|c| c.pointer("/graph/ops/0"))
            .and_then(Value::as_str)
            .unwrap_or("local")
            .to_owned();
        let candidates: Vec<(&str, Value, &'static [i64])> = vec![
            (
                "rerank",
                json!({"query": PROBE_QUERY, "passages": ["protocheck passage one", "protocheck passage two"]}),
                GATE,
            ),
            ("embed", json!({"inputs": [PROBE_QUERY]}), GATE),
            ("graph", json!({"op": graph_op, "query": PROBE_QUERY}), GATE),
            ("embed/sparse", json!({"texts": [PROBE_QUERY]}), GATE),
            ("embed/multi", json!({"inputs": [PROBE_QUERY]}), GATE),
            (
                "query/transform",
                json!({"query": PROBE_QUERY, "method": "rewrite"}),
                GATE,
            ),
            ("catalog/list", json!({}), GATE),
            ("memory/recall", json!({"query": PROBE_QUERY}), GATE),
            ("index/add", json!({"documents": []}), GATE),
            ("index/delete", json!({"ids": []}), GATE),
            (UNKNOWN_METHOD_NAME, json!({}), GATE_OR_UNKNOWN),
            ("retrieve/protocheck-undefined", json!({}), GATE_OR_UNKNOWN),
        ];
        let labels: Vec<(String, &'static [i64])> = candidates
            .iter()
            .map(|(m, _, accepted)| (format!("`{m}`"), *accepted))
            .collect();
        let requests = candidates
            .into_iter()
            .map(|(method, params, _)| (method, params))
            .collect();
        let sent = self.request_all(rule, requests).await?;
        Ok(labels
            .into_iter()
            .zip(sent)
            .map(|((what, accepted), sent)| Gate {
                what,
                accepted,
                sent,
            })
            .collect())
    }

    /// The result of the first `info` answered with one, if any.
    pub(super) fn info_seen(&self) -> Option<Value> {
        self.client
            .replies()
            .iter()
            .find(|r| r.method == "info" && r.result().is_some())
            .and_then(|r| r.result().cloned())
    }

    /// The handshake. The first `initialize` carries an unknown client capability
    /// key and an unknown `_meta` key (§14.1 rule 7); when it fails, a plain one
    /// tells intolerance apart from a broken handshake. Returns the result (or
    /// its stand-in from `info`), the session model if already known, and the
    /// tolerance verdict of the first `initialize`, if it could be judged.
    pub(super) async fn initialize(
        &mut self,
        gated_open: bool,
        v0_accepted: bool,
    ) -> Result<Handshake, EngineError> {
        let rule = &INITIALIZE_NEGOTIATES;
        let mut check = Check::new(rule);
        if let Some(reason) = self.gone() {
            self.skip(rule, reason).await?;
            return Ok(Handshake::failed(SessionMode::PerSession));
        }
        // Both advertise the client `log` capability, so RCP-L2-009 can probe
        // logs: §17.1, servers "SHOULD emit logs only when the client
        // advertised the `log` capability" (decision, amendment 11).
        let tolerant = json!({
            "protocolVersion": CLIENT_PROTOCOL_VERSION,
            "client": client_info(),
            "capabilities": {"log": {}, "x-protocheck-probe": {"note": "an unknown client capability key"}},
            "_meta": {"x-protocheck-unknown": {"note": "an unknown _meta key"}},
        });
        let plain = json!({
            "protocolVersion": CLIENT_PROTOCOL_VERSION,
            "client": client_info(),
            "capabilities": {"log": {}},
        });
        let first = self.request(rule, "initialize", tolerant.clone()).await?;
        check.saw(&first);
        if let Some(result) = result_of(&first).and_then(Value::as_object) {
            let init = Init {
                result: result.clone(),
                exchange: exchange_of(&first).clone(),
                source: InitSource::Initialize,
            };
            let note = "`initialize` carrying an unknown client capability key and an unknown `_meta` key succeeded".to_owned();
            self.negotiation(check, &init).await?;
            let tolerance = Tolerance {
                ok: true,
                evidence: vec![exchange_of(&first).clone()],
                message: note,
            };
            return Ok(Handshake {
                init: Some(init),
                mode: SessionMode::PerSession,
                tolerance: Some(tolerance),
                params: Some(tolerant),
            });
        }
        let first_code = code_of(&first);
        let mut mode = SessionMode::PerSession;
        let source = if first_code == Some(-32600) && v0_accepted {
            InitSource::InfoAfterVersionZero
        } else if first.is_ok() {
            let second = self.request(rule, "initialize", plain.clone()).await?;
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
                let tolerance = Tolerance {
                    ok: false,
                    evidence,
                    message,
                };
                return Ok(Handshake {
                    init: Some(init),
                    mode,
                    tolerance: Some(tolerance),
                    params: Some(plain),
                });
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
                return Ok(Handshake::failed(mode));
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
            return Ok(Handshake::failed(mode));
        };

        // The session was initialized before this handshake: read its result from `info`.
        let info = self.request(rule, "info", json!({})).await?;
        check.saw(&info);
        let (outcome, reason) = match source {
            InitSource::InfoAfterVersionZero => (
                Outcome::Skip,
                format!(
                    "not verified: {} failed (the server accepted protocolVersion 0, which initialized this session, \
                     so `initialize` was rightly refused with -32600)",
                    VERSION_ZERO_REJECTED.id
                ),
            ),
            _ => already_initialized_handshake(&self.history.get().await),
        };
        match result_of(&info).and_then(Value::as_object) {
            Some(result) => {
                let init = Init {
                    result: result.clone(),
                    exchange: exchange_of(&info).clone(),
                    source,
                };
                self.emit(check.finding(outcome, reason)).await?;
                // The first `initialize` was refused for being a repeat, so its
                // tolerance of unknown keys cannot be judged.
                Ok(Handshake {
                    init: Some(init),
                    mode,
                    tolerance: None,
                    params: None,
                })
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
                Ok(Handshake::failed(mode))
            }
        }
    }

    /// Judges the negotiated version of a successful `initialize`.
    pub(super) async fn negotiation(
        &mut self,
        check: Check,
        init: &Init,
    ) -> Result<(), EngineError> {
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
    pub(super) async fn init_result_checks(
        &mut self,
        init: &Init,
    ) -> Result<Option<String>, EngineError> {
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
                let shown = crate::transport::excerpt(json!(n).to_string().as_bytes(), 80).0;
                check.finding(Outcome::Pass, format!("the server names itself {shown}{from}"))
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

        // Judged with the `info` replies, after the handshake ([`Self::declaration`]).
        let level = init
            .result
            .get("_meta")
            .and_then(|m| m.get("conformance"))
            .and_then(Value::as_str)
            .map(|s| crate::transport::excerpt(s.as_bytes(), 32).0);
        Ok(level)
    }

    /// RCP-L0-014: the level is stated in `initialize` and in `info` (§14;
    /// decision 1), so the `initialize` result's `_meta.conformance` must be
    /// one of the three levels and each `info` answered with a result, before
    /// `initialize` and after it, must state the same.
    pub(super) async fn declaration(
        &mut self,
        init: &Init,
        info_before: Option<&Value>,
        info_after: Option<&Sent>,
    ) -> Result<(), EngineError> {
        let rule = &DECLARES_LEVEL;
        let from = init.read_from();
        let mut check = Check::new(rule);
        check.evidence.push(init.exchange.clone());
        let declared = init.result.get("_meta").and_then(|m| m.get("conformance"));
        let level = match declared {
            Some(Value::String(level)) if LEVELS.contains(&level.as_str()) => level.clone(),
            Some(other) => {
                let finding = check.finding(
                    rule.on_failure,
                    format!(
                        "`_meta.conformance`{from} is {}, which is not one of \"L0\", \"L1\", \"L2\" (case-sensitive); \
                         a server MUST state its level (§14; protocheck decision 1)",
                        show(other)
                    ),
                );
                return self.emit(finding).await;
            }
            None => {
                let finding = check.finding(
                    rule.on_failure,
                    format!(
                        "the `initialize` result{from} has no `_meta.conformance`; a server MUST state its level \
                         as \"L0\", \"L1\" or \"L2\" in `initialize` and `info` (§14; protocheck decision 1)"
                    ),
                );
                return self.emit(finding).await;
            }
        };
        let mut problems = Vec::new();
        let mut compared = Vec::new();
        let after = info_after.and_then(result_of);
        if let Some(sent) = info_after {
            check.saw(sent);
        }
        for (when, info) in [
            ("before `initialize`", info_before),
            ("after `initialize`", after),
        ] {
            let Some(info) = info else { continue };
            if init.source != InitSource::Initialize && when.starts_with("before") {
                continue;
            }
            compared.push(when);
            match info.get("_meta").and_then(|m| m.get("conformance")) {
                Some(Value::String(l)) if *l == level => {}
                Some(other) => problems.push(format!(
                    "`info` {when} states `_meta.conformance` {} while `initialize` states \"{level}\"",
                    show(other)
                )),
                None => problems.push(format!("`info` {when} has no `_meta.conformance`")),
            }
        }
        let finding = check.verdict(
            &problems,
            format!(
                "the `initialize` result{from} declares `_meta.conformance` = \"{level}\"{}",
                if compared.is_empty() {
                    String::new()
                } else {
                    format!(", and so does `info` {}", compared.join(" and "))
                }
            ),
            "a server MUST state its level in `initialize` and `info`, and `info` reports the same as the \
             `initialize` result (§14, §7.2; protocheck decision 1)",
        );
        self.emit(finding).await
    }

    /// Emits the checks whose meaning depends on the session model.
    pub(super) async fn session_dependent(
        &mut self,
        mode: SessionMode,
        gated: Option<&Sent>,
        (gated_others, batch): (&[Gate], Option<&(Vec<Value>, Sent)>),
        v0: Option<&Sent>,
        after_failed: Option<&Sent>,
        reinit: &[(&'static str, Sent)],
    ) -> Result<(), EngineError> {
        // Repeat initialize.
        let rule = &REPEAT_INIT_REJECTED;
        let mut check = Check::new(rule);
        let finding = match mode {
            SessionMode::Stateless => check.finding(Outcome::Skip, STATELESS),
            _ if reinit.is_empty() => {
                check.finding(Outcome::Skip, self.gone().unwrap_or_else(no_init))
            }
            _ => {
                for (_, sent) in reinit {
                    check.saw(sent);
                }
                let served: Vec<String> = reinit
                    .iter()
                    .filter(|(_, sent)| code_of(sent) != Some(-32600))
                    .map(|(kind, sent)| format!("{kind} {}", outcome_words(sent)))
                    .collect();
                let sent: Vec<&str> = reinit.iter().map(|(kind, _)| *kind).collect();
                if served.is_empty() {
                    check.finding(
                        Outcome::Pass,
                        format!("{} were each rejected with -32600", sent.join(" and ")),
                    )
                } else {
                    check.finding(
                        rule.on_failure,
                        format!(
                            "after a successful `initialize`, {}; the spec requires error -32600 \
                             (InvalidRequest) for a second `initialize` once the session is initialized, \
                             whatever its params (§7.1, §13)",
                            served.join("; ")
                        ),
                    )
                }
            }
        };
        self.emit(finding).await?;

        // Pre-initialize gating.
        // `None`: not sent, the server had stopped answering.
        let gone_reason = self.gone().unwrap_or_default();
        let gone = || gone_reason.clone();
        let rule = &GATED_BEFORE_INIT;
        let mut check = Check::new(rule);
        let gated_passed = gated.and_then(code_of) == Some(-32001);
        if let Some(gated) = gated {
            check.saw(gated);
        }
        for gate in gated_others {
            check.saw(&gate.sent);
        }
        // Every method sent before `initialize`, `retrieve` first: what it
        // was, the codes that pass, the code it got and in words.
        let mut all: Vec<(String, &[i64], Option<i64>, String)> = gated
            .map(|g| {
                (
                    "`retrieve`".to_owned(),
                    &[-32001_i64][..],
                    code_of(g),
                    outcome_words(g),
                )
            })
            .into_iter()
            .chain(gated_others.iter().map(|g| {
                (
                    g.what.clone(),
                    g.accepted,
                    code_of(&g.sent),
                    outcome_words(&g.sent),
                )
            }))
            .collect();
        // §11: a batch member is gated exactly as the same request alone.
        if let Some((frames, sent)) = batch
            && let Some(entries) = batches::members(sent)
        {
            check.saw(sent);
            for frame in frames {
                let (Some(id), Some(method)) =
                    (frame.get("id"), frame.get("method").and_then(Value::as_str))
                else {
                    continue;
                };
                if ["ping", "info", "shutdown"].contains(&method) {
                    continue;
                }
                if let Some(entry) = batches::member(entries, id) {
                    all.push((
                        format!("`{method}` inside a batch"),
                        &[-32001],
                        entry.pointer("/error/code").and_then(Value::as_i64),
                        batches::entry_words(entry),
                    ));
                }
            }
        }
        let refused: Vec<String> = all
            .iter()
            .filter(|(_, accepted, code, _)| code.is_some_and(|c| accepted.contains(&c)))
            .map(|(what, _, code, _)| match code {
                Some(-32001) | None => what.clone(),
                Some(c) => format!("{what} ({c})"),
            })
            .collect();
        let served: Vec<String> = all
            .iter()
            .filter(|(_, accepted, code, _)| !code.is_some_and(|c| accepted.contains(&c)))
            .map(|(what, accepted, _, words)| {
                let also = if accepted.len() > 1 {
                    " (-32004 would pass too: it is not defined by RCP)"
                } else {
                    ""
                };
                format!("{what} {words}{also}")
            })
            .collect();
        let finding = match (mode, gated) {
            (_, None) => check.finding(Outcome::Skip, gone()),
            (SessionMode::ProcessWide, _) => check.finding(Outcome::Skip, ALREADY_INITIALIZED),
            (SessionMode::Stateless, _) => check.finding(Outcome::Skip, STATELESS),
            (SessionMode::PerSession, _) if served.is_empty() => check.finding(
                Outcome::Pass,
                format!(
                    "before `initialize`, each was rejected with -32001 (an undefined method with -32001 or \
                     -32004): {}",
                    refused.join(", ")
                ),
            ),
            (SessionMode::PerSession, Some(_)) => check.finding(
                rule.on_failure,
                format!(
                    "before `initialize`, {}; the spec requires error -32001 (NotInitialized) for \
                     every request but `info`, `ping` and `shutdown` until a successful `initialize`, inside \
                     a batch as alone (§13, §11, §14.1 rule 3){}",
                    served.join("; "),
                    if refused.is_empty() {
                        String::new()
                    } else {
                        format!(" ({} refused as required)", refused.join(", "))
                    }
                ),
            ),
        };
        self.emit(finding).await?;

        // Version 0.
        let rule = &VERSION_ZERO_REJECTED;
        let mut check = Check::new(rule);
        let v0_passed = v0.and_then(code_of) == Some(-32002);
        if let Some(v0) = v0 {
            check.saw(v0);
        }
        let finding = if v0.is_none() {
            check.finding(Outcome::Skip, gone())
        } else if v0_passed {
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
                    v0.map(outcome_words).unwrap_or_default()
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
            _ if gated.is_none() || v0.is_none() => check.finding(Outcome::Skip, gone()),
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
                if let Some(gated) = gated {
                    check.saw(gated);
                }
                check.finding(
                    Outcome::Info,
                    "observed: `retrieve` sent before this run's `initialize` got an answer other than -32001, and \
                     this run's `initialize`, on a connection that had carried no `initialize` before, got -32600. \
                     Inference: the server was already initialized when this run started, by an earlier client, so \
                     its initialized state outlives connections (one flag for the whole process, as the reference \
                     Python and C++ servers keep it); the pre-initialize checks cannot be verified on this run, and a \
                     level is certified only if an earlier run saw its handshake succeed (see RCP-L0-011). Restart \
                     the server before a run, or keep the initialized state per session (per connection, or a token \
                     in `_meta.session` sent back in `RCP-Session`), to have them checked (spec §5.2; protocheck \
                     decision 3)",
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
                if let Some(gated) = gated {
                    check.saw(gated);
                }
                for (_, sent) in reinit {
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

    /// RCP-L0-021; returns the `info` it sent, for RCP-L0-014.
    pub(super) async fn info_after_init(
        &mut self,
        init: Option<&Init>,
    ) -> Result<Option<Sent>, EngineError> {
        let rule = &INFO_AFTER_INIT;
        let Some(init) = init.filter(|_| self.blocked(init).is_none()) else {
            let reason = self.blocked(init).unwrap_or_else(no_init);
            self.skip(rule, reason).await?;
            return Ok(None);
        };
        match init.source {
            InitSource::Initialize => {}
            InitSource::InfoAlreadyInitialized => {
                self.skip(rule, ALREADY_INITIALIZED).await?;
                return Ok(None);
            }
            InitSource::InfoAfterVersionZero => {
                self.skip(
                    rule,
                    format!("not verified: {} failed", VERSION_ZERO_REJECTED.id),
                )
                .await?;
                return Ok(None);
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
        self.emit(finding).await?;
        Ok(Some(sent))
    }

    pub(super) async fn shutdown(&mut self) -> Result<(), EngineError> {
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
}

/// RCP-L0-011 on a server that was already initialized when the run started
/// (gated calls answered before `initialize`, and `initialize` got -32600).
///
/// Decision 3, as narrowed by the amendment of 2026-11-30: such a server is
/// either long-lived and process-wide (an earlier client initialized it, as
/// with the Python and C++ reference servers) or one whose `initialize` never
/// succeeds, and one run cannot tell which. Spec §14.1 rule 1: an L0 server
/// MUST "Answer `initialize` with negotiated `protocolVersion` ≥ 1", so a
/// handshake protocheck never saw certifies nothing. When an earlier run of
/// the same target saw `initialize` succeed (the service's history), the
/// finding is `info` and the level is certified as before; otherwise it is
/// skipped, which leaves the run without a level (see `certify`), and the
/// message says which case it was and how to get a full verdict.
pub(crate) fn already_initialized_handshake(history: &HandshakeHistory) -> (Outcome, String) {
    const SIGNATURE: &str = "the server was already initialized when this run started: `retrieve` before \
        `initialize` got an answer and `initialize` got -32600";
    match history {
        HandshakeHistory::Observed { run_id, at_ms } => (
            Outcome::Info,
            format!(
                "{SIGNATURE}. Run {run_id} saw this target complete `initialize` at {}, so it is taken as a \
                 long-lived server that keeps one initialized flag for the whole process: the handshake is not \
                 re-checked and the pre-initialize checks are skipped (spec §5; protocheck decision 3)",
                time_of(*at_ms)
            ),
        ),
        HandshakeHistory::NotObserved => (
            Outcome::Skip,
            format!(
                "{HANDSHAKE_NOT_OBSERVED}: {SIGNATURE}, and no earlier run of this target saw `initialize` succeed. \
                 A long-lived server initialized by an earlier client and a server whose `initialize` never \
                 succeeds look the same, so no level is certified (L0 needs `initialize` answered, §14.1 rule 1). \
                 Restart the server and run again (protocheck decision 3)"
            ),
        ),
        HandshakeHistory::Unavailable => (
            Outcome::Skip,
            format!(
                "{HANDSHAKE_NOT_OBSERVED}: {SIGNATURE}, and no history of earlier runs is available (`protocheck \
                 check` keeps none). A long-lived server initialized by an earlier client looks the same as a server whose `initialize` \
                 never succeeds, so no level is certified (L0 needs `initialize` answered, §14.1 rule 1). Restart \
                 the server and run again, or run it through the service, which remembers a run that saw the \
                 handshake (protocheck decision 3)"
            ),
        ),
    }
}

/// RFC 3339 (UTC, seconds) for a time in ms since the epoch.
fn time_of(ms: i64) -> String {
    let at =
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_seconds(at).to_string()
}
