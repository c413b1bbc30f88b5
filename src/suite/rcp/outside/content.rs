//! What the server says, judged over the whole conversation: every result
//! against its schema shape (spec §14.4 "the JSON Schema is normative for
//! message shapes"; decision 1), and no notification the client did not opt
//! into (§7.1, §9, §17.1).

use super::*;
use crate::suite::rcp::conversation::SecondSession;
use crate::suite::rcp::shape;

pub const RESULT_SHAPES: Rule = must(
    "RCP-OUT-005",
    "every result has the shape the schema gives its method",
    "RCP/1 §7, §14.4 (schema is normative); protocheck decision 1",
)
.help(
    "At the end of the run, protocheck checks every result it received, the members of batch \
     replies included, against the shape the schema gives its method; before the end it sends a \
     valid `embed` (and one with the legacy `texts` synonym, and one asking for `f32-base64` when \
     advertised), `catalog/list` and `memory/recall` when advertised. The methods: `initialize`, `info`, `ping`, the embed methods, \
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
     `retrieve` that asks for an event stream without a token. Then it opens a second session \
     (over HTTP a new connection without the session's token, over stdio a second process) \
     whose `initialize` leaves out the `log` capability, and sends one `retrieve` without \
     `_meta.logLevel`: any `notifications/log` there fails too.",
    "The server emits progress for every request, whether or not it carried a token (often with a \
     made-up or null token), or sends logs from startup on. Over stdio, where notifications share \
     stdout, diagnostics written as log frames before `initialize` count too.",
    "Emit `notifications/progress` only for a request whose `_meta.progressToken` is set, with \
     that token, and `notifications/log` only once the client advertised the `log` capability or \
     sent `_meta.logLevel`; write other diagnostics to stderr.",
);

/// The text of RCP-OUT-005's `embed` request that uses the legacy `texts`
/// synonym, by which its answer is found again.
const LEGACY_TEXT: &str = "protocheck legacy texts synonym";
const F32_BASE64: &str = "f32-base64";

/// The problem with an error answer to the legacy `texts` request: §7.3 says
/// the synonym MUST be accepted.
fn refused_synonym(
    reply: &crate::suite::rcp::client::Reply,
    params: Option<&Value>,
) -> Option<String> {
    let legacy = params
        .and_then(|p| p.get("texts"))
        .is_some_and(|t| *t == json!([LEGACY_TEXT]));
    (reply.method == "embed" && legacy).then(|| {
        format!(
            "`embed {{texts: [\"{LEGACY_TEXT}\"]}}` (the legacy synonym of `inputs`, which §7.3 says MUST also be \
             accepted) was answered with {}",
            reply.describe()
        )
    })
}

/// An `embed` result for a request that asked for `f32-base64` must say so,
/// and each vector must be a base64 blob of `dimension` little-endian f32s
/// (§7.3.1).
fn encoding_problems(result: &Value, params: Option<&Value>) -> Vec<String> {
    use base64::Engine as _;
    let asked = params
        .and_then(|p| p.get("encoding"))
        .and_then(Value::as_str)
        == Some(F32_BASE64);
    if !asked {
        return Vec::new();
    }
    let mut problems = Vec::new();
    if result.get("encoding").and_then(Value::as_str) != Some(F32_BASE64) {
        problems.push(format!(
            "the request asked for `encoding: \"{F32_BASE64}\"` and the result's `encoding` is {}",
            show(result.get("encoding").unwrap_or(&Value::Null))
        ));
    }
    let dimension = result.get("dimension").and_then(Value::as_u64);
    for (i, vector) in result
        .get("vectors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let Some(blob) = vector.as_str() else {
            problems.push(format!("`vectors[{i}]` is not a base64 string"));
            continue;
        };
        match base64::engine::general_purpose::STANDARD.decode(blob) {
            Err(_) => problems.push(format!("`vectors[{i}]` is not valid base64")),
            Ok(bytes) => {
                if let Some(d) = dimension
                    && bytes.len() as u64 != d * 4
                {
                    problems.push(format!(
                        "`vectors[{i}]` decodes to {} bytes; {d} f32 values take {}",
                        bytes.len(),
                        d * 4
                    ));
                }
            }
        }
    }
    problems
}

