//! UTL — utilities (basic/utilities): `ping`, cancellation, progress.

use super::client::{Awaiting, Connection, Progress, Reply, Transport, scope_refused};
use super::lif::judge_unanswered;
use super::rule::{Mcp25Rule, spec};
use super::session::{Judgement, Kind, Serving, Session, needs_task, serving};
use crate::suite::Outcome;
use crate::suite::mcp::Keyword;
use crate::suite::mcp::client::clip;
use futures::FutureExt;
use serde_json::{Value, json};
use std::time::Duration;

/// How soon a `ping` is answered to count as prompt.
const PROMPT: Duration = Duration::from_secs(5);

pub(crate) const PING: Mcp25Rule = Mcp25Rule::new(
    "MCP25-UTL-001",
    "ping is answered promptly with an empty result",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/utilities/ping#behavior-requirements"),
    "UTL",
    |s| ping(s).boxed(),
)
.says("the receiver of a ping replies promptly with an empty result")
.help(
    "protocheck sends `ping` on the run's connection twice, once without `params` and once with \
     `params: {}`, and checks that each gets an empty result (`{}`, or only `_meta`) within 5 s, \
     or eight times the run's slower answers when that is longer (at most the request timeout).",
    "The server answers `ping` with an error (not implemented, or `params` required), returns a \
     result that is not empty such as `{\"status\": \"ok\"}`, or takes longer than that, usually because \
     `ping` waits behind slow work.",
    "Handle `ping` with or without `params` and answer it at once with `{}`, on a path that does \
     not wait for other requests or for work the server has in progress.",
);

pub(crate) const LATE_CANCEL: Mcp25Rule = Mcp25Rule::new(
    "MCP25-UTL-002",
    "A cancellation for a request already answered is ignored",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/utilities/cancellation#timing-considerations"),
    "UTL",
    |s| late_cancel(s).boxed(),
)
.says(
    "both parties cope with a cancellation that arrives after the response; an invalid \
     cancellation is ignored",
)
.help(
    "On an initialized connection of its own, protocheck sends `ping`, then a \
     `notifications/cancelled` naming that already answered `ping`, then another `ping`. The \
     cancellation must get no JSON-RPC response, and the second `ping` must be answered as the \
     first was.",
    "The server answers the late cancellation with an error, or stops serving after it (ends the \
     session, or crashes on a cancellation for a request it no longer tracks).",
    "Ignore `notifications/cancelled` for a request id that is unknown or already finished: send \
     nothing back, do not end the session, and keep serving the requests that follow.",
);

pub(crate) const KNOWN_TOKENS: Mcp25Rule = Mcp25Rule::new(
    "MCP25-UTL-004",
    "Progress notifications name only progress tokens protocheck sent",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/utilities/progress#behavior-requirements"),
    "UTL",
    |s| known_tokens(s).boxed(),
)
.says("progress notifications only reference tokens that were given in an active request")
.help(
    "After every other rule and the passive probe (which sends progress tokens on a `ping` and on \
     up to three read-only tool calls), protocheck compares the `progressToken` of every \
     `notifications/progress` of the run with the tokens it sent, JSON type included.",
    "The server sends progress with a token it made up, changes the token's type (a number for a \
     string), or reports progress for a request that carried no token.",
    "Send `notifications/progress` only when the request carried `params._meta.progressToken`, \
     and echo that token exactly as it was sent, as a string or a number as it came.",
)
.run_wide();

pub(crate) const INCREASING: Mcp25Rule = Mcp25Rule::new(
    "MCP25-UTL-005",
    "For one token, progress strictly increases",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/utilities/progress#progress-flow"),
    "UTL",
    |s| increasing(s).boxed(),
)
.says("the progress value increases with each notification, even when the total is unknown")
.help(
    "After every other rule and the passive probe, protocheck groups the run's \
     `notifications/progress` by the tokens it sent and, for each token with two or more, checks \
     that every `progress` value is a number greater than the one before. MCP25-UTL-003 cancels \
     its call only after the second progress notification, so a tool that reports progress more \
     than once always gives a token two values to compare, whatever the run's pace.",
    "Progress repeats a value, goes down, restarts at 0 for a new phase, or is sent as a string, \
     usually because several workers report independently or the counter is kept per step.",
    "Keep one increasing counter per request and send strictly increasing `progress` values; when \
     nothing advanced, send no notification rather than the same value again.",
)
.run_wide();

