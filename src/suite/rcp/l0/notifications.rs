//! Notifications (spec §4.5, §14.1 rule 6): never answered, whatever the
//! method; `notifications/cancel` is a notification, never a request.

use super::*;

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
    help: crate::suite::Help::NONE,
};

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
