//! The HTP rules and their checks, on the probes of the parent module.

use super::sessions::{
    deleted_404, origin, session_ascii, session_required, session_unique, unknown_404,
    version_header,
};
use super::{
    End, PostStream, Raw, Read, end_linger, get, is_response, linger, own_session, post_ping,
    post_streams, rule,
};
use crate::suite::Outcome;
use crate::suite::mcp::Keyword;
use crate::suite::mcp::client::clip;
use crate::suite::mcp2025::client::{Awaiting, Reply};
use crate::suite::mcp2025::rule::{Mcp25Rule, spec};
use crate::suite::mcp2025::session::{Judgement, Session};
use futures::FutureExt;
use serde_json::{Value, json};
use std::collections::HashMap;

pub(crate) const CONTENT_TYPE: Mcp25Rule = rule(
    "MCP25-HTP-001",
    "A POSTed request is answered with application/json or text/event-stream",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports#sending-messages-to-the-server"),
    |s| content_type(s).boxed(),
)
.says(
    "a server answers a POSTed request either with Content-Type text/event-stream (an SSE \
     stream) or application/json (one JSON object)",
)
.help(
    "After every other rule, protocheck reads the `Content-Type` of every 2xx answer to a \
     conforming request of the run and compares its media type, case-insensitively and without \
     parameters, with `application/json` and `text/event-stream`.",
    "A 2xx answer carries `text/plain`, `text/html` or no `Content-Type`, most often because a \
     framework's default content type was left in place, or a reverse proxy or gateway rewrote \
     the header.",
    "Set `Content-Type: application/json` on JSON answers and `Content-Type: text/event-stream` \
     on SSE streams explicitly in the handler, and check that proxies in front of the server pass \
     it through.",
)
.run_wide();

pub(crate) const ACCEPTED_202: Mcp25Rule = rule(
    "MCP25-HTP-002",
    "An accepted notification POST returns 202 with an empty body",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports#sending-messages-to-the-server"),
    |s| accepted_202(s).boxed(),
)
.says("a notification or response the server accepts gets HTTP 202 Accepted with no body")
.help(
    "protocheck POSTs in the run's session, side by side, a `notifications/cancelled` for a \
     request it never sent, an unknown notification, a `notifications/progress` for a token \
     never given and a JSON-RPC response for an id never used (the POSTs MCP25-HTP-003 reads \
     too). After every other rule it reads their answers with those to the run's \
     `notifications/initialized` and to every answer protocheck POSTed to a request of the \
     server. Every 2xx must be 202 with an empty body; refusals are left to MCP25-HTP-003.",
    "The server answers an accepted notification with 200 and a body (often `{}`, `null` or an \
     empty JSON-RPC message) or with 204, usually because the framework's default success answer \
     is used for every POST.",
    "When the POSTed message is a notification or a response, answer `202 Accepted` with an empty \
     body and no JSON-RPC message; keep 200 for POSTs that carry a request.",
)
.run_wide();

pub(crate) const REFUSED_STATUS: Mcp25Rule = rule(
    "MCP25-HTP-003",
    "A notification or response the server will not accept gets an HTTP error status, not 200",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports#sending-messages-to-the-server"),
    |s| refused_status(s).boxed(),
)
.says("input the server cannot accept is refused with an HTTP error status such as 400")
.help(
    "protocheck POSTs in the run's session, side by side, a JSON-RPC response, \
     `{\"jsonrpc\":\"2.0\",\"id\":\"pc-none-N\",\"result\":{}}`, for an id the server never used, \
     an unknown notification, a `notifications/progress` for a token never given and a \
     `notifications/cancelled` for a request never sent. For each, 202 with an empty body \
     (accepted and ignored) passes, and so does any status from 400 up.",
    "The server answers 200 (often with a JSON-RPC error or an empty object), another 2xx with a \
     body, or a 3xx, usually because the POST handler answers every message with 200 whatever it \
     made of it (an unknown notification answered 200 with -32601, say).",
    "Answer a POSTed response or notification the server ignores with 202 and no body, and one it \
     refuses with an HTTP error status such as 400; never 200 for a message that is not a \
     request.",
);

pub(crate) const PRIMING: Mcp25Rule = rule(
    "MCP25-HTP-004",
    "An SSE response starts with an event carrying an id and empty data",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/transports#sending-messages-to-the-server"),
    |s| priming(s).boxed(),
)
.says(
    "a server opening an SSE stream first sends an event with an id and empty data, so that \
     the client can reconnect",
)
.help(
    "protocheck POSTs two `ping`s with a progress token in the run's session (inviting an SSE \
     answer) and reads each SSE stream event by event; the first event of each must carry an `id` \
     and empty `data`. When both `ping`s are answered with JSON, the rule does not apply.",
    "The stream opens directly with the JSON-RPC message, or with an event without an `id`, \
     usually because the server (or an older SDK release) does not implement resumability or \
     sends no priming event.",
    "Open every SSE response with an event that has an `id` and empty `data`, before any message; \
     with most SDKs this comes with configuring an event store for resumability.",
);

