//! RPC — the JSON-RPC base (basic, "Messages"): ids echoed, result xor
//! error, the error object, the standard error codes, no batches, no
//! response to a notification, `_meta` tolerated. Every probe goes over the
//! run's initialized connection, except on stdio the messages that may end
//! the server's process (MCP25-RPC-004, -005, -008): they go to a child of
//! their rule's own, so that no other rule meets a process one of them ended.

use super::client::{Awaiting, Connection, Reply, Seen, Transport};
use super::lif::judge_unanswered;
use super::rule::{Mcp25Rule, spec};
use super::session::{Judgement, Kind, Serving, Session, serving};
use crate::suite::mcp::Keyword;
use crate::suite::mcp::client::{clip, some};
use crate::suite::mcp::wire::{as_integer, code};
use crate::suite::{Exchange, Outcome};
use crate::transport::TransportError;
use futures::FutureExt;
use serde_json::{Value, json};

pub(crate) const ID_ECHOED: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RPC-001",
    "A response carries the id of its request, with the same JSON type",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic#result-responses"),
    "RPC",
    |s| id_echoed(s).boxed(),
)
.says("results and errors repeat the id of the request they answer")
.help(
    "protocheck sends three `ping`s whose ids are a number, a string `pc-N` and a string of \
     digits (over HTTP as the rules start, on stdio after every other rule), then, after every \
     other rule, compares the `id` of each answer to a conforming request of the run with the id \
     sent, JSON type included (numbers by value).",
    "The server changes the id's type (answers `\"7\"` for `7`, or `7` for `\"7\"`), drops it, or \
     answers `null`, usually because it parses ids into an integer or a string type, or a proxy \
     rewrites them.",
    "Keep the request `id` as the JSON value it arrived as and copy it unchanged into the \
     response: store ids as a string-or-number value and never convert between the two.",
)
.run_wide();

pub(crate) const RESULT_XOR_ERROR: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RPC-002",
    "Every response has jsonrpc 2.0 and exactly one of result and error; result is an object",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic#messages"),
    "RPC",
    |s| result_xor_error(s).boxed(),
)
.says(
    "all messages follow JSON-RPC 2.0; a success response holds a result object, a failure an \
     error",
)
.help(
    "After every other rule, protocheck reads every answer to a conforming request of the run and \
     checks that it is a JSON object with `jsonrpc` equal to \"2.0\", exactly one of `result` and \
     `error`, and a `result` that is an object.",
    "Usually a handler returns a bare value (an array, a string, `null`) as `result`, or a \
     response built by hand carries both members (such as `\"error\": null` beside a result) or \
     lacks `jsonrpc`.",
    "Answer with `{\"jsonrpc\": \"2.0\", \"id\": …, \"result\": {…}}` or with `error` instead of \
     `result`, never both; wrap a value that is not an object in one (an empty result is `{}`), \
     and let the SDK build responses rather than writing them by hand.",
)
.run_wide();

pub(crate) const ERROR_SHAPE: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RPC-003",
    "An error object has an integer code and a string message",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic#error-responses"),
    "RPC",
    |s| error_shape(s).boxed(),
)
.says("errors carry a code and a message, and the code is an integer")
.help(
    "After every other rule, protocheck reads every error response to a conforming request of the \
     run (unknown methods, bad cursors, unknown tools and prompts, …) and checks that `error` is \
     an object with an integer `code` and a string `message`.",
    "The error is built by hand with a string or fractional `code`, or without `message`, or an \
     exception is serialised straight into `error` (a string, or an object without `code`).",
    "Return errors as `{\"code\": <integer>, \"message\": \"<text>\"}` with optional `data`; \
     raise the SDK's own error type rather than serialising exceptions yourself.",
)
.run_wide();

pub(crate) const PARSE_ERROR: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RPC-004",
    "Malformed JSON is refused (-32700, HTTP 4xx, or silence on stdio) and the server keeps serving",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic#messages"),
    "RPC",
    |s| parse_error(s).boxed(),
)
.says("JSON-RPC 2.0 reserves -32700 for text that is not valid JSON")
.help(
    "protocheck sends `ping`, then the truncated text `{\"jsonrpc\":\"2.0\",\"id\":1,`, a \
     whole `ping` followed by trailing data, an object with single quotes and a bare key, and over \
     HTTP an empty body; then another `ping`. Over HTTP each text is a POST body on the run's \
     connection, side by side; on stdio each is a line to a process of the rule's own, \
     initialized first, and a text that ends the process is followed by a new one. It reads the \
     answer to each broken text and checks that the second `ping` is answered as the first was.",
    "The server answers with a result, a 2xx without an error, or nothing over HTTP, drops the \
     connection or stops serving; a 5xx or another error code than -32700 is a warning, and so is \
     a stdio process that exits on the text (the client broke its own MUST by writing it, and no \
     sentence says what the server does with it). Usually the parse failure escapes as an \
     unhandled exception, or on stdio ends the read loop.",
    "Catch JSON parse failures at the transport: answer error -32700 with `id: null` (over HTTP \
     with a 400 status), or on stdio skip the line, and go on reading the next message.",
);

pub(crate) const INVALID_REQUEST: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RPC-005",
    "A request object without method is refused with -32600",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic#requests"),
    "RPC",
    |s| invalid_request(s).boxed(),
)
.says("a request names a method; JSON-RPC answers an invalid request object with -32600")
.help(
    "protocheck sends `ping`, then five invalid request objects (no `method`; \
     `method` a number; `jsonrpc` \"1.0\"; no `jsonrpc`; a boolean `id`), then another `ping`, \
     on stdio to a process of the rule's own (a new one after an object that ends it). It \
     expects each refused with error -32600 or an HTTP 4xx (silence is accepted on stdio; 202 with \
     no body for the object without `method`, which reads as a malformed response too, and for \
     the boolean `id`, which may be read as a notification), and the second `ping` answered as \
     the first was.",
    "The server answers with a result, with a status other than 4xx and no JSON-RPC error, or not \
     at all over HTTP, or stops serving; another error code, or a stdio process that exits on the \
     object, is a warning. Usually the object is \
     taken for a response, the missing `method` raises an unhandled exception, or the server \
     never checks `jsonrpc` or the type of `method` and `id` and serves the request.",
    "Validate every incoming object before dispatch: `jsonrpc` exactly \"2.0\", a string \
     `method`, an `id` that is a string or an integer; an object with an `id` that fails this \
     (and has no `result` or `error`) is an invalid request, answered `{\"code\": -32600, \
     \"message\": \"Invalid Request\"}`; then keep serving.",
);

pub(crate) const NULL_ID: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RPC-006",
    "A request with a null id is not processed as a normal request",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/basic#requests"),
    "RPC",
    |s| null_id(s).boxed(),
)
.says("unlike plain JSON-RPC, MCP forbids a null request id")
.help(
    "protocheck sends `{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}` on the run's \
     connection and reads the answer. A JSON-RPC error (-32600 preferred), an HTTP status without \
     a result, or no answer passes; only a result fails.",
    "The server answers the `ping` with a result: it accepts `null` as a request id, as plain \
     JSON-RPC 2.0 allows and as most general-purpose JSON-RPC libraries do by default.",
    "Reject a request whose `id` is `null` before dispatch, with error -32600 (Invalid Request), \
     instead of processing it: MCP request ids are strings or integers.",
);