pub(crate) const NONE_AFTER: Mcp25Rule = Mcp25Rule::new(
    "MCP25-UTL-006",
    "No progress notification for a token after its request was answered",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/utilities/progress#implementation-notes"),
    "UTL",
    |s| none_after(s).boxed(),
)
.says("progress notifications stop once the operation they report on has completed")
.help(
    "In the passive probe protocheck sends a `ping` and up to three read-only tool calls with \
     progress tokens and, after each answer, reads on: the rest of the SSE stream until it ends \
     (1 s at most), or stdout up to the reply to a `ping` sent after the answer and a short while \
     past it (a multiple of the run's round trips, 0.2 to 1 s). After every other rule, progress for an answered request that came after its answer \
     fails.",
    "The server keeps emitting progress after the response, usually from a background task or \
     reporter that is not stopped when the handler returns, or from notifications queued and \
     flushed late.",
    "Stop the progress reporter, and flush what it queued, before the response is sent, so that \
     no progress for a token follows its request's response.",
)
.run_wide();

pub(crate) const CANCELLED: Mcp25Rule = Mcp25Rule::new(
    "MCP25-UTL-003",
    "A request cancelled while in progress gets no response afterwards",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/utilities/cancellation#behavior-requirements"),
    "UTL",
    |s| cancelled(s).boxed(),
)
.says(
    "on a cancellation the receiver should stop processing the request, free its resources and \
     not send a response for it",
)
.help(
    "protocheck calls up to three tools it may call (annotated `readOnlyHint: true`, or any when \
     the run allows tool calls; none that requires a task), those needing no argument first, with \
     empty arguments and a progress token. Once two progress notifications came, it sends \
     `notifications/cancelled` and watches 3 s (over HTTP until the request's SSE stream ends, if \
     sooner); an answer over 1 s later is a warning.",
    "The server finishes the cancelled call and sends its response anyway, usually because the \
     handler never observes the cancellation (abort signal, cancellation token) or the response \
     path does not check it.",
    "Tie each request to a cancellation signal, stop the work when `notifications/cancelled` \
     names it, and drop the response instead of sending it; most SDKs hand tool handlers an abort \
     signal for this.",
)
.needs_capability("tools");

pub(crate) const RULES: &[Mcp25Rule] = &[
    PING,
    LATE_CANCEL,
    CANCELLED,
    KNOWN_TOKENS,
    INCREASING,
    NONE_AFTER,
];

/// How long protocheck watches for an answer after cancelling a request
/// (over HTTP the end of the request's SSE stream ends it sooner). It stays
/// a fixed window: a server that ignores the cancellation answers when its
/// work ends, which nothing in the protocol announces, and a barrier `ping`
/// only proves that the cancellation was read, not that the work stopped
/// (a panel server that ignores it answers about 1.8 s later, and the
/// reference server's fault about 2 s later).
const CANCEL_WATCH: Duration = Duration::from_secs(3);
/// An answer this soon after the cancellation may have crossed it (the
/// race the cancellation page allows). A threshold of the verdict, not a
/// wait.
const CANCEL_RACE: Duration = Duration::from_secs(1);
/// Most tools tried for one that reports progress.
const MAX_CANCEL_TRIES: usize = 3;

/// Whether a `ping` result is empty: `{}`, or only a `_meta` member.
fn is_empty_result(result: &Value) -> bool {
    result
        .as_object()
        .is_some_and(|obj| obj.keys().all(|k| k == "_meta"))
}

async fn ping(s: &Session) -> Judgement {
    let mut bad = Vec::new();
    let mut replies = Vec::new();
    for params in [None, Some(json!({}))] {
        let started = std::time::Instant::now();
        let reply = match &params {
            Some(p) => s.main.request("ping", p.clone()).await,
            None => {
                let id = json!(s.client.next_id());
                s.main.request_with_id_no_params(id, "ping").await
            }
        };
        let took = started.elapsed();
        let form = if params.is_some() {
            "`ping` with params {}"
        } else {
            "`ping` without params"
        };
        match reply.result() {
            Some(result) if !is_empty_result(result) => bad.push(format!(
                "{form} was answered with a result that is not empty: {}",
                clip(&result.to_string(), 120)
            )),
            // "Promptly" is read against the run's own pace: at least
            // PROMPT, and up to eight times what the server's slower answers
            // took (at most the request timeout), so that a loaded machine,
            // which slows every answer alike, fails no ping.
            Some(_) if took > s.client.window(PROMPT, s.client.timeout()) => bad.push(format!(
                "{form} took {} ms to answer, beyond {} ms (at least {} s, and eight times the \
                 run's slower answers)",
                took.as_millis(),
                s.client.window(PROMPT, s.client.timeout()).as_millis(),
                PROMPT.as_secs()
            )),
            Some(_) => {}
            None => bad.push(format!("{form} was answered {}", reply.describe())),
        }
        replies.push(reply);
    }
    let j = if bad.is_empty() {
        Judgement::pass("`ping` with and without params was answered promptly with {}")
    } else {
        Judgement::fail(bad.join("; "))
    };
    replies.iter().fold(j, Judgement::reply)
}

