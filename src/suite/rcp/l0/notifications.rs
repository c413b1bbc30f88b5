//! Notifications (spec §4.5, §14.1 rule 6): never answered, whatever the
//! method; `notifications/cancel` is a notification, never a request.

use super::*;

pub const NOTIFY_GATED: Rule = must(
    "RCP-L0-005",
    "a notification for a gated method is not answered",
    "RCP/1 §4.5, §14.1(6)",
)
.help(
    "Before `initialize` and again after it, protocheck sends a `retrieve` notification (no \
     `id`) with a query and `k`. Over HTTP any JSON body in the response counts as an answer; over stdio a `ping` \
     follows as a barrier, and a line for the notification before that `ping`'s reply, or shortly \
     after it, fails the rule.",
    "The server answers every frame, most often with a -32001 error because its initialization \
     gate runs before the check for a missing `id`, or with a result. A JSON-RPC layer that does \
     not treat id-less frames as notifications is the usual cause.",
    "Check for a missing `id` before anything else, gate included, and never write a response for \
     a notification, not even an error. Over HTTP answer it with 204 (or an empty 200/202); over \
     stdio write nothing.",
);
pub const NOTIFY_OPEN: Rule = must(
    "RCP-L0-006",
    "a notification for an open method (`info`) is not answered",
    "RCP/1 §4.5, §14.1(6)",
)
.help(
    "Before `initialize`, protocheck sends an `info` notification (no `id`, empty params). Over \
     HTTP any JSON body in the response counts as an answer; over stdio a barrier `ping` follows \
     it, and a line for the notification before that `ping`'s reply, or shortly after it, fails \
     the rule.",
    "The server replies to `info` whether or not the frame has an `id`, usually because its \
     dispatcher calls the handler and serializes the result for every frame. The reply often \
     carries `id: null`, which looks harmless but is still an answer.",
    "In the dispatcher, run a notification's handler if you like but discard its output: a frame \
     without `id` gets no response at all. Over HTTP return 204 or an empty 200/202; over stdio \
     write nothing.",
);
pub const NOTIFY_UNKNOWN: Rule = must(
    "RCP-L0-007",
    "a notification for an unknown method is not answered",
    "RCP/1 §4.5, §14.1(6)",
)
.help(
    "Before `initialize` (last) and again on the initialized session, protocheck sends \
     notifications (no `id`) for four methods RCP does not define: \
     `notifications/protocheck-unknown` (the reserved namespace, whose unknown members are \
     silently ignored), `x-protocheck/unknown` (a vendor namespace), `embed/protocheck-unknown` \
     and `does/not/exist`, and two of them inside a batch around a `ping`, which must get the \
     `ping`'s entry alone; then `ping`, `info` and a capability method, which must still be \
     answered by the same initialized session. A server that stops answering after one fails. Over HTTP any JSON body in a \
     response counts as an answer; over stdio a barrier `ping` follows each, and a line for the \
     notification before its reply, or shortly after, fails the rule.",
    "The server answers the unknown method with an error (-32004, -32601 or -32001), which is \
     right for a request but not for a notification. A router that produces its method-not-found \
     response before checking for an `id` is the usual cause.",
    "Decide whether a frame is a notification before routing it: when `id` is absent, an unknown \
     method is dropped silently, with no error. Over HTTP answer 204 or an empty 200/202; over \
     stdio write nothing.",
);
pub const CANCEL_UNKNOWN_ID: Rule = must(
    "RCP-L0-008",
    "`notifications/cancel` for an unknown or answered id is not answered",
    "RCP/1 §14.1(6)",
)
.help(
    "Before and after `initialize`, protocheck sends `notifications/cancel` as a notification \
     with params `{\"id\": 987654321, \"reason\": \"protocheck probe\"}`, an id it never used, \
     and after it a cancel for the id of a `ping` already answered; then a `ping` must still get a \
     result. Over HTTP any \
     JSON body counts as an answer; over stdio a barrier `ping` follows, and a line for the \
     cancel before its reply, or shortly after, fails the rule.",
    "The server reports the unknown request id back, usually with an error such as -32015 or \
     -32602, or gates the cancel before `initialize` and answers -32001. Cancellation is best \
     effort, so a cancel that refers to nothing is simply dropped.",
    "Handle `notifications/cancel` as a notification: look the id up among in-flight requests, \
     cancel the request if found and otherwise do nothing, and never write a response for it \
     (over HTTP 204 or an empty 200/202).",
);
/// `notifications/cancel` sent as a request. The spec body gives no code for
/// it: §7.14 says only "Cancellation is a **notification** (no `id`, no
/// response)", §12 lists -32600 as "Not a valid Request object", and §14.1
/// does not name the case. Only the Appendix E change log says "`notifications/
/// cancel` with an `id` is malformed". So any JSON-RPC error passes (-32600 as
/// the change log suggests, -32602, -32004, …: every reading a careful author
/// could take), and a result or no answer is a warning, never an L0 blocker.
pub const CANCEL_WITH_ID: Rule = Rule {
    id: "RCP-L0-032",
    title: "`notifications/cancel` sent with an id is refused with an error",
    level: SpecLevel::Should,
    on_failure: Outcome::Warn,
    spec_ref: "RCP/1 §7.14, §12, Appendix E",
    group: "L0",
    help: crate::suite::Help {
        probe: "Later in the run, protocheck sends `notifications/cancel` as a request, with an \
                `id` and params `{\"id\": 987654321}`. Any JSON-RPC error passes, since the spec \
                body names no code for it; a result, or no answer, gives a warning.",
        failure: "The server handles the cancel as usual and answers it with a result (often \
                  `{}`), or drops it silently as a notification although it carries an `id`, \
                  leaving the client waiting. It is a SHOULD here and does not affect the level.",
        fix: "When `notifications/cancel` arrives with an `id`, reply with an error rather than a \
              result, preferably `{\"code\": -32600}` (InvalidRequest), as the spec's change log \
              calls such a frame malformed.",
    },
};