pub(crate) const METHOD_NOT_FOUND: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RPC-007",
    "An unknown method gets error -32601",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic#messages"),
    "RPC",
    |s| method_not_found(s).boxed(),
)
.says(
    "messages follow JSON-RPC 2.0, under which a request for a method that does not exist is \
     answered with an error, -32601 (Method not found)",
)
.help(
    "protocheck sends, side by side on the run's connection, requests for methods no MCP \
     revision defines: `protocheck/unknown-method`, `protocheck_unknown`, and \
     `protocheck_unknown` under each namespace of the protocol (`tools/`, `resources/`, \
     `prompts/`, `completion/`, `logging/`, `tasks/`), and reads each error code. -32601 passes; \
     another error code, or an HTTP 4xx without -32601, is a warning.",
    "Another code (often -32600, -32602 or -32603) points to a dispatcher that reports every \
     failure alike; a result, a 5xx without a JSON-RPC error, no answer or a dropped connection \
     usually means a catch-all handler answers every method, or crashes on an unknown one.",
    "Answer a method the server does not implement with `{\"code\": -32601, \"message\": \"Method \
     not found\"}` and the request's id; SDK dispatchers do so unless a catch-all handler is \
     registered.",
);

pub(crate) const NO_BATCH: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RPC-008",
    "A JSON-RPC batch (array) is not answered as a batch",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports#sending-messages-to-the-server"),
    "RPC",
    |s| no_batch(s).boxed(),
)
.says(
    "a message is a single request, notification or response (batching was removed in \
     2025-06-18), so no answer is an array",
)
.help(
    "protocheck sends `ping`, then a JSON array holding two `ping` requests, then another `ping` \
     (on stdio to a process of the rule's own, and after an array that ends it, to a new one). It \
     reads the answer to the array and checks that the second `ping` is answered as the first \
     was.",
    "An array answer means the server still supports JSON-RPC batches, which 2025-06-18 removed \
     (often an older SDK or a generic JSON-RPC library). A 2xx without a JSON-RPC error (such as \
     a 202) fails too, a 5xx or a stdio process that exits on the array is a warning; one result \
     is information: the batch was split and processed.",
    "Refuse an array: answer one JSON-RPC error such as -32600 (over HTTP with a 400), or on \
     stdio drop the line, and keep serving. SDK releases for 2025-06-18 and later no longer \
     accept batches.",
);

pub(crate) const NOTIFICATION_UNANSWERED: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RPC-009",
    "A notification, known or unknown, gets no JSON-RPC response",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/basic#notifications"),
    "RPC",
    |s| notification_unanswered(s).boxed(),
)
.says("the receiver of a notification does not reply to it")
.help(
    "protocheck sends three notifications on the run's connection: the unknown \
     `notifications/protocheck_unknown`, a `notifications/cancelled` for a request id it never \
     sent and a `notifications/progress` for a token the server never gave. No JSON-RPC response \
     may come back for any (on stdio a `ping` sent after each marks the end; over HTTP the status \
     is left to the HTP rules).",
    "The server answers the unknown notification with -32601, or the cancellation with an error \
     for an unknown request, usually because its dispatcher treats every message as a request and \
     does not check for a missing `id`.",
    "Never write a response to a message without an `id`: ignore unknown notifications and \
     cancellations of unknown requests (at most log them); over HTTP answer 202 Accepted with an \
     empty body.",
);

pub(crate) const META_TOLERATED: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RPC-010",
    "A request carrying params._meta is served like one without",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic#meta"),
    "RPC",
    |s| meta_tolerated(s).boxed(),
)
.says("`_meta` is reserved for attaching metadata to any request; a server accepts it")
.help(
    "protocheck sends the same request twice on the run's connection (`tools/list` when `tools` \
     is advertised, else `ping`): once with empty params, once with `params._meta` holding \
     `dev.protocheck/probe` and a `progressToken`. It fails only if the second gets an error \
     while the first does not.",
    "The server validates params strictly and rejects the unknown `_meta` member (often a params \
     schema with `additionalProperties: false`), or fails on the progress token.",
    "Accept `_meta` in the params of every request: ignore keys you do not know and read \
     `progressToken` only to report progress. Let strict params schemas allow `_meta`.",
);

pub(crate) const UTF8: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RPC-011",
    "Everything the server sends is valid UTF-8",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports"),
    "RPC",
    |s| utf8(s).boxed(),
)
.says("JSON-RPC messages in MCP are UTF-8 encoded")
.help(
    "After every other rule and the passive probe (the first page of each advertised listing, a \
     `ping` and up to three read-only tool calls with progress tokens), protocheck checks every \
     answer of the run for invalid UTF-8: HTTP bodies and SSE streams, or stdout lines that held \
     bytes it had to replace.",
    "The server writes text in another encoding (Latin-1, a Windows code page), cuts a multi-byte \
     character when truncating output, or passes raw bytes from a tool or resource into a JSON \
     string instead of base64.",
    "Encode every message as UTF-8: set the output encoding explicitly (stdout defaults to a code \
     page in some environments), truncate text on character boundaries, and base64-encode binary \
     data into `blob` or `data`.",
)
.run_wide();

pub(crate) const META_NAMES: Mcp25Rule = Mcp25Rule::new(
    "MCP25-RPC-012",
    "Every _meta key the server sends has a well-formed name",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic#meta"),
    "RPC",
    |s| meta_names(s).boxed(),
)
.says(
    "a `_meta` key is an optional prefix of dot-separated labels ending in `/`, then a name \
     that, unless empty, begins and ends with a letter or digit",
)
.help(
    "After every other rule and the passive probe, protocheck collects every `_meta` key in the \
     results of the run's conforming requests and in the params of the server's notifications \
     and of the requests the server sends, and checks each: an optional prefix of dot-separated labels ending in `/`, then a name that \
     begins and ends with a letter or digit.",
    "A key has a malformed name (a leading underscore, a space, a trailing dot, a prefix label \
     that starts with a digit). A key under a prefix reserved for MCP (second label \
     `modelcontextprotocol` or `mcp`) that 2025-11-25 does not define is reported as information.",
    "Name custom `_meta` keys under a reverse-DNS prefix you own, such as `com.example/trace-id`, \
     with names of letters, digits, `-`, `_` and `.` that begin and end with a letter or digit; \
     keep your own keys out of the reserved prefixes.",
)
.run_wide();

pub(crate) const RULES: &[Mcp25Rule] = &[
    ID_ECHOED,
    RESULT_XOR_ERROR,
    ERROR_SHAPE,
    PARSE_ERROR,
    INVALID_REQUEST,
    NULL_ID,
    METHOD_NOT_FOUND,
    NO_BATCH,
    NOTIFICATION_UNANSWERED,
    META_TOLERATED,
    UTF8,
    META_NAMES,
];