async fn late_cancel(s: &Session) -> Judgement {
    // The cancellation may end the session (or the server): on a connection
    // of the rule's own, so that no other rule meets the damage.
    let conn = match s.initialized_connection().await {
        Ok(conn) => conn,
        Err(j) => return j,
    };
    let j = late_cancel_on(s, &conn).await;
    conn.close().await;
    j
}

async fn late_cancel_on(s: &Session, conn: &Connection) -> Judgement {
    let id = json!(s.client.next_id());
    let first = conn.request_with_id(id.clone(), "ping", json!({})).await;
    // A request answered with an error is as finished as one answered with
    // a result: either shows the server serves, and a broken `ping` is
    // MCP25-UTL-001's matter.
    if first.message.is_none() {
        return Judgement::skip(format!(
            "not verified: `ping` was answered {}",
            first.describe()
        ))
        .reply(&first);
    }
    let cancel = conn
        .notify(
            "notifications/cancelled",
            json!({"requestId": id, "reason": "protocheck: cancelled after its response"}),
        )
        .await;
    let next = json!(s.client.next_id());
    let frame = json!({"jsonrpc": "2.0", "id": next, "method": "ping", "params": {}});
    // Not a conforming request of the run's log: what a server that ended
    // the session answers is judged here only.
    let after = conn
        .send_frame("ping", frame.to_string(), Awaiting::Id(next))
        .await;
    let what = "`notifications/cancelled` for an answered `ping`";
    let j = judge_unanswered(&cancel, what);
    if j.kind == Kind::Fail {
        return j.reply(&first).reply(&after);
    }
    match serving(&first, &after) {
        Serving::Yes if j.kind == Kind::Pass => Judgement::pass(format!(
            "{what} got no response and the server kept serving: the next `ping` was answered {}",
            after.describe()
        ))
        .reply(&first)
        .reply(&cancel)
        .reply(&after),
        Serving::Yes => j.reply(&first).reply(&after),
        Serving::No(why) => Judgement::fail(format!(
            "after {what}, the server stopped serving: {why}; the cancellation must be ignored"
        ))
        .reply(&first)
        .reply(&cancel)
        .reply(&after),
        Serving::Unknown(why) => Judgement::skip(format!(
            "not verified: whether the server kept serving after {what}: {why}"
        ))
        .reply(&first)
        .reply(&after),
    }
}

fn token_of(progress: &Progress) -> Option<&Value> {
    progress.notification.pointer("/params/progressToken")
}

fn describe_token(token: Option<&Value>) -> String {
    token.map_or("(none)".to_owned(), |t| clip(&t.to_string(), 60))
}

/// A judgement of a progress rule, given the requests of the passive probe
/// (a `ping` and tool calls, each with a progress token): those the token's
/// scope refused (403 `insufficient_scope`) sent nothing the rule could read,
/// so a judgement on the rest names them (`; not judged: the token lacks the
/// scope for …`), and a skip is "not verified" for them, in the words the
/// verdict reads (it names the rules so left unjudged).
fn noting_refusals(j: Judgement, calls: &[Reply]) -> Judgement {
    let Some(refused) = scope_refused(calls) else {
        return j;
    };
    let message = if j.kind == Kind::Skip {
        let rest = j
            .message
            .strip_prefix("not applicable: ")
            .or_else(|| j.message.strip_prefix("not verified: "))
            .unwrap_or(&j.message);
        format!("not verified: {refused}; of the requests answered: {rest}")
    } else {
        format!("{}; not judged: {refused}", j.message)
    };
    Judgement { message, ..j }
}

async fn known_tokens(s: &Session) -> Judgement {
    let calls = s.passive_probe().await;
    noting_refusals(known_tokens_of(s), calls)
}

