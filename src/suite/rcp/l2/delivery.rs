//! What a server sends besides replies (spec §9 streaming and progress, §5.2
//! SSE, §17.1 log notifications): delivered when the client asks for them,
//! and never as a substitute for the one buffered reply a plain request gets.

use super::*;
use crate::suite::rcp::client::Reply;

pub const STREAMING_PROGRESS: Rule = item(
    "RCP-L2-006",
    "with `_meta.progressToken` (and, over HTTP, `Accept: text/event-stream`), progress arrives before the reply",
    SpecLevel::Should,
    "RCP/1 §14.3, §9, §5.2 (SSE)",
);
pub const STREAMING_BUFFERED: Rule = item(
    "RCP-L2-007",
    "without `Accept: text/event-stream`, a streaming server answers one buffered JSON response",
    SpecLevel::Must,
    "RCP/1 §5.2 (SSE)",
);
pub const LOG: Rule = item(
    "RCP-L2-009",
    "a client that opts in with `_meta.logLevel` receives well-formed `notifications/log`",
    SpecLevel::Should,
    "RCP/1 §14.3, §17.1",
);

/// The progress token of the streaming probe: a string, echoed verbatim.
const PROGRESS_TOKEN: &str = "protocheck-progress-1";

impl L2Run<'_, '_> {
    pub(super) async fn streaming_progress(&mut self) -> Result<(), EngineError> {
        let rule = &STREAMING_PROGRESS;
        if !self.gate(rule, "streaming").await? {
            return Ok(());
        }
        let mut check = Check::new(rule);
        let token = json!(PROGRESS_TOKEN);
        let params = json!({"query": self.query(), "k": 3, "_meta": {"progressToken": token}});
        let id = self.conv.client.next_id();
        let streamed = self
            .conv
            .client
            .call_stream(id.clone(), "retrieve", params)
            .await;
        let streamed = match streamed {
            Ok(s) => s,
            Err(failure) => {
                check.keep(failure.exchange.clone());
                let words = format!("got no answer ({})", failure.error);
                let _ = self.conv.sent(rule, Err(failure))?;
                let finding = check.finding(
                    rule.on_failure,
                    format!("`retrieve` with a progressToken, asking for an event stream, {words} (§9, §5.2)"),
                );
                return self.conv.emit(finding).await;
            }
        };
        check.keep(streamed.reply.exchange.clone());
        let mut problems = streamed.problems.clone();
        let http = self.conv.client.is_http();
        if http && !streamed.event_stream {
            problems.push(
                "asked for an event stream (`Accept: text/event-stream`, with a progressToken), the server answered \
                 one buffered response: it advertises `streaming` but did not stream"
                    .to_owned(),
            );
        }
        let progress: Vec<&Value> = streamed
            .notifications
            .iter()
            .filter(|n| n.get("method").and_then(Value::as_str) == Some("notifications/progress"))
            .collect();
        if progress.is_empty() && (!http || streamed.event_stream) {
            problems.push(format!(
                "no `notifications/progress` arrived before the reply to a `retrieve` carrying progressToken \
                 \"{PROGRESS_TOKEN}\"{}",
                if http { " in the event stream" } else { " on stdout" }
            ));
        }
        for frame in &progress {
            let params = frame.get("params").unwrap_or(&Value::Null);
            match params.get("progressToken") {
                Some(got) if same_id(&token, got) => {}
                other => problems.push(format!(
                    "a progress frame carried progressToken {} instead of \"{PROGRESS_TOKEN}\"; it MUST be echoed verbatim",
                    show(other.unwrap_or(&Value::Null))
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
        }
        problems.extend(final_reply_problems(&streamed.reply, &id));
        let finding = check.verdict(
            &problems,
            format!(
                "{} progress frame(s) echoing the token preceded the final response{}",
                progress.len(),
                if http { " in an event stream" } else { "" }
            ),
            "with `_meta.progressToken` and `streaming` advertised, progress frames echo the token and precede exactly \
             one final response, which stays authoritative (§9, §5.2)",
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
                    "not verifiable over HTTP: a `notifications/log` can reach an HTTP client only inside an event \
                     stream, and `streaming` is not advertised (spec §5.2, §17.1)",
                )
                .await;
        }
        let levels = self.init.advertised_list("log", "levels");
        let mut check = Check::new(rule);
        let params = json!({"query": self.query(), "k": 2, "_meta": {"logLevel": "debug"}});
        let id = self.conv.client.next_id();
        let streamed = match self
            .conv
            .client
            .call_stream(id.clone(), "retrieve", params)
            .await
        {
            Ok(s) => s,
            Err(failure) => {
                check.keep(failure.exchange.clone());
                let words = format!("got no answer ({})", failure.error);
                let _ = self.conv.sent(rule, Err(failure))?;
                let finding = check.finding(
                    rule.on_failure,
                    format!("`retrieve` with `_meta.logLevel` \"debug\" {words} (§17.1)"),
                );
                return self.conv.emit(finding).await;
            }
        };
        check.keep(streamed.reply.exchange.clone());
        let logs: Vec<&Value> = streamed
            .notifications
            .iter()
            .filter(|n| n.get("method").and_then(Value::as_str) == Some("notifications/log"))
            .collect();
        let mut problems = streamed.problems.clone();
        if logs.is_empty() {
            problems.push(format!(
                "a `retrieve` with `_meta.logLevel` \"debug\" brought no `notifications/log`{}; the server advertises \
                 `log`",
                if http { " in its event stream" } else { " on stdout" }
            ));
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
        problems.extend(final_reply_problems(&streamed.reply, &id));
        let finding = check.verdict(
            &problems,
            format!("{} well-formed `notifications/log` arrived for a request that opted in", logs.len()),
            "a server advertising `log` sends `notifications/log` `{level, message}` to a client that opted in \
             (§17.1, §14.3)",
        );
        self.conv.emit(finding).await
    }
}

/// The final frame of a stream must be the success reply to the request.
fn final_reply_problems(reply: &Reply, id: &Value) -> Vec<String> {
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
            if let Err(problem) = hit_essentials(result) {
                problems.push(format!("the final response: {problem}"));
            }
        }
        None => problems.push(format!("the final response is {}", reply.describe())),
    }
    problems
}