pub(crate) const SSE_RESPONSE: Mcp25Rule = rule(
    "MCP25-HTP-005",
    "An SSE response stream eventually carries the JSON-RPC response",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/transports#sending-messages-to-the-server"),
    |s| sse_response(s).boxed(),
)
.says("the SSE stream opened for a request eventually carries the response to that request")
.help(
    "On the two SSE streams of MCP25-HTP-004, protocheck reads until the response to each `ping` \
     comes or the request timeout passes. When a stream closes early after an event id, it \
     resumes it once with a GET carrying `Last-Event-ID`, after the stream's `retry` delay (at \
     most 5 s).",
    "The stream ends, breaks off or stays open without the response, or closes without an event \
     id so that it cannot be resumed: usually a handler that sends the response elsewhere, or a \
     proxy that buffers or cuts SSE.",
    "Send the JSON-RPC response to a request on the SSE stream opened for it (or on its \
     resumption), and turn off response buffering for `text/event-stream` in every proxy in front \
     of the server.",
);

pub(crate) const SSE_ENDS: Mcp25Rule = rule(
    "MCP25-HTP-006",
    "After the JSON-RPC response, the server ends the SSE stream",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/transports#sending-messages-to-the-server"),
    |s| sse_ends(s).boxed(),
)
.says("once the response has been sent, the server terminates the SSE stream")
.help(
    "On the streams of MCP25-HTP-004 that carried their `ping` response (directly or after a \
     resumption), protocheck reads on after the response for a short window (a multiple of the \
     run's round trips, 0.5 to 2 s) and checks that the server ended the stream.",
    "The stream stays open after the response, usually because the server keeps every SSE \
     response open for later messages, or a keep-alive loop or a proxy holds the connection.",
    "Close the SSE response stream once the response to its request has been written; send later, \
     unrelated messages on the GET stream instead, and let no keep-alive hold the closed stream \
     open.",
);

pub(crate) const RETRY: Mcp25Rule = rule(
    "MCP25-HTP-007",
    "A server that closes a POST stream's connection before the response sends retry first",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/transports#sending-messages-to-the-server"),
    |s| retry(s).boxed(),
)
.says(
    "a server that closes the connection of an SSE stream before the response sends an SSE \
     event with a `retry` field first",
)
.help(
    "Among the streams of MCP25-HTP-004, protocheck takes those that closed their connection \
     before the response and then delivered it on the GET resumption with `Last-Event-ID`, and \
     checks that each sent a `retry` field before closing. Without such a stream the rule does \
     not apply.",
    "The server closes a POST stream's connection early (to have the client poll) without sending \
     `retry` first, so that clients reconnect at their own default pace.",
    "Before closing a stream's connection ahead of the response, send an SSE event with a `retry` \
     field (in milliseconds) telling the client when to reconnect.",
);

pub(crate) const GET_STREAM: Mcp25Rule = rule(
    "MCP25-HTP-008",
    "GET on the endpoint answers text/event-stream or 405",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports#listening-for-messages-from-the-server"),
    |s| get_stream(s).boxed(),
)
.says("a GET on the endpoint is answered with an SSE stream or with 405 Method Not Allowed")
.help(
    "protocheck opens a session of its own with `initialize`, then sends a GET to the endpoint \
     with `Accept: text/event-stream`, that session's `MCP-Session-Id` and \
     `MCP-Protocol-Version`, and reads the status and `Content-Type`. A 2xx `text/event-stream` \
     or a 405 passes.",
    "The server answers the GET with 404, 400, 406, or 200 with JSON or HTML, usually because the \
     route accepts only POST and the framework answers other methods with its own default, or a \
     page is served on GET.",
    "Either serve the server-to-client SSE stream on GET (200 with `Content-Type: \
     text/event-stream`), or answer GET with `405 Method Not Allowed`.",
);

pub(crate) const GET_NO_RESPONSE: Mcp25Rule = rule(
    "MCP25-HTP-009",
    "A GET stream opened without Last-Event-ID carries no JSON-RPC response",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/basic/transports#listening-for-messages-from-the-server"),
    |s| get_no_response(s).boxed(),
)
.says(
    "on the GET stream the server may send requests and notifications, but no JSON-RPC \
     response unless it is resuming a stream",
)
.help(
    "protocheck opens a session of its own, sends a GET with `Accept: text/event-stream` and no \
     `Last-Event-ID`, and reads the stream for a window (a multiple of the run's round trips, \
     0.15 to 2 s); no event may carry a JSON-RPC response. The rule applies only when the GET \
     opens an SSE stream.",
    "The server writes responses to requests on the GET stream, usually because it routes every \
     outgoing message to the standalone stream, or replays earlier messages on a new GET.",
    "Send each response on the stream of the POST that carried its request (or on that stream's \
     resumption); keep the GET stream for the server's own requests and notifications.",
);

