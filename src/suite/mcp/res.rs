//! RES — result and message shape (basic/index#resulttype; streamable-http,
//! "Sending Messages" and "Receiving Messages"; tools#capabilities).
//!
//! RES-001, 002, 003, 005 and 006 are run-wide: they judge every reply to a
//! modern request seen during the run, so every probe of every rule counts.

use super::client::{Probe, Reply, Seen, clip, some};
use super::rule::{Keyword, McpRule, spec};
use super::session::{Judgement, Kind, Session};
use super::wire;
use crate::suite::Outcome;
use futures::FutureExt;
use serde_json::{Value, json};

pub(crate) const RESULT_TYPE: McpRule = McpRule::new(
    "MCP-RES-001",
    "Every result includes resultType",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/index#result-responses"),
    "RES",
    |s| result_type(s).boxed(),
)
.says("every result MUST carry resultType")
.help(
    "After every other rule, protocheck reads every result the run received for its valid \
     2026-07-28 requests, from the survey and from every rule, and checks that each carries a \
     string `resultType`.",
    "The server, or the SDK release it is built on, still produces 2025-style results without \
     `resultType`, often on a few methods only: an empty list, or a custom handler that builds \
     its JSON by hand.",
    "Set `resultType: \"complete\"` on every final result, empty ones included, and \
     `\"input_required\"` only when asking the client for input; one response serializer that \
     adds it is the safest place.",
)
.run_wide();

pub(crate) const RESULT_TYPE_KNOWN: McpRule = McpRule::new(
    "MCP-RES-002",
    "resultType is a value defined by core or an advertised extension",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/index#resulttype"),
    "RES",
    |s| result_type_known(s).boxed(),
)
.says("resultType MUST be complete, input_required (tools/call, resources/read, prompts/get only) or a value of an advertised extension")
.help(
    "Over every result the run received for its valid requests, protocheck checks `resultType`: \
     `complete` anywhere, `input_required` only on `tools/call`, `resources/read` and \
     `prompts/get`, `task` only when `io.modelcontextprotocol/tasks` is advertised in \
     `capabilities.extensions`. Any other value passes only when the server advertises an \
     extension protocheck does not know: the finding names the value and the extensions, as an \
     inference, since protocheck cannot know another extension's values.",
    "The server returns a made-up or misspelled value (`completed`, `success`, `Complete`), \
     answers `input_required` on a list or discover method, or returns `task` without advertising \
     the tasks extension.",
    "Use exactly `complete` for final results and `input_required` only on the three methods that \
     allow it; a server that returns `task` must advertise `io.modelcontextprotocol/tasks` under \
     `capabilities.extensions`.",
)
.run_wide();

pub(crate) const NO_SERVER_REQUESTS: McpRule = McpRule::new(
    "MCP-RES-003",
    "Server sends no independent JSON-RPC requests on a response stream",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http#receiving-messages"),
    "RES",
    |s| no_server_requests(s).boxed(),
)
.says("on a response stream the server MUST NOT send independent JSON-RPC requests")
.help(
    "Over every answer to the run's valid requests that came as an SSE stream, protocheck looks \
     for frames carrying both `method` and `id`, i.e. JSON-RPC requests from the server; over \
     stdio, for such lines written while an answer was awaited. Skipped over HTTP when no answer \
     used a stream.",
    "The server still sends 2025-style server-to-client requests (`elicitation/create`, \
     `sampling/createMessage`, `roots/list`) in the middle of a request instead of returning an \
     input request, usually through an SDK's context helpers.",
    "Ask for input by returning an `input_required` result with `inputRequests`, and let the \
     client retry with `inputResponses` (MRTR); send only notifications and the final response on \
     a response stream.",
)
.run_wide();