/// A method no revision of MCP defines.
const UNKNOWN_METHOD: &str = "protocheck/unknown-method";

/// Most problems named in one finding.
const MAX_NAMED: usize = 4;

/// Whether `got` is the id `sent`: the same value, or the same number.
fn same_id(sent: &Value, got: Option<&Value>) -> bool {
    match (sent, got) {
        (_, None) => false,
        (Value::Number(a), Some(Value::Number(b))) => a == b || a.as_f64() == b.as_f64(),
        (a, Some(b)) => a == b,
    }
}

/// A run-wide finding over `bad` (problem, exchange) out of the `seen`
/// answers; a pass shows the first of them, or `fallback` when there were none.
fn over_run(
    bad: Vec<(String, Exchange)>,
    seen: &[Seen],
    what: &str,
    fallback: &Exchange,
) -> Judgement {
    let total = seen.len();
    if bad.is_empty() {
        let j = Judgement::pass(format!("all {total} {what} of the run conform"));
        return j.with(seen.first().map_or(fallback, |first| &first.exchange));
    }
    let names: Vec<String> = bad.iter().map(|(p, _)| p.clone()).collect();
    let mut j = Judgement::fail(format!(
        "{} of {total} {what}: {}",
        bad.len(),
        some(&names, MAX_NAMED, "; ")
    ));
    for (_, exchange) in &bad {
        j = j.with(exchange);
    }
    j
}

/// MCP25-RPC-001's own requests: three `ping`s whose ids are a number, a
/// string `pc-N` and a string of digits.
pub(crate) struct IdPings;

/// Sends [`IdPings`] once per run, by whoever asks first: the engine, as
/// the rules start (the rule reads every answer of the run after every
/// other rule, but its pings need nothing the rules do), or the rule, when
/// the server negotiated another revision.
pub(crate) async fn id_pings(s: &Session) {
    s.shared(|| async {
        // Ids of both JSON types, one string that reads as a number.
        let ids = [
            json!(s.client.next_id()),
            json!(format!("pc-{}", s.client.next_id())),
            json!(s.client.next_id().to_string()),
        ];
        // Over HTTP side by side; over stdio one after another, so that the
        // child reads them in the same order on every run.
        let pings = ids
            .into_iter()
            .map(|id| s.main.request_with_id(id, "ping", json!({})));
        match s.transport() {
            Transport::Http => {
                futures::future::join_all(pings).await;
            }
            Transport::Stdio => {
                for ping in pings {
                    ping.await;
                }
            }
        }
        IdPings
    })
    .await;
}

async fn id_echoed(s: &Session) -> Judgement {
    id_pings(s).await;
    let seen = s.client.seen();
    let mut bad = Vec::new();
    for answer in &seen {
        let (Some(sent), Some(message)) = (&answer.id, &answer.message) else {
            continue;
        };
        let got = message.get("id");
        if !same_id(sent, got) {
            bad.push((
                format!(
                    "`{}` with id {sent} was answered with id {}",
                    answer.method,
                    got.map_or("(none)".to_owned(), |g| clip(&g.to_string(), 60))
                ),
                answer.exchange.clone(),
            ));
        }
    }
    over_run(bad, &seen, "answers to requests", &s.init.exchange)
}

/// What is wrong with `message` as a single JSON-RPC 2.0 response.
fn response_problems(message: &Value) -> Vec<&'static str> {
    let Some(obj) = message.as_object() else {
        return vec!["the answer is not a JSON object"];
    };
    let mut problems = Vec::new();
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        problems.push("`jsonrpc` is not \"2.0\"");
    }
    match (obj.contains_key("result"), obj.contains_key("error")) {
        (true, true) => problems.push("it has both `result` and `error`"),
        (false, false) => problems.push("it has neither `result` nor `error`"),
        _ => {}
    }
    if obj.get("result").is_some_and(|r| !r.is_object()) {
        problems.push("`result` is not an object");
    }
    problems
}

async fn result_xor_error(s: &Session) -> Judgement {
    let seen = s.client.seen();
    let mut bad = Vec::new();
    for answer in &seen {
        let Some(message) = &answer.message else {
            continue;
        };
        let problems = response_problems(message);
        if !problems.is_empty() {
            bad.push((
                format!("the answer to `{}`: {}", answer.method, problems.join(", ")),
                answer.exchange.clone(),
            ));
        }
    }
    over_run(bad, &seen, "responses", &s.init.exchange)
}

/// What is wrong with the `error` of an error response.
fn error_problems(error: &Value) -> Vec<String> {
    let Some(obj) = error.as_object() else {
        return vec!["`error` is not an object".to_owned()];
    };
    let mut problems = Vec::new();
    match obj.get("code") {
        Some(c) if as_integer(c).is_some() => {}
        Some(c) => problems.push(format!(
            "`error.code` {} is not an integer",
            clip(&c.to_string(), 40)
        )),
        None => problems.push("`error.code` is missing".to_owned()),
    }
    if !obj.get("message").is_some_and(Value::is_string) {
        problems.push("`error.message` is missing or not a string".to_owned());
    }
    problems
}

async fn error_shape(s: &Session) -> Judgement {
    let seen = s.client.seen();
    let errors: Vec<&Seen> = seen
        .iter()
        .filter(|a| a.message.as_ref().is_some_and(|m| m.get("error").is_some()))
        .collect();
    let mut bad = Vec::new();
    for answer in &errors {
        let Some(error) = answer.message.as_ref().and_then(|m| m.get("error")) else {
            continue;
        };
        let problems = error_problems(error);
        if !problems.is_empty() {
            bad.push((
                format!(
                    "the error answering `{}`: {}",
                    answer.method,
                    problems.join(", ")
                ),
                answer.exchange.clone(),
            ));
        }
    }
    let errors: Vec<Seen> = errors.into_iter().cloned().collect();
    over_run(bad, &errors, "error responses", &s.init.exchange)
}

/// How a probe's silence is judged.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Silence {
    /// Not answering is one of the accepted answers.
    Accepted,
    /// The probe must be answered.
    Fails,
}