fn known_tokens_of(s: &Session) -> Judgement {
    let progress = s.client.progress();
    if progress.is_empty() {
        return Judgement::skip("not applicable: the server sent no progress notification");
    }
    let sent: Vec<Value> = s.client.tokens().into_iter().map(|(t, _)| t).collect();
    let unknown: Vec<&Progress> = progress
        .iter()
        .filter(|p| !token_of(p).is_some_and(|t| sent.contains(t)))
        .collect();
    if unknown.is_empty() {
        return Judgement::pass(format!(
            "all {} progress notifications named a token protocheck sent",
            progress.len()
        ))
        .with(&progress[0].exchange);
    }
    let named: Vec<String> = unknown
        .iter()
        .map(|p| describe_token(token_of(p)))
        .collect();
    let mut j = Judgement::fail(format!(
        "progress notifications named tokens protocheck never sent (the same JSON type \
         counts): {}",
        named.join(", ")
    ));
    for p in unknown {
        j = j.with(&p.exchange);
    }
    j
}

/// The `progress` value of a notification, when it is a number.
fn value_of(progress: &Progress) -> Option<f64> {
    progress
        .notification
        .pointer("/params/progress")
        .and_then(Value::as_f64)
}

async fn increasing(s: &Session) -> Judgement {
    let calls = s.passive_probe().await;
    noting_refusals(increasing_of(s), calls)
}

fn increasing_of(s: &Session) -> Judgement {
    let progress = s.client.progress();
    // Only the tokens protocheck sent: progress naming another is
    // MCP25-UTL-004's matter.
    let sent: Vec<Value> = s.client.tokens().into_iter().map(|(t, _)| t).collect();
    let mut by_token: Vec<(Value, Vec<&Progress>)> = Vec::new();
    for p in &progress {
        let Some(token) = token_of(p).filter(|t| sent.contains(t)).cloned() else {
            continue;
        };
        match by_token.iter_mut().find(|(t, _)| *t == token) {
            Some((_, list)) => list.push(p),
            None => by_token.push((token, vec![p])),
        }
    }
    let judged: Vec<&(Value, Vec<&Progress>)> = by_token
        .iter()
        .filter(|(_, list)| list.len() >= 2)
        .collect();
    if judged.is_empty()
        && progress
            .iter()
            .any(|p| !token_of(p).is_some_and(|t| sent.contains(t)))
    {
        return Judgement::skip(
            "not verified: the server's progress named tokens protocheck never sent (MCP25-UTL-004 \
             judges that), and no token protocheck sent got two or more progress notifications",
        );
    }
    if judged.is_empty() {
        return Judgement::skip(
            "not applicable: no progress token protocheck sent got two or more progress \
             notifications",
        );
    }
    for (token, list) in &judged {
        let values: Vec<Option<f64>> = list.iter().map(|p| value_of(p)).collect();
        let bad = values
            .windows(2)
            .position(|w| !matches!((w[0], w[1]), (Some(a), Some(b)) if b > a));
        if let Some(at) = bad {
            let shown: Vec<String> = values
                .iter()
                .map(|v| v.map_or("(not a number)".to_owned(), |v| v.to_string()))
                .collect();
            return Judgement::fail(format!(
                "for token {}, progress went {}: it does not increase at notification {}",
                describe_token(Some(token)),
                shown.join(" → "),
                at + 2
            ))
            .with(&list[at].exchange)
            .with(&list[at + 1].exchange);
        }
    }
    Judgement::pass(format!(
        "progress increased for each of {} tokens with several notifications",
        judged.len()
    ))
    .with(&judged[0].1[0].exchange)
}

async fn none_after(s: &Session) -> Judgement {
    // The requests with a progress token of the run, each answer followed
    // by a read of what came after it.
    let calls = s.passive_probe().await;
    noting_refusals(none_after_of(s, calls).await, calls)
}