pub(crate) const NOTIFICATION_202: McpRule = McpRule::new(
    "MCP-RES-004",
    "Accepted notification POST returns 202 with no body",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http#sending-messages"),
    "RES",
    |s| notification_202(s).boxed(),
)
.says("an accepted notification POST MUST be answered 202 Accepted with no body")
.help(
    "protocheck POSTs the notification `notifications/cancelled` (no `id`) for a request id it \
     never used, and expects 202 Accepted with an empty body. Refusing the notification with an \
     HTTP error status is allowed and skips the rule.",
    "The server answers the notification with 200 and an empty JSON object or a JSON-RPC \
     response, with 204, or by opening an SSE stream, usually because the framework treats every \
     POST as a request that needs a body.",
    "Recognise messages without an `id` and answer them with HTTP 202 and an empty body, not with \
     a JSON or SSE response, whether or not the server acts on the notification; 200 with a body \
     is for requests.",
)
.http_only("the HTTP status of a notification POST");

pub(crate) const CONTENT_TYPE: McpRule = McpRule::new(
    "MCP-RES-005",
    "Response is application/json or text/event-stream; SSE terminates with the final response",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http#sending-messages"),
    "RES",
    |s| content_type(s).boxed(),
)
.says("a request MUST be answered with Content-Type application/json or text/event-stream; the final response SHOULD terminate the stream")
.help(
    "Over every answer to the run's valid requests, on pooled and dedicated connections, \
     protocheck checks that the media type of `Content-Type` is `application/json` or \
     `text/event-stream`. On SSE answers it waits briefly \
     after the final response and warns when the stream stays open.",
    "Usually an error path answers `text/plain` or `text/html` (a framework's default 404 or 500 \
     page, a proxy's error page) or sends no `Content-Type`. The warning means SSE streams stay \
     open after the final response, often for keep-alive pings.",
    "Send `Content-Type: application/json` or `text/event-stream` on every answer to a request, \
     errors from middleware included, and close the SSE stream right after writing the final \
     JSON-RPC response.",
)
.run_wide()
.http_only("the Content-Type of HTTP responses and SSE streams");

pub(crate) const ACCEL_BUFFERING: McpRule = McpRule::new(
    "MCP-RES-006",
    "SSE responses set X-Accel-Buffering: no",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/transports/streamable-http#receiving-messages"),
    "RES",
    |s| accel_buffering(s).boxed(),
)
.says("a server opening an SSE stream SHOULD send X-Accel-Buffering: no")
.help(
    "Over every answer to the run's valid requests that came as an SSE stream, protocheck checks \
     the response headers for `X-Accel-Buffering: no`. Skipped when no answer used a stream.",
    "The server or its SSE library does not set the header, so a reverse proxy such as nginx in \
     front of it may buffer the stream and deliver progress notifications late or all at once.",
    "Add `X-Accel-Buffering: no` to every `text/event-stream` response, next to `Content-Type`; \
     it costs nothing when no proxy is in front of the server, and keeps notifications flowing \
     when one is.",
)
.run_wide()
.http_only("the X-Accel-Buffering header of SSE responses");

pub(crate) const DETERMINISTIC_ORDER: McpRule = McpRule::new(
    "MCP-RES-007",
    "tools/list returns a deterministic order",
    Keyword::Should,
    Outcome::Warn,
    spec!("/server/tools#capabilities"),
    "RES",
    |s| deterministic_order(s).boxed(),
)
.says("tools/list SHOULD return tools in the same order while the set is unchanged")
.help(
    "protocheck walks every page of `tools/list` twice more and compares the order of tool names \
     with the survey's list (all pages), judging only the tools present in all three walks. Skipped when fewer than \
     two tools are listed in all three, or when a repeat is answered without a `tools` array \
     (an error, say): there is then no order to compare.",
    "The server builds the list from an unordered collection (a hash map or set keyed by name) or \
     from concurrent registration, so the order changes from one request to the next and defeats \
     clients' and LLM prompt caches.",
    "Return tools in a stable order while the set is unchanged, such as registration order or \
     sorted by name; an ordered map or an explicit sort before returning is enough.",
);