pub(crate) const EVENT_IDS: Mcp25Rule = rule(
    "MCP25-HTP-010",
    "SSE event ids are unique across all streams of the session",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports#resumability-and-redelivery"),
    |s| event_ids(s).boxed(),
)
.says(
    "event ids, when a server sends them, are globally unique across all streams of the \
     session (of the client, without sessions)",
)
.help(
    "protocheck opens a session of its own, POSTs two `ping`s with a progress token, then opens a \
     GET stream, and collects the SSE event ids of the three streams; an id seen on two different \
     streams fails. Without event ids the rule does not apply.",
    "Event ids are counters that restart on every stream, or are derived from the request id, so \
     that the same id appears on two streams of one session.",
    "Make event ids unique across the session: combine a stream id with a per-stream counter \
     (such as `<stream>-<n>`), or draw every id from one session-wide sequence or event store.",
);

pub(crate) const NO_FOREIGN_REPLAY: Mcp25Rule = rule(
    "MCP25-HTP-011",
    "Resuming with Last-Event-ID never replays messages of another stream",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/basic/transports#resumability-and-redelivery"),
    |s| no_foreign_replay(s).boxed(),
)
.says("a resumption replays only messages of the stream that was disconnected, never another's")
.help(
    "protocheck opens a session of its own and POSTs two `ping`s (streams A and B); when both \
     come as SSE with event ids, it sends a GET with `Last-Event-ID` set to A's first id and \
     checks that the resumed stream carries no message of B, nor a response with B's request id.",
    "The event store replays every message after the given id, whatever stream it belonged to, \
     usually because it keeps one log per session rather than one per stream.",
    "Store each event with the stream it belongs to, and on resumption replay only the events of \
     the stream the `Last-Event-ID` came from, after that id and in their order.",
);

pub(crate) const SESSION_ASCII: Mcp25Rule = rule(
    "MCP25-HTP-012",
    "MCP-Session-Id, when issued, contains only visible ASCII",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports#session-management"),
    |s| session_ascii(s).boxed(),
)
.says("a session id contains only visible ASCII characters (0x21 to 0x7E)")
.help(
    "After every other rule, protocheck reads the `MCP-Session-Id` header of the answer to every \
     `initialize` of the run (the run's own and those of the sessions the rules opened) and \
     checks that every character is visible ASCII (0x21 to 0x7E). A server that issues no session \
     id is not judged.",
    "The session id holds spaces, control characters or non-ASCII characters, usually because it \
     is built from user data or a formatted date, or is raw bytes rather than an encoding of \
     them.",
    "Generate the session id as a random token encoded in visible ASCII, such as a UUID, hex or \
     base64url, with no spaces, and send it unchanged in the `MCP-Session-Id` header.",
)
.run_wide();

pub(crate) const SESSION_UNIQUE: Mcp25Rule = rule(
    "MCP25-HTP-013",
    "Two initializations get two different session ids",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/transports#session-management"),
    |s| session_unique(s).boxed(),
)
.says("a session id is globally unique and cryptographically secure")
.help(
    "After every other rule, protocheck compares the `MCP-Session-Id` of every `initialize` of \
     the run (the run's own and those of the sessions the rules opened; when there was no \
     second, it opens one): no two may be the same. A server that issues no session id is not \
     judged.",
    "Both initializations got the same session id, usually because the server uses a fixed id (a \
     constant, a per-process value) or serves every client one shared session.",
    "Issue a new, cryptographically random session id (a UUID v4, or 128 random bits from a \
     secure generator) on every successful `initialize`, and keep each session's state apart.",
)
.run_wide();

pub(crate) const SESSION_REQUIRED: Mcp25Rule = rule(
    "MCP25-HTP-014",
    "A request without MCP-Session-Id is refused with 400 by a server that uses sessions",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/transports#session-management"),
    |s| session_required(s).boxed(),
)
.says(
    "a server that requires a session id answers requests without one (other than \
     initialize) with 400 Bad Request",
)
.help(
    "On a server that issues session ids, protocheck sends, with the run's headers but no \
     `MCP-Session-Id`, a POSTed `tools/list` (or `ping` without `tools`), a POSTed notification, \
     a GET accepting `text/event-stream` and a DELETE. Each must get 400 (a GET or DELETE may get \
     405 where the server offers none); a 2xx to the POSTed request is information (sessions are \
     issued but not required); any other status is a warning.",
    "The server answers 404, 401 or 500 instead of 400, most often because the missing header \
     falls through to the unknown-session branch or to an unhandled exception, or checks the \
     header on POSTed requests only and serves a notification, GET or DELETE without it.",
    "Check for the header before looking the session up, and answer a request without \
     `MCP-Session-Id` (other than `initialize`) with `400 Bad Request`.",
);