/// Judges the answer to a frame that must be refused with `want`: that
/// code passes; another error code warns (refused, with other words); an
/// HTTP 4xx passes (the transport's way to refuse input); a result, a 2xx
/// without an error, a 5xx or a dropped connection fail; silence is
/// judged as `silence` says.
fn judge_refusal(reply: &Reply, what: &str, want: i64, name: &str, silence: Silence) -> Judgement {
    if reply.result().is_some() {
        return Judgement::fail(format!(
            "{what} was answered with a result: it was processed instead of refused with \
             {want} ({name})"
        ))
        .reply(reply);
    }
    match reply.error_code() {
        Some(c) if c == want => {
            return Judgement::pass(format!("{what} was answered {}", reply.describe()))
                .reply(reply);
        }
        Some(_) if reply.status.is_some_and(|st| (400..500).contains(&st)) => {
            return Judgement::pass(format!(
                "{what} was refused {} (an HTTP 4xx refuses it whatever the code)",
                reply.describe()
            ))
            .reply(reply);
        }
        Some(_) => {
            return Judgement::warn(format!(
                "{what} was refused, but {} instead of {want} ({name})",
                reply.describe()
            ))
            .reply(reply);
        }
        None => {}
    }
    match reply.status {
        Some(status) if (400..500).contains(&status) => {
            return Judgement::pass(format!("{what} was refused {}", reply.describe()))
                .reply(reply);
        }
        Some(_) => {
            return Judgement::fail(format!(
                "{what} was answered {}, neither JSON-RPC error {want} ({name}) nor an HTTP 4xx",
                reply.describe()
            ))
            .reply(reply);
        }
        None => {}
    }
    if reply.message.is_some() {
        return Judgement::fail(format!(
            "{what} was answered {}, not with error {want} ({name})",
            reply.describe()
        ))
        .reply(reply);
    }
    if let Some(err) = &reply.error
        && !matches!(err, TransportError::Timeout(_))
    {
        return Judgement::fail(format!("{what} broke the connection: {err}")).reply(reply);
    }
    match silence {
        Silence::Accepted => Judgement::pass(format!(
            "{what} got no answer (no line before the reply to a `ping` sent after it)"
        ))
        .reply(reply),
        Silence::Fails => Judgement::fail(format!(
            "{what} got no answer: it is refused with error {want} ({name})"
        ))
        .reply(reply),
    }
}

/// A `ping` on `conn` before a probe that may stop it serving, for
/// [`still_serving`] to compare with.
async fn ping_before(conn: &Connection) -> Reply {
    conn.request("ping", json!({})).await
}

/// Whether `conn` still serves after a probe: a `ping` after it must be
/// answered as the one `before` it was (so that a broken `ping`,
/// MCP25-UTL-001's matter, fails no other rule). A server that stopped
/// fails the probe's rule; when nothing can tell, a passing probe is not
/// verified.
async fn still_serving(
    conn: &Connection,
    before: &Reply,
    after: Judgement,
    what: &str,
) -> Judgement {
    if matches!(after.kind, Kind::Skip) {
        return after;
    }
    let ping = conn.request("ping", json!({})).await;
    match serving(before, &ping) {
        Serving::Yes => after,
        Serving::No(why) => {
            Judgement::fail(format!("after {what}, the server stopped serving: {why}"))
                .reply(&ping)
                .with(after.evidence.first().unwrap_or(&ping.exchange))
        }
        Serving::Unknown(_) if after.kind != Kind::Pass => after,
        Serving::Unknown(why) => Judgement::skip(format!(
            "not verified: whether the server still serves after {what}: {why}"
        ))
        .reply(before)
        .reply(&ping),
    }
}

/// Silence is an accepted answer on stdio only: over HTTP every POST gets a
/// status, and none within the timeout is a server that hung.
fn silence_on_stdio(s: &Session) -> Silence {
    match s.transport() {
        Transport::Stdio => Silence::Accepted,
        Transport::Http => Silence::Fails,
    }
}

/// The texts that are not JSON MCP25-RPC-004 sends, one of each kind:
/// truncated, a whole request followed by trailing data, a JavaScript-style
/// object (single quotes, a bare key), and an empty body (over HTTP only:
/// on stdio an empty line is no message at all); each with the id of the
/// request inside it, when it holds one a server could answer.
fn not_json(s: &Session) -> Vec<(&'static str, String, Option<Value>)> {
    let id = json!(s.client.next_id());
    let mut texts = vec![
        (
            "a truncated JSON text",
            r#"{"jsonrpc":"2.0","id":1,"#.to_owned(),
            None,
        ),
        (
            "a `ping` followed by trailing data",
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}} protocheck"#),
            Some(id),
        ),
        (
            "an object with single quotes and a bare key",
            "{'jsonrpc':'2.0',id:1,'method':'ping'}".to_owned(),
            None,
        ),
    ];
    if s.transport() == Transport::Http {
        texts.push(("an empty body", String::new(), None));
    }
    texts
}

async fn parse_error(s: &Session) -> Judgement {
    let mut probing = match Probing::open(s).await {
        Ok(probing) => probing,
        Err(j) => return j,
    };
    let texts = not_json(s);
    let mut judged = Vec::new();
    let whats: Vec<&str> = texts.iter().map(|(what, _, _)| *what).collect();
    let texts = texts
        .into_iter()
        .map(|(_, t, id)| (t, id.into_iter().collect()))
        .collect();
    let sent = match probing.send(s, "malformed JSON", texts).await {
        Ok(sent) => sent,
        Err(j) => return probing.abandon(j).await,
    };
    let any_ended = sent.iter().any(|x| x.ended.is_some());
    for (what, Sent { reply, ended }) in whats.into_iter().zip(sent) {
        let j = match reply.status {
            // A 5xx refuses the text, as a server error: the catalogue reports it as a warn.
            Some(status) if status >= 500 && reply.result().is_none() => Judgement::warn(format!(
                "{what} was answered {}: a server error instead of -32700 (Parse error) or \
                     an HTTP 4xx",
                reply.describe()
            ))
            .reply(&reply),
            _ => judge_refusal(
                &reply,
                what,
                code::PARSE_ERROR,
                "Parse error",
                silence_on_stdio(s),
            ),
        };
        judged.push(after_exit(j, what, &reply, ended.as_deref()));
    }
    let j = super::session::worst_of(judged);
    probing
        .finish(s, j, any_ended, "texts that are not JSON")
        .await
}

/// What one message that may stop the server got.
struct Sent {
    reply: Reply,
    /// On stdio, how the server's process ended after the message, when it
    /// did: the pipe's error, with the exit status and the end of stderr.
    ended: Option<String>,
}

/// A rule's messages that may stop the server: where they go, and the
/// `ping` before them that [`still_serving`] compares with the one after.
/// Over HTTP they go on the run's connection (every POST stands alone); on
/// stdio to a child of the rule's own, initialized at 2025-11-25, so that a
/// process a malformed line ends is never the one the other rules use.
struct Probing {
    own: Option<Connection>,
    before: Reply,
}

impl Probing {
    async fn open(s: &Session) -> Result<Self, Judgement> {
        let own = match s.transport() {
            Transport::Http => None,
            Transport::Stdio => Some(s.initialized_connection().await?),
        };
        let before = ping_before(own.as_ref().unwrap_or(&s.main)).await;
        Ok(Self { own, before })
    }

    /// Sends `texts` (see [`send_frames`]).
    async fn send(
        &mut self,
        s: &Session,
        label: &str,
        texts: Vec<(String, Vec<Value>)>,
    ) -> Result<Vec<Sent>, Judgement> {
        send_frames(s, &mut self.own, label, texts).await
    }

    /// `j` as the rule's finding once the probe cannot go on; the rule's
    /// child, if any, is ended.
    async fn abandon(self, j: Judgement) -> Judgement {
        if let Some(conn) = self.own {
            conn.close().await;
        }
        j
    }

