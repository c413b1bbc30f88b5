//! What a server sends besides replies (spec §9 streaming and progress, §5.2
//! SSE, §17.1 log notifications): delivered when the client asks for them,
//! and never as a substitute for the one buffered reply a plain request gets.

use super::*;
use crate::suite::rcp::client::{Failure, Reply};
use crate::suite::rcp::conversation::InitSource;

pub const STREAMING_PROGRESS: Rule = item(
    "RCP-L2-006",
    "with `_meta.progressToken` (and, over HTTP, `Accept: text/event-stream`), any progress frames echo the token and precede exactly one final response",
    SpecLevel::Should,
    "RCP/1 §14.3, §9, §5.2 (SSE)",
)
.help(
    "When `streaming` is advertised, protocheck sends `retrieve` with `_meta.progressToken`, once \
     \"protocheck-progress-1\" and once 7, then one valid request of every other advertised \
     method (`rerank`, `embed`, `embed/sparse`, `embed/multi`, `query/transform`, `graph`) with a \
     string token, over HTTP accepting `text/event-stream`. Frames before \
     the final one must be notifications, progress must echo the token with its JSON type and \
     keep `progress` within 0–1, and one final response must close it.",
    "Progress frames carry the token converted to a string or no token, report `progress` as a \
     percentage (0–100), the stream goes on after the final response or ends without one, or the \
     final response lacks hits. A buffered JSON reply passes, since streaming is optional.",
    "Copy `_meta.progressToken` into each `notifications/progress` verbatim (same JSON type), \
     report `progress` as a fraction from 0.0 to 1.0, send the final JSON-RPC response once, \
     last, with the request's `id`, and end the stream after it.",
);
pub const STREAMING_BUFFERED: Rule = item(
    "RCP-L2-007",
    "without `Accept: text/event-stream`, a streaming server answers one buffered JSON response",
    SpecLevel::Must,
    "RCP/1 §5.2 (SSE)",
)
.help(
    "Over HTTP, when `streaming` is advertised, protocheck sends `retrieve` with \
     `_meta.progressToken` but without an `Accept: text/event-stream` header, and expects one \
     buffered JSON response carrying a result, not an event stream. The rule is skipped over \
     stdio.",
    "The server decides to stream from the progress token alone, or always streams once \
     `streaming` is on, so a client that cannot read server-sent events gets `text/event-stream`. \
     A request that fails outright also fails the rule.",
    "Choose the response format from the request's `Accept` header: stream only when it includes \
     `text/event-stream`; otherwise run the request to completion and return one \
     `application/json` response, without progress frames.",
);
pub const LOG: Rule = item(
    "RCP-L2-009",
    "a client that opts in (the `log` capability and `_meta.logLevel`) receives well-formed `notifications/log`",
    SpecLevel::Should,
    "RCP/1 §14.3, §17.1",
)
.help(
    "When `log` is advertised (over HTTP, with `streaming`), protocheck, whose `initialize` \
     advertised the client `log` capability, sends `retrieve` with `_meta.logLevel` \"debug\", \
     over HTTP asking for an event stream and retrying with a progress token if the reply is \
     buffered. Each `notifications/log` needs a valid `level` (within `log.levels` if advertised) \
     and a string `message`. When logs came, the same request with `_meta.logLevel` \"error\" \
     must bring no log of a lower level.",
    "Log frames use another level name (\"warn\", \"trace\", \"critical\"), carry the text under \
     `msg` or `data` with no `message`, or break the final response. When no log arrives the rule \
     is skipped as advertised but not exercised, which neither counts for L2 nor blocks it.",
    "Send `notifications/log` with params `{\"level\": \"info\", \"message\": \"…\"}`, the level \
     one of debug, info, notice, warning and error, and over HTTP write them inside the event \
     stream of a request that accepts one.",
);

/// The progress tokens of the streaming probe, one of each kind §9 allows
/// ("string or integer"), each echoed verbatim.
const PROGRESS_TOKEN: &str = "protocheck-progress-1";
const INTEGER_PROGRESS_TOKEN: i64 = 7;
/// The minimum level of the log probe's last request, and the levels below it
/// (§17.1's order: debug, info, notice, warning, error).
const MIN_LOG_LEVEL: &str = "error";
const LOWER_THAN_ERROR: [&str; 4] = ["debug", "info", "notice", "warning"];
/// The progress token of the log probe's second attempt over HTTP.
const LOG_PROGRESS_TOKEN: &str = "protocheck-progress-log";