pub(crate) const DELETED_404: Mcp25Rule = rule(
    "MCP25-HTP-015",
    "After a successful DELETE, requests with that session id get 404",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports#session-management"),
    |s| deleted_404(s).boxed(),
)
.says("once a session is terminated, requests naming its id get 404 Not Found")
.help(
    "protocheck opens a session of its own and ends it with DELETE; when the DELETE gets a 2xx, \
     it sends a POSTed request, a POSTed notification, a GET and a second DELETE naming the ended \
     session, each of which must get 404 (the GET may get 405 where the server offers none). A \
     DELETE answered 405 passes; other answers to the DELETE are not judged.",
    "After a successful DELETE the request is still served (the session was not removed) or is \
     refused with 400 or 401, usually because the DELETE handler only acknowledges, or the lookup \
     does not tell an ended session apart.",
    "On DELETE, remove the session from the store, and answer every later request naming its id \
     with `404 Not Found`, so that clients know to initialize again.",
);

pub(crate) const UNKNOWN_404: Mcp25Rule = rule(
    "MCP25-HTP-016",
    "A request naming a session id the server never issued gets 404",
    Keyword::Must,
    Outcome::Warn,
    spec!("/basic/transports#session-management"),
    |s| unknown_404(s).boxed(),
)
.says("a request naming a session that is not (or no longer) valid gets 404 Not Found")
.help(
    "On a server that issues session ids, protocheck sends a POSTed `tools/list` (or `ping`), a \
     POSTed notification, a GET and a DELETE, each with an `MCP-Session-Id` it made up \
     (`protocheck-unknown-` and random hex). 404 passes, and so does 400 (and 405 to a GET or \
     DELETE the server does not offer); any other status is reported as a warning.",
    "The server serves the request anyway because it never checks the id, or answers 401, 403 or \
     500, usually because a failed lookup raises an error.",
    "Look up every `MCP-Session-Id` and answer an id the server never issued, or no longer holds, \
     with `404 Not Found`, before any other handling of the request.",
);

pub(crate) const VERSION_HEADER: Mcp25Rule = rule(
    "MCP25-HTP-017",
    "An invalid or unsupported MCP-Protocol-Version header is refused with 400",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports#protocol-version-header"),
    |s| version_header(s).boxed(),
)
.says("a request with an invalid or unsupported MCP-Protocol-Version gets 400 Bad Request")
.help(
    "protocheck sends `MCP-Protocol-Version: not-a-version` and `MCP-Protocol-Version: \
     1999-01-01` each on a POSTed `tools/list` (or `ping`), a POSTed notification and a GET in \
     the run's session, and on a DELETE of a session of its own; each must get 400 (a GET or \
     DELETE may get 405 where the server offers none).",
    "The server ignores the header and serves the request (200), or refuses it with another \
     status, usually because it never reads `MCP-Protocol-Version`, only checks that it is \
     present, or checks it on POST only.",
    "Read `MCP-Protocol-Version` on every request after `initialize`, and answer a value that is \
     malformed or not a version the server supports with `400 Bad Request`.",
);

pub(crate) const ORIGIN: Mcp25Rule = rule(
    "MCP25-HTP-018",
    "A present, invalid Origin is refused with 403",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports#security-warning"),
    |s| origin(s).boxed(),
)
.says("the server validates Origin; a request whose Origin is present and invalid gets 403")
.help(
    "protocheck sends an `initialize`, a request, a notification and a GET in the run's \
     session, and a DELETE of a session of its own, each with `Origin: \
     http://protocheck-invalid-origin.example`; each must get 403 (a GET or DELETE may get 405 \
     where the server offers none). It then sends the request in session with look-alike Origins \
     (`null`, loopback and own host names under `.invalid`, `http://attacker-localhost`), each of \
     which must get 403 too.",
    "The server does not check `Origin`, checks it only on some requests (POSTs but not the GET \
     stream a rebinding page would read), or matches it by prefix \
     or suffix (letting `http://localhost.protocheck.invalid` pass for `http://localhost`); a 401 \
     usually means authorization runs before any Origin check.",
    "Validate `Origin` on every request before anything else: compare the whole origin (scheme, \
     host, port) with an allow-list, reject `null`, and answer a present, disallowed Origin with \
     `403 Forbidden`.",
);

