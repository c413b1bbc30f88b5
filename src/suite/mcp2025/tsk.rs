//! TSK — tasks (basic/utilities/tasks, experimental in 2025-11-25). Only
//! what a client provokes without creating a task is judged (digest §11):
//! unknown task ids and cursors, the shape of `tasks/list`, a required-task
//! tool called plainly, and the metadata of results that name their task.

use super::client::Reply;
use super::rule::{Mcp25Rule, spec};
use super::session::{self, Judgement, Session, needs_task};
use crate::suite::Outcome;
use crate::suite::mcp::Keyword;
use crate::suite::mcp::client::clip;
use futures::FutureExt;
use serde_json::{Value, json};

/// The metadata key naming the task a message belongs to.
const RELATED: &str = "io.modelcontextprotocol/related-task";
/// The task statuses of the schema (`TaskStatus`).
const STATUSES: &[&str] = &[
    "working",
    "input_required",
    "completed",
    "failed",
    "cancelled",
];

pub(crate) const UNKNOWN_TASK: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TSK-001",
    "`tasks/get` and `tasks/result` for a nonexistent task id get error -32602",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/utilities/tasks#protocol-errors"),
    "TSK",
    |s| unknown_task(s).boxed(),
)
.says(
    "a request naming a task id that is unknown or invalid is refused with -32602 (Invalid params)",
)
.help(
    "protocheck sends `tasks/get` and `tasks/result`, each for a made-up task id \
     (`protocheck-missing-` and random hex), with a `taskId` that is a number, and with no \
     `taskId`, and expects error -32602 from all six.",
    "The server answers -32601 (a method not implemented), -32603 or another code, or a result \
     such as a `null` task, usually because a missing task is not told apart from an internal \
     error.",
    "Look the task up first and answer an unknown task id with `{\"code\": -32602, \"message\": \
     \"Unknown task: …\"}`, in `tasks/get`, `tasks/result` and the other task methods.",
)
.needs_capability("tasks");

pub(crate) const CANCEL_UNKNOWN: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TSK-002",
    "`tasks/cancel` for a nonexistent task id gets -32602",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/utilities/tasks#protocol-errors"),
    "TSK",
    |s| cancel_unknown(s).boxed(),
)
.says("cancelling a task id that is unknown is refused with -32602 (Invalid params)")
.help(
    "When the `tasks` capability declares `cancel`, protocheck sends `tasks/cancel` for a made-up \
     task id (`protocheck-missing-` and random hex) and expects error -32602.",
    "The server answers with a result, treating the cancellation as done, or with -32601 or \
     -32603, usually because cancelling does nothing for ids it does not know.",
    "Look the task up before cancelling it, and answer `tasks/cancel` of an unknown task id with \
     error -32602 (Invalid params); answer with a result only for tasks that exist.",
)
.needs_capability("tasks");

pub(crate) const LIST_SHAPE: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TSK-003",
    "`tasks/list` returns a `tasks` array whose items have string `taskId`, a valid `status`, \
     ISO 8601 `createdAt` and `lastUpdatedAt`, and `ttl` (number or null)",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/utilities/tasks#ttl-and-resource-management"),
    "TSK",
    |s| list_shape(s).boxed(),
)
.says(
    "every task in a response carries its id, status, creation and last-update timestamps and \
     its ttl",
)
.help(
    "When the `tasks` capability declares `list`, protocheck walks every page of `tasks/list` \
     (following `nextCursor`, at most 20 pages) and checks each `tasks` array: each task has a string `taskId`, a `status` among working, input_required, \
     completed, failed and cancelled, ISO 8601 `createdAt` and `lastUpdatedAt`, and a `ttl` that \
     is a number or null.",
    "`tasks/list` is not implemented although declared, a task lacks `lastUpdatedAt` or `ttl`, \
     timestamps are epoch numbers or lack a time zone, or `status` uses another word such as \
     `running`.",
    "Keep each task's id, status, creation and last-update times as RFC 3339 strings with a zone \
     (`2025-11-25T10:30:00Z`) and its `ttl` (null for unlimited), and return them in \
     `tasks/list`.",
)
.needs_capability("tasks");

