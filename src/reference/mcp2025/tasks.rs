//! The experimental tasks of the 2025-11-25 reference server
//! (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks),
//! on with [`Mcp25ReferenceConfig::with_tasks`]: the `tasks` capability
//! (`list`, `cancel`, task-augmented `tools/call`), `tasks/list`,
//! `tasks/get`, `tasks/result`, `tasks/cancel`, and the tool `report`, whose
//! `execution.taskSupport` is `"required"`.
//!
//! Every session starts with one finished task (a `report` it ran), so that
//! `tasks/list` has an item to show; a task-augmented call of `report`
//! creates another, `working` for [`WORK`], then `completed`.

use super::engine::{Call, Reply, error, invalid_params};
use super::{Mcp25ReferenceConfig, faults};
use serde_json::{Value, json};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The tool that can only run as a task.
pub(super) const TOOL: &str = "report";
/// How long a created task works before it completes.
const WORK: Duration = Duration::from_millis(100);
/// How long the server keeps a task after its creation, in ms.
const TTL_MS: u64 = 60_000;
/// Tasks per `tasks/list` page.
const PAGE: usize = 10;
/// Most tasks a session keeps.
const MAX_TASKS: usize = 64;
/// The metadata key naming the task a message belongs to.
const RELATED: &str = "io.modelcontextprotocol/related-task";

#[derive(Debug, Clone)]
struct Task {
    id: String,
    created: SystemTime,
    cancelled: Option<SystemTime>,
}

impl Task {
    fn done_at(&self) -> SystemTime {
        self.created + WORK
    }

    fn status(&self, now: SystemTime) -> &'static str {
        match self.cancelled {
            Some(_) => "cancelled",
            None if now >= self.done_at() => "completed",
            None => "working",
        }
    }

    fn updated(&self, now: SystemTime) -> SystemTime {
        match self.cancelled {
            Some(at) => at,
            None if now >= self.done_at() => self.done_at(),
            None => self.created,
        }
    }

    fn json(&self, _config: &Mcp25ReferenceConfig) -> Value {
        let now = SystemTime::now();
        json!({
            "taskId": self.id,
            "status": self.status(now),
            "createdAt": iso8601(self.created),
            "lastUpdatedAt": iso8601(self.updated(now)),
            "ttl": TTL_MS,
            "pollInterval": 50,
        })
    }

    fn result(&self) -> Value {
        json!({
            "content": [{"type": "text", "text": format!("report of task {}", self.id)}],
            "isError": false,
            "_meta": {RELATED: {"taskId": self.id}},
        })
    }
}

/// A session's tasks.
#[derive(Debug, Default)]
pub(super) struct Store {
    seeded: bool,
    next: u64,
    tasks: Vec<Task>,
}

impl Store {
    fn create(&mut self, created: SystemTime) -> Task {
        self.next += 1;
        let task = Task {
            id: format!("task-{}", self.next),
            created,
            cancelled: None,
        };
        if self.tasks.len() >= MAX_TASKS {
            self.tasks.remove(0);
        }
        self.tasks.push(task.clone());
        task
    }

    /// The store, with the session's first (finished) task in it; with
    /// MCP25-TSK-003's fault, a second one, for the second page.
    fn seed(&mut self, config: &Mcp25ReferenceConfig) -> &mut Self {
        if !self.seeded {
            self.seeded = true;
            let earlier = SystemTime::now()
                .checked_sub(Duration::from_secs(1))
                .unwrap_or(UNIX_EPOCH);
            self.create(earlier);
            if config.breaks(faults::TASK_SHAPE) {
                self.create(earlier);
            }
        }
        self
    }

    fn find(&mut self, id: &str) -> Option<&mut Task> {
        self.tasks.iter_mut().find(|t| t.id == id)
    }
}

/// The `tasks` capability, when tasks are on.
pub(super) fn capability(config: &Mcp25ReferenceConfig) -> Option<Value> {
    config
        .tasks
        .then(|| json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}))
}

/// `report`, listed when tasks are on.
pub(super) fn tool() -> Value {
    json!({
        "name": TOOL,
        "title": "Report (as a task)",
        "description": "Writes a short report; runs only as a task (execution.taskSupport \
                        \"required\").",
        "inputSchema": {"type": "object", "properties": {}},
        "execution": {"taskSupport": "required"},
        "annotations": {"readOnlyHint": true}
    })
}

/// `tools/call` of `report`: a task when the call asks for one, refused
/// otherwise (tasks, "Tool-Level Negotiation").
pub(super) fn call_report(call: &Call<'_>) -> Reply {
    let id = call.id;
    let augmented = call.params.get("task").is_some_and(Value::is_object);
    if !augmented {
        if call.breaks(faults::TASK_REQUIRED) {
            let task = Task {
                id: "untracked".to_owned(),
                created: SystemTime::now(),
                cancelled: None,
            };
            let mut result = task.result();
            if let Some(r) = result.as_object_mut() {
                r.remove("_meta");
            }
            return Reply::result(id, result);
        }
        return error(
            id,
            -32601,
            "Method not found: `report` runs only as a task (taskSupport \"required\"); \
             call it with a `task` parameter",
            None,
        );
    }
    let Ok(mut store) = call.session.tasks.lock() else {
        return error(id, -32603, "Internal error", None);
    };
    let task = store.seed(call.config).create(SystemTime::now());
    Reply::result(id, json!({"task": task.json(call.config)}))
}