    /// The rule's finding from `j`, the worst of its messages' judgements:
    /// why an exit warns, said once when one of them ended the process
    /// (`any_ended`), and whether the server still serves after `what`;
    /// the rule's child, if any, is ended.
    async fn finish(self, s: &Session, j: Judgement, any_ended: bool, what: &str) -> Judgement {
        let j = exits_explained(j, any_ended);
        let j = still_serving(self.own.as_ref().unwrap_or(&s.main), &self.before, j, what).await;
        self.abandon(j).await
    }
}

/// Sends each of `texts` as a frame of its own and reads what each got:
/// over HTTP side by side on the run's connection (each POST stands alone),
/// on stdio one after another on `own` (a line each, silence read up to a
/// barrier). The ids a text carries inside it are retired once the
/// text is answered (on stdio a late answer to it is then not taken for
/// another's). On stdio, when a text ends the process, the next text goes
/// to a new child, initialized as the first was: each text is judged on a
/// process that read it, never on a dead pipe. `own` is then the child the
/// last text went to.
async fn send_frames(
    s: &Session,
    own: &mut Option<Connection>,
    label: &str,
    texts: Vec<(String, Vec<Value>)>,
) -> Result<Vec<Sent>, Judgement> {
    let Some(conn) = own.as_mut() else {
        let sends = texts
            .into_iter()
            .map(|(text, _)| s.main.send_frame(label, text, Awaiting::Nothing));
        let replies = futures::future::join_all(sends).await;
        return Ok(replies
            .into_iter()
            .map(|reply| Sent { reply, ended: None })
            .collect());
    };
    let mut sent = Vec::new();
    for (text, ids) in texts {
        let reply = conn.send_frame(label, text, Awaiting::Nothing).await;
        if !ids.is_empty() {
            conn.retire(&ids).await;
        }
        let ended = ended_after(conn, &reply).await;
        if ended.is_some() {
            let fresh = s.initialized_connection().await?;
            let dead = std::mem::replace(conn, fresh);
            dead.close().await;
        }
        sent.push(Sent { reply, ended });
    }
    Ok(sent)
}

/// Whether the process behind `conn` (stdio) ended after the message
/// `reply` answers, and how: the pipe's error, when the exchange met one;
/// else the error a `ping` then meets. The barrier that reads silence waits
/// for a window derived from the run's pace, which a process's exit may
/// outlast on a loaded machine; the `ping` waits for its own answer, so the
/// exit is seen on every run, with the message that caused it.
async fn ended_after(conn: &Connection, reply: &Reply) -> Option<String> {
    let broken = |r: &Reply| {
        r.error
            .as_ref()
            .filter(|e| {
                !matches!(
                    e,
                    TransportError::Timeout(_) | TransportError::TooLarge { .. }
                )
            })
            .map(ToString::to_string)
    };
    if let Some(how) = broken(reply) {
        return Some(how);
    }
    let ping = conn.request("ping", json!({})).await;
    if ping.message.is_some() {
        return None;
    }
    broken(&ping)
}

/// The judgement of a message after which the server's process ended (on
/// stdio). The transport forbids the client to write such a line ("The
/// client MUST NOT write anything to the server's stdin that is not a valid
/// MCP message") and no sentence says what the server does with one, so an
/// exit breaks no requirement; but the client loses the session and
/// everything in flight: a robustness warning, with what was sent and how
/// the process ended.
fn ended_process(what: &str, reply: &Reply, how: &str) -> Judgement {
    // What the process wrote last on stderr is often an error line among
    // log lines or before usage text: the last (at most two) lines that
    // speak of an error, else the last two, on one line of the finding; the
    // rest is counted.
    const SHOWN_LINES: usize = 2;
    // Whether the pipe error came from writing or from reading depends on
    // how soon the process was gone: the exit status and stderr, which the
    // pipe's error ends with, are the same either way.
    let how = how.find("(exit status").map_or(how, |at| &how[at..]);
    const STDERR: &str = "; its stderr ended with: ";
    let (head, tail) = how.split_once(STDERR).unwrap_or((how, ""));
    let lines: Vec<&str> = tail
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let speaks_of_error = |l: &&str| {
        let l = l.to_ascii_lowercase();
        ["error", "fatal", "panic", "exception"]
            .iter()
            .any(|w| l.contains(w))
    };
    let mut picked: Vec<&str> = lines.iter().copied().filter(speaks_of_error).collect();
    if picked.is_empty() {
        picked = lines.clone();
    }
    let picked = &picked[picked.len().saturating_sub(SHOWN_LINES)..];
    let mut shown: Vec<String> = picked.iter().map(|l| clip(l, 300)).collect();
    if lines.len() > picked.len() {
        shown.push(format!("(of {} lines)", lines.len()));
    }
    let how = if tail.is_empty() {
        head.to_owned()
    } else {
        format!("{head}{STDERR}{}", shown.join(" ⏎ "))
    };
    Judgement::warn(format!("{what} ended the server's process {how}")).reply(reply)
}

/// Why an exit warns, said once after the judgements of a rule's messages
/// when one of them ended the process (see [`ended_process`]).
fn exits_explained(mut j: Judgement, any_ended: bool) -> Judgement {
    if j.kind == Kind::Warn && any_ended {
        j.message = format!(
            "{}. A robustness warning, not a failure: the client broke its own MUST by writing \
             such a message, and the specification does not say what the server does with one, \
             but a process that exits on it ends its client's session. protocheck started a new \
             process, initialized, for each message after one that ended it",
            j.message
        );
    }
    j
}

/// `j`, the judgement of what a message got, once the process may have
/// ended after it (`ended`, on stdio): an answer that breaks the rule still
/// fails (a result to a `ping` with trailing data, written before the
/// process read on and exited); anything else, no answer included, is the
/// robustness warning of [`ended_process`].
fn after_exit(j: Judgement, what: &str, reply: &Reply, ended: Option<&str>) -> Judgement {
    match ended {
        Some(how) if j.kind != Kind::Fail || reply.message.is_none() => {
            ended_process(what, reply, how)
        }
        _ => j,
    }
}

/// The invalid request objects MCP25-RPC-005 sends, each with a fresh id
/// where it has one: what each lacks or bends, and the object.
fn invalid_requests(s: &Session) -> Vec<(&'static str, Value, Option<Value>)> {
    let fresh = || json!(s.client.next_id());
    let (a, b, c, d) = (fresh(), fresh(), fresh(), fresh());
    vec![
        (
            "a request object without `method`",
            json!({"jsonrpc": "2.0", "id": a}),
            Some(a),
        ),
        (
            "a request object whose `method` is a number",
            json!({"jsonrpc": "2.0", "id": b, "method": 42}),
            Some(b),
        ),
        (
            "a `ping` whose `jsonrpc` is \"1.0\"",
            json!({"jsonrpc": "1.0", "id": c, "method": "ping"}),
            Some(c),
        ),
        (
            "a `ping` without `jsonrpc`",
            json!({"id": d, "method": "ping"}),
            Some(d),
        ),
        (
            "a `ping` whose `id` is a boolean",
            json!({"jsonrpc": "2.0", "id": true, "method": "ping"}),
            None,
        ),
    ]
}