pub(crate) const LIST_CURSOR: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TSK-004",
    "`tasks/list` with an invalid cursor gets -32602",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/utilities/tasks#protocol-errors"),
    "TSK",
    |s| list_cursor(s).boxed(),
)
.says("an invalid or unknown cursor for the task list is refused with -32602 (Invalid params)")
.help(
    "When the `tasks` capability declares `list`, protocheck sends `tasks/list` with the cursor \
     `protocheck-invalid-cursor` and expects error -32602.",
    "The server ignores the cursor and returns the first page, or answers -32603, usually because \
     cursor decoding falls back to the start of the list.",
    "Validate the cursor before using it, and answer a cursor the server did not issue, or cannot \
     decode, with error -32602 (Invalid params) rather than the first page.",
)
.needs_capability("tasks");

pub(crate) const REQUIRED_TASK: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TSK-005",
    "Calling a tool whose `execution.taskSupport` is \"required\" without task augmentation \
     gets -32601",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/utilities/tasks#tool-level-negotiation"),
    "TSK",
    |s| required_task(s).boxed(),
)
.says(
    "a tool that requires a task, called as a plain request, is refused with -32601 (Method not \
     found); the error section also allows -32600",
)
.help(
    "Among listed tools whose `execution.taskSupport` is `required`, protocheck takes the first \
     it may call and sends a plain `tools/call`, without task augmentation, with empty arguments; \
     it expects -32601, and -32600 passes too.",
    "The server runs the tool synchronously and returns a result, or answers -32602 or -32603, \
     usually because the call path does not check the tool's task support before running it.",
    "Before running a tool whose `taskSupport` is `required`, check that the request asks for a \
     task; answer a plain call with error -32601 (Method not found).",
)
.needs_capability("tasks");

pub(crate) const NO_RELATED_META: Mcp25Rule = Mcp25Rule::new(
    "MCP25-TSK-006",
    "`tasks/list` and `tasks/get` results carry no `io.modelcontextprotocol/related-task` in \
     their `_meta`",
    Keyword::ShouldNot,
    Outcome::Warn,
    spec!("/basic/utilities/tasks#associating-task-related-messages"),
    "TSK",
    |s| no_related_meta(s).boxed(),
)
.says(
    "results of tasks/get, tasks/list and tasks/cancel already name their task, so they should \
     not carry the related-task metadata",
)
.help(
    "When the `tasks` capability declares `list`, protocheck sends `tasks/list` and, when a task \
     is listed, `tasks/get` for the first one, and checks that neither result's `_meta` holds \
     `io.modelcontextprotocol/related-task`.",
    "The server attaches related-task metadata to every task-related message, including the \
     results of task methods that already name their task, usually through a shared response \
     wrapper.",
    "Leave `io.modelcontextprotocol/related-task` out of the `_meta` of `tasks/get`, `tasks/list` \
     and `tasks/cancel` results; keep it for messages that would not otherwise say which task \
     they belong to.",
)
.needs_capability("tasks");

pub(crate) const RULES: &[Mcp25Rule] = &[
    UNKNOWN_TASK,
    CANCEL_UNKNOWN,
    LIST_SHAPE,
    LIST_CURSOR,
    REQUIRED_TASK,
    NO_RELATED_META,
];

/// Whether the server's `tasks` capability declares `name` (`list`, `cancel`).
fn declares(s: &Session, name: &str) -> bool {
    s.capabilities()
        .pointer(&format!("/tasks/{name}"))
        .is_some_and(|v| !v.is_null())
}

fn missing_id() -> String {
    format!("protocheck-missing-{:016x}", rand::random::<u64>())
}

/// `None` when `reply` is the -32602 the rules want, else what it was.
fn not_invalid_params(reply: &Reply) -> Option<String> {
    match reply.error_code() {
        Some(-32602) => None,
        Some(code) => Some(format!(
            "got error {code}, not -32602 (the code is named by a MUST)"
        )),
        None if reply.result().is_some() => Some(format!(
            "got a result, not error -32602: {}",
            clip(
                &reply.result().map(Value::to_string).unwrap_or_default(),
                160
            )
        )),
        None => Some(format!("was answered {}", reply.describe())),
    }
}

