//! What the server says, judged over the whole conversation: every result
//! against its schema shape (spec §14.4 "the JSON Schema is normative for
//! message shapes"; decision 1), and no notification the client did not opt
//! into (§7.1, §9, §17.1).

use super::*;
use crate::suite::rcp::shape;

pub const RESULT_SHAPES: Rule = must(
    "RCP-OUT-005",
    "every result has the shape the schema gives its method",
    "RCP/1 §7, §14.4 (schema is normative); protocheck decision 1",
)
.help(
    "At the end of the run, protocheck checks every result it received (batches aside) against \
     the shape the schema gives its method: `initialize`, `info`, `ping`, the embed methods, \
     `rerank`, `retrieve`, `query/transform`, `graph`, and the index, catalog, feedback and \
     memory methods. Required members must be present and defined ones of the right type; extra \
     members are allowed.",
    "A member has the wrong type (a score or `maxK` as a string, an id as an object), a required \
     member is missing (`hits`, `vectors`, `scores`), or a nested value breaks its shape, such as \
     a capability's metadata, a Content block or a hit's `citation`. The finding names each one \
     by its JSON path.",
    "Build results from types generated from the published schema, or validate each result \
     against it in your tests, and fix each path the finding lists; members the spec does not \
     define may stay.",
);
pub const UNSOLICITED: Rule = must(
    "RCP-OUT-006",
    "no progress or log notification the client did not opt into",
    "RCP/1 §7.1, §9, §17.1",
)
.help(
    "protocheck records every notification the server sends during the run and fails a \
     `notifications/progress` that arrives while a request without `_meta.progressToken` is \
     answered, or a `notifications/log` before the client opted in. Over HTTP it also sends a \
     `retrieve` that asks for an event stream without a token.",
    "The server emits progress for every request, whether or not it carried a token (often with a \
     made-up or null token), or sends logs from startup on. Over stdio, where notifications share \
     stdout, diagnostics written as log frames before `initialize` count too.",
    "Emit `notifications/progress` only for a request whose `_meta.progressToken` is set, with \
     that token, and `notifications/log` only once the client advertised the `log` capability or \
     sent `_meta.logLevel`; write other diagnostics to stderr.",
);

impl Conversation<'_> {
    pub(super) async fn result_shapes(&mut self) -> Result<(), EngineError> {
        let rule = &RESULT_SHAPES;
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let mut judged = 0;
        for reply in self
            .client
            .replies()
            .iter()
            .filter(|r| r.framed && !r.batch)
        {
            let Some(result) = reply.result() else {
                continue;
            };
            let Some(found) = shape::result_problems(&reply.method, result) else {
                continue;
            };
            judged += 1;
            if found.is_empty() {
                continue;
            }
            check.keep(reply.exchange.clone());
            problems.push(format!(
                "the `{}` result: {}",
                reply.method,
                found.join("; ")
            ));
        }
        let finding = if judged == 0 {
            check.finding(Outcome::Skip, "no result was received")
        } else {
            check.verdict(
                &problems,
                format!("all {judged} results have the shape of their method's schema"),
                "every result MUST have its method's shape in the normative schema (§7, §14.4)",
            )
        };
        self.emit(finding).await
    }

    /// RCP-OUT-006's own probe over HTTP. §9: the server "MUST NOT emit
    /// progress for a request that carried none". Over stdio every request
    /// shares stdout with any notification, so every request of the run
    /// tests it; over HTTP a notification can only come inside an event
    /// stream (§5.2), and the run's other streamed requests all carry a
    /// progressToken or `_meta.logLevel`. So one `retrieve` asks for an
    /// event stream with neither; what it brings is judged with the rest of
    /// the conversation by [`Self::unsolicited`].
    pub(super) async fn stream_without_token(
        &mut self,
        init: Option<&Init>,
    ) -> Result<(), EngineError> {
        if !self.client.is_http() || self.blocked(init).is_some() {
            return Ok(());
        }
        if !init.is_some_and(|i| i.supports("retrieve")) {
            return Ok(());
        }
        let id = self.client.next_id();
        let params = json!({"query": PROBE_QUERY, "k": 3});
        let streamed = self.client.call_stream(id, "retrieve", params).await;
        let got = match streamed {
            Ok(s) if s.event_stream => format!(
                "an event stream of {} notification frame(s) before its final frame",
                s.notifications.len()
            ),
            Ok(_) => "one buffered JSON response".to_owned(),
            Err(failure) => {
                let words = format!("no answer ({})", failure.error);
                let _ = self.sent(&UNSOLICITED, Err(failure))?;
                words
            }
        };
        self.tokenless_stream = Some(format!(
            "a `retrieve` over HTTP that asked for an event stream (`Accept: text/event-stream`) without a \
             progressToken got {got}"
        ));
        Ok(())
    }

    pub(super) async fn unsolicited(&mut self) -> Result<(), EngineError> {
        let rule = &UNSOLICITED;
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        for observed in self.client.observed() {
            let method = observed
                .frame
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let place = if observed.in_stream {
                "in the event stream"
            } else {
                "on stdout"
            };
            // A token that differs from the request's is RCP-L2-006's concern;
            // here, only progress for a request that carried none.
            if method == "notifications/progress" && observed.token.is_none() {
                check.keep(observed.exchange.clone());
                problems.push(format!(
                    "a `notifications/progress` arrived {place} while `{}` (which carried no progressToken) was \
                     answered: {}",
                    observed.during,
                    show(&observed.frame)
                ));
            }
            if method == "notifications/log" && !observed.log_opted_in {
                check.keep(observed.exchange.clone());
                problems.push(format!(
                    "a `notifications/log` arrived {place} while `{}` was answered, before the client opted into \
                     logs: {}",
                    observed.during,
                    show(&observed.frame)
                ));
            }
        }
        let total = self.client.observed_total();
        let probe = match &self.tokenless_stream {
            Some(words) => format!("; {words}"),
            None => String::new(),
        };
        let finding = check.verdict(
            &problems,
            format!(
                "all {total} notifications the server sent had been asked for (logs count as asked for from \
                 protocheck's `initialize` on, which advertises the client `log` capability){probe}"
            ),
            "a server MUST NOT send a notification the client did not opt into: progress only for a request with \
             `_meta.progressToken`, logs only after the `log` capability or `_meta.logLevel` (§7.1, §9, §17.1)",
        );
        self.emit(finding).await
    }
}