/// The `tasks/…` methods; `None` when tasks are off (the method is unknown).
pub(super) async fn request(call: &Call<'_>, method: &str) -> Option<Reply> {
    if !call.config.tasks {
        return None;
    }
    let id = call.id;
    let task_id = call.params.get("taskId").and_then(Value::as_str);
    let missing = |name: Option<&str>| {
        let what = name.map_or("a string `taskId` is required".to_owned(), |n| {
            format!("no task `{n}`")
        });
        if call.breaks(faults::TASK_UNKNOWN) && method != "tasks/cancel" {
            error(id, -32603, format!("Internal error: {what}"), None)
        } else {
            invalid_params(id, format!("Invalid params: {what}"))
        }
    };
    let reply = match method {
        "tasks/list" => list(call),
        "tasks/get" => {
            let Ok(mut store) = call.session.tasks.lock() else {
                return Some(error(id, -32603, "Internal error", None));
            };
            match task_id.and_then(|t| store.seed(call.config).find(t)) {
                Some(task) => {
                    let mut result = task.json(call.config);
                    related(call.config, &mut result, &task.id);
                    Reply::result(id, result)
                }
                None => missing(task_id),
            }
        }
        "tasks/result" => {
            let found = call
                .session
                .tasks
                .lock()
                .ok()
                .and_then(|mut s| task_id.and_then(|t| s.seed(call.config).find(t).cloned()));
            let Some(task) = found else {
                return Some(missing(task_id));
            };
            // Blocks until the task is done (it works for WORK at most).
            let wait = task
                .done_at()
                .duration_since(SystemTime::now())
                .unwrap_or_default();
            tokio::time::sleep(wait).await;
            match task.cancelled {
                Some(_) => error(id, -32603, "the task was cancelled", None),
                None => Reply::result(id, task.result()),
            }
        }
        "tasks/cancel" => {
            let Ok(mut store) = call.session.tasks.lock() else {
                return Some(error(id, -32603, "Internal error", None));
            };
            let now = SystemTime::now();
            match task_id.and_then(|t| store.seed(call.config).find(t)) {
                Some(task) if task.status(now) == "working" => {
                    task.cancelled = Some(now);
                    Reply::result(id, task.json(call.config))
                }
                Some(task) => invalid_params(
                    id,
                    format!(
                        "Invalid params: task `{}` is already {}",
                        task.id,
                        task.status(now)
                    ),
                ),
                None if call.breaks(faults::TASK_CANCEL_UNKNOWN) => Reply::result(id, json!({})),
                None => missing(task_id),
            }
        }
        other => error(id, -32601, format!("Method not found: {other}"), None),
    };
    Some(reply)
}

fn list(call: &Call<'_>) -> Reply {
    let id = call.id;
    let Ok(mut store) = call.session.tasks.lock() else {
        return error(id, -32603, "Internal error", None);
    };
    let tasks = &store.seed(call.config).tasks;
    let start = match call.params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(cursor) => {
            let offset = cursor
                .as_str()
                .and_then(|c| c.strip_prefix("tasks:"))
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| *n < tasks.len());
            match offset {
                Some(n) => n,
                None if call.breaks(faults::TASK_CURSOR) => 0,
                None => return invalid_params(id, "Invalid params: unknown cursor"),
            }
        }
    };
    // MCP25-TSK-003's fault: pages of one task, and the tasks after the
    // first page lack `lastUpdatedAt` and `ttl`.
    let broken = call.breaks(faults::TASK_SHAPE);
    let end = (start + if broken { 1 } else { PAGE }).min(tasks.len());
    let page: Vec<Value> = tasks[start..end]
        .iter()
        .map(|t| {
            let mut task = t.json(call.config);
            if broken
                && start > 0
                && let Some(t) = task.as_object_mut()
            {
                t.remove("lastUpdatedAt");
                t.remove("ttl");
            }
            task
        })
        .collect();
    let mut result = json!({"tasks": page});
    if end < tasks.len() {
        result["nextCursor"] = json!(format!("tasks:{end}"));
    }
    if let Some(first) = tasks.first() {
        related(call.config, &mut result, &first.id);
    }
    Reply::result(id, result)
}

/// MCP25-TSK-006's fault: the related-task metadata on results that
/// already name their task.
fn related(config: &Mcp25ReferenceConfig, result: &mut Value, task: &str) {
    if config.breaks(faults::TASK_RELATED_META) {
        result["_meta"] = json!({RELATED: {"taskId": task}});
    }
}

/// `time` as an ISO 8601 (RFC 3339) UTC timestamp with milliseconds.
fn iso8601(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = i64::try_from(days).unwrap_or(0) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339() {
        assert_eq!(iso8601(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_709_251_199_250);
        assert_eq!(iso8601(t), "2024-02-29T23:59:59.250Z");
    }
}