async fn unknown_task(s: &Session) -> Judgement {
    let id = missing_id();
    // A nonexistent id, and invalid ones: a number, and none at all.
    let forms = [
        (json!({"taskId": id}), format!("the unknown task `{id}`")),
        (
            json!({"taskId": 42}),
            "a `taskId` that is a number".to_owned(),
        ),
        (json!({}), "no `taskId`".to_owned()),
    ];
    let sends = ["tasks/get", "tasks/result"]
        .into_iter()
        .flat_map(|method| {
            forms.iter().map(move |(params, what)| async move {
                let reply = s.main.request(method, params.clone()).await;
                (method, what, reply)
            })
        });
    let answered = futures::future::join_all(sends).await;
    let mut bad = Vec::new();
    let mut replies = Vec::new();
    for (method, what, reply) in answered {
        if let Some(how) = not_invalid_params(&reply) {
            bad.push(format!("`{method}` for {what} {how}"));
        }
        replies.push(reply);
    }
    let j = if bad.is_empty() {
        Judgement::pass(format!(
            "`tasks/get` and `tasks/result` each got -32602 for the unknown task `{id}`, for a \
             numeric `taskId` and for none"
        ))
    } else {
        Judgement::fail(bad.join("; "))
    };
    replies.iter().fold(j, Judgement::reply)
}

async fn cancel_unknown(s: &Session) -> Judgement {
    if !declares(s, "cancel") {
        return Judgement::skip("not applicable: the `tasks` capability does not declare `cancel`");
    }
    let id = missing_id();
    let reply = s.main.request("tasks/cancel", json!({"taskId": id})).await;
    match not_invalid_params(&reply) {
        None => Judgement::pass(format!(
            "`tasks/cancel` of the unknown task `{id}` got -32602"
        )),
        Some(what) => Judgement::fail(format!("`tasks/cancel` of the unknown task `{id}` {what}")),
    }
    .reply(&reply)
}