impl L2Run<'_, '_> {
    /// RCP-L2-006: the structure of what answers a request carrying
    /// `_meta.progressToken` (and, over HTTP, `Accept: text/event-stream`).
    ///
    /// Decisions (amendment 11):
    /// - Progress is optional. §5.2: the server "MAY respond with
    ///   `text/event-stream` and emit zero or more `notifications/progress`
    ///   frames followed by exactly one final frame"; §9: the server "MAY
    ///   send, before the final response" progress. So the frames are judged
    ///   (each well-formed, progress echoing the token, exactly one final
    ///   response with the request id, nothing after it), never their number.
    /// - A buffered JSON reply to a request that accepts an event stream is
    ///   allowed: §5.2 says the server "MAY respond with `text/event-stream`",
    ///   and only requires the buffered reply when the client did not ask for
    ///   SSE. It passes, and the finding says the stream was not used.
    pub(super) async fn streaming_progress(&mut self) -> Result<(), EngineError> {
        let rule = &STREAMING_PROGRESS;
        if !self.gate(rule, "streaming").await? {
            return Ok(());
        }
        let mut check = Check::new(rule);
        let mut problems = Vec::new();
        let mut seen = Vec::new();
        let http = self.conv.client.is_http();
        // §9: the token is a "string or integer" and is echoed verbatim; both
        // kinds are sent with `retrieve`, so a server that turns 7 into "7" is
        // caught. Every other advertised method that can take a token gets
        // one too: §9's `_meta.progressToken` is not `retrieve`'s alone.
        for (method, mut params, token) in self.streamable() {
            let kind = if token.is_string() {
                "string"
            } else {
                "integer"
            };
            params["_meta"] = json!({"progressToken": token});
            let id = self.conv.client.next_id();
            let streamed = self
                .conv
                .client
                .call_stream(id.clone(), method, params)
                .await;
            let streamed = match streamed {
                Ok(s) => s,
                Err(failure) => {
                    let what = format!(
                        "`{method}` with the {kind} progressToken {}, asking for an event stream,",
                        show(&token)
                    );
                    return self.unanswered(check, failure, &what, "§9, §5.2").await;
                }
            };
            check.keep(streamed.reply.exchange.clone());
            let before = problems.len();
            problems.extend(streamed.problems.iter().cloned());
            let progress: Vec<&Value> = streamed
                .notifications
                .iter()
                .filter(|n| {
                    n.get("method").and_then(Value::as_str) == Some("notifications/progress")
                })
                .collect();
            // Every frame before the final one is a JSON-RPC notification; besides
            // progress, `notifications/log` may share the stream (§17.1: a server
            // advertising `log` "MAY emit `notifications/log` ... at any time").
            for frame in &streamed.notifications {
                if frame.get("jsonrpc").and_then(Value::as_str) != Some("2.0")
                    || !frame.get("method").is_some_and(Value::is_string)
                {
                    problems.push(format!(
                        "a frame before the final response is not a JSON-RPC 2.0 notification: {}",
                        show(frame)
                    ));
                }
            }
            for frame in &progress {
                let params = frame.get("params").unwrap_or(&Value::Null);
                // `same_id` compares the JSON type too: "7" is not 7.
                match params.get("progressToken") {
                    Some(got) if same_id(&token, got) => {}
                    other => problems.push(format!(
                        "a progress frame carried progressToken {} for the {kind} token {}; it MUST be echoed \
                         verbatim, JSON type included",
                        show(other.unwrap_or(&Value::Null)),
                        show(&token)
                    )),
                }
                match params.get("progress") {
                    None => {}
                    Some(p) if p.as_f64().is_some_and(|x| (0.0..=1.0).contains(&x)) => {}
                    Some(p) => problems.push(format!(
                        "a progress frame reported progress {}; it is 0.0–1.0",
                        show(p)
                    )),
                }
                // The frame's other members (`stage`, `message`, `partial`)
                // against §9's shape; the token and `progress` are judged above.
                for problem in shape::notification_problems("notifications/progress", params)
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|p| {
                        !p.starts_with("`params.progressToken`")
                            && !p.starts_with("`params.progress`")
                    })
                {
                    problems.push(format!("a progress frame: {problem}"));
                }
            }
            problems.extend(final_reply_problems(method, &streamed.reply, &id));
            for problem in &mut problems[before..] {
                *problem = format!(
                    "`{method}` with the {kind} token {}: {problem}",
                    show(&token)
                );
            }
            seen.push(if http && !streamed.event_stream {
                format!(
                    "`{method}` with the {kind} token {} got one buffered JSON response, which §5.2 allows (the \
                     server \"MAY respond with `text/event-stream`\"), so no frame to judge",
                    show(&token)
                )
            } else {
                format!(
                    "`{method}` with the {kind} token {}: {} progress frame(s) echoing it verbatim, then exactly \
                     one final response{}",
                    show(&token),
                    progress.len(),
                    if http {
                        " in an event stream"
                    } else {
                        " on stdout"
                    }
                )
            });
        }
        let finding = check.verdict(
            &problems,
            format!(
                "{}; §5.2 allows \"zero or more\" progress frames, so a token with none was not judged for its echo",
                seen.join("; ")
            ),
            "with `_meta.progressToken` (a \"string or integer\", §9) and `streaming` advertised, any progress frames \
             echo the token verbatim and precede exactly one final response, and nothing follows it (§9, §5.2)",
        );
        self.conv.emit(finding).await
    }

    pub(super) async fn streaming_buffered(&mut self) -> Result<(), EngineError> {
        let rule = &STREAMING_BUFFERED;
        if !self.gate(rule, "streaming").await? {
            return Ok(());
        }
        if !self.conv.client.is_http() {
            return self
                .conv
                .skip(rule, "applies to HTTP only: over stdio notifications and replies share stdout (spec §5.1)")
                .await;
        }
        let mut check = Check::new(rule);
        let params = json!({"query": self.query(), "k": 2, "_meta": {"progressToken": "protocheck-progress-2"}});
        let sent = self.conv.request(rule, "retrieve", params).await?;
        check.saw(&sent);
        let content_type = sent
            .as_ref()
            .ok()
            .and_then(|r| r.exchange.response.as_ref())
            .and_then(|r| {
                r.headers
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            })
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        let mut problems = Vec::new();
        if content_type
            .to_ascii_lowercase()
            .contains("text/event-stream")
        {
            problems.push(
                "the response is `text/event-stream` although the request did not accept one"
                    .to_owned(),
            );
        }
        if result_of(&sent).is_none() {
            problems.push(format!("the request {}", outcome_words(&sent)));
        }
        let finding = check.verdict(
            &problems,
            "a request with a progressToken but without `Accept: text/event-stream` got one buffered JSON response",
            "if the client did not request SSE, the server MUST return a single buffered JSON response (§5.2)",
        );
        self.conv.emit(finding).await
    }

    /// RCP-L2-009. The client opts in both ways §7.1 names: the `log`
    /// capability in its `initialize` (decision, amendment 11: §17.1 says
    /// servers "SHOULD emit logs only when the client advertised the `log`
    /// capability") and `_meta.logLevel` on the request.
    ///
    /// Over HTTP a log reaches the client only inside an event stream (§5.2),
    /// which a server MAY decline: when it answers buffered JSON, the request
    /// is repeated with a progressToken (some servers stream only those);
    /// when neither streams, `log` is "advertised, not exercised" (it neither
    /// counts for L2 nor blocks it, and the verdict lists it).
    pub(super) async fn log(&mut self) -> Result<(), EngineError> {
        let rule = &LOG;
        if !self.gate(rule, "log").await? {
            return Ok(());
        }
        let http = self.conv.client.is_http();
        if http && !self.init.supports("streaming") {
            return self
                .conv
                .skip(
                    rule,
                    "advertised, not exercised: over HTTP a `notifications/log` can reach the client only inside an \
                     event stream (spec §5.2, §17.1), and `streaming` is not advertised; a run over stdio, or a server \
                     that also advertises `streaming` and streams, would exercise it",
                )
                .await;
        }
        let levels = self.init.advertised_list("log", "levels");
        let mut check = Check::new(rule);
        let plain = json!({"query": self.query(), "k": 2, "_meta": {"logLevel": "debug"}});
        let with_token = json!({"query": self.query(), "k": 2,
            "_meta": {"logLevel": "debug", "progressToken": LOG_PROGRESS_TOKEN}});
        let mut attempts = vec![plain];
        if http {
            attempts.push(with_token);
        }
        let mut answered = None;
        for params in attempts {
            let id = self.conv.client.next_id();
            let streamed = match self
                .conv
                .client
                .call_stream(id.clone(), "retrieve", params.clone())
                .await
            {
                Ok(s) => s,
                Err(failure) => {
                    let what = "`retrieve` with `_meta.logLevel` \"debug\"";
                    return self.unanswered(check, failure, what, "§17.1").await;
                }
            };
            check.keep(streamed.reply.exchange.clone());
            let buffered = http && !streamed.event_stream;
            let failed = !final_reply_problems("retrieve", &streamed.reply, &id).is_empty();
            answered = Some((streamed, id, params));
            if !buffered || failed {
                break;
            }
        }
        let Some((streamed, id, used)) = answered else {
            return Ok(());
        };
        let mut problems = streamed.problems.clone();
        problems.extend(final_reply_problems("retrieve", &streamed.reply, &id));
        if http && !streamed.event_stream && problems.is_empty() {
            let finding = check.finding(
                Outcome::Skip,
                "advertised, not exercised: requests that accepted an event stream, with and without a \
                 progressToken, got buffered JSON responses, which §5.2 allows, so no `notifications/log` could reach \
                 protocheck over HTTP (§5.2, §17.1); a server that streams such requests, or a run over stdio, would \
                 exercise it",
            );
            return self.conv.emit(finding).await;
        }
        let logs: Vec<&Value> = streamed
            .notifications
            .iter()
            .filter(|n| n.get("method").and_then(Value::as_str) == Some("notifications/log"))
            .collect();
        if logs.is_empty() && problems.is_empty() && self.init.source != InitSource::Initialize {
            // The session was initialized before this run (decision 3), so
            // the server never saw protocheck's `log` capability.
            let finding = check.finding(
                Outcome::Skip,
                "advertised, not exercised: no `notifications/log` arrived, and this session was initialized before \
                 the run, so the server never saw protocheck's `log` capability (§17.1: servers \"SHOULD emit logs \
                 only when the client advertised the `log` capability\"); a run on a fresh session would exercise it",
            );
            return self.conv.emit(finding).await;
        }
        if logs.is_empty() && problems.is_empty() {
            // §17.1: a server that advertises `log` "MAY emit
            // `notifications/log` … at any time": logging is never required,
            // so a silent server is not failed. Its `log` is not exercised.
            let finding = check.finding(
                Outcome::Skip,
                format!(
                    "advertised, not exercised: a `retrieve` with `_meta.logLevel` \"debug\", from a client whose \
                     `initialize` advertised the `log` capability, brought no `notifications/log`{}, which §17.1 \
                     allows (a server \"MAY emit `notifications/log`\"); a server that logs such a request would \
                     exercise it",
                    if http { " in its event stream" } else { " on stdout" }
                ),
            );
            return self.conv.emit(finding).await;
        }
        for frame in &logs {
            let params = frame.get("params").unwrap_or(&Value::Null);
            for p in shape::notification_problems("notifications/log", params).unwrap_or_default() {
                problems.push(format!("a log notification: {p}"));
            }
            if let (Some(levels), Some(level)) =
                (&levels, params.get("level").and_then(Value::as_str))
                && !levels.iter().any(|l| l == level)
            {
                problems.push(format!(
                    "a log notification has level \"{level}\", outside the advertised `log.levels`"
                ));
            }
        }
        // §17.1: the server should honour the minimum `logLevel`. The same
        // request again with "error": no log of a lower level may come.
        let mut floor_words = String::new();
        if problems.is_empty() {
            let mut params = used;
            params["_meta"]["logLevel"] = json!(MIN_LOG_LEVEL);
            let id = self.conv.client.next_id();
            match self
                .conv
                .client
                .call_stream(id.clone(), "retrieve", params)
                .await
            {
                Ok(streamed) => {
                    check.keep(streamed.reply.exchange.clone());
                    problems.extend(streamed.problems.iter().cloned());
                    problems.extend(final_reply_problems("retrieve", &streamed.reply, &id));
                    let below: Vec<&str> = streamed
                        .notifications
                        .iter()
                        .filter(|n| {
                            n.get("method").and_then(Value::as_str) == Some("notifications/log")
                        })
                        .filter_map(|n| n.pointer("/params/level").and_then(Value::as_str))
                        .filter(|l| LOWER_THAN_ERROR.contains(l))
                        .collect();
                    if below.is_empty() {
                        floor_words = format!(
                            "; with `_meta.logLevel` \"{MIN_LOG_LEVEL}\" no log of a lower level came ({} log(s) \
                             in all)",
                            streamed
                                .notifications
                                .iter()
                                .filter(|n| n.get("method").and_then(Value::as_str)
                                    == Some("notifications/log"))
                                .count()
                        );
                    } else {
                        problems.push(format!(
                            "a `retrieve` with `_meta.logLevel` \"{MIN_LOG_LEVEL}\" brought logs of the lower level(s) \
                             {}; the server should honour the minimum `logLevel` (§17.1)",
                            show(&json!(below))
                        ));
                    }
                }
                Err(failure) => {
                    let what = format!("`retrieve` with `_meta.logLevel` \"{MIN_LOG_LEVEL}\"");
                    return self.unanswered(check, failure, &what, "§17.1").await;
                }
            }
        }
        let finding = check.verdict(
            &problems,
            format!(
                "{} well-formed `notifications/log` arrived for a request from a client that opted in (the `log` \
                 capability and `_meta.logLevel` \"debug\"){floor_words}",
                logs.len()
            ),
            "a server advertising `log` sends `notifications/log` `{level, message}` to a client that opted in \
             (§17.1, §14.3)",
        );
        self.conv.emit(finding).await
    }

    /// The requests of the streaming probe: `retrieve` with a string and an
    /// integer token, then one valid request of every other advertised
    /// method that takes `_meta` (§7: every request may carry
    /// `_meta.progressToken`), each with a string token.
    fn streamable(&self) -> Vec<(&'static str, Value, Value)> {
        let query = self.query();
        let mut requests = vec![
            (
                "retrieve",
                json!({"query": query, "k": 3}),
                json!(PROGRESS_TOKEN),
            ),
            (
                "retrieve",
                json!({"query": query, "k": 3}),
                json!(INTEGER_PROGRESS_TOKEN),
            ),
        ];
        let first = |cap: &str, field: &str, known: &[&str]| {
            self.init
                .advertised_list(cap, field)
                .unwrap_or_default()
                .into_iter()
                .find(|m| known.contains(&m.as_str()))
        };
        let others: [(&'static str, &str, Option<Value>); 6] = [
            (
                "rerank",
                "rerank",
                Some(
                    json!({"query": query, "passages": [query, "Quartz lanterns drift over tundra."]}),
                ),
            ),
            ("embed", "embed", Some(json!({"inputs": [query]}))),
            (
                "embed/sparse",
                "sparseEmbed",
                Some(json!({"texts": [query]})),
            ),
            (
                "embed/multi",
                "multiVector",
                Some(json!({"inputs": [query]})),
            ),
            (
                "query/transform",
                "transform",
                first(
                    "transform",
                    "methods",
                    &["rewrite", "hyde", "multi-query", "decompose", "step-back"],
                )
                .map(|m| json!({"query": query, "method": m})),
            ),
            (
                "graph",
                "graph",
                first("graph", "ops", &["local", "global", "drift"])
                    .map(|op| json!({"op": op, "query": query, "k": 3})),
            ),
        ];
        for (method, cap, params) in others {
            if let Some(params) = params
                && self.init.supports(cap)
            {
                let token = json!(format!("protocheck-progress-{}", method.replace('/', "-")));
                requests.push((method, params, token));
            }
        }
        requests
    }

    /// The finding of `check`'s rule when its streamed request (`what`) got
    /// no answer at all.
    async fn unanswered(
        &mut self,
        mut check: Check,
        failure: Failure,
        what: &str,
        sections: &str,
    ) -> Result<(), EngineError> {
        let rule = check.rule;
        check.keep(failure.exchange.clone());
        let words = format!("got no answer ({})", failure.error);
        let _ = self.conv.sent(rule, Err(failure))?;
        let finding = check.finding(rule.on_failure, format!("{what} {words} ({sections})"));
        self.conv.emit(finding).await
    }
}

/// The final frame of a stream must be the success reply to the request
/// (with hits, for `retrieve`).
fn final_reply_problems(method: &str, reply: &Reply, id: &Value) -> Vec<String> {
    let Some(frame) = reply.json() else {
        return vec!["no final JSON-RPC response came after the notifications".to_owned()];
    };
    let mut problems = Vec::new();
    // Paired loosely: whether the id is echoed with its exact type is
    // RCP-L0-024/025's concern, judged over every reply of the run.
    if !frame.get("id").is_some_and(|got| loose_id(id, got)) {
        problems.push(format!(
            "the final frame carried id {} instead of {id}",
            show(frame.get("id").unwrap_or(&Value::Null))
        ));
    }
    match reply.result() {
        Some(result) => {
            if method == "retrieve"
                && let Err(problem) = hit_essentials(result)
            {
                problems.push(format!("the final response: {problem}"));
            }
        }
        None => problems.push(format!("the final response is {}", reply.describe())),
    }
    problems
}
