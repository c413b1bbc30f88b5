//! UTL — utilities (basic/utilities): `ping`, cancellation, progress.

use super::lif::judge_unanswered;
use super::rule::{Mcp25Rule, spec};
use super::session::{Judgement, Session};
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
.says("the receiver of a ping replies promptly with an empty result");

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
);

pub(crate) const RULES: &[Mcp25Rule] = &[PING, LATE_CANCEL];

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
            Some(_) if took > PROMPT => {
                bad.push(format!("{form} took {} ms to answer", took.as_millis()))
            }
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
    let id = json!(s.client.next_id());
    let first = s.main.request_with_id(id.clone(), "ping", json!({})).await;
    if first.result().is_none() {
        return Judgement::skip(format!(
            "not verified: `ping` was answered {}",
            first.describe()
        ))
        .reply(&first);
    }
    let cancel = s
        .main
        .notify(
            "notifications/cancelled",
            json!({"requestId": id, "reason": "protocheck: cancelled after its response"}),
        )
        .await;
    let after = s.main.request("ping", json!({})).await;
    let j = judge_unanswered(&cancel, "`notifications/cancelled` for an answered `ping`");
    if after.result().is_none() {
        return Judgement::fail(format!(
            "after a cancellation of an answered `ping`, the next `ping` was answered {}",
            after.describe()
        ))
        .reply(&first)
        .reply(&cancel)
        .reply(&after);
    }
    j.reply(&first).reply(&after)
}