async fn invalid_request(s: &Session) -> Judgement {
    let mut probing = match Probing::open(s).await {
        Ok(probing) => probing,
        Err(j) => return j,
    };
    let mut judged = Vec::new();
    let objects = invalid_requests(s);
    let texts = objects
        .iter()
        .map(|(_, frame, id)| (frame.to_string(), id.iter().cloned().collect()))
        .collect();
    let sent = match probing.send(s, "invalid request", texts).await {
        Ok(sent) => sent,
        Err(j) => return probing.abandon(j).await,
    };
    let any_ended = sent.iter().any(|x| x.ended.is_some());
    for ((what, frame, _), Sent { reply, ended }) in objects.into_iter().zip(sent) {
        let no_method = frame.get("method").is_none();
        // An id that is no string or number leaves the object without a
        // usable id: a server may read it as a notification, as MCP25-RPC-006
        // accepts for a null id, and accept it with 202 and no body.
        let unusable_id = frame.get("id").is_some_and(Value::is_boolean);
        let j = match reply.status {
            // A server error refuses the object, as MCP25-RPC-004 and
            // MCP25-RPC-008 judge one: the same warning (prefer a 4xx).
            Some(status) if status >= 500 && reply.result().is_none() => Judgement::warn(format!(
                "{what} was answered {}: a server error instead of -32600 (Invalid Request) \
                     or an HTTP 4xx",
                reply.describe()
            ))
            .reply(&reply),
            // `{"jsonrpc":"2.0","id":N}` has neither `method` nor `result` or
            // `error`: it is as much a malformed response as a malformed
            // request, and a POSTed response the server ignores is answered
            // 202 with no body (MCP25-HTP-003 accepts exactly that).
            Some(202) if no_method && reply.message.is_none() && reply.body_len == 0 => {
                Judgement::pass(format!(
                    "{what} was answered 202 with no body: accepted and ignored, as a POSTed \
                     response may be (the object, with an `id` and neither `method` nor \
                     `result`/`error`, reads as a malformed response as well as a malformed \
                     request)"
                ))
                .reply(&reply)
            }
            Some(202) if unusable_id && reply.message.is_none() && reply.body_len == 0 => {
                Judgement::pass(format!(
                    "{what} was answered 202 with no body: not processed as a request (an object \
                     without a usable id may be read as a notification)"
                ))
                .reply(&reply)
            }
            // On stdio a server may drop a line that is no JSON-RPC message as
            // long as it keeps answering (digest, decision D11): the line breaks
            // the client's own MUST.
            _ => judge_refusal(
                &reply,
                what,
                code::INVALID_REQUEST,
                "Invalid Request",
                silence_on_stdio(s),
            ),
        };
        judged.push(after_exit(j, what, &reply, ended.as_deref()));
    }
    let j = super::session::worst_of(judged);
    probing
        .finish(s, j, any_ended, "five invalid request objects")
        .await
}

async fn null_id(s: &Session) -> Judgement {
    let frame = json!({"jsonrpc": "2.0", "id": null, "method": "ping"});
    let reply = s
        .main
        .send_frame("null id", frame.to_string(), Awaiting::Nothing)
        .await;
    let what = "a `ping` whose id is null";
    // The rule forbids processing it as a request. An error (-32600 is the
    // preferred code), an HTTP 4xx, or no answer at all (a server may read
    // an object without a usable id as a notification) each refuse it.
    if reply.result().is_some() {
        return Judgement::fail(format!(
            "{what} was answered {}: it was processed as a normal request",
            reply.describe()
        ))
        .reply(&reply);
    }
    if reply.unanswered()
        && let Some(err) = reply
            .error
            .as_ref()
            .filter(|e| !matches!(e, TransportError::Timeout(_)))
    {
        return Judgement::skip(format!("not verified: {what} could not be sent: {err}"))
            .reply(&reply);
    }
    let how = if reply.error_code() == Some(code::INVALID_REQUEST) {
        reply.describe()
    } else if reply.message.is_some() || reply.body_len > 0 {
        format!("{} (-32600 is the preferred refusal)", reply.describe())
    } else if reply.status.is_some() {
        format!("{}, so it was not processed", reply.describe())
    } else {
        "no answer (no line before the reply to a `ping` sent after it)".to_owned()
    };
    Judgement::pass(format!("{what} was not processed: {how}")).reply(&reply)
}

/// How `method`, which no server serves, was answered.
async fn method_not_found_one(s: &Session, method: &str) -> Judgement {
    let reply = s.main.request(method, json!({})).await;
    if reply.unanswered()
        && let Some(err) = reply
            .error
            .as_ref()
            .filter(|e| !matches!(e, TransportError::Timeout(_)))
    {
        return Judgement::skip(format!("not verified: `{method}` could not be sent: {err}"))
            .reply(&reply);
    }
    let j = judge_refusal(
        &reply,
        &format!("`{method}`"),
        code::METHOD_NOT_FOUND,
        "Method not found",
        Silence::Fails,
    );
    // Refused, but not with -32601: a warning, not a failure. The MUST
    // (BASIC "Messages": messages "MUST follow the JSON-RPC 2.0
    // specification") is met by an error response; JSON-RPC 2.0 defines
    // -32601 as "Method not found" without a keyword on choosing it, and
    // this revision words its own error-code choices as SHOULD (server/prompts,
    // "Error Handling": "Servers SHOULD return standard JSON-RPC errors for
    // common failure cases"). A result, silence, a 5xx or a
    // broken connection still fail. An HTTP 4xx without the code is refused
    // too, but without the code this rule is about: the same warning.
    let refused_otherwise = match j.kind {
        Kind::Warn => true,
        Kind::Pass => reply.error_code() != Some(code::METHOD_NOT_FOUND),
        _ => false,
    };
    if refused_otherwise {
        return Judgement::warn(format!(
            "`{method}` was answered {}: refused, but not with -32601 (Method not \
             found). A warning, not a failure: the refusal is the error response that the MUST \
             (messages follow JSON-RPC 2.0) requires; JSON-RPC 2.0 defines -32601 for a method \
             that does not exist but puts no keyword on choosing it, and 2025-11-25 words its \
             own error-code choices as SHOULD (\"Servers SHOULD return standard JSON-RPC \
             errors for common failure cases\"). A result, no answer or a broken connection \
             fails",
            reply.describe()
        ))
        .reply(&reply);
    }
    j
}

/// The unknown methods MCP25-RPC-007 sends: outside every namespace, and
/// inside each namespace of the protocol (a dispatcher that routes by
/// prefix may mishandle those alone).
const UNKNOWN_METHODS: [&str; 8] = [
    UNKNOWN_METHOD,
    "protocheck_unknown",
    "tools/protocheck_unknown",
    "resources/protocheck_unknown",
    "prompts/protocheck_unknown",
    "completion/protocheck_unknown",
    "logging/protocheck_unknown",
    "tasks/protocheck_unknown",
];