/// What one notification got: whether it went unanswered, the exchange,
/// and how it was (or was not) answered, in words.
#[derive(Clone)]
pub(super) struct Heard {
    pub silent: bool,
    pub exchange: Exchange,
    pub words: String,
}

/// Methods RCP/1 does not define, sent as notifications (RCP-L0-007): one in
/// the reserved `notifications/` namespace (§4.5: "Unknown `notifications/*`
/// are silently ignored"), one in a vendor namespace (`x-<vendor>/…`), one
/// in a namespace of the protocol's methods, and one outside every
/// namespace of the protocol.
pub(super) const UNKNOWN_NOTIFICATIONS: [&str; 4] = [
    "notifications/protocheck-unknown",
    "x-protocheck/unknown",
    "embed/protocheck-unknown",
    UNKNOWN_METHOD_NAME,
];

impl Conversation<'_> {
    pub(super) async fn notification(
        &mut self,
        rule: &'static Rule,
        method: &str,
        params: Value,
    ) -> Result<(), EngineError> {
        if let Some(reason) = self.gone() {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let heard = self.notify_once(rule, method, params).await?;
        check.evidence.push(heard.exchange);
        let finding = if heard.silent {
            check.finding(
                Outcome::Pass,
                format!("a notification (no `id`) for `{method}` {}", heard.words),
            )
        } else {
            check.finding(
                rule.on_failure,
                format!(
                    "a notification (no `id`) for `{method}` {}; notifications MUST NOT be answered, not even \
                     with an error, whatever the method (§4.5, §14.1 rule 6)",
                    heard.words
                ),
            )
        };
        self.emit(finding).await
    }

    /// Sends one notification and says whether it went unanswered.
    pub(super) async fn notify_once(
        &mut self,
        rule: &'static Rule,
        method: &str,
        params: Value,
    ) -> Result<Heard, EngineError> {
        let notified = match self.client.notify(method, params).await {
            Ok(n) => n,
            Err(failure) => {
                let exchange = failure.exchange.clone();
                // A notification is one write: over stdio what failed is the
                // barrier `ping` written after it, over HTTP the response.
                let words = if self.client.is_http() {
                    format!(
                        "got no HTTP response ({}); a notification must still get 204 or an empty 200/202 \
                         (protocheck decision 6), and the server must go on serving",
                        failure.error
                    )
                } else {
                    format!(
                        "was followed by the end of the server's output ({}): the `ping` written after it got \
                         no reply, so the server stopped instead of ignoring the notification",
                        failure.error
                    )
                };
                let _ = self.sent(rule, Err(failure))?;
                return Ok(Heard {
                    silent: false,
                    exchange,
                    words,
                });
            }
        };
        Ok(match notified {
            Notified::Silent(exchange, quiet) => {
                let how = match exchange.response.as_ref() {
                    Some(r) if r.body.trim().is_empty() => {
                        format!("HTTP {} with an empty body", r.status.unwrap_or_default())
                    }
                    Some(r) => format!(
                        "HTTP {} without a JSON-RPC body; the status is judged by {}",
                        r.status.unwrap_or_default(),
                        crate::suite::rcp::outside::HTTP_NOTIFICATION_STATUS.id
                    ),
                    None => quiet.words().to_owned(),
                };
                Heard {
                    silent: true,
                    exchange,
                    words: format!("was not answered ({how})"),
                }
            }
            Notified::Answered(reply) => Heard {
                silent: false,
                words: format!("was answered with {}", reply.describe()),
                exchange: reply.exchange,
            },
        })
    }

    /// RCP-L0-007 before `initialize`: each of [`UNKNOWN_NOTIFICATIONS`],
    /// kept to be judged with the same names after the handshake.
    pub(super) async fn unknown_notifications(
        &mut self,
    ) -> Result<Vec<(&'static str, Heard)>, EngineError> {
        let mut heard = Vec::new();
        for method in UNKNOWN_NOTIFICATIONS {
            if self.gone().is_some() {
                break;
            }
            let got = self
                .notify_once(&NOTIFY_UNKNOWN, method, json!({"note": "protocheck probe"}))
                .await?;
            // No response at all: the server went away on this one, and the
            // next would meet a closed or refused connection, whichever came
            // first; nothing more is sent to it here.
            let mut got = got;
            let dropped = !got.silent && got.exchange.response.is_none();
            if dropped && self.gone().is_none() {
                // Over HTTP: whether the server is still there (a `ping`
                // that cannot connect marks it gone, during this rule).
                let ping = self.request(&NOTIFY_UNKNOWN, "ping", json!({})).await?;
                if ping.is_err() {
                    // Which error the dead server's socket gives (reset or
                    // refused) varies; that it gave no answer does not.
                    got.words.push_str(
                        "; a `ping` sent next got no answer either, so the server was gone",
                    );
                    if self.gone_during.is_none() {
                        self.gone_during = Some(NOTIFY_UNKNOWN.id);
                    }
                }
            }
            heard.push((method, got));
            if dropped {
                break;
            }
        }
        Ok(heard)
    }

    /// RCP-L0-007: the undefined methods of [`UNKNOWN_NOTIFICATIONS`] sent as
    /// notifications before `initialize` (`before`, already sent) and again on
    /// the initialized session, then a `ping` that must still be answered:
    /// an ignored notification leaves the session as it was (§4.5).
    pub(super) async fn unknown_notifications_judged(
        &mut self,
        before: Vec<(&'static str, Heard)>,
        init: Option<&Init>,
    ) -> Result<(), EngineError> {
        let rule = &NOTIFY_UNKNOWN;
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let mut sent = 0;
        let judge = |when: &str,
                     method: &str,
                     heard: Heard,
                     check: &mut Check,
                     problems: &mut Vec<String>| {
            if !heard.silent {
                problems.push(format!("`{method}` {when} {}", heard.words));
            }
            check.evidence.push(heard.exchange);
        };
        for (method, heard) in before {
            sent += 1;
            judge(
                "before `initialize`",
                method,
                heard,
                &mut check,
                &mut problems,
            );
        }
        // Gone since: what the notifications before `initialize` got stands
        // only if it fails the rule.
        if let Some(reason) = self.gone().filter(|_| problems.is_empty()) {
            return self.skip(rule, reason).await;
        }
        let initialized = self.blocked(init).is_none();
        // What `info` reports before the notifications after `initialize`,
        // to compare with what it reports after them: the notifications'
        // effect alone (whether `info` matches `initialize` is RCP-L0-021's).
        let mut info_before = None;
        if initialized {
            let info = self.request(rule, "info", json!({})).await?;
            info_before = result_of(&info)
                .and_then(|r| r.get("capabilities"))
                .cloned();
            for method in UNKNOWN_NOTIFICATIONS {
                if self.gone().is_some() {
                    break;
                }
                let heard = self
                    .notify_once(rule, method, json!({"note": "protocheck probe"}))
                    .await?;
                sent += 1;
                judge(
                    "after `initialize`",
                    method,
                    heard,
                    &mut check,
                    &mut problems,
                );
            }
        }
        if sent == 0 {
            let reason = self.gone().unwrap_or_else(no_init);
            return self.skip(rule, reason).await;
        }
        if initialized && self.gone().is_none() {
            // §11: inside a batch, a notification gets no entry either.
            let id = self.client.next_id();
            let frames = vec![
                json!({"jsonrpc": "2.0", "method": UNKNOWN_NOTIFICATIONS[0], "params": {}}),
                json!({"jsonrpc": "2.0", "id": id, "method": "ping", "params": {}}),
                json!({"jsonrpc": "2.0", "method": UNKNOWN_NOTIFICATIONS[1], "params": {}}),
            ];
            let sent = self.client.send_batch("ping", frames.clone()).await;
            let sent = self.sent(rule, sent)?;
            check.saw(&sent);
            let names = format!(
                "`{}` and `{}`",
                UNKNOWN_NOTIFICATIONS[0], UNKNOWN_NOTIFICATIONS[1]
            );
            match batches::members(&sent) {
                Some(entries) => {
                    let others: Vec<String> = entries
                        .iter()
                        .filter(|m| !m.get("id").is_some_and(|got| loose_id(&id, got)))
                        .map(Value::to_string)
                        .collect();
                    if !others.is_empty() {
                        problems.push(format!(
                            "a batch of a `ping` (id {id}) between notifications for {names} got entries besides the \
                             `ping`'s: {}",
                            crate::transport::excerpt(others.join(", ").as_bytes(), 300).0
                        ));
                    }
                }
                None => problems.push(format!(
                    "a batch of a `ping` (id {id}) between notifications for {names} {}",
                    outcome_words(&sent)
                )),
            }
        }
        if self.gone().is_none() {
            // The session survives them: `ping` answers with a result (its
            // nonce is RCP-L0-002/003's), and, once initialized, `info`
            // reports the session's capabilities unchanged and the first
            // advertised capability method is not refused as uninitialized.
            let mut requests: Vec<(&str, Value)> = vec![("ping", json!({}))];
            let method = init.filter(|_| initialized).and_then(|init| {
                params::METHODS
                    .iter()
                    .find(|m| init.supports(m.capability))
                    .map(|m| (m.name, Value::Object(params::base(m.name, init))))
            });
            if initialized {
                requests.push(("info", json!({})));
                requests.extend(method.clone());
            }
            let answers = self.request_all(rule, requests).await?;
            for sent in &answers {
                check.saw(sent);
            }
            if let Some(ping) = answers.first()
                && !result_of(ping).is_some_and(Value::is_object)
            {
                problems.push(format!(
                    "a `ping` sent after them {}, so the session did not survive them",
                    outcome_words(ping)
                ));
            }
            if let (Some(info), Some(before)) = (answers.get(1).filter(|s| s.is_ok()), &info_before)
            {
                let caps = result_of(info).and_then(|r| r.get("capabilities"));
                if caps != Some(before) {
                    problems.push(format!(
                        "`info` sent after them {} with capabilities other than it reported just before them, \
                         so they changed the session",
                        outcome_words(info)
                    ));
                }
            }
            if let (Some(sent), Some((name, _))) = (answers.get(2).filter(|s| s.is_ok()), &method) {
                // Refused as uninitialized: the session was reset. How the
                // reply is framed is RCP-L0-026's concern.
                if code_of(sent) == Some(-32001) {
                    problems.push(format!(
                        "`{name}` sent after them {}, so the session did not stay initialized",
                        outcome_words(sent)
                    ));
                }
            }
        }
        let names = UNKNOWN_NOTIFICATIONS.map(|m| format!("`{m}`")).join(", ");
        let when = if initialized {
            "before and after `initialize` (and inside a batch after it)"
        } else {
            "before `initialize` (no handshake succeeded, so not after it)"
        };
        let finding = if problems.is_empty() {
            check.finding(
                Outcome::Pass,
                format!(
                    "notifications (no `id`) for the undefined methods {names}, {when}, were not answered, and the \
                     session still answered `ping`{} after them",
                    if initialized { ", `info` with its capabilities and a capability method" } else { "" }
                ),
            )
        } else {
            check.finding(
                rule.on_failure,
                format!(
                    "{}; notifications MUST NOT be answered, not even with an error, whatever the method, and \
                     unknown `notifications/*` are silently ignored (§4.5, §14.1 rule 6)",
                    problems.join("; ")
                ),
            )
        };
        self.emit(finding).await
    }

    /// RCP-L0-005: the `retrieve` notification sent before `initialize`
    /// (`before`), and the same on the initialized session, where a server
    /// that dispatches id-less frames would run it and may answer.
    pub(super) async fn notify_gated_judged(
        &mut self,
        before: Option<Heard>,
        init: Option<&Init>,
    ) -> Result<(), EngineError> {
        let rule = &NOTIFY_GATED;
        let mut heard: Vec<(&str, Heard)> = before
            .into_iter()
            .map(|h| ("before `initialize`", h))
            .collect();
        let initialized = self.blocked(init).is_none();
        if initialized {
            let params = json!({"query": PROBE_QUERY, "k": 1});
            heard.push((
                "after `initialize`",
                self.notify_once(rule, "retrieve", params).await?,
            ));
        }
        self.heard_judged(rule, "`retrieve`", heard, Vec::new(), initialized)
            .await
    }

    /// RCP-L0-008: `notifications/cancel` for an id never used, before
    /// `initialize` (`before`) and after it, and for the id of a request
    /// already answered (§7.14: cancellation is best effort, a cancel that
    /// refers to nothing in flight is a no-op); then a `ping` must still be
    /// answered with a result.
    pub(super) async fn cancel_judged(
        &mut self,
        before: Option<Heard>,
        init: Option<&Init>,
    ) -> Result<(), EngineError> {
        let rule = &CANCEL_UNKNOWN_ID;
        let mut heard: Vec<(&str, Heard)> = before
            .into_iter()
            .map(|h| ("for an unused id before `initialize`", h))
            .collect();
        let mut problems = Vec::new();
        let mut evidence = Vec::new();
        let initialized = self.blocked(init).is_none();
        if initialized {
            let id = self.client.next_id();
            let answered = self.call(rule, id.clone(), "ping", json!({})).await?;
            evidence.push(exchange_of(&answered).clone());
            if self.gone().is_none() {
                let cancel = json!({"id": id, "reason": "protocheck probe"});
                let got = self
                    .notify_once(rule, "notifications/cancel", cancel)
                    .await?;
                heard.push(("for the id of a `ping` already answered", got));
            }
            if self.gone().is_none() {
                let cancel = json!({"id": UNKNOWN_CANCEL_ID, "reason": "protocheck probe"});
                let got = self
                    .notify_once(rule, "notifications/cancel", cancel)
                    .await?;
                heard.push(("for an unused id after `initialize`", got));
            }
            if self.gone().is_none() {
                let ping = self.request(rule, "ping", json!({})).await?;
                evidence.push(exchange_of(&ping).clone());
                if ping.is_ok() && !result_of(&ping).is_some_and(Value::is_object) {
                    problems.push(format!(
                        "a `ping` sent after the cancels {}",
                        outcome_words(&ping)
                    ));
                }
            }
        }
        let finding_problems = problems;
        self.heard_judged_with(
            rule,
            "`notifications/cancel`",
            heard,
            finding_problems,
            evidence,
            initialized,
        )
        .await
    }

    async fn heard_judged(
        &mut self,
        rule: &'static Rule,
        what: &str,
        heard: Vec<(&str, Heard)>,
        problems: Vec<String>,
        initialized: bool,
    ) -> Result<(), EngineError> {
        self.heard_judged_with(rule, what, heard, problems, Vec::new(), initialized)
            .await
    }

    /// One finding over notifications sent at several moments: each must
    /// have gone unanswered. What was heard before the target went away
    /// stands only if it fails the rule.
    async fn heard_judged_with(
        &mut self,
        rule: &'static Rule,
        what: &str,
        heard: Vec<(&str, Heard)>,
        mut problems: Vec<String>,
        evidence: Vec<Exchange>,
        initialized: bool,
    ) -> Result<(), EngineError> {
        let mut check = Check::new(rule);
        let mut quiet = Vec::new();
        for (when, h) in heard {
            if h.silent {
                quiet.push(format!("{when} {}", h.words));
            } else {
                problems.push(format!(
                    "a notification (no `id`) for {what} {when} {}",
                    h.words
                ));
            }
            check.keep(h.exchange);
        }
        for exchange in evidence {
            check.keep(exchange);
        }
        let finding = if !problems.is_empty() {
            check.verdict(
                &problems,
                "",
                "notifications MUST NOT be answered, not even with an error, whatever the method and whenever \
                 they come, and a cancel that refers to nothing in flight changes nothing (§4.5, §7.14, §14.1 rule 6)",
            )
        } else if let Some(reason) = self.gone() {
            check.finding(Outcome::Skip, reason)
        } else if quiet.is_empty() {
            check.finding(Outcome::Skip, no_init())
        } else {
            check.finding(
                Outcome::Pass,
                format!(
                    "notifications (no `id`) for {what}: {}{}",
                    quiet.join("; "),
                    if initialized {
                        ""
                    } else {
                        " (no handshake succeeded, so not after it)"
                    }
                ),
            )
        };
        self.emit(finding).await
    }

    pub(super) async fn cancel_with_id(&mut self) -> Result<(), EngineError> {
        let rule = &CANCEL_WITH_ID;
        if let Some(reason) = self.gone() {
            return self.skip(rule, reason).await;
        }
        let mut check = Check::new(rule);
        let params = json!({"id": UNKNOWN_CANCEL_ID});
        let sent = self.request(rule, "notifications/cancel", params).await?;
        check.saw(&sent);
        let finding = match code_of(&sent) {
            Some(-32600) => check.finding(
                Outcome::Pass,
                "`notifications/cancel` with an id was rejected with -32600",
            ),
            Some(code) => check.finding(
                Outcome::Pass,
                format!(
                    "`notifications/cancel` with an id was rejected with {code}; the spec body names no code for \
                     it (Appendix E calls it malformed, which suggests -32600), so any error is accepted"
                ),
            ),
            None => check.finding(
                rule.on_failure,
                format!(
                    "`notifications/cancel` sent as a request (with an id) {}; it is a notification (\"no `id`, no \
                     response\", §7.14) and the change log calls it malformed (Appendix E), so an error is \
                     expected. The spec body gives no code, so this is a warning and does not affect the level",
                    outcome_words(&sent)
                ),
            ),
        };
        self.emit(finding).await
    }
}