pub(crate) const RULES: &[Mcp25Rule] = &[
    CONTENT_TYPE,
    ACCEPTED_202,
    REFUSED_STATUS,
    PRIMING,
    SSE_RESPONSE,
    SSE_ENDS,
    RETRY,
    GET_STREAM,
    GET_NO_RESPONSE,
    EVENT_IDS,
    NO_FOREIGN_REPLAY,
    SESSION_ASCII,
    SESSION_UNIQUE,
    SESSION_REQUIRED,
    DELETED_404,
    UNKNOWN_404,
    VERSION_HEADER,
    ORIGIN,
];

fn is_2xx(status: u16) -> bool {
    (200..300).contains(&status)
}

/// The media type of a Content-Type value, lower-cased, parameters dropped.
fn media(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

async fn content_type(s: &Session) -> Judgement {
    let mut judged = 0;
    let mut bad = Vec::new();
    let mut first = None;
    let seen = s.client.seen();
    for item in &seen {
        let Some(resp) = &item.exchange.response else {
            continue;
        };
        if !resp.status.is_some_and(is_2xx) {
            continue;
        }
        judged += 1;
        first.get_or_insert(&item.exchange);
        let value = resp
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.as_str());
        let ok = value
            .is_some_and(|v| matches!(media(v).as_str(), "application/json" | "text/event-stream"));
        if !ok {
            bad.push((item, value.map(|v| clip(v, 80))));
        }
    }
    if judged == 0 {
        return Judgement::skip("not verified: no request of the run got a 2xx answer");
    }
    if bad.is_empty() {
        let j = Judgement::pass(format!(
            "all {judged} requests answered with a 2xx status were labelled application/json \
             or text/event-stream"
        ));
        return match first {
            Some(exchange) => j.with(exchange),
            None => j,
        };
    }
    let listed: Vec<String> = bad
        .iter()
        .take(5)
        .map(|(item, ct)| match ct {
            Some(ct) => format!("`{}` answered with Content-Type `{ct}`", item.method),
            None => format!("`{}` answered without a Content-Type", item.method),
        })
        .collect();
    let mut j = Judgement::fail(format!(
        "{} of {judged} requests answered with a 2xx status were labelled neither \
         application/json nor text/event-stream (media type compared case-insensitively, \
         parameters ignored): {}",
        bad.len(),
        listed.join("; ")
    ));
    for (item, _) in &bad {
        j = j.with(&item.exchange);
    }
    j
}