async fn none_after_of(s: &Session, calls: &[Reply]) -> Judgement {
    let Some(probe) = calls.first() else {
        return Judgement::skip("not verified: no request with a progress token was sent");
    };
    let answered: Vec<Value> = s
        .client
        .tokens()
        .into_iter()
        .filter_map(|(t, answered)| answered.then_some(t))
        .collect();
    if answered.is_empty() {
        return Judgement::skip(
            "not verified: no request that carried a progress token was answered",
        )
        .reply(probe);
    }
    let late: Vec<Progress> = s
        .client
        .progress()
        .into_iter()
        .filter(|p| {
            token_of(p).is_some_and(|t| answered.contains(t)) && p.during.as_ref() != token_of(p)
        })
        .collect();
    if late.is_empty() {
        let after = s.after_window().await.as_millis();
        return Judgement::pass(format!(
            "no progress notification came after the answer to its request ({} requests with a \
             progress token; after each of {} answers, {})",
            answered.len(),
            calls.len(),
            match s.transport() {
                Transport::Stdio => format!(
                    "stdout was read up to the reply to a `ping` sent after it and {after} ms past \
                     that reply"
                ),
                Transport::Http => format!(
                    "the rest of its SSE stream was read until it ended, {after} ms at most"
                ),
            },
        ))
        .reply(probe);
    }
    let named: Vec<String> = late.iter().map(|p| describe_token(token_of(p))).collect();
    let mut j = Judgement::fail(format!(
        "progress for token {} came after its request was answered",
        named.join(", ")
    ));
    for p in &late {
        j = j.with(&p.exchange);
    }
    j
}

/// Whether `tool`'s input schema requires no argument (so `{}` is valid).
fn needs_no_arguments(tool: &Value) -> bool {
    tool.pointer("/inputSchema/required")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
}

async fn cancelled(s: &Session) -> Judgement {
    let (tools, _) = match s.list_tools().await {
        Ok(listed) => listed,
        Err(skip) => return skip,
    };
    // Tools a task must run are not called plainly (MCP25-TSK-005 judges that).
    let mut callable: Vec<&Value> = tools
        .iter()
        .filter(|t| s.may_call(t) && !needs_task(t))
        .collect();
    if callable.is_empty() {
        return Judgement::skip(
            "not applicable: tool calls are not allowed and no tool is annotated \
             `readOnlyHint: true`",
        );
    }
    callable.sort_by_key(|t| !needs_no_arguments(t));
    let mut tried = Vec::new();
    let mut replies = Vec::new();
    for tool in callable.into_iter().take(MAX_CANCEL_TRIES) {
        let name = tool.get("name").cloned().unwrap_or(Value::Null);
        let shown = clip(&name.to_string(), 60);
        let token = json!(format!("pc-cancel-{}", s.client.next_id()));
        let params = json!({"name": name, "arguments": {}, "_meta": {"progressToken": token}});
        let probe = s
            .main
            .request_then_cancel("tools/call", params, CANCEL_WATCH)
            .await;
        if !probe.cancelled {
            tried.push(shown);
            replies.push(probe.reply);
            continue;
        }
        let j = match probe.answered_after {
            Some(after) if after > CANCEL_RACE => Judgement::fail(format!(
                "`tools/call` of {shown} sent progress, was cancelled with \
                 `notifications/cancelled`, and was still answered {} ms later",
                after.as_millis()
            )),
            Some(after) => Judgement::pass(format!(
                "`tools/call` of {shown} was answered {} ms after its cancellation: within {} s, \
                 the answer may have crossed the cancellation (a race the spec allows)",
                after.as_millis(),
                CANCEL_RACE.as_secs()
            )),
            None => match probe.ended_after {
                Some(ended) => Judgement::pass(format!(
                    "`tools/call` of {shown} sent progress, was cancelled, and got no answer: its \
                     SSE stream ended {} ms after the cancellation",
                    ended.as_millis()
                )),
                None => Judgement::pass(format!(
                    "`tools/call` of {shown} sent progress, was cancelled, and got no answer in \
                     the {} s watched after the cancellation",
                    CANCEL_WATCH.as_secs()
                )),
            },
        };
        return j.reply(&probe.reply);
    }
    // Calls the token's scope refused could not show progress: the rule is
    // not verified for them, not inapplicable.
    let answered: Vec<&String> = tried
        .iter()
        .zip(&replies)
        .filter(|(_, r)| r.scope_refusal().is_none())
        .map(|(name, _)| name)
        .collect();
    let message = match scope_refused(&replies) {
        Some(refused) if answered.is_empty() => format!("not verified: {refused}"),
        Some(refused) => format!(
            "not verified: {refused}; no other tool tried sent two progress notifications \
             before its answer ({})",
            answered
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => format!(
            "not applicable: no tool tried sent two progress notifications before its answer \
             ({}), so no call could be cancelled while proven in progress",
            tried.join(", ")
        ),
    };
    replies
        .iter()
        .fold(Judgement::skip(message), Judgement::reply)
}