/// Whether `text` is an ISO 8601 date-time as RFC 3339 profiles it
/// (`2025-11-25T10:30:00Z`, fractions and offsets allowed).
fn is_iso8601(text: &str) -> bool {
    let b = text.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    if !(digits(0..4)
        && at(4, b'-')
        && digits(5..7)
        && at(7, b'-')
        && digits(8..10)
        && matches!(b.get(10), Some(b'T' | b't'))
        && digits(11..13)
        && at(13, b':')
        && digits(14..16)
        && at(16, b':')
        && digits(17..19))
    {
        return false;
    }
    let mut i = 19;
    if at(i, b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match b.get(i) {
        Some(b'Z' | b'z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            digits(i + 1..i + 3) && at(i + 3, b':') && digits(i + 4..i + 6) && i + 6 == b.len()
        }
        _ => false,
    }
}

/// What is wrong with one task object, if anything.
fn task_problems(task: &Value) -> Vec<String> {
    let mut bad = Vec::new();
    let Some(obj) = task.as_object() else {
        return vec!["is not an object".to_owned()];
    };
    if !obj.get("taskId").is_some_and(Value::is_string) {
        bad.push("has no string `taskId`".to_owned());
    }
    match obj.get("status").and_then(Value::as_str) {
        Some(status) if STATUSES.contains(&status) => {}
        Some(status) => bad.push(format!(
            "has `status` {:?}, none of {}",
            clip(status, 40),
            STATUSES.join(", ")
        )),
        None => bad.push("has no string `status`".to_owned()),
    }
    for field in ["createdAt", "lastUpdatedAt"] {
        match obj.get(field) {
            Some(Value::String(t)) if is_iso8601(t) => {}
            Some(other) => bad.push(format!(
                "has `{field}` {}, not an ISO 8601 date-time",
                clip(&other.to_string(), 60)
            )),
            None => bad.push(format!("has no `{field}`")),
        }
    }
    match obj.get("ttl") {
        Some(Value::Number(_) | Value::Null) => {}
        Some(other) => bad.push(format!(
            "has `ttl` {}, neither a number nor null",
            clip(&other.to_string(), 60)
        )),
        None => bad.push("has no `ttl` (the schema requires it; null means unlimited)".to_owned()),
    }
    bad
}

async fn list_shape(s: &Session) -> Judgement {
    if !declares(s, "list") {
        return Judgement::skip("not applicable: the `tasks` capability does not declare `list`");
    }
    // Every page, following `nextCursor`, at most MAX_PAGES of them.
    let mut pages = Vec::new();
    let mut bad = Vec::new();
    let mut count = 0;
    let mut cursor: Option<String> = None;
    let mut stopped = String::new();
    loop {
        let n = pages.len() + 1;
        let params = match &cursor {
            None => json!({}),
            Some(c) => json!({"cursor": c}),
        };
        let reply = s.main.request("tasks/list", params).await;
        let result = reply.result().cloned();
        pages.push(reply);
        let Some(result) = result else {
            let answer = pages.last().map(Reply::describe).unwrap_or_default();
            bad.push(match &cursor {
                None => format!("`tasks/list` was answered {answer}, not with a result"),
                Some(c) => format!(
                    "`tasks/list` page {n}, asked with the server's own `nextCursor` {:?}, was \
                     answered {answer}, not with a result",
                    clip(c, 60)
                ),
            });
            break;
        };
        match result.get("tasks").and_then(Value::as_array) {
            None => bad.push(format!(
                "the `tasks/list` result (page {n}) has no `tasks` array"
            )),
            Some(tasks) => {
                for (i, task) in tasks.iter().enumerate() {
                    count += 1;
                    let problems = task_problems(task);
                    if !problems.is_empty() {
                        let name = task
                            .get("taskId")
                            .and_then(Value::as_str)
                            .map_or_else(|| format!("#{i}"), |t| format!("`{}`", clip(t, 60)));
                        bad.push(format!("task {name} (page {n}) {}", problems.join(", ")));
                    }
                }
            }
        }
        cursor = match result.get("nextCursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) => Some(c.clone()),
            Some(other) => {
                bad.push(format!(
                    "the `tasks/list` result (page {n}) has a `nextCursor` that is not a string: {}",
                    clip(&other.to_string(), 60)
                ));
                None
            }
        };
        if cursor.is_none() {
            break;
        }
        if pages.len() >= session::MAX_PAGES {
            stopped = format!(
                " (protocheck reads at most {} pages; page {} named a further cursor)",
                session::MAX_PAGES,
                pages.len()
            );
            break;
        }
    }
    let j = if bad.is_empty() {
        Judgement::pass(format!(
            "`tasks/list` returned {count} task(s) on {} page(s), each with taskId, status, \
             createdAt, lastUpdatedAt and ttl{stopped}",
            pages.len()
        ))
    } else {
        Judgement::fail(format!("{}{stopped}", bad.join("; ")))
    };
    pages.iter().fold(j, Judgement::reply)
}

async fn list_cursor(s: &Session) -> Judgement {
    if !declares(s, "list") {
        return Judgement::skip("not applicable: the `tasks` capability does not declare `list`");
    }
    let reply = s
        .main
        .request("tasks/list", json!({"cursor": "protocheck-invalid-cursor"}))
        .await;
    match not_invalid_params(&reply) {
        None => Judgement::pass("`tasks/list` with an invalid cursor got -32602"),
        Some(what) => Judgement::fail(format!("`tasks/list` with an invalid cursor {what}")),
    }
    .reply(&reply)
}

async fn required_task(s: &Session) -> Judgement {
    if !s.advertises("tools") {
        return Judgement::skip("not applicable: the server does not advertise `tools`");
    }
    let (tools, _) = match s.list_tools().await {
        Ok(listed) => listed,
        Err(skip) => return skip,
    };
    let required: Vec<&Value> = tools.iter().filter(|t| needs_task(t)).collect();
    if required.is_empty() {
        return Judgement::skip(
            "not applicable: no listed tool has `execution.taskSupport` \"required\"",
        );
    }
    let Some(tool) = required.iter().find(|t| s.may_call(t)) else {
        return Judgement::skip(
            "not applicable: tool calls are not allowed and no tool that requires a task is \
             annotated `readOnlyHint: true`",
        );
    };
    let name = tool.get("name").cloned().unwrap_or(Value::Null);
    let shown = clip(&name.to_string(), 80);
    let reply = s
        .main
        .request("tools/call", json!({"name": name, "arguments": {}}))
        .await;
    match reply.error_code() {
        Some(-32601) => Judgement::pass(format!(
            "the plain `tools/call` of {shown}, which requires a task, got -32601"
        )),
        Some(-32600) => Judgement::pass(format!(
            "the plain `tools/call` of {shown}, which requires a task, got -32600: the \
             error section of the tasks page allows it, although the tool-level negotiation \
             names -32601"
        )),
        Some(code) => Judgement::fail(format!(
            "the plain `tools/call` of {shown}, which requires a task, got error {code}, not \
             -32601 (Method not found)"
        )),
        None if reply.result().is_some() => Judgement::fail(format!(
            "the plain `tools/call` of {shown}, whose `execution.taskSupport` is \"required\", \
             was run and answered with a result; it must be refused with -32601"
        )),
        None => Judgement::fail(format!(
            "the plain `tools/call` of {shown}, which requires a task, was answered {}",
            reply.describe()
        )),
    }
    .reply(&reply)
}

/// Whether a result's `_meta` carries the related-task key.
fn has_related(result: &Value) -> bool {
    result
        .get("_meta")
        .and_then(Value::as_object)
        .is_some_and(|m| m.contains_key(RELATED))
}

async fn no_related_meta(s: &Session) -> Judgement {
    if !declares(s, "list") {
        return Judgement::skip("not applicable: the `tasks` capability does not declare `list`");
    }
    let list = s.main.request("tasks/list", json!({})).await;
    let Some(result) = list.result() else {
        return Judgement::skip(format!(
            "not verified: `tasks/list` was answered {}",
            list.describe()
        ))
        .reply(&list);
    };
    let mut bad = Vec::new();
    if has_related(result) {
        bad.push("the `tasks/list` result".to_owned());
    }
    // A `tasks/get` of the first listed task (reading a task changes nothing).
    let first = result
        .pointer("/tasks/0/taskId")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut j_replies = vec![list.clone()];
    if let Some(task) = &first {
        let get = s.main.request("tasks/get", json!({"taskId": task})).await;
        if get.result().is_some_and(has_related) {
            bad.push(format!("the `tasks/get` result for `{}`", clip(task, 60)));
        }
        j_replies.push(get);
    }
    let j = if bad.is_empty() {
        Judgement::pass(format!(
            "no related-task metadata on the `tasks/list` result{}",
            if first.is_some() {
                " nor on the `tasks/get` of its first task"
            } else {
                " (no task listed to get)"
            }
        ))
    } else {
        Judgement::warn(format!(
            "{} carried `_meta.\"{RELATED}\"`; it repeats the task id the result already holds",
            bad.join(" and ")
        ))
    };
    j_replies.iter().fold(j, Judgement::reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_date_times() {
        for good in [
            "2025-11-25T10:30:00Z",
            "2025-11-25T10:30:00.123Z",
            "2025-11-25t10:30:00+02:00",
        ] {
            assert!(is_iso8601(good), "{good}");
        }
        for bad in [
            "2025-11-25",
            "1764066600",
            "2025-11-25 10:30:00Z",
            "2025-11-25T10:30:00",
        ] {
            assert!(!is_iso8601(bad), "{bad}");
        }
    }

    #[test]
    fn task_shape() {
        let good = json!({"taskId": "t", "status": "working", "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": null});
        assert!(task_problems(&good).is_empty());
        let bad = json!({"taskId": "t", "status": "running", "createdAt": 5});
        assert_eq!(task_problems(&bad).len(), 4);
    }
}