pub(crate) const RULES: &[McpRule] = &[
    RESULT_TYPE,
    RESULT_TYPE_KNOWN,
    NO_SERVER_REQUESTS,
    NOTIFICATION_202,
    CONTENT_TYPE,
    ACCEL_BUFFERING,
    DETERMINISTIC_ORDER,
];

/// Fails with the methods of `bad` named, and up to two exchanges.
fn fail_on(bad: &[&Seen], text: String) -> Judgement {
    let mut j = Judgement::fail(text);
    for r in bad.iter().take(2) {
        j = j.with(&r.exchange);
    }
    j
}

fn methods(bad: &[&Seen]) -> String {
    let mut m: Vec<&str> = bad.iter().map(|r| r.method.as_str()).collect();
    m.sort_unstable();
    m.dedup();
    m.iter()
        .map(|m| format!("`{m}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

async fn result_type(s: &Session) -> Judgement {
    let seen = s.client.seen().await;
    let results: Vec<&Seen> = seen.iter().filter(|r| r.result.is_some()).collect();
    if results.is_empty() {
        return Judgement::skip("no result was received to judge");
    }
    let bad: Vec<&Seen> = results
        .iter()
        .copied()
        .filter(|r| {
            !r.result
                .as_ref()
                .and_then(|v| v.get("resultType"))
                .is_some_and(Value::is_string)
        })
        .collect();
    if bad.is_empty() {
        Judgement::pass(format!(
            "all {} results carried a string resultType",
            results.len()
        ))
    } else {
        fail_on(
            &bad,
            format!(
                "{} of {} results lack a string `resultType`, on {}; every {} result MUST \
                 carry it (\"complete\" for a final result), even an empty one",
                bad.len(),
                results.len(),
                methods(&bad),
                wire::PROTOCOL_VERSION
            ),
        )
    }
}

/// Methods that may answer `input_required` (mrtr page).
const MRTR_METHODS: &[&str] = &["tools/call", "resources/read", "prompts/get"];

/// The extension whose `resultType` value (`task`) protocheck knows.
const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// What MCP-RES-002 makes of one `resultType` value on one method.
#[derive(Debug, PartialEq, Eq)]
enum TypeVerdict {
    Defined,
    /// A value protocheck does not know, taken (an inference) as one of the
    /// advertised extensions it does not know.
    Extension,
    Wrong(String),
}

/// Judges `value` answered on `method`, given the extensions the server
/// advertises (`capabilities.extensions`).
fn judge_result_type(method: &str, value: &str, extensions: &[String]) -> TypeVerdict {
    let tasks = extensions.iter().any(|e| e == TASKS_EXTENSION);
    let unknown = extensions.iter().any(|e| e != TASKS_EXTENSION);
    match value {
        "complete" => TypeVerdict::Defined,
        "input_required" if MRTR_METHODS.contains(&method) => TypeVerdict::Defined,
        "input_required" => TypeVerdict::Wrong(format!(
            "`{method}` answered resultType \"input_required\", which only tools/call, \
             resources/read and prompts/get may use"
        )),
        "task" if tasks => TypeVerdict::Defined,
        "task" => TypeVerdict::Wrong(format!(
            "`{method}` answered resultType \"task\" without advertising the \
             {TASKS_EXTENSION} extension"
        )),
        _ if unknown => TypeVerdict::Extension,
        other => TypeVerdict::Wrong(format!(
            "`{method}` answered resultType \"{}\", which neither the core protocol nor an \
             advertised extension defines (the server advertises {})",
            clip(other, 60),
            if extensions.is_empty() {
                "no extension".to_owned()
            } else {
                format!("only {TASKS_EXTENSION}")
            }
        )),
    }
}

async fn result_type_known(s: &Session) -> Judgement {
    let extensions: Vec<String> = s
        .capabilities()
        .get("extensions")
        .and_then(Value::as_object)
        .map(|e| e.keys().cloned().collect())
        .unwrap_or_default();
    let seen = s.client.seen().await;
    let typed: Vec<(&Seen, &str)> = seen
        .iter()
        .filter_map(|r| {
            let t = r.result.as_ref()?.get("resultType")?.as_str()?;
            Some((r, t))
        })
        .collect();
    if typed.is_empty() {
        return Judgement::skip("no result carried a resultType to judge");
    }
    let mut problems = Vec::new();
    let mut bad = Vec::new();
    let mut inferred: Vec<String> = Vec::new();
    for (r, t) in &typed {
        match judge_result_type(&r.method, t, &extensions) {
            TypeVerdict::Defined => {}
            TypeVerdict::Extension => {
                let shown = format!("\"{}\" on `{}`", clip(t, 60), r.method);
                if !inferred.contains(&shown) {
                    inferred.push(shown);
                }
            }
            TypeVerdict::Wrong(p) => {
                if !problems.contains(&p) {
                    problems.push(p);
                }
                bad.push(*r);
            }
        }
    }
    if !bad.is_empty() {
        return fail_on(
            &bad,
            format!(
                "{}; clients MUST treat unknown values as invalid",
                some(&problems, 5, "; ")
            ),
        );
    }
    let mut message = format!("all {} resultType values are defined", typed.len());
    if !inferred.is_empty() {
        let others: Vec<String> = extensions
            .iter()
            .filter(|e| *e != TASKS_EXTENSION)
            .map(|e| clip(e, 80))
            .collect();
        message = format!(
            "{} resultType values are defined by the core protocol; inferred: {} protocheck \
             does not know, taken as defined by an advertised extension it does not know ({}), \
             whose values it cannot check",
            typed.len(),
            some(&inferred, 5, ", "),
            some(&others, 5, ", ")
        );
    }
    Judgement::pass(message)
}

async fn no_server_requests(s: &Session) -> Judgement {
    let seen = s.client.seen().await;
    // Over stdio, stdout is the stream every answer travels on: the
    // requests read there while an answer was awaited count (servers MUST
    // NOT initiate requests on any transport).
    if s.client.is_stdio() {
        let bad: Vec<&Seen> = seen.iter().filter(|r| r.server_requests > 0).collect();
        return if bad.is_empty() {
            Judgement::pass(format!(
                "no JSON-RPC request came on stdout while {} answers were awaited",
                seen.len()
            ))
        } else {
            fail_on(
                &bad,
                format!(
                    "while the answer to {} was awaited, the server wrote a JSON-RPC request \
                     (a line with both `method` and `id`) on stdout; servers MUST NOT send \
                     requests on any transport: return an InputRequiredResult (MRTR) instead",
                    methods(&bad)
                ),
            )
        };
    }
    let streams: Vec<&Seen> = seen.iter().filter(|r| r.sse).collect();
    if streams.is_empty() {
        return Judgement::skip("no response used an SSE stream, so there was no stream to judge");
    }
    let bad: Vec<&Seen> = streams
        .iter()
        .copied()
        .filter(|r| r.server_requests > 0)
        .collect();
    if bad.is_empty() {
        Judgement::pass(format!(
            "{} SSE streams carried only notifications and the final response",
            streams.len()
        ))
    } else {
        fail_on(
            &bad,
            format!(
                "the SSE stream answering {} carried a JSON-RPC request (a frame with both \
                 `method` and `id`); servers MUST NOT send requests on a response stream: \
                 return an InputRequiredResult (MRTR) instead",
                methods(&bad)
            ),
        )
    }
}

async fn notification_202(s: &Session) -> Judgement {
    // `notifications/cancelled` is the one client notification of the core
    // protocol; cancelling an id that was never used has no effect.
    let probe = Probe::notification(
        "notifications/cancelled",
        json!({"requestId": "protocheck-unused-id", "reason": "protocheck: notification probe"}),
    );
    let reply = s.client.send(&probe).await;
    match reply.status {
        Some(202) if reply.body_len == 0 && !reply.sse => {
            Judgement::pass("the notification POST was answered 202 with no body")
        }
        Some(status) if (200..300).contains(&status) => Judgement::fail(format!(
            "a notification POST was accepted with HTTP {status}{}; an accepted notification \
             MUST be answered 202 Accepted with no body",
            if reply.body_len > 0 {
                " and a body"
            } else {
                ""
            }
        ))
        .reply(&reply),
        Some(status) if status >= 400 => Judgement::skip(format!(
            "the server did not accept the notification (HTTP {status}), which it may do; \
             there was no accepted notification to judge"
        )),
        _ => Judgement::fail(format!(
            "a notification POST answered {}; an accepted notification MUST be answered 202 \
             with no body, a refused one with an HTTP error status",
            reply.describe()
        ))
        .reply(&reply),
    }
}

fn media_type(content_type: Option<&str>) -> Option<String> {
    content_type
        .and_then(|c| c.split(';').next())
        .map(|m| m.trim().to_ascii_lowercase())
}

async fn content_type(s: &Session) -> Judgement {
    // The sentence is about the answers to JSON-RPC requests: a refusal
    // whose body is no JSON-RPC message (an OAuth 401, a proxy's 404) is not one.
    let seen: Vec<Seen> = s
        .client
        .seen()
        .await
        .into_iter()
        .filter(|r| !r.refusal)
        .collect();
    if seen.is_empty() {
        return Judgement::skip("no response was received to judge");
    }
    let bad: Vec<&Seen> = seen
        .iter()
        .filter(|r| {
            !matches!(
                media_type(r.content_type.as_deref()).as_deref(),
                Some("application/json" | "text/event-stream")
            )
        })
        .collect();
    if !bad.is_empty() {
        let shown: Vec<String> = bad
            .iter()
            .take(3)
            .map(|r| {
                format!(
                    "`{}` → HTTP {} {}",
                    r.method,
                    r.status.unwrap_or_default(),
                    r.content_type.as_deref().unwrap_or("without Content-Type")
                )
            })
            .collect();
        return fail_on(
            &bad,
            format!(
                "{} of {} responses to requests were neither application/json nor \
                 text/event-stream ({}); a request MUST be answered with one of the two",
                bad.len(),
                seen.len(),
                shown.join("; ")
            ),
        );
    }
    // The spec words termination as SHOULD ("The final JSON-RPC response SHOULD
    // terminate the stream"), so an open stream is a warning, not a failure.
    let open: Vec<&Seen> = seen
        .iter()
        .filter(|r| r.sse && !r.listen && r.terminated == Some(false))
        .collect();
    if !open.is_empty() {
        let mut j = Judgement::warn(format!(
            "every response had a correct media type, but the SSE stream answering {} stayed \
             open after the final response; the final response SHOULD terminate the stream",
            methods(&open)
        ));
        for r in open.iter().take(2) {
            j = j.with(&r.exchange);
        }
        return j;
    }
    Judgement::pass(format!(
        "all {} responses were application/json or text/event-stream, and SSE streams ended \
         with their final response",
        seen.len()
    ))
}

async fn accel_buffering(s: &Session) -> Judgement {
    let seen = s.client.seen().await;
    let streams: Vec<&Seen> = seen.iter().filter(|r| r.sse).collect();
    if streams.is_empty() {
        return Judgement::skip("no response used an SSE stream, so there was no stream to judge");
    }
    let bad: Vec<&Seen> = streams
        .iter()
        .copied()
        .filter(|r| {
            !r.accel_buffering
                .as_deref()
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("no"))
        })
        .collect();
    if bad.is_empty() {
        Judgement::pass(format!(
            "all {} SSE responses set X-Accel-Buffering: no",
            streams.len()
        ))
    } else {
        fail_on(
            &bad,
            format!(
                "the SSE response to {} lacks `X-Accel-Buffering: no`; without it proxies such \
                 as nginx may buffer events and delay them",
                methods(&bad)
            ),
        )
    }
}

/// Most pages of `tools/list` one walk of MCP-RES-007 reads: the survey's.
const MAX_ORDER_PAGES: usize = 10;

/// Every page of `tools/list`, following `nextCursor` (at most
/// [`MAX_ORDER_PAGES`]); a page without a `tools` array ends the walk.
async fn walk_tools(s: &Session) -> (Vec<Reply>, bool) {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_ORDER_PAGES {
        let params = cursor
            .as_ref()
            .map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let reply = s.client.send(&s.client.request("tools/list", params)).await;
        let next = reply
            .result()
            .filter(|r| r.get("tools").is_some_and(Value::is_array))
            .and_then(|r| r.get("nextCursor"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        pages.push(reply);
        match next {
            Some(next) if Some(next.as_str()) != cursor.as_deref() => cursor = Some(next),
            _ => return (pages, false),
        }
    }
    (pages, true)
}

async fn deterministic_order(s: &Session) -> Judgement {
    if !s.advertises("tools") {
        return Judgement::skip("the server does not advertise tools");
    }
    let first = s.survey.tools.names("name");
    if first.len() < 2 {
        return Judgement::skip("fewer than two tools are listed, so their order cannot vary");
    }
    // Two more walks of every page, side by side: the order on later pages
    // counts as much as on the first.
    let (one, two) = tokio::join!(walk_tools(s), walk_tools(s));
    let capped = one.1 || two.1 || s.survey.tools.problem.is_some();
    let judged = judge_order(first, s.survey.tools.pages.first(), &[one.0, two.0]);
    if capped && judged.kind == Kind::Pass {
        let message = format!(
            "{}; the walks stopped at {MAX_ORDER_PAGES} pages (protocheck's cap): later pages \
             were not compared",
            judged.message
        );
        return Judgement::pass(message);
    }
    judged
}

/// MCP-RES-007's judgement: the order of the tools listed `first` (on the
/// survey's `page`) against the names of each repeated walk of every page.
fn judge_order(first: Vec<String>, page: Option<&Reply>, walks: &[Vec<Reply>]) -> Judgement {
    let mut orders = vec![first];
    let mut replies: Vec<&Reply> = Vec::new();
    for walk in walks {
        let mut names = Vec::new();
        for reply in walk {
            let Some(tools) = reply
                .result()
                .and_then(|r| r.get("tools"))
                .and_then(Value::as_array)
            else {
                // No list to compare: an empty order would match any other.
                return Judgement::skip(format!(
                    "not verified: the repeated `tools/list` (request {}) was answered {}, with \
                     no `tools` array to compare",
                    orders.len() + 1,
                    reply.describe()
                ))
                .reply(reply);
            };
            names.extend(
                tools
                    .iter()
                    .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_owned)),
            );
        }
        let Some(last) = walk.last() else {
            return Judgement::skip("not verified: a repeated `tools/list` walk read no page");
        };
        replies.push(last);
        orders.push(names);
    }
    // Only the order of tools present in every answer is judged: a set that
    // changes is STL-008's business, not this rule's.
    let common: Vec<&String> = orders[0]
        .iter()
        .filter(|n| orders.iter().all(|o| o.contains(n)))
        .collect();
    if common.len() < 2 {
        return replies.iter().copied().fold(
            Judgement::skip(format!(
                "not verified: {} of the tools listed first were listed again by every repeated \
                 `tools/list` answer, too few for an order",
                common.len()
            )),
            Judgement::reply,
        );
    }
    let project = |o: &Vec<String>| -> Vec<String> {
        o.iter().filter(|n| common.contains(n)).cloned().collect()
    };
    let reference = project(&orders[0]);
    for (i, o) in orders.iter().enumerate().skip(1) {
        let other = project(o);
        if other != reference {
            let mut j = Judgement::fail(format!(
                "`tools/list` returned the same tools in a different order on request {} \
                 ({:?} then {:?}); servers SHOULD keep the order stable so clients and LLM \
                 prompt caches can reuse it",
                i + 1,
                reference
                    .iter()
                    .take(6)
                    .map(|n| clip(n, 40))
                    .collect::<Vec<_>>(),
                other
                    .iter()
                    .take(6)
                    .map(|n| clip(n, 40))
                    .collect::<Vec<_>>()
            ));
            if let Some(page) = page {
                j = j.reply(page);
            }
            return j.reply(replies[i - 1]);
        }
    }
    Judgement::pass(format!(
        "three `tools/list` walks of every page listed {} tools in the same order",
        reference.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::mcp::session::Kind;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|n| (*n).to_owned()).collect()
    }

    /// A reply whose JSON-RPC message is `message`.
    fn answered(message: Value) -> Reply {
        let mut reply = Reply::empty("tools/list");
        reply.transport_error = None;
        reply.status = Some(200);
        reply.message = Some(message);
        reply
    }

    fn listing(list: &[&str]) -> Reply {
        let tools: Vec<Value> = list.iter().map(|n| json!({"name": n})).collect();
        answered(json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}}))
    }

    #[test]
    fn an_unknown_result_type_passes_only_beside_an_unknown_extension() {
        let none: Vec<String> = Vec::new();
        let tasks = vec![TASKS_EXTENSION.to_owned()];
        let other = vec!["com.example/deferred".to_owned()];
        assert_eq!(
            judge_result_type("tools/call", "complete", &none),
            TypeVerdict::Defined
        );
        assert!(matches!(
            judge_result_type("tools/call", "completed", &none),
            TypeVerdict::Wrong(_)
        ));
        assert!(matches!(
            judge_result_type("tools/call", "deferred", &tasks),
            TypeVerdict::Wrong(_)
        ));
        assert_eq!(
            judge_result_type("tools/call", "deferred", &other),
            TypeVerdict::Extension
        );
        assert_eq!(
            judge_result_type("tools/call", "task", &tasks),
            TypeVerdict::Defined
        );
        // Known values keep their own rules beside an unknown extension.
        assert!(matches!(
            judge_result_type("tools/call", "task", &other),
            TypeVerdict::Wrong(_)
        ));
        assert!(matches!(
            judge_result_type("tools/list", "input_required", &other),
            TypeVerdict::Wrong(_)
        ));
        assert_eq!(
            judge_result_type("prompts/get", "input_required", &none),
            TypeVerdict::Defined
        );
    }

    #[test]
    fn the_order_is_judged_only_on_lists_that_came_back() {
        let first = names(&["a", "b", "c"]);
        let same = [
            vec![listing(&["a", "b", "c"])],
            vec![listing(&["a"]), listing(&["b", "c"])],
        ];
        let judged = judge_order(first.clone(), None, &same);
        assert!(matches!(judged.kind, Kind::Pass), "{}", judged.message);

        let moved = [
            vec![listing(&["a", "b", "c"])],
            vec![listing(&["a"]), listing(&["c", "b"])],
        ];
        let judged = judge_order(first.clone(), None, &moved);
        assert!(matches!(judged.kind, Kind::Fail), "{}", judged.message);
        assert!(judged.message.contains("request 3"), "{}", judged.message);

        // A repeat refused with an error has no order: not a pass.
        let refused = answered(json!({"jsonrpc": "2.0", "id": 2,
            "error": {"code": -32603, "message": "Internal error"}}));
        let judged = judge_order(
            first.clone(),
            None,
            &[vec![listing(&["a", "b", "c"])], vec![refused]],
        );
        assert!(matches!(judged.kind, Kind::Skip), "{}", judged.message);
        assert!(
            judged.message.contains("request 3") && judged.message.contains("-32603"),
            "{}",
            judged.message
        );
        assert_eq!(judged.evidence.len(), 1);

        // Fewer than two tools in every answer: no order to compare.
        let shrunk = [vec![listing(&["a"])], vec![listing(&["a", "b"])]];
        let judged = judge_order(first, None, &shrunk);
        assert!(matches!(judged.kind, Kind::Skip), "{}", judged.message);
        assert!(
            judged.message.contains("1 of the tools"),
            "{}",
            judged.message
        );
    }
}