async fn method_not_found(s: &Session) -> Judgement {
    let judged =
        futures::future::join_all(UNKNOWN_METHODS.iter().map(|m| method_not_found_one(s, m))).await;
    let mut j = super::session::worst_of(judged);
    if j.kind == Kind::Pass {
        j.message = format!(
            "each of {} unknown methods ({}) got -32601",
            UNKNOWN_METHODS.len(),
            UNKNOWN_METHODS
                .iter()
                .map(|m| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    j
}

async fn no_batch(s: &Session) -> Judgement {
    let mut probing = match Probing::open(s).await {
        Ok(probing) => probing,
        Err(j) => return j,
    };
    let ids = [json!(s.client.next_id()), json!(s.client.next_id())];
    let batch = json!([
        {"jsonrpc": "2.0", "id": ids[0], "method": "ping"},
        {"jsonrpc": "2.0", "id": ids[1], "method": "ping"},
    ]);
    let sent = match probing
        .send(s, "batch", vec![(batch.to_string(), ids.to_vec())])
        .await
    {
        Ok(sent) => sent,
        Err(j) => return probing.abandon(j).await,
    };
    let Some(Sent { reply, ended }) = sent.into_iter().next() else {
        return probing
            .abandon(Judgement::skip("not verified: the batch was not sent"))
            .await;
    };
    let what = "a batch of two `ping`s";
    let j = if let Some(Value::Array(items)) = &reply.message {
        Judgement::fail(format!(
            "{what} was answered with a JSON array of {} items: a batch is not a message of \
             this revision",
            items.len()
        ))
        .reply(&reply)
    } else if reply.result().is_some() {
        Judgement::info(format!(
            "{what} was answered {}: the server split the batch and processed its members",
            reply.describe()
        ))
        .reply(&reply)
    } else if reply.error_object().is_some() {
        Judgement::pass(format!("{what} was refused {}", reply.describe())).reply(&reply)
    } else {
        match reply.status {
            Some(status) if (400..500).contains(&status) => {
                Judgement::pass(format!("{what} was refused {}", reply.describe())).reply(&reply)
            }
            // A server error refuses the batch, with no array in it (which
            // is what this rule forbids): a warning, as MCP25-RPC-004 and
            // MCP25-RPC-005 judge a 5xx to an invalid message (prefer 4xx).
            Some(status) if status >= 500 => Judgement::warn(format!(
                "{what} was answered {}: refused, but with a server error; an HTTP 4xx or one \
                 JSON-RPC error (such as -32600) says it was the client's message",
                reply.describe()
            ))
            .reply(&reply),
            Some(_) => Judgement::fail(format!(
                "{what} was answered {}: neither an HTTP 4xx nor one JSON-RPC error",
                reply.describe()
            ))
            .reply(&reply),
            None if reply.unanswered()
                && reply
                    .error
                    .as_ref()
                    .is_some_and(|e| !matches!(e, TransportError::Timeout(_))) =>
            {
                Judgement::fail(format!("{what} broke the connection: {}", reply.describe()))
                    .reply(&reply)
            }
            None => Judgement::pass(format!(
                "{what} got no answer (no line before the reply to a `ping` sent after it)"
            ))
            .reply(&reply),
        }
    };
    let j = after_exit(j, what, &reply, ended.as_deref());
    probing.finish(s, j, ended.is_some(), what).await
}

async fn notification_unanswered(s: &Session) -> Judgement {
    let unknown = s
        .main
        .notify("notifications/protocheck_unknown", json!({}))
        .await;
    let cancelled = s
        .main
        .notify(
            "notifications/cancelled",
            json!({"requestId": format!("pc-never-sent-{}", s.client.next_id()),
                   "reason": "protocheck: no such request"}),
        )
        .await;
    // Progress for a token the server never gave: a client sends progress
    // only for the server's own requests, so this one names none.
    let progress = s
        .main
        .notify(
            "notifications/progress",
            json!({"progressToken": format!("pc-never-given-{}", s.client.next_id()),
                   "progress": 1, "message": "protocheck: no such token"}),
        )
        .await;
    let first = judge_unanswered(&unknown, "an unknown notification");
    let second = judge_unanswered(
        &cancelled,
        "`notifications/cancelled` for an unknown request",
    );
    let third = judge_unanswered(
        &progress,
        "`notifications/progress` for a token the server never gave",
    );
    combine(combine(first, second), third)
}

/// The worse of two judgements on parts of one rule, with both messages.
fn combine(a: Judgement, b: Judgement) -> Judgement {
    let rank = |k: Kind| match k {
        Kind::Fail => 4,
        Kind::Warn => 3,
        Kind::Info => 2,
        Kind::Skip => 1,
        Kind::Pass => 0,
    };
    let (worse, other) = if rank(b.kind) > rank(a.kind) {
        (b, a)
    } else {
        (a, b)
    };
    let message = format!("{}; {}", worse.message, other.message);
    let mut joined = Judgement { message, ..worse };
    for exchange in &other.evidence {
        joined = joined.with(exchange);
    }
    joined
}

async fn meta_tolerated(s: &Session) -> Judgement {
    let method = if s.advertises("tools") {
        "tools/list"
    } else {
        "ping"
    };
    let plain = s.main.request(method, json!({})).await;
    let token = format!("pc-progress-{}", s.client.next_id());
    let params = json!({"_meta": {"dev.protocheck/probe": "meta", "progressToken": token}});
    let with_meta = s.main.request(method, params).await;
    if plain.unanswered() || with_meta.unanswered() {
        return Judgement::skip(format!(
            "not verified: `{method}` got {}",
            if plain.unanswered() {
                plain.describe()
            } else {
                with_meta.describe()
            }
        ))
        .reply(&plain)
        .reply(&with_meta);
    }
    if with_meta.error_object().is_some() && plain.error_object().is_none() {
        return Judgement::fail(format!(
            "`{method}` with `params._meta` was answered {}, while the same request without it \
             was answered {}",
            with_meta.describe(),
            plain.describe()
        ))
        .reply(&with_meta)
        .reply(&plain);
    }
    Judgement::pass(format!(
        "`{method}` was answered {} with `params._meta` as without it",
        with_meta.describe()
    ))
    .reply(&with_meta)
    .reply(&plain)
}

async fn utf8(s: &Session) -> Judgement {
    s.passive_probe().await;
    let bad = s.client.not_utf8();
    if bad.is_empty() {
        let hint = if s.transport() == Transport::Stdio {
            " (stdout lines are checked for bytes that had to be replaced to be read)"
        } else {
            ""
        };
        return Judgement::pass(format!("every answer of the run was valid UTF-8{hint}"))
            .with(&s.init.exchange);
    }
    let mut j = Judgement::fail(format!(
        "{} answer{} of the run {} not valid UTF-8",
        bad.len(),
        if bad.len() == 1 { "" } else { "s" },
        if bad.len() == 1 { "was" } else { "were" }
    ));
    for exchange in &bad {
        j = j.with(exchange);
    }
    j
}

/// What is wrong with a `_meta` key name (basic, "General fields"), if
/// anything: `None` for a well-formed name, `Some(Err)` for a malformed one,
/// `Some(Ok)` for a name under a prefix reserved for MCP.
fn meta_key_problem(key: &str) -> Option<Result<&'static str, &'static str>> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    let alnum = |c: char| c.is_ascii_alphanumeric();
    if !name.is_empty() {
        let ends = name.starts_with(alnum) && name.ends_with(alnum);
        let inner = name.chars().all(|c| alnum(c) || "-_.".contains(c));
        if !ends || !inner {
            return Some(Err(
                "its name does not begin and end with a letter or digit, or holds \
                             characters other than letters, digits, `-`, `_` and `.`",
            ));
        }
    }
    let prefix = prefix?;
    let labels: Vec<&str> = prefix.split('.').collect();
    let label_ok = |l: &&str| {
        l.starts_with(|c: char| c.is_ascii_alphabetic())
            && l.ends_with(alnum)
            && l.chars().all(|c| alnum(c) || c == '-')
    };
    if !labels.iter().all(label_ok) {
        return Some(Err(
            "its prefix is not dot-separated labels that begin with a letter, \
                         end with a letter or digit and hold only letters, digits and `-`",
        ));
    }
    matches!(labels.get(1), Some(&("modelcontextprotocol" | "mcp")))
        .then_some(Ok("its prefix is reserved for MCP"))
}

/// Every `_meta` object inside `value`, with the keys of each.
fn meta_keys<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                if key == "_meta"
                    && let Some(meta) = inner.as_object()
                {
                    out.extend(meta.keys().map(String::as_str));
                }
                meta_keys(inner, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| meta_keys(i, out)),
        _ => {}
    }
}