/// What [`posted_messages`] sent, kept for both rules that read it.
struct Posted(Vec<(&'static str, Reply)>);

/// The notifications and the response MCP25-HTP-002 and MCP25-HTP-003 POST
/// in the run's session, side by side, each with its label: every kind of
/// message a client POSTs besides a request. None asks anything of the
/// server: a cancellation and progress naming nothing it knows, an unknown
/// notification, a response to an id it never used. Sent once, by the first
/// of the two rules to run (MCP25-HTP-003, as a probe rule, before the
/// run-wide MCP25-HTP-002).
async fn posted_messages(s: &Session) -> Vec<(&'static str, Reply)> {
    s.shared(|| async { Posted(send_posted(s).await) })
        .await
        .0
        .clone()
}

async fn send_posted(s: &Session) -> Vec<(&'static str, Reply)> {
    let n = s.client.next_id();
    let response = json!({"jsonrpc": "2.0", "id": format!("pc-none-{n}"), "result": {}});
    let (cancelled, unknown, progress, response) = tokio::join!(
        s.main.notify(
            "notifications/cancelled",
            json!({"requestId": format!("pc-never-sent-{n}"),
                   "reason": "protocheck: no such request"}),
        ),
        s.main.notify("notifications/protocheck_unknown", json!({})),
        s.main.notify(
            "notifications/progress",
            json!({"progressToken": format!("pc-never-given-{n}"), "progress": 1}),
        ),
        s.main.send_frame(
            "JSON-RPC response for an id never used",
            response.to_string(),
            Awaiting::Nothing,
        ),
    );
    vec![
        (
            "`notifications/cancelled` for a request never sent",
            cancelled,
        ),
        ("the unknown `notifications/protocheck_unknown`", unknown),
        ("`notifications/progress` for a token never given", progress),
        (
            "a JSON-RPC response for an id the server never used",
            response,
        ),
    ]
}

async fn accepted_202(s: &Session) -> Judgement {
    let mut replies = Vec::new();
    if let Some(initialized) = &s.initialized {
        replies.push(("`notifications/initialized`", initialized.clone()));
    }
    replies.extend(posted_messages(s).await);
    // Run-wide: protocheck's answers to requests the server sent during the
    // run are accepted responses too.
    let answers = s.client.posted_answers();
    replies.extend(
        answers
            .into_iter()
            .map(|r| ("protocheck's answer to a request of the server", r)),
    );
    let (mut accepted, mut bad, mut refused) = (Vec::new(), Vec::new(), Vec::new());
    for (label, reply) in &replies {
        match reply.status {
            Some(202) if reply.body_len == 0 => accepted.push(*label),
            Some(status) if is_2xx(status) => bad.push(format!("{label}: {}", reply.describe())),
            _ => refused.push(format!("{label}: {}", reply.describe())),
        }
    }
    accepted.dedup();
    let j = if !bad.is_empty() {
        Judgement::fail(format!(
            "a message the server accepted did not get 202 with an empty body: {}",
            bad.join("; ")
        ))
    } else if accepted.is_empty() {
        Judgement::skip(format!(
            "not applicable: the server accepted none of the notifications and the response \
             ({}); MCP25-HTP-003 judges refusals",
            refused.join("; ")
        ))
    } else if refused.is_empty() {
        Judgement::pass(format!(
            "{} got 202 with an empty body",
            accepted.join(", ")
        ))
    } else {
        Judgement::pass(format!(
            "{} got 202 with an empty body (not judged here: {})",
            accepted.join(", "),
            refused.join("; ")
        ))
    };
    replies.iter().fold(j, |j, (_, r)| j.reply(r))
}

async fn refused_status(s: &Session) -> Judgement {
    let replies = posted_messages(s).await;
    let mut bad = Vec::new();
    let mut unsent = Vec::new();
    let mut how = Vec::new();
    for (label, reply) in &replies {
        match reply.status {
            None => unsent.push(format!("{label}: {}", reply.describe())),
            Some(202) if reply.body_len == 0 => how.push(format!("{label}: 202, accepted")),
            Some(status) if status >= 400 => how.push(format!("{label}: refused with {status}")),
            Some(_) => bad.push(format!("{label} got {}", reply.describe())),
        }
    }
    let j = if !bad.is_empty() {
        Judgement::fail(format!(
            "{}: a notification or response the server does not accept must get an HTTP error \
             status, and one it accepts 202 with no body",
            bad.join("; ")
        ))
    } else if !unsent.is_empty() {
        Judgement::skip(format!("not verified: {}", unsent.join("; ")))
    } else {
        Judgement::pass(format!(
            "each POSTed message that is not a request got 202 with no body or an HTTP error \
             status ({})",
            how.join("; ")
        ))
    };
    replies.iter().fold(j, |j, (_, r)| j.reply(r))
}

/// The streams of [`post_streams`], or the judgement to return.
macro_rules! streams_or_return {
    ($s:expr) => {
        match post_streams($s).await {
            Ok(streams) => streams,
            Err(j) => return j,
        }
    };
}

fn with_streams(j: Judgement, streams: &[PostStream]) -> Judgement {
    streams.iter().fold(j, |j, st| st.judge(j))
}

async fn priming(s: &Session) -> Judgement {
    let streams = streams_or_return!(s);
    let mut bad = Vec::new();
    for (n, st) in streams.iter().enumerate() {
        match st.post.events.first() {
            None => bad.push(format!("stream {} carried no event", n + 1)),
            Some(first) if first.id.is_none() => bad.push(format!(
                "stream {} opened with an event without an id (data: {})",
                n + 1,
                clip(&first.data, 80)
            )),
            Some(first) if !first.data.trim().is_empty() => bad.push(format!(
                "stream {} opened with id {} but data {}",
                n + 1,
                clip(first.id.as_deref().unwrap_or_default(), 60),
                clip(&first.data, 80)
            )),
            Some(_) => {}
        }
    }
    let j = if bad.is_empty() {
        Judgement::pass(format!(
            "each of {} SSE streams opened with an event carrying an id and empty data",
            streams.len()
        ))
    } else {
        Judgement::fail(format!(
            "{}; the priming event lets a client that loses the connection resume the stream \
             (the rest of each stream was judged normally)",
            bad.join("; ")
        ))
    };
    with_streams(j, &streams)
}

/// How a POST stream that carried no response ended, in words.
fn missing(st: &PostStream, n: usize, window: std::time::Duration) -> String {
    let how = match st.post.end {
        End::Closed => "ended",
        End::Failed => "broke off",
        End::Open => "stayed open",
    };
    let mut text = format!(
        "stream {} {how} without the response after {} events",
        n + 1,
        st.post.events.len()
    );
    if st.post.end == End::Open {
        text.push_str(&format!(
            " (read for the request timeout, {} s)",
            window.as_secs()
        ));
    }
    match &st.resumed {
        Some(r) => text.push_str(&format!(
            "; the resumption with Last-Event-ID got {} without it",
            r.describe()
        )),
        None if st.closed_early() => {
            text.push_str("; it sent no event id, so it could not be resumed")
        }
        None => {}
    }
    text
}

async fn sse_response(s: &Session) -> Judgement {
    let streams = streams_or_return!(s);
    let bad: Vec<String> = streams
        .iter()
        .enumerate()
        .filter(|(_, st)| !st.answered())
        .map(|(n, st)| missing(st, n, s.client.timeout()))
        .collect();
    let resumed = streams
        .iter()
        .filter(|st| st.post.answer.is_none() && st.answered())
        .count();
    let j = if bad.is_empty() {
        Judgement::pass(format!(
            "each of {} SSE streams carried the response to its `ping`{}",
            streams.len(),
            if resumed > 0 {
                format!(" ({resumed} after a resumption with Last-Event-ID)")
            } else {
                String::new()
            }
        ))
    } else {
        Judgement::fail(bad.join("; "))
    };
    with_streams(j, &streams)
}

async fn sse_ends(s: &Session) -> Judgement {
    let streams = streams_or_return!(s);
    let window = end_linger(s);
    let carriers: Vec<&Raw> = streams
        .iter()
        .filter_map(|st| {
            if st.post.answer.is_some() {
                Some(&st.post)
            } else {
                st.resumed.as_ref().filter(|r| r.answer.is_some())
            }
        })
        .collect();
    if carriers.is_empty() {
        return with_streams(
            Judgement::skip(
                "not verified: no SSE stream carried its response (MCP25-HTP-005), so none \
                 could end after it",
            ),
            &streams,
        );
    }
    let open = carriers.iter().filter(|r| r.end == End::Open).count();
    let j = if open == 0 {
        Judgement::pass(format!(
            "each of {} SSE streams ended after carrying its response",
            carriers.len()
        ))
    } else {
        Judgement::fail(format!(
            "{open} of {} SSE streams stayed open {} ms after carrying the response",
            carriers.len(),
            window.as_millis()
        ))
    };
    with_streams(j, &streams)
}

async fn retry(s: &Session) -> Judgement {
    let streams = streams_or_return!(s);
    // A connection that closes before the response, whose stream then goes
    // on (the resumption carries the response), closed early. One whose
    // resumption carries nothing cannot be told from a stream that ended
    // without its response: MCP25-HTP-005 judges that one, not this rule.
    let early: Vec<&PostStream> = streams
        .iter()
        .filter(|st| st.closed_early() && st.answered())
        .collect();
    if early.is_empty() {
        return with_streams(
            Judgement::skip(
                "not applicable: no POST stream closed its connection before the response and \
                 then delivered it on resumption",
            ),
            &streams,
        );
    }
    let without = early.iter().filter(|st| st.post.retry.is_none()).count();
    let j = if without == 0 {
        Judgement::pass(format!(
            "each of {} POST streams closed before the response sent a `retry` field first",
            early.len()
        ))
    } else {
        Judgement::fail(format!(
            "{without} of {} POST streams closed their connection before the response (it \
             came on resumption) without a `retry` field",
            early.len()
        ))
    };
    with_streams(j, &streams)
}

async fn get_stream(s: &Session) -> Judgement {
    let (conn, sid) = match own_session(s).await {
        Ok(own) => own,
        Err(j) => return j,
    };
    let raw = get(s, sid.as_deref(), None, Read::Window(linger(s))).await;
    conn.close().await;
    let j = match raw.status {
        None => Judgement::skip(format!("not verified: the GET got {}", raw.describe())),
        Some(405) => Judgement::pass("GET answered 405 Method Not Allowed (no GET stream)"),
        Some(status) if is_2xx(status) && raw.sse => {
            Judgement::pass(format!("GET answered HTTP {status} with text/event-stream"))
        }
        Some(_) => Judgement::fail(format!(
            "GET with Accept: text/event-stream, the session id and MCP-Protocol-Version got \
             {}",
            raw.describe()
        )),
    };
    j.with(&raw.exchange)
}

async fn get_no_response(s: &Session) -> Judgement {
    let (conn, sid) = match own_session(s).await {
        Ok(own) => own,
        Err(j) => return j,
    };
    let window = linger(s);
    let raw = get(s, sid.as_deref(), None, Read::Window(window)).await;
    conn.close().await;
    let j = match raw.status {
        Some(405) => Judgement::skip("not applicable: GET answered 405 (no GET stream)"),
        Some(status) if is_2xx(status) && raw.sse => {
            let responses: Vec<&Value> = raw
                .events
                .iter()
                .filter_map(|e| e.message.as_ref())
                .filter(|m| is_response(m))
                .collect();
            match responses.first() {
                None => Judgement::pass(format!(
                    "the GET stream carried {} events in {} ms, none a JSON-RPC response",
                    raw.events.len(),
                    window.as_millis()
                )),
                Some(first) => Judgement::fail(format!(
                    "the GET stream (opened without Last-Event-ID) carried {} JSON-RPC \
                     response(s), the first: {}",
                    responses.len(),
                    clip(&first.to_string(), 200)
                )),
            }
        }
        _ => Judgement::skip(format!(
            "not verified: GET got {} (MCP25-HTP-008 judges it)",
            raw.describe()
        )),
    };
    j.with(&raw.exchange)
}

async fn event_ids(s: &Session) -> Judgement {
    let (conn, sid) = match own_session(s).await {
        Ok(own) => own,
        Err(j) => return j,
    };
    let mut streams: Vec<(String, Raw)> = Vec::new();
    // The two POSTs side by side, their streams named in this order.
    let posted = tokio::join!(post_ping(s, sid.as_deref()), post_ping(s, sid.as_deref()));
    for (n, post) in [(1, posted.0), (2, posted.1)] {
        match post {
            Ok((raw, _)) => streams.push((format!("POST stream {n}"), raw)),
            Err(j) => {
                conn.close().await;
                return j;
            }
        }
    }
    let raw = get(s, sid.as_deref(), None, Read::Window(linger(s))).await;
    streams.push(("the GET stream".to_owned(), raw));
    conn.close().await;
    let mut owner: HashMap<&str, usize> = HashMap::new();
    let mut repeated = Vec::new();
    let mut ids = 0;
    for (n, (_, raw)) in streams.iter().enumerate() {
        for id in raw.events.iter().filter_map(|e| e.id.as_deref()) {
            ids += 1;
            match owner.get(id) {
                Some(&other) if other != n => repeated.push(format!(
                    "id `{}` on {} and on {}",
                    clip(id, 60),
                    streams[other].0,
                    streams[n].0
                )),
                Some(_) => {}
                None => {
                    owner.insert(id, n);
                }
            }
        }
    }
    let j = if ids == 0 {
        Judgement::skip("not applicable: the server sent no SSE event ids")
    } else if repeated.is_empty() {
        Judgement::pass(format!(
            "{ids} event ids on {} streams of one session, none repeated on another stream",
            streams.len()
        ))
    } else {
        Judgement::fail(format!(
            "event ids repeat across streams of one session: {}",
            repeated
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        ))
    };
    streams.iter().fold(j, |j, (_, raw)| j.with(&raw.exchange))
}

async fn no_foreign_replay(s: &Session) -> Judgement {
    let (conn, sid) = match own_session(s).await {
        Ok(own) => own,
        Err(j) => return j,
    };
    let mut pair = Vec::new();
    for _ in 0..2 {
        match post_ping(s, sid.as_deref()).await {
            Ok(sent) => pair.push(sent),
            Err(j) => {
                conn.close().await;
                return j;
            }
        }
    }
    let ((a, _), (b, b_id)) = (&pair[0], &pair[1]);
    let Some(first) = a.first_id().filter(|_| b.first_id().is_some()) else {
        conn.close().await;
        return Judgement::skip(format!(
            "not applicable: the two POSTs did not both get SSE streams with event ids ({}; {})",
            a.describe(),
            b.describe()
        ))
        .with(&a.exchange)
        .with(&b.exchange);
    };
    let resumed = get(s, sid.as_deref(), Some(first), Read::Window(linger(s))).await;
    conn.close().await;
    // Judged by the messages: a server whose event ids repeat across
    // streams (MCP25-HTP-010) would make ids an unreliable witness.
    let on_b = b.messages();
    let foreign: Vec<&Value> = resumed
        .messages()
        .into_iter()
        .filter(|m| on_b.contains(m) || (is_response(m) && m.get("id") == Some(b_id)))
        .collect();
    let j = match resumed.status {
        _ if !foreign.is_empty() => Judgement::fail(format!(
            "the resumption of stream A (Last-Event-ID `{}`) replayed {} message(s) of stream \
             B, the first: {}",
            clip(first, 60),
            foreign.len(),
            clip(&foreign[0].to_string(), 200)
        )),
        None => Judgement::skip(format!(
            "not verified: the resumption got {}",
            resumed.describe()
        )),
        Some(_) => Judgement::pass(format!(
            "the resumption of stream A (Last-Event-ID `{}`) got {}, nothing of stream B",
            clip(first, 60),
            resumed.describe()
        )),
    };
    j.with(&a.exchange)
        .with(&b.exchange)
        .with(&resumed.exchange)
}