/// Request ids of RCP-OUT-006's second session, reserved from the run's.
const SECOND_SESSION_IDS: u64 = 16;

impl Conversation<'_> {
    /// RCP-OUT-005's own requests: a valid request of each advertised method
    /// whose result no other probe asks for (`embed`, its legacy `texts`
    /// synonym and its `f32-base64` encoding when advertised, `catalog/list`,
    /// `memory/recall`). Their results are judged with every other one by
    /// [`Self::result_shapes`].
    pub(super) async fn result_requests(&mut self, init: Option<&Init>) -> Result<(), EngineError> {
        let rule = &RESULT_SHAPES;
        let Some(init) = init else { return Ok(()) };
        if self.blocked(Some(init)).is_some() {
            return Ok(());
        }
        let mut requests = Vec::new();
        if init.supports("embed") {
            requests.push(("embed", json!({"inputs": [PROBE_QUERY], "kind": "query"})));
            requests.push(("embed", json!({"texts": [LEGACY_TEXT]})));
            let encodings = init
                .advertised_list("embed", "encodings")
                .unwrap_or_default();
            if encodings.iter().any(|e| e == F32_BASE64) {
                requests.push((
                    "embed",
                    json!({"inputs": [PROBE_QUERY], "encoding": F32_BASE64}),
                ));
            }
        }
        if init.supports("catalog") {
            requests.push(("catalog/list", json!({})));
        }
        if init.supports("memory") {
            requests.push(("memory/recall", json!({"query": PROBE_QUERY})));
        }
        for (method, params) in requests {
            if self.gone().is_some() {
                break;
            }
            let _judged_at_the_end = self.request(rule, method, params).await?;
        }
        Ok(())
    }

    pub(super) async fn result_shapes(&mut self) -> Result<(), EngineError> {
        let rule = &RESULT_SHAPES;
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let mut judged = 0;
        let mut members = 0;
        for reply in self.client.replies().iter().filter(|r| r.framed) {
            // What each answered frame asked for: one request, or a batch's.
            let sent: Value =
                serde_json::from_str(&reply.exchange.request.body).unwrap_or_default();
            let answered: Vec<(String, &Value, Option<&Value>)> = if reply.batch {
                let Some(list) = reply.json().and_then(Value::as_array) else {
                    continue;
                };
                list.iter()
                    .filter(|m| m.get("error").is_none())
                    .filter_map(|m| {
                        let result = m.get("result")?;
                        let id = m.get("id")?;
                        let request = sent
                            .as_array()?
                            .iter()
                            .find(|f| f.get("id").is_some_and(|i| i == id))?;
                        let method = request.get("method")?.as_str()?.to_owned();
                        Some((method, result, request.get("params")))
                    })
                    .collect()
            } else {
                match reply.result() {
                    Some(result) => vec![(reply.method.clone(), result, sent.get("params"))],
                    None => {
                        if let Some(problem) = refused_synonym(reply, sent.get("params")) {
                            check.keep(reply.exchange.clone());
                            problems.push(problem);
                        }
                        continue;
                    }
                }
            };
            for (method, result, params) in answered {
                let Some(mut found) = shape::result_problems(&method, result) else {
                    continue;
                };
                judged += 1;
                if reply.batch {
                    members += 1;
                }
                if method == "embed" {
                    found.extend(encoding_problems(result, params));
                }
                if found.is_empty() {
                    continue;
                }
                check.keep(reply.exchange.clone());
                problems.push(format!(
                    "the `{method}` result{}: {}",
                    if reply.batch {
                        " (in a batch reply)"
                    } else {
                        ""
                    },
                    found.join("; ")
                ));
            }
        }
        let finding = if judged == 0 && problems.is_empty() {
            check.finding(Outcome::Skip, "no result was received")
        } else {
            check.verdict(
                &problems,
                format!(
                    "all {judged} results ({members} of them members of batch replies) have the shape of their \
                     method's schema"
                ),
                "every result MUST have its method's shape in the normative schema, and `embed` MUST accept the \
                 legacy `texts` synonym (§7, §7.3, §14.4)",
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

    /// RCP-OUT-006's second session. The run's own `initialize` advertises
    /// the client `log` capability (RCP-L2-009 needs it), so only a session
    /// that never opted in can show logs sent regardless: a second one (over
    /// HTTP a connection of its own without the session's token, over stdio
    /// a second process) whose `initialize` leaves `log` out, then one
    /// `retrieve` without `_meta.logLevel` (over HTTP asking for an event
    /// stream, with a progressToken so a server that streams only those
    /// does). Every `notifications/log` it brings is unsolicited.
    pub(super) async fn second_session(&mut self, init: Option<&Init>) -> Result<(), EngineError> {
        let Some(init) = init else { return Ok(()) };
        if self.blocked(Some(init)).is_some() || !init.supports("retrieve") {
            return Ok(());
        }
        let base = self.client.reserve_ids(SECOND_SESSION_IDS);
        let mut fresh = match self.client.fresh_session(base) {
            Ok(fresh) => fresh,
            Err(error) => {
                self.second_session = Some(SecondSession {
                    words: format!(
                        "a second session could not be opened ({error}), so it was not tried"
                    ),
                    ..SecondSession::default()
                });
                return Ok(());
            }
        };
        let mut session = SecondSession::default();
        let handshake = json!({"protocolVersion": crate::suite::rcp::l0::CLIENT_PROTOCOL_VERSION,
            "client": crate::suite::rcp::conversation::client_info(), "capabilities": {}});
        let id = fresh.next_id();
        match fresh.call(id, "initialize", handshake).await {
            Ok(reply) if reply.result().is_some() => {
                session.evidence.push(reply.exchange.clone());
                let id = fresh.next_id();
                let params = json!({"query": PROBE_QUERY, "k": 2,
                    "_meta": {"progressToken": "protocheck-second-session"}});
                match fresh.call_stream(id, "retrieve", params).await {
                    Ok(streamed) => {
                        session.evidence.push(streamed.reply.exchange.clone());
                        session.words = format!(
                            "a second session whose `initialize` left out the `log` capability got {} notification(s) \
                             with its `retrieve` (no `_meta.logLevel`)",
                            fresh.observed_total()
                        );
                    }
                    Err(failure) => {
                        session.words = format!(
                            "a second session whose `initialize` left out the `log` capability got no answer to its \
                             `retrieve` ({}), so only what came before was judged",
                            failure.error
                        );
                    }
                }
                for observed in fresh.observed() {
                    let method = observed.frame.get("method").and_then(Value::as_str);
                    if method == Some("notifications/log") {
                        session.evidence.push(observed.exchange.clone());
                        session.problems.push(format!(
                            "a `notifications/log` reached a second session whose `initialize` left out the `log` \
                             capability and whose requests carried no `_meta.logLevel`: {}",
                            show(&observed.frame)
                        ));
                    }
                }
            }
            Ok(reply) => {
                session.words = format!(
                    "a second session's `initialize` (without the `log` capability) was answered with {}, so no \
                     second session was judged (a server whose initialized state is one for the process refuses it)",
                    reply.describe()
                );
            }
            Err(failure) => {
                session.words = format!(
                    "a second session's `initialize` got no answer ({}), so no second session was judged",
                    failure.error
                );
            }
        }
        if !fresh.is_http() {
            let id = fresh.next_id();
            let _ = fresh.call(id, "shutdown", json!({})).await;
        }
        fresh.close().await;
        self.second_session = Some(session);
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
        let mut probe = match &self.tokenless_stream {
            Some(words) => format!("; {words}"),
            None => String::new(),
        };
        if let Some(second) = &self.second_session {
            for exchange in &second.evidence {
                if !second.problems.is_empty() {
                    check.keep(exchange.clone());
                }
            }
            problems.extend(second.problems.iter().cloned());
            probe.push_str(&format!("; {}", second.words));
        }
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