/// The `_meta` keys the revision itself defines under its reserved prefix.
const DEFINED_RESERVED: &[&str] = &["io.modelcontextprotocol/related-task"];

async fn meta_names(s: &Session) -> Judgement {
    s.passive_probe().await;
    let seen = s.client.seen();
    let notes = s.client.notifications();
    let requests = s.client.server_requests();
    // Each `_meta` key of the run, with the exchange that carried it (a
    // notification's is not kept, so it has none).
    let mut keys: Vec<(&str, Option<&Exchange>)> = Vec::new();
    for answer in &seen {
        let mut found = Vec::new();
        if let Some(result) = answer.message.as_ref().and_then(|m| m.get("result")) {
            meta_keys(result, &mut found);
        }
        keys.extend(found.into_iter().map(|k| (k, Some(&answer.exchange))));
    }
    for note in &notes {
        let mut found = Vec::new();
        if let Some(params) = note.get("params") {
            meta_keys(params, &mut found);
        }
        keys.extend(found.into_iter().map(|k| (k, None)));
    }
    for (request, exchange) in &requests {
        let mut found = Vec::new();
        if let Some(params) = request.get("params") {
            meta_keys(params, &mut found);
        }
        keys.extend(found.into_iter().map(|k| (k, Some(exchange))));
    }
    judge_meta_keys(&keys, &s.init.exchange)
}

/// RPC-012's verdict on the `_meta` keys of the run, each with the exchange
/// that carried it when one was kept; `fallback` is the evidence when none was.
fn judge_meta_keys(keys: &[(&str, Option<&Exchange>)], fallback: &Exchange) -> Judgement {
    if keys.is_empty() {
        return Judgement::skip(
            "not applicable: no `_meta` key came in a result, notification or request",
        );
    }
    let mut malformed: Vec<(String, Option<&Exchange>)> = Vec::new();
    let mut reserved: Vec<(String, Option<&Exchange>)> = Vec::new();
    for (key, exchange) in keys {
        match meta_key_problem(key) {
            Some(Err(why)) => malformed.push((format!("`{}`: {why}", clip(key, 80)), *exchange)),
            Some(Ok(_)) if !DEFINED_RESERVED.contains(key) => reserved.push((
                format!("`{}` uses a prefix reserved for MCP", clip(key, 80)),
                *exchange,
            )),
            _ => {}
        }
    }
    let list = |items: &[(String, Option<&Exchange>)]| {
        let mut names: Vec<String> = items.iter().map(|(p, _)| p.clone()).collect();
        names.dedup();
        some(&names, MAX_NAMED, "; ")
    };
    let with_evidence = |mut j: Judgement, items: &[(String, Option<&Exchange>)]| {
        for exchange in items.iter().filter_map(|(_, e)| *e) {
            j = j.with(exchange);
        }
        if j.evidence.is_empty() {
            j = j.with(keys.iter().find_map(|(_, e)| *e).unwrap_or(fallback));
        }
        j
    };
    if !malformed.is_empty() {
        return with_evidence(
            Judgement::fail(format!("malformed `_meta` keys: {}", list(&malformed))),
            &malformed,
        );
    }
    if !reserved.is_empty() {
        // The text reserves the prefix without a keyword: reported, never failed.
        return with_evidence(
            Judgement::info(format!(
                "`_meta` keys under a reserved prefix that 2025-11-25 does not define: {}",
                list(&reserved)
            )),
            &reserved,
        );
    }
    with_evidence(
        Judgement::pass(format!(
            "all {} `_meta` keys of the run are well-formed",
            keys.len()
        )),
        &[],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{RequestRecord, ResponseRecord};

    fn exchange(body: &str) -> Exchange {
        Exchange {
            request: RequestRecord {
                line: "POST /mcp".into(),
                headers: Vec::new(),
                body: String::new(),
            },
            response: Some(ResponseRecord {
                status: Some(200),
                headers: Vec::new(),
                body: body.into(),
                truncated: false,
                elapsed_ms: 0,
            }),
            error: None,
        }
    }

    #[test]
    fn meta_keys_of_server_requests_are_judged() {
        // A `sampling/createMessage` request the server sent, recorded with
        // the exchange that carried it.
        let request = json!({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage",
            "params": {"_meta": {"dev..example/trace id": 1}, "messages": [], "maxTokens": 5}});
        let carried = exchange(&request.to_string());
        let init = exchange("{}");
        let mut found = Vec::new();
        meta_keys(&request["params"], &mut found);
        let keys: Vec<(&str, Option<&Exchange>)> =
            found.into_iter().map(|k| (k, Some(&carried))).collect();
        let verdict = judge_meta_keys(&keys, &init);
        assert_eq!(verdict.kind, Kind::Fail, "{}", verdict.message);
        assert!(verdict.message.contains("dev..example/trace id"));
        assert_eq!(verdict.evidence.len(), 1);
        assert!(
            verdict.evidence[0]
                .response
                .as_ref()
                .is_some_and(|r| r.body.contains("sampling"))
        );

        let good = json!({"_meta": {"com.example/trace-id": 1, "progressToken": 3}});
        let mut found = Vec::new();
        meta_keys(&good, &mut found);
        let keys: Vec<(&str, Option<&Exchange>)> = found.into_iter().map(|k| (k, None)).collect();
        assert_eq!(judge_meta_keys(&keys, &init).kind, Kind::Pass);
        assert_eq!(judge_meta_keys(&[], &init).kind, Kind::Skip);
    }
}
