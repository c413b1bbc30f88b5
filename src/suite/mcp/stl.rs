//! STL — statelessness and session removal (basic/index#statelessness;
//! streamable-http, "Earlier Streamable HTTP Revisions"; tools#capabilities).

use super::client::{Invalidity, McpClient, Probe, Reply, Spelling, clip, some};
use super::era::recognised_modern;
use super::rule::{DISCOVER_ID, Keyword, McpRule, spec};
use super::session::{ColdWarm, Judgement, Kind, Session, Sessioned};
use super::wire::{self, H_LAST_EVENT_ID, H_SESSION_ID};
use crate::suite::Outcome;
use crate::transport::raw::RawConnection;
use futures::FutureExt;
use serde_json::{Value, json};
use std::collections::BTreeSet;

pub(crate) const NO_SESSION_ID: McpRule = McpRule::new(
    "MCP-STL-001",
    "Server never mints or echoes Mcp-Session-Id",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http#earlier-streamable-http-revisions"),
    "STL",
    |s| no_session_id(s).boxed(),
)
.says("there are no protocol sessions: a server does not mint or echo Mcp-Session-Id")
.help(
    "protocheck sends each method family the server serves (`server/discover`, the list methods, \
     `tools/call`, `resources/read` and `prompts/get` of made-up names, `completion/complete` \
     where advertised, a short `subscriptions/listen` where there is something to listen for) and \
     a notification POST with a made-up `Mcp-Session-Id` header and checks that no answer \
     carries `Mcp-Session-Id`; it then checks every answer to the run's valid requests for one.",
    "The server still runs a 2025-era Streamable HTTP transport that mints a session id on the \
     first request or echoes the client's, usually because a session manager or a stateful \
     transport mode is left on by default.",
    "Run the transport in stateless mode and never set `Mcp-Session-Id` on a response: a \
     2026-07-28 server keeps no protocol session, and what it needs to know travels in each \
     request's headers and `_meta`.",
)
.http_only("the Mcp-Session-Id header");

pub(crate) const SESSION_IGNORED: McpRule = McpRule::new(
    "MCP-STL-002",
    "A client-supplied Mcp-Session-Id is ignored, not required",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http#earlier-streamable-http-revisions"),
    "STL",
    |s| session_ignored(s).boxed(),
)
.says("a server receiving Mcp-Session-Id SHOULD ignore it: it MUST NOT require or validate one")
.help(
    "protocheck sends each method family the server serves (as MCP-STL-001 does) twice side by \
     side, with a made-up `Mcp-Session-Id` header and without it, and compares the answers' \
     status, error code and presence of a result; they must be the same for every method.",
    "The server validates the session id it received, usually answering 400 or 404 (\"session not \
     found\") for an id it did not mint, as a 2025-11-25 session transport does.",
    "Ignore `Mcp-Session-Id` on incoming requests: do not look it up, validate it or require it, \
     and answer exactly as if the header were absent; if a 2025-era session layer sits in front \
     of the handlers, remove it.",
)
.http_only("the Mcp-Session-Id header");

pub(crate) const COLD_REQUEST: McpRule = McpRule::new(
    COLD_ID,
    "A cold modern request succeeds with no prior handshake",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/index#statelessness"),
    "STL",
    |s| cold_request(s).boxed(),
)
.says("servers MUST NOT rely on prior requests for version, capabilities or identity: any request may be the first, with no handshake")
.help(
    "The run's very first request is `tools/list` on a new connection (over stdio, the child's \
     first line), before any `server/discover`. With tools advertised it must return a result \
     with `tools`; without, a 2026-07-28 answer such as 404 with -32601 passes. Over HTTP every \
     method family the server serves (discover, each list, a call of a tool protocheck may run, \
     a read of the first listed resource, a get of the first listed prompt, a completion) is \
     then sent as the first request on a new connection of its own, and again on it after a \
     `server/discover` and the list of its family: the two answers' status, error code and presence \
     of a result must be the same. A `subscriptions/listen` (where there is something to listen \
     for) goes first on a new connection and after the discover and a list on another, and must \
     be acknowledged alike.",
    "The server expects a handshake first: it refuses requests until `initialize` or \
     `server/discover` has been seen, or sets up per-connection state on the first request. When \
     this fails, the rules whose probes share pooled connections are reported as not verified.",
    "Serve every request from what it carries: its headers and its `_meta` version, client \
     capabilities and client info. Remove any gate that waits for a prior `initialize` or \
     `server/discover` on the connection or in the process.",
)
.finds_connection_state()
.pool_independent();

pub(crate) const NO_CONNECTION_STATE: McpRule = McpRule::new(
    "MCP-STL-004",
    "Server does not rely on prior requests over the same connection",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/basic/index#statelessness"),
    "STL",
    |s| no_connection_state(s).boxed(),
)
.says("servers MUST NOT rely on prior requests on the same connection for version, capabilities or identity")
.help(
    "For `server/discover` without `clientCapabilities` and every method family the server serves \
     (each list method, a tool call, a read, a prompt get, a completion), protocheck opens a \
     dedicated HTTP/1.1 connection and sends the request, then a `server/discover` declaring \
     `elicitation` and `roots` with another `clientInfo` and the list of its family, then the request \
     again, then requests declaring another protocol version (a `server/discover` carrying a \
     version `supportedVersions` lists besides 2026-07-28, else 2025-11-25, and a legacy \
     `initialize` asking for it), then the request once more; status, error code, listed names \
     and, for a `subscriptions/listen` (sent last on connections of its own, since it holds its \
     connection open), the acknowledgement must be the same every time.",
    "The server keeps capabilities or other context per connection, so the same request is \
     answered differently once an earlier request on that connection declared capabilities. \
     Behind keep-alive clients and proxies that reuse connections, such a server behaves \
     unpredictably.",
    "Derive version, capabilities and identity from each request's own headers and `_meta`, and \
     key no state on the TCP connection: a request must get the same answer whatever came before \
     it on that connection.",
)
.finds_connection_state()
.pool_independent()
.http_only("requests on new HTTP connections");

pub(crate) const GET_405: McpRule = McpRule::new(
    "MCP-STL-005",
    "GET on the MCP endpoint returns 405",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/transports/streamable-http#earlier-streamable-http-revisions"),
    "STL",
    |s| get_405(s).boxed(),
)
.says("a server that supports only 2026-07-28 SHOULD answer GET on the MCP endpoint with 405 Method Not Allowed")
.help(
    "protocheck sends a GET with `Accept: text/event-stream` to the MCP endpoint, reads the \
     status (and a stream as far as its first event, within a window derived from the run's \
     round-trip times) and expects 405. Judged only on servers that speak 2026-07-28 alone.",
    "The server still opens the 2025-11-25 GET stream for server-initiated messages (200 with \
     `text/event-stream`), or its framework answers GET with 404, 400 or an HTML page. A dual-era \
     server keeps that stream for its legacy clients and is not judged.",
    "Answer GET on the MCP endpoint with 405 Method Not Allowed and an `Allow: POST` header; \
     2026-07-28 has no standalone GET stream, and clients follow list changes through \
     `subscriptions/listen`.",
)
.requires(&[])
.modern_only()
.watches(|w, client, url| w.start_early(client, http::Method::GET, url))
.http_only("an HTTP GET on the endpoint");

pub(crate) const DELETE_405: McpRule = McpRule::new(
    "MCP-STL-006",
    "DELETE on the MCP endpoint returns 405",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/transports/streamable-http#earlier-streamable-http-revisions"),
    "STL",
    |s| delete_405(s).boxed(),
)
.says("a server that supports only 2026-07-28 SHOULD answer DELETE on the MCP endpoint with 405 Method Not Allowed")
.help(
    "protocheck sends a DELETE to the MCP endpoint, with no session id, reads the status and \
     expects 405. Judged only on servers that speak 2026-07-28 alone.",
    "The server keeps the 2025-11-25 session-termination handler and answers 200, 202, 400 or \
     404, or its framework routes DELETE to a generic handler. A dual-era server keeps DELETE for \
     its legacy clients and is not judged.",
    "Answer DELETE on the MCP endpoint with 405 Method Not Allowed and an `Allow: POST` header; \
     there is no session to end in 2026-07-28, so a session-termination handler can go.",
)
.requires(&[])
.modern_only()
.watches(|w, client, url| w.start_early(client, http::Method::DELETE, url))
.http_only("an HTTP DELETE on the endpoint");

pub(crate) const LAST_EVENT_ID: McpRule = McpRule::new(
    "MCP-STL-007",
    "Last-Event-ID is ignored — streams are not resumable",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/transports/streamable-http#earlier-streamable-http-revisions"),
    "STL",
    |s| last_event_id(s).boxed(),
)
.says(
    "streams are not resumable: a server that supports only 2026-07-28 SHOULD ignore Last-Event-ID",
)
.help(
    "protocheck sends each method family the server serves (as MCP-STL-001 does) with \
     `Last-Event-ID: protocheck-0` and compares each answer's status, error code and presence of \
     a result with those of the same request without that header. The requests of the run \
     answered with an event stream (calls of tools protocheck may run, with a progress token, \
     and a `subscriptions/listen`) are sent again carrying the first event id their first \
     stream carried: the answer must replay nothing of that stream. A GET carrying such an id \
     must be answered as the plain GET. Judged only on servers that speak 2026-07-28 alone.",
    "The server still tries to resume a stream: it looks the event id up and answers 400 or 404 \
     for an unknown one, or replays stored events instead of answering, usually through a \
     2025-era event store left configured.",
    "Ignore `Last-Event-ID` on requests and answer each one afresh; 2026-07-28 streams are not \
     resumable, so an event store kept for resumption can be removed.",
)
.modern_only()
.http_only("the Last-Event-ID header of SSE streams");

pub(crate) const LIST_PER_CONNECTION: McpRule = McpRule::new(
    "MCP-STL-008",
    "tools/list does not vary per connection",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/tools#capabilities"),
    "STL",
    |s| list_per_connection(s).boxed(),
)
.says("tools/list MUST return the set available to the requesting client and MUST NOT vary per connection or as a side effect of other requests on it")
.help(
    "protocheck compares the names of the survey's `tools/list`, `resources/list`, \
     `resources/templates/list` and `prompts/list` (those advertised, every page) with the same \
     list on a new dedicated connection A of its own, on A again after a `server/discover` \
     declaring capabilities, a call of a tool protocheck may run and a read of the first listed \
     resource or a get of the first listed prompt, and on a second new connection B. All sets \
     must be equal.",
    "The tool set depends on the connection or on earlier requests: tools registered per \
     transport or session object, tools unlocked by capabilities a previous request declared, or \
     a load balancer spreading connections over replicas with different tool sets.",
    "Compute `tools/list` only from the request and the caller's authorization, and keep every \
     replica behind a load balancer on the same tool set; nothing sent earlier on a connection \
     may add or remove tools.",
)
// Its probes open new connections and send tools/list first: a server that
// refuses requests before server/discover on a connection fails STL-003, and
// this rule is then unverifiable, not failed again (§15.4).
.requires(&[DISCOVER_ID, COLD_ID])
.finds_connection_state()
.pool_independent()
.http_only("lists asked on different HTTP connections");

/// The id of MCP-STL-003, which rules probing on new connections require.
pub(crate) const COLD_ID: &str = "MCP-STL-003";

pub(crate) const RULES: &[McpRule] = &[
    NO_SESSION_ID,
    SESSION_IGNORED,
    COLD_REQUEST,
    NO_CONNECTION_STATE,
    GET_405,
    DELETE_405,
    LAST_EVENT_ID,
    LIST_PER_CONNECTION,
];

/// An `Origin` no server serves (MCP-STL-001's refused request).
const FOREIGN_ORIGIN: &str = "http://protocheck-foreign-origin.invalid";

/// Session ids no server minted: a conforming server never sees them as
/// anything. One is shaped as the UUIDs that 2025-era servers mint and their
/// clients send back, the other is opaque text, so that a server treating
/// either shape specially meets it.
fn made_up_sessions() -> Vec<String> {
    vec![
        uuid::Uuid::new_v4().to_string(),
        format!("protocheck-session-{:016x}", rand::random::<u64>()),
    ]
}

fn session_header(exchange: &crate::suite::Exchange) -> Option<String> {
    exchange
        .response
        .as_ref()?
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(H_SESSION_ID))
        .map(|(_, v)| v.clone())
}

/// The family probes sent plainly and with each made-up `Mcp-Session-Id`,
/// once per run (MCP-STL-001, -002 and -007 read them).
async fn sessioned(s: &Session) -> &Sessioned {
    s.sessioned
        .get_or_init(|| async {
            let sent = made_up_sessions();
            let c = &s.client;
            let with_id = |probe: &Probe, id: &str| {
                let mut with = probe.clone().with_header(H_SESSION_ID, id);
                if let Some(body_id) = with.body.get_mut("id") {
                    *body_id = json!(c.next_id());
                }
                with
            };
            let sends = s.family_probes().into_iter().map(|plain| {
                let with: Vec<(String, Probe)> = sent
                    .iter()
                    .map(|id| (id.clone(), with_id(&plain, id)))
                    .collect();
                async move {
                    // Side by side; a listen is read as a listen (see
                    // `survey::send_family`).
                    let answers = futures::future::join_all(
                        with.iter()
                            .map(|(_, probe)| super::survey::send_family(c, probe)),
                    );
                    let (a, answers) =
                        tokio::join!(super::survey::send_family(c, &plain), answers);
                    let with = with.into_iter().map(|(id, _)| id).zip(answers).collect();
                    (plain.method.clone(), a, with)
                }
            });
            let pairs = s.each(sends.collect()).await;
            // A notification POST is answered too (202 and no body): the
            // header must not come back on that answer either. Cancelling
            // an id never used has no effect.
            let mut notified = Vec::new();
            for id in &sent {
                let notification = Probe::notification(
                    "notifications/cancelled",
                    json!({"requestId": "protocheck-unused-id", "reason": "protocheck: session probe"}),
                )
                .with_header(H_SESSION_ID, id.clone());
                notified.push((id.clone(), c.send(&notification).await));
            }
            // Refusals are responses too: the rule's own requests of each
            // class a conforming server refuses, without and with the
            // made-up id (judged here for the header alone).
            let discover = || c.request("server/discover", json!({}));
            let refusable = [
                (
                    "an unknown method (`protocheck/no-such-method`)",
                    c.request("protocheck/no-such-method", json!({})),
                ),
                (
                    "`server/discover` without `Mcp-Method`",
                    discover().without_header(wire::H_METHOD),
                ),
                (
                    "`server/discover` asking for version 1900-01-01",
                    discover().with_version("1900-01-01"),
                ),
                (
                    "`server/discover` from a foreign `Origin`",
                    discover().with_header("origin", FOREIGN_ORIGIN),
                ),
            ];
            let mut sends = Vec::new();
            for (what, probe) in refusable {
                let with = with_id(&probe, &sent[0]);
                sends.push(async move {
                    let (a, b) = tokio::join!(c.send(&probe), c.send(&with));
                    vec![
                        (what.to_owned(), a),
                        (format!("{what} carrying a made-up id"), b),
                    ]
                });
            }
            let refused = s.each(sends).await.into_iter().flatten().collect();
            Sessioned {
                pairs,
                notified,
                refused,
            }
        })
        .await
}

async fn no_session_id(s: &Session) -> Judgement {
    // Every method family the server serves carries a made-up id: a server
    // that echoes it on one method only is caught.
    let sessioned = sessioned(s).await;
    for (method, plain, with) in &sessioned.pairs {
        // Minted with no id sent, too: the plain answers are responses.
        if let Some(value) = &plain.session_id {
            return Judgement::fail(format!(
                "`{method}` sent without `Mcp-Session-Id` was answered with `Mcp-Session-Id: \
                 {value}`; {} has no sessions: never mint a session id",
                wire::PROTOCOL_VERSION
            ))
            .reply(plain);
        }
        for (sent, echo) in with {
            if let Some(value) = &echo.session_id {
                let how = if value == sent {
                    "echoed"
                } else {
                    "answered with"
                };
                return Judgement::fail(format!(
                    "`{method}` carrying `Mcp-Session-Id: {sent}` was {how} `Mcp-Session-Id: \
                     {value}`; {} has no sessions: ignore the header and never mint or echo one",
                    wire::PROTOCOL_VERSION
                ))
                .reply(echo);
            }
        }
    }
    for (sent, notified) in &sessioned.notified {
        if let Some(value) = &notified.session_id {
            return Judgement::fail(format!(
                "the notification POST `notifications/cancelled` carrying `Mcp-Session-Id: \
                 {sent}` was answered {} with `Mcp-Session-Id: {value}`; {} has no sessions: \
                 ignore the header and never mint or echo one, on any response",
                notified
                    .status
                    .map_or_else(|| "with no status".to_owned(), |c| format!("HTTP {c}")),
                wire::PROTOCOL_VERSION
            ))
            .reply(notified);
        }
    }
    for (what, reply) in &sessioned.refused {
        if let Some(value) = &reply.session_id {
            return Judgement::fail(format!(
                "{what} was answered {} with `Mcp-Session-Id: {value}`; {} has no sessions: a \
                 server never mints or echoes a session id, on an error answer either",
                reply.describe(),
                wire::PROTOCOL_VERSION
            ))
            .reply(reply);
        }
    }
    let seen = s.client.seen().await;
    if let Some((method, value, exchange)) = seen
        .iter()
        .find_map(|r| session_header(&r.exchange).map(|v| (&r.method, v, &r.exchange)))
    {
        return Judgement::fail(format!(
            "the answer to `{method}` carried `Mcp-Session-Id: {value}` though protocheck sent \
             none; a {} server never mints session ids",
            wire::PROTOCOL_VERSION
        ))
        .with(exchange);
    }
    // On a server that speaks 2026-07-28 alone, the GET and DELETE answers
    // (the watches of MCP-STL-005 and -006) carry none either; a dual-era
    // server serves both to its legacy clients, with their sessions.
    let mut watched = String::new();
    if matches!(s.era, super::era::Era::Modern) && !s.client.is_stdio() {
        for method in [http::Method::GET, http::Method::DELETE] {
            let reply = s.watch(method.clone(), &s.url).await;
            if let Some(value) = session_header(&reply.exchange) {
                return Judgement::fail(format!(
                    "the answer to {method} on the MCP endpoint carried `Mcp-Session-Id: \
                     {value}`; a {} server has no sessions and never mints an id",
                    wire::PROTOCOL_VERSION
                ))
                .with(&reply.exchange);
            }
        }
        watched = ", and the answers to GET and DELETE on the endpoint".to_owned();
    }
    let methods: Vec<&str> = sessioned.pairs.iter().map(|(m, ..)| m.as_str()).collect();
    Judgement::pass(format!(
        "no answer among {} carried Mcp-Session-Id, including those to {} and to a notification \
         POST sent with one, and the refusals of an unknown method, a missing Mcp-Method, an \
         unsupported version and a foreign Origin{watched}",
        seen.len(),
        methods.join(", ")
    ))
}

/// `(status, error code, has result)`: what two answers must share to count as the same.
fn shape(reply: &Reply) -> (Option<u16>, Option<i64>, bool) {
    (reply.status, reply.error_code(), reply.result().is_some())
}

async fn session_ignored(s: &Session) -> Judgement {
    // Every method family the server serves, sent with and without a
    // made-up id side by side: a session layer guarding only some methods
    // answers those differently.
    let sessioned = sessioned(s).await;
    for (method, plain, with) in &sessioned.pairs {
        for (sent, with) in with {
            if shape(plain) != shape(with) {
                return Judgement::fail(format!(
                    "`{method}` carrying `Mcp-Session-Id: {sent}` answered {} while the same \
                     request without it answered {}; a {} server MUST NOT require or validate \
                     session ids: ignore the header",
                    with.describe(),
                    plain.describe(),
                    wire::PROTOCOL_VERSION
                ))
                .reply(with)
                .reply(plain);
            }
        }
    }
    // The same status and code, yet other members in the result: the
    // header was not required, but not ignored either (the SHOULD).
    for (method, plain, with) in &sessioned.pairs {
        for (sent, with) in with {
            let (without_id, with_id) = (members(plain), members(with));
            if without_id != with_id {
                let only = |a: &BTreeSet<String>, b: &BTreeSet<String>| {
                    let names: Vec<String> = a.difference(b).map(|m| format!("`{m}`")).collect();
                    if names.is_empty() {
                        "none".to_owned()
                    } else {
                        some(&names, 6, ", ")
                    }
                };
                return Judgement::warn(format!(
                    "`{method}` carrying `Mcp-Session-Id: {sent}` was answered with a result whose \
                 members differ from the same request's without it (only with the id: {}; only \
                 without: {}); a server SHOULD ignore a client's session id and answer as if it \
                 were absent",
                    only(&with_id, &without_id),
                    only(&without_id, &with_id),
                ))
                .reply(with)
                .reply(plain);
            }
        }
    }
    let methods: Vec<&str> = sessioned.pairs.iter().map(|(m, ..)| m.as_str()).collect();
    Judgement::pass(format!(
        "each of {} carrying an unknown Mcp-Session-Id (a UUID, and opaque text) was answered \
         like the same request without it: the same status, error code and result members \
         (`_meta`'s included)",
        methods.join(", ")
    ))
}

/// The member names of a reply's result and of its `_meta` (`_meta.…`):
/// what two answers to one request share whatever their values.
fn members(reply: &Reply) -> BTreeSet<String> {
    let Some(result) = reply.result().and_then(Value::as_object) else {
        return BTreeSet::new();
    };
    let meta = result
        .get("_meta")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|m| m.keys().map(|k| format!("_meta.{k}")));
    result.keys().cloned().chain(meta).collect()
}

/// The run's first request, judged alone.
fn run_first_request(s: &Session) -> Judgement {
    let cold = &s.cold;
    // Over stdio the first line the child reads is the new connection.
    let fresh = if s.client.is_stdio() {
        "the first line the child read"
    } else {
        "on a new connection"
    };
    if s.advertises("tools") {
        if cold.ok() && cold.result().and_then(|r| r.get("tools")).is_some() {
            return Judgement::pass(format!(
                "`tools/list` succeeded as the first request of the run, {fresh}, before any \
                 server/discover"
            ));
        }
        return Judgement::fail(format!(
            "the first request of the run, `tools/list` ({fresh}) with no prior \
             `server/discover`, answered {}; every request carries its own version and \
             capabilities, so any RPC may come first with no handshake",
            cold.describe()
        ))
        .reply(cold);
    }
    // Over stdio -32601 is a modern answer here too: it is what a server
    // without tools answers `tools/list` with at any time.
    let unknown_over_stdio = cold.stdio && cold.error_code() == Some(wire::code::METHOD_NOT_FOUND);
    if cold.ok() || recognised_modern(cold) || unknown_over_stdio {
        Judgement::pass(format!(
            "the first request of the run (`tools/list`, {fresh}) answered {}, as a server \
             without tools answers it at any time",
            cold.describe()
        ))
    } else {
        Judgement::fail(format!(
            "the first request of the run, `tools/list` ({fresh}), answered {}; a server \
             without tools answers -32601 (with HTTP 404) at any time, with no handshake first",
            cold.describe()
        ))
        .reply(cold)
    }
}

async fn cold_request(s: &Session) -> Judgement {
    let first = run_first_request(s);
    if first.kind != Kind::Pass || s.client.is_stdio() {
        return first;
    }
    // BASIC "Statelessness": "any request" may come first. Every method
    // family the server serves goes first on a new connection of its own
    // (`cold_warm`), and is answered as it is once other requests (a
    // discover, every list) came before it on that connection: a server that
    // wants a list seen before a read, or a discover before a call, answers
    // the first one differently.
    let mut judged = Vec::new();
    let mut unjudged = Vec::new();
    for cw in cold_warm(s).await {
        if cw.what == BARE_DISCOVER {
            continue;
        }
        match (&cw.cold, &cw.warm) {
            (Some(cold), Some(warm)) => {
                if cold_shape(cold) != cold_shape(warm) {
                    return Judgement::fail(format!(
                        "{} as the first request on a new connection ({}) answered {}, but {} \
                         once a `server/discover` and the list of its family had gone before it on \
                         {}; any request may come first, with no handshake or earlier list",
                        cw.what,
                        cw.address,
                        describe_cold(cold),
                        describe_cold(warm),
                        if is_listen(&cw.what) {
                            "another new connection (a listen holds its connection open, so it \
                             goes last on one)"
                        } else {
                            "that connection"
                        }
                    ))
                    .reply(cold)
                    .reply(warm);
                }
                judged.push(cw.what.clone());
            }
            _ => unjudged.push(format!(
                "{} ({})",
                cw.what,
                cw.lost
                    .as_deref()
                    .unwrap_or("not verified: an answer is missing")
            )),
        }
    }
    let mut message = format!(
        "{}; each of {} was answered as the first request on a new connection as it was after \
         other requests on that connection",
        first.message,
        if judged.is_empty() {
            "none".to_owned()
        } else {
            judged.join(", ")
        }
    );
    if judged.iter().any(|w| is_listen(w)) {
        message.push_str(
            " (the listen, which holds its connection open, after them on another new \
             connection)",
        );
    }
    if !unjudged.is_empty() {
        message.push_str(&format!(
            "; not verified on a new connection: {}",
            unjudged.join("; ")
        ));
    }
    Judgement::pass(message)
}

/// Why a same-connection probe could not run to its end, as a skip reason.
fn connection_lost(conn: &RawConnection, reply: &Reply) -> Option<String> {
    if reply.status.is_some() {
        return None;
    }
    let why = reply
        .transport_error
        .as_ref()
        .map_or_else(|| "no response".to_owned(), ToString::to_string);
    Some(format!(
        "not verified: the dedicated connection ({} → {}) carried {} answered request{} and \
         then no more ({why}); the probe needs the server to keep one connection open for \
         several requests",
        conn.local_addr(),
        conn.peer_addr(),
        conn.answered,
        if conn.answered == 1 { "" } else { "s" },
    ))
}

/// What an answer says, for comparing the same request before and after a
/// warm-up: status, error code, and for a list the names (or URIs) it lists.
fn content(reply: &Reply) -> (Option<u16>, Option<i64>, bool, BTreeSet<String>) {
    let (status, code, result) = shape(reply);
    let mut listed = BTreeSet::new();
    if let Some(r) = reply.result() {
        for (key, field) in [("tools", "name"), ("prompts", "name"), ("resources", "uri")] {
            for item in r.get(key).and_then(Value::as_array).into_iter().flatten() {
                if let Some(v) = item.get(field).and_then(Value::as_str) {
                    listed.insert(format!("{key}:{v}"));
                }
            }
        }
    }
    // A listen's acknowledgement counts as what it lists.
    if acknowledged(reply) {
        listed.insert("notifications/subscriptions/acknowledged".to_owned());
    }
    (status, code, result, listed)
}

/// What [`cold_request`] compares: the answer's shape, and for a listen
/// whether the acknowledgement came.
fn cold_shape(reply: &Reply) -> ((Option<u16>, Option<i64>, bool), bool) {
    (shape(reply), acknowledged(reply))
}

/// Whether a listen stream carried `notifications/subscriptions/acknowledged`.
fn acknowledged(reply: &Reply) -> bool {
    reply.notifications.iter().any(|n| {
        n.get("method").and_then(Value::as_str) == Some("notifications/subscriptions/acknowledged")
    })
}

/// An answer for a finding; a listen's says whether it was acknowledged.
fn describe_cold(reply: &Reply) -> String {
    if reply.method == "subscriptions/listen" {
        format!(
            "{} ({})",
            reply.describe(),
            if acknowledged(reply) {
                "acknowledged"
            } else {
                "no acknowledgement"
            }
        )
    } else {
        reply.describe()
    }
}

/// Whether a cold probe's label names a `subscriptions/listen`.
fn is_listen(what: &str) -> bool {
    what == LISTEN
}

/// The label of the cold `subscriptions/listen`.
const LISTEN: &str = "`subscriptions/listen`";

/// The one cold probe that is deliberately invalid (a discover without the
/// required `clientCapabilities`): only a server that fills it in from an
/// earlier request on the connection answers it with a result. That is
/// MCP-STL-004's finding; MCP-STL-003 judges the valid probes only.
const BARE_DISCOVER: &str = "`server/discover` without clientCapabilities";

/// Every method family the server serves, as [`cold_warm`] sends it: the
/// requests a client may send first on a connection, addressed to what the
/// survey's lists named (a tool protocheck may call, the first listed
/// resource and prompt), else to a made-up name. `server/discover` goes
/// without `clientCapabilities`, so that context an earlier request declared
/// would show in its answer.
fn cold_probes(s: &Session) -> Vec<(String, Probe)> {
    let c = &s.client;
    let mut probes = vec![(
        BARE_DISCOVER.to_owned(),
        c.request("server/discover", json!({}))
            .without_meta(wire::META_CLIENT_CAPABILITIES),
    )];
    probes.push((
        "`server/discover`".to_owned(),
        c.request("server/discover", json!({})),
    ));
    let unknown = super::survey::unknown_name;
    if s.advertises("tools") {
        probes.push((
            "`tools/list`".to_owned(),
            c.request("tools/list", json!({})),
        ));
        let (name, arguments) = match s.survey.callable.first() {
            Some(tool) => (
                tool.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                super::survey::placeholder_arguments(
                    tool.get("inputSchema").unwrap_or(&Value::Null),
                ),
            ),
            None => (unknown("tool"), json!({})),
        };
        probes.push((
            format!("`tools/call` of `{}`", clip(&name, 60)),
            c.request("tools/call", json!({"name": name, "arguments": arguments})),
        ));
    }
    if s.advertises("resources") {
        probes.push((
            "`resources/list`".to_owned(),
            c.request("resources/list", json!({})),
        ));
        probes.push((
            "`resources/templates/list`".to_owned(),
            c.request("resources/templates/list", json!({})),
        ));
        let uri = s
            .survey
            .resources
            .names("uri")
            .into_iter()
            .next()
            .unwrap_or_else(|| format!("protocheck://missing/{}", unknown("resource")));
        probes.push((
            format!("`resources/read` of `{}`", clip(&uri, 60)),
            c.request("resources/read", json!({"uri": uri})),
        ));
    }
    if s.advertises("prompts") {
        probes.push((
            "`prompts/list`".to_owned(),
            c.request("prompts/list", json!({})),
        ));
        let (name, arguments) = match s.survey.prompts.items.first() {
            Some(prompt) => (
                prompt
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                super::survey::prompt_arguments(prompt),
            ),
            None => (unknown("prompt"), json!({})),
        };
        probes.push((
            format!("`prompts/get` of `{}`", clip(&name, 60)),
            c.request("prompts/get", json!({"name": name, "arguments": arguments})),
        ));
    }
    if s.advertises("completions") {
        let prompt = s
            .survey
            .prompts
            .names("name")
            .into_iter()
            .next()
            .unwrap_or_else(|| unknown("prompt"));
        probes.push((
            "`completion/complete`".to_owned(),
            c.request(
                "completion/complete",
                json!({
                    "ref": {"type": "ref/prompt", "name": prompt},
                    "argument": {"name": "protocheck", "value": ""}
                }),
            ),
        ));
    }
    // A listen where there is something to listen for (the family probes'
    // filter): it goes first on a connection of its own, and last on the
    // others (see [`send_cold_warm`]).
    if let Some(listen) = s
        .family_probes()
        .into_iter()
        .find(|p| p.method == "subscriptions/listen")
    {
        probes.push((LISTEN.to_owned(), listen));
    }
    probes
}

/// The warm-up [`cold_warm`] sends on a connection between the first
/// `method` request and the same request again, two requests long so that
/// every connection takes the same steps: a `server/discover` declaring
/// capabilities and another client's `clientInfo`, then the list of the
/// method's family (a server that wants its list seen before a read, a call
/// or a get has had it; for a list, the list itself; for discover, the first
/// list served).
fn warm_ups(s: &Session, method: &str) -> [Probe; 2] {
    let c = &s.client;
    let discover = c
        .request("server/discover", json!({}))
        .with_capabilities(json!({"elicitation": {}, "roots": {}}))
        .with_meta(
            wire::META_CLIENT_INFO,
            json!({"name": "protocheck-warm-up", "version": "0.0.1"}),
        );
    let family = method.split('/').next().unwrap_or_default();
    let served = [
        ("tools", "tools/list"),
        ("resources", "resources/list"),
        ("prompts", "prompts/list"),
    ];
    let list = served
        .iter()
        .find(|(capability, _)| *capability == family && s.advertises(capability))
        .or_else(|| {
            served
                .iter()
                .find(|(capability, _)| s.advertises(capability))
        })
        .map(|(_, list)| *list);
    let list = match (method, list) {
        ("resources/templates/list", _) => c.request(method, json!({})),
        (_, Some(list)) => c.request(list, json!({})),
        (_, None) => c.request("server/discover", json!({})),
    };
    [discover, list]
}

/// Most versions other than 2026-07-28 the warm-ups declare.
const MAX_OTHER_VERSIONS: usize = 4;

/// The protocol versions the warm-ups of [`version_warm_ups`] declare, and
/// whether the server listed them: every `supportedVersions` entry other
/// than 2026-07-28 (at most [`MAX_OTHER_VERSIONS`]), else 2025-11-25 (which
/// a server listing 2026-07-28 alone refuses; the request that carried it
/// came before all the same).
fn other_versions(s: &Session) -> (Vec<String>, bool) {
    let mut listed: Vec<String> = Vec::new();
    for v in s.supported_versions().unwrap_or_default() {
        if v != wire::PROTOCOL_VERSION && !listed.contains(&v) {
            listed.push(v);
        }
    }
    listed.truncate(MAX_OTHER_VERSIONS);
    if listed.is_empty() {
        (vec![wire::LEGACY_VERSION.to_owned()], false)
    } else {
        (listed, true)
    }
}

/// The version a legacy `initialize` asks for in place of `version`: the
/// version itself when it is a legacy revision, else 2025-11-25.
fn legacy_of(version: &str) -> &str {
    if wire::LEGACY_VERSIONS.contains(&version) {
        version
    } else {
        wire::LEGACY_VERSION
    }
}

/// The second round of warm-ups (MCP-STL-004): requests declaring another
/// protocol version on the connection. "Version" is one of the things a
/// server MUST NOT take from a prior request on the connection (BASIC
/// "Statelessness"); two ways a client may declare another version are
/// read, for each of [`other_versions`]: a `server/discover` carrying it in
/// `MCP-Protocol-Version` and `_meta`, and the legacy `initialize`
/// handshake asking for it (the way a 2025-era client declares a version,
/// which a dual-era server serves on the same endpoint). They are warm-ups:
/// their answers are not judged here, and none joins the run's log.
fn version_warm_ups(s: &Session) -> Vec<Probe> {
    let c = &s.client;
    let mut probes = Vec::new();
    let mut asked: Vec<&str> = Vec::new();
    let (versions, _) = other_versions(s);
    for version in &versions {
        probes.push(
            c.request("server/discover", json!({}))
                .with_version(version)
                .invalid(Invalidity::UnsupportedVersion),
        );
        let legacy = legacy_of(version);
        if asked.contains(&legacy) {
            continue;
        }
        asked.push(legacy);
        let mut initialize = super::era::initialize_probe(c);
        if let Some(field) = initialize.body.pointer_mut("/params/protocolVersion") {
            *field = json!(legacy);
        }
        probes.push(initialize);
    }
    probes
}

/// What [`no_connection_state`] says the version warm-ups were.
fn versions_declared(s: &Session) -> String {
    let (versions, listed) = other_versions(s);
    let mut asked: Vec<&str> = Vec::new();
    for v in &versions {
        if !asked.contains(&legacy_of(v)) {
            asked.push(legacy_of(v));
        }
    }
    format!(
        "a `server/discover` carrying version {} and a legacy `initialize` asking for {} ({})",
        versions.join(", then "),
        asked.join(", then "),
        if listed {
            "versions `supportedVersions` lists"
        } else {
            "`supportedVersions` lists no other version, so one the server refuses"
        }
    )
}

/// The requests one dedicated connection carries, step by step (`None`: that
/// step sends nothing on it). See [`send_cold_warm`].
type Lane = Vec<Option<Probe>>;

/// The step of the request sent first on its connection.
const COLD: usize = 0;
/// The last warm-up of the first round (the family's list).
const WARMED: usize = 2;
/// The request again after `server/discover` and the family's list.
const WARM: usize = 3;

/// Sends each of [`cold_probes`] as the first request on a new connection of
/// its own, then the [`warm_ups`] on that connection and the probe again,
/// then the [`version_warm_ups`] and the probe once more: seven steps, once
/// per run (MCP-STL-003 reads the first round, MCP-STL-004 both).
///
/// A `subscriptions/listen` holds its connection open until protocheck
/// closes it, so nothing can follow it there: it goes first on one new
/// connection, after the first round of warm-ups on a second, and after both
/// rounds on a third, each in the step its probe takes on the others.
///
/// §15 amendment "Same-connection rules run on one dedicated, verified
/// connection": a pool may carry the warm-up and the probe on different
/// connections, and the verdict would then depend on the pool. Each probe
/// gets its own HTTP/1.1 connection that carries its requests in order. The
/// connections go side by side, step by step (seven round trips whatever
/// the number of methods). No warm-up is sent before every first request is
/// answered, so a server that (wrongly) keeps such context for all its
/// connections answers every first request cold on every run.
async fn cold_warm(s: &Session) -> &[ColdWarm] {
    s.cold_warm.get_or_init(|| send_cold_warm(s)).await
}

async fn send_cold_warm(s: &Session) -> Vec<ColdWarm> {
    let probes = cold_probes(s);
    let version = version_warm_ups(s);
    // The request, two warm-ups, the request, the version warm-ups, the
    // request: the last warm-up and the last request's steps.
    let steps = WARM + version.len() + 2;
    let (versioned_step, again_step) = (steps - 2, steps - 1);
    // Per probe, the lanes (connections) that carry it.
    let mut lanes: Vec<Lane> = Vec::new();
    let mut owners: Vec<usize> = Vec::new();
    for (k, (_, probe)) in probes.iter().enumerate() {
        let [discover, list] = warm_ups(s, &probe.method);
        let mut full: Lane = vec![
            Some(probe.clone()),
            Some(discover),
            Some(list),
            Some(probe.clone()),
        ];
        full.extend(version.iter().cloned().map(Some));
        full.push(Some(probe.clone()));
        if probe.method == "subscriptions/listen" {
            // Nothing can follow a listen on its connection.
            let mut first: Lane = vec![None; steps];
            first[COLD] = Some(probe.clone());
            let mut warm: Lane = vec![None; steps];
            warm[1..=WARM].clone_from_slice(&full[1..=WARM]);
            let mut again = full.clone();
            again[COLD] = None;
            again[WARM] = None;
            lanes.extend([first, warm, again]);
            owners.extend([k, k, k]);
        } else {
            lanes.push(full);
            owners.push(k);
        }
    }
    let opened = futures::future::join_all(lanes.iter().map(|_| s.client.dedicated())).await;
    let mut lost: Vec<Option<String>> = Vec::new();
    let mut addresses: Vec<String> = Vec::new();
    let mut conns = Vec::new();
    for conn in opened {
        match conn {
            Ok(c) => {
                addresses.push(format!("{} → {}", c.local_addr(), c.peer_addr()));
                lost.push(None);
                conns.push(Some(c));
            }
            Err(e) => {
                addresses.push("no connection".to_owned());
                lost.push(Some(format!("could not open a new connection: {e}")));
                conns.push(None);
            }
        }
    }
    let mut answers: Vec<Vec<Option<Reply>>> = vec![vec![None; steps]; lanes.len()];
    for step in 0..steps {
        let sent: Vec<Option<&Probe>> = lanes
            .iter()
            .zip(&lost)
            .map(|(lane, lost)| lane[step].as_ref().filter(|_| lost.is_none()))
            .collect();
        for (i, reply) in same_step(s, &mut conns, &sent)
            .await
            .into_iter()
            .enumerate()
        {
            match reply {
                Some(Ok(reply)) => answers[i][step] = Some(reply),
                Some(Err(reason)) => lost[i] = Some(reason),
                None => {}
            }
        }
    }
    let mut found = Vec::new();
    for (k, (what, _)) in probes.iter().enumerate() {
        let mine: Vec<usize> = (0..lanes.len()).filter(|i| owners[*i] == k).collect();
        // Each step's answer from the lane that sent the probe there (a
        // listen's lanes send it at different steps).
        let at = |step: usize, probe_step: usize| -> Option<Reply> {
            mine.iter()
                .find(|i| lanes[**i][probe_step].is_some() && lanes[**i][step].is_some())
                .and_then(|i| answers[*i][step].clone())
        };
        found.push(ColdWarm {
            what: what.clone(),
            address: mine
                .iter()
                .map(|i| addresses[*i].clone())
                .collect::<Vec<_>>()
                .join("; "),
            cold: at(COLD, COLD),
            warmed: at(WARMED, WARM),
            warm: at(WARM, WARM),
            versioned: at(versioned_step, again_step),
            again: at(again_step, again_step),
            lost: mine.iter().find_map(|i| lost[*i].clone()),
        });
    }
    found
}

async fn no_connection_state(s: &Session) -> Judgement {
    // BASIC "Statelessness": servers MUST NOT rely on prior requests over the
    // same connection to establish context. Every method family the server
    // serves is probed (`cold_probes`), each as the first request on a new
    // connection, again after a `server/discover` declaring capabilities
    // and another `clientInfo` and the list of its family, and once more
    // after requests declaring another protocol version, on that connection.
    // The first probe that is not answered alike decides.
    let declared = versions_declared(s);
    let mut judged = Vec::new();
    let mut unjudged = Vec::new();
    for cw in cold_warm(s).await {
        let (Some(cold), Some(warm), Some(again)) = (&cw.cold, &cw.warm, &cw.again) else {
            unjudged.push(format!(
                "{} ({})",
                cw.what,
                cw.lost
                    .as_deref()
                    .unwrap_or("not verified: an answer is missing")
            ));
            continue;
        };
        let connection = if is_listen(&cw.what) {
            "new connections (a listen holds its connection open, so the first went alone on \
             one, the others last on connections that carried the other requests first)"
        } else {
            "one connection"
        };
        for (after, reply, before) in [
            (
                "a `server/discover` declaring capabilities and another `clientInfo`, and the \
                 list of its family"
                    .to_owned(),
                warm,
                &cw.warmed,
            ),
            (format!("those and then {declared}"), again, &cw.versioned),
        ] {
            if content(cold) == content(reply) {
                continue;
            }
            let mut judgement = Judgement::fail(format!(
                "on {connection} ({}, every request on its TCP connection), {} answered {} as \
                 the first request but {} after {after} on that connection{}; servers MUST NOT \
                 rely on prior requests over the same connection for version, capabilities or \
                 identity",
                cw.address,
                cw.what,
                describe_cold(cold),
                describe_cold(reply),
                if shape(cold) == shape(reply) && !is_listen(&cw.what) {
                    " (a different list)"
                } else {
                    ""
                }
            ))
            .reply(cold);
            if let Some(before) = before {
                judgement = judgement.reply(before);
            }
            return judgement.reply(reply);
        }
        judged.push(format!("{} ({})", cw.what, cw.address));
    }
    if judged.is_empty() {
        return Judgement::skip(format!(
            "not verified: no probe could be sent its requests on one connection: {}",
            unjudged.join("; ")
        ));
    }
    let mut message = format!(
        "each probe, on its own connection, was answered alike as the first request, again \
         after a `server/discover` declaring capabilities and the list of its family, and once \
         more after {declared}: {}",
        judged.join("; ")
    );
    if !unjudged.is_empty() {
        message.push_str(&format!("; not verified: {}", unjudged.join("; ")));
    }
    Judgement::pass(message)
}

/// One step of [`send_cold_warm`]: `sent[i]` on `conns[i]`, side by side,
/// where there is one. Each answer, or why its connection could not carry
/// it (a skip reason); `None` where nothing was sent.
async fn same_step(
    s: &Session,
    conns: &mut [Option<RawConnection>],
    sent: &[Option<&Probe>],
) -> Vec<Option<Result<Reply, String>>> {
    let sending = conns.iter_mut().zip(sent).map(|(conn, probe)| async move {
        let (Some(conn), Some(probe)) = (conn.as_mut(), probe) else {
            return None;
        };
        let reply = s.client.send_on(conn, probe, Spelling::Lower).await;
        Some(match connection_lost(conn, &reply) {
            Some(reason) => Err(reason),
            None => Ok(reply),
        })
    });
    futures::future::join_all(sending).await
}

/// STL-005/006/007 are modern-only (streamable-http, "Earlier Streamable HTTP
/// Revisions": the 405 and resumption SHOULDs are written for servers that
/// support only 2026-07-28; a dual-era server keeps the 2025-11-25 GET stream,
/// DELETE and resumption for its legacy clients). The engine skips them for
/// dual-era servers ([`McpRule::modern_only`]).
async fn method_405(s: &Session, method: http::Method) -> Judgement {
    // The answer is a watch (read as far as its first event, or for a window
    // derived from the run's round-trip times): the GET one is shared with
    // MCP-DEP-004, which asks the same request whether a legacy stream opens.
    let reply = s.watch(method.clone(), &s.url).await;
    match reply.status {
        Some(405) => Judgement::pass(format!("{method} on the MCP endpoint answered 405")),
        Some(status) => Judgement::fail(format!(
            "{method} on the MCP endpoint answered HTTP {status}{}; a {} server SHOULD answer \
             405 Method Not Allowed (there is no GET stream and no session to delete)",
            if reply.sse {
                " with an event stream"
            } else {
                ""
            },
            wire::PROTOCOL_VERSION
        ))
        .with(&reply.exchange),
        None => Judgement::fail(format!(
            "{method} on the MCP endpoint got no answer ({}); a {} server SHOULD answer 405",
            reply.exchange.error.as_deref().unwrap_or("no response"),
            wire::PROTOCOL_VERSION
        ))
        .with(&reply.exchange),
    }
}

async fn get_405(s: &Session) -> Judgement {
    method_405(s, http::Method::GET).await
}

async fn delete_405(s: &Session) -> Judgement {
    method_405(s, http::Method::DELETE).await
}

async fn last_event_id(s: &Session) -> Judgement {
    // Every method family the server serves carries the header, each
    // compared with the same request without it (MCP-STL-002's plain
    // answers, sent side by side with these). Beside them, the requests of
    // the run answered with an event stream are sent again carrying an event
    // id their first stream carried (a resuming server replays what followed
    // it), and a GET carries one (a resuming server opens a stream).
    let plain = &sessioned(s).await.pairs;
    let families = async {
        let sends = s.family_probes().into_iter().map(|probe| {
            let probe = probe.with_header(H_LAST_EVENT_ID, "protocheck-0");
            async move { super::survey::send_family(&s.client, &probe).await }
        });
        s.each(sends.collect()).await
    };
    let streams = async {
        let resent = resend_streams(s, plain).await;
        let id = resent
            .iter()
            .find_map(|r| r.first.event_ids.first().cloned())
            .unwrap_or_else(|| MADE_UP_EVENT_ID.to_owned());
        let (plain_get, get) = tokio::join!(
            s.watch(http::Method::GET, &s.url),
            s.client
                .watch_with_header(http::Method::GET, &s.url, H_LAST_EVENT_ID, &id)
        );
        (resent, id, plain_get, get)
    };
    let (replies, (resent, get_id, plain_get, get)) = tokio::join!(families, streams);
    for ((method, without, _), with) in plain.iter().zip(&replies) {
        if shape(with) != shape(without) {
            return Judgement::fail(format!(
                "`{method}` carrying `Last-Event-ID: {MADE_UP_EVENT_ID}` answered {} while the \
                 same request without it answered {}; streams are not resumable in {}, so the \
                 header SHOULD be ignored",
                with.describe(),
                without.describe(),
                wire::PROTOCOL_VERSION
            ))
            .reply(with)
            .reply(without);
        }
    }
    for r in &resent {
        if let Some(frame) = replayed(&r.first, &r.again) {
            return Judgement::fail(format!(
                "{} sent again carrying `Last-Event-ID: {}` ({}) was answered with a frame of \
                 an earlier stream ({}); streams are not resumable in {}: a server SHOULD ignore \
                 the header and replay nothing",
                r.what,
                clip(&r.id, 80),
                r.whence(),
                clip(&frame.to_string(), 200),
                wire::PROTOCOL_VERSION
            ))
            .reply(&r.again)
            .reply(&r.first);
        }
        if shape(&r.again) != shape(&r.first) {
            return Judgement::fail(format!(
                "{} sent again carrying `Last-Event-ID: {}` ({}) answered {} while the first, \
                 without it, answered {}; streams are not resumable in {}, so the header SHOULD \
                 be ignored",
                r.what,
                clip(&r.id, 80),
                r.whence(),
                r.again.describe(),
                r.first.describe(),
                wire::PROTOCOL_VERSION
            ))
            .reply(&r.again)
            .reply(&r.first);
        }
    }
    let opened = get.first_event.is_some() && plain_get.first_event.is_none();
    if get.status != plain_get.status || get.sse != plain_get.sse || opened {
        let said = |b: &super::client::BareReply| {
            format!(
                "{}{}{}",
                b.status
                    .map_or_else(|| "no status".to_owned(), |c| format!("HTTP {c}")),
                if b.sse { " with an event stream" } else { "" },
                if b.first_event.is_some() {
                    " carrying an event"
                } else {
                    ""
                }
            )
        };
        return Judgement::fail(format!(
            "a GET on the MCP endpoint carrying `Last-Event-ID: {}` answered {} while the plain \
             GET answered {}; streams are not resumable in {}: the header SHOULD be ignored, \
             and no stream resumed",
            clip(&get_id, 80),
            said(&get),
            said(&plain_get),
            wire::PROTOCOL_VERSION
        ))
        .with(&get.exchange)
        .with(&plain_get.exchange);
    }
    let methods: Vec<&str> = plain.iter().map(|(m, ..)| m.as_str()).collect();
    let streams = if resent.is_empty() {
        "; no request of the run was answered with an event stream to send again (no tool \
         protocheck may call answered with one, and nothing to listen for)"
            .to_owned()
    } else {
        format!(
            "; sent again with `Last-Event-ID`, {} replayed nothing of an earlier stream and \
             answered as without it",
            resent
                .iter()
                .map(|r| format!("{} (`{}`: {})", r.what, clip(&r.id, 80), r.whence()))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Judgement::pass(format!(
        "each of {} carrying `Last-Event-ID` was answered like the same request without it{streams}; \
         a GET carrying `Last-Event-ID: {}` answered like the plain GET",
        methods.join(", "),
        clip(&get_id, 80)
    ))
}

/// The `Last-Event-ID` sent where no stream of the run carried an event id.
const MADE_UP_EVENT_ID: &str = "protocheck-0";

/// A request answered with an event stream, sent again carrying
/// `Last-Event-ID` (MCP-STL-007).
struct Resent {
    /// What was sent, for findings.
    what: String,
    /// The first answer, without the header.
    first: Reply,
    /// The id sent.
    id: String,
    /// The answer to the request sent again with the header.
    again: Reply,
}

impl Resent {
    /// Where the id sent came from.
    fn whence(&self) -> &'static str {
        if self.first.event_ids.first() == Some(&self.id) {
            "the first event id the first stream carried"
        } else {
            "the first stream carried no event id, so a made-up one"
        }
    }
}

/// Sends again each request of the run that was answered with an event
/// stream: the survey's calls of tools protocheck may run (with a progress
/// token of their own), and the `subscriptions/listen` family probe, each
/// carrying as `Last-Event-ID` the first event id the first stream carried
/// (a resuming server replays the events after it), else a made-up one.
async fn resend_streams(
    s: &Session,
    plain: &[(String, Reply, Vec<super::session::Tagged>)],
) -> Vec<Resent> {
    let c = &s.client;
    let id_of = |first: &Reply| {
        first
            .event_ids
            .first()
            .cloned()
            .unwrap_or_else(|| MADE_UP_EVENT_ID.to_owned())
    };
    let mut sends: Vec<(String, Reply, String, Probe)> = Vec::new();
    for call in s.tool_calls().await {
        if !call.first.sse {
            continue;
        }
        let Some(tool) = s
            .survey
            .callable
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(call.tool.as_str()))
        else {
            continue;
        };
        let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
        let probe = c.request(
            "tools/call",
            json!({"name": call.tool, "arguments": super::survey::placeholder_arguments(&schema)}),
        );
        let token = json!(format!(
            "protocheck-{}",
            probe.id().cloned().unwrap_or_default()
        ));
        let id = id_of(&call.first);
        let probe = probe
            .with_meta("progressToken", token)
            .with_param_headers(&schema)
            .with_header(H_LAST_EVENT_ID, id.clone());
        sends.push((
            format!(
                "`tools/call` of `{}` with a progress token",
                clip(&call.tool, 60)
            ),
            call.first.clone(),
            id,
            probe,
        ));
    }
    if let Some((_, first, _)) = plain
        .iter()
        .find(|(m, r, _)| m == "subscriptions/listen" && r.sse)
        && let Some(listen) = s
            .family_probes()
            .into_iter()
            .find(|p| p.method == "subscriptions/listen")
    {
        let id = id_of(first);
        sends.push((
            "`subscriptions/listen`".to_owned(),
            first.clone(),
            id.clone(),
            listen.with_header(H_LAST_EVENT_ID, id),
        ));
    }
    let answers = s
        .each(
            sends
                .iter()
                .map(|(.., probe)| super::survey::send_family(c, probe))
                .collect(),
        )
        .await;
    sends
        .into_iter()
        .zip(answers)
        .map(|((what, first, id, _), again)| Resent {
            what,
            first,
            id,
            again,
        })
        .collect()
}

/// What ties a frame to the request it answers: a response's id, a
/// notification's progress token and subscription id.
fn ties(frame: &Value) -> Vec<&Value> {
    let params = frame.get("params");
    // A response's id is the request's; a request the server sends on the
    // stream has an id of the server's own, which ties it to nothing.
    let response_id = if frame.get("method").is_none() {
        frame.get("id")
    } else {
        None
    };
    [
        response_id,
        params.and_then(|p| p.get("progressToken")),
        params
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get("progressToken")),
        subscription_of(params),
        subscription_of(frame.get("result")),
    ]
    .into_iter()
    .flatten()
    .filter(|v| !v.is_null())
    .collect()
}

/// The subscription id in `_meta` of a frame's params or result.
fn subscription_of(part: Option<&Value>) -> Option<&Value> {
    part.and_then(|v| v.get("_meta"))
        .and_then(|m| m.get(wire::META_SUBSCRIPTION_ID))
}

/// Every frame an answer's stream carried.
fn frames(reply: &Reply) -> impl Iterator<Item = &Value> {
    reply
        .notifications
        .iter()
        .chain(&reply.server_requests)
        .chain(&reply.stray_frames)
        .chain(reply.message.as_ref())
}

/// A frame of `again` that belongs to an earlier stream: it carries the
/// first request's id, progress token or subscription id (the request sent
/// again has its own id and token), or it is a response to another request
/// altogether, as a server replaying a log it keeps for every stream sends
/// (a stream carries the final response of its own request only).
fn replayed<'a>(first: &Reply, again: &'a Reply) -> Option<&'a Value> {
    let marks: Vec<&Value> = frames(first).flat_map(ties).collect();
    let own_id = again.message.as_ref().and_then(|m| m.get("id"));
    frames(again)
        .find(|f| ties(f).iter().any(|t| marks.contains(t)))
        .or_else(|| {
            frames(again).find(|f| {
                f.get("method").is_none()
                    && (f.get("result").is_some() || f.get("error").is_some())
                    && own_id.is_some()
                    && f.get("id") != own_id
            })
        })
}

/// A list method [`list_per_connection`] compares: its capability, method,
/// the result's array and the member naming each item.
#[derive(Clone, Copy)]
struct ListKind {
    capability: &'static str,
    method: &'static str,
    key: &'static str,
    field: &'static str,
}

/// Every list the sentence covers (tools#capabilities, and by the same words
/// on their pages the resource, template and prompt lists).
const LISTS: [ListKind; 4] = [
    ListKind {
        capability: "tools",
        method: "tools/list",
        key: "tools",
        field: "name",
    },
    ListKind {
        capability: "resources",
        method: "resources/list",
        key: "resources",
        field: "uri",
    },
    ListKind {
        capability: "resources",
        method: "resources/templates/list",
        key: "resourceTemplates",
        field: "uriTemplate",
    },
    ListKind {
        capability: "prompts",
        method: "prompts/list",
        key: "prompts",
        field: "name",
    },
];

/// Most pages of one list [`list_names`] reads on a connection: the survey's.
const MAX_LIST_PAGES: usize = 10;

/// Item names from every page of a list (at most [`MAX_LIST_PAGES`]), all
/// sent on `conn`; the last answer, and whether the walk stopped at the cap.
async fn list_names(
    client: &McpClient,
    conn: &mut RawConnection,
    list: ListKind,
) -> Result<(BTreeSet<String>, Reply, bool), Reply> {
    let mut names = BTreeSet::new();
    let mut cursor: Option<String> = None;
    let mut last = None;
    let mut capped = true;
    for _ in 0..MAX_LIST_PAGES {
        let params = cursor
            .as_ref()
            .map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let reply = client
            .send_on(conn, &client.request(list.method, params), Spelling::Lower)
            .await;
        let Some(items) = reply
            .result()
            .and_then(|r| r.get(list.key))
            .and_then(Value::as_array)
        else {
            return Err(reply);
        };
        names.extend(
            items
                .iter()
                .filter_map(|t| t.get(list.field).and_then(Value::as_str).map(str::to_owned)),
        );
        let next = reply
            .result()
            .and_then(|r| r.get("nextCursor"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        last = Some(reply);
        match next {
            Some(next) if Some(next.as_str()) != cursor.as_deref() => cursor = Some(next),
            _ => {
                capped = false;
                break;
            }
        }
    }
    match last {
        Some(reply) => Ok((names, reply, capped)),
        None => Err(Reply::empty(list.method)),
    }
}

/// Names for a message: quoted, clipped, and not too many.
fn quote_names<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let items: Vec<String> = names.map(|n| format!("`{}`", clip(n, 60))).collect();
    if items.is_empty() {
        "none".to_owned()
    } else {
        some(&items, 5, ", ")
    }
}

/// What [`list_per_connection`] finds on the lists of a connection: a label,
/// then per list its names or the answer that gave none.
type Listed = (String, Vec<Walk>);

/// One walk of a list on a connection: its names, last page and whether it
/// stopped at the cap; or the answer that gave no list.
type Walk = Result<(BTreeSet<String>, Reply, bool), Reply>;

/// What [`one_list`] finds on one list.
struct OneList {
    /// The first walk on connection A.
    before: Result<(BTreeSet<String>, Reply, bool), Reply>,
    /// The walk on A after the other requests, or why A could not carry it.
    after: Result<Walk, String>,
    /// The walk on connection B.
    on_b: Result<(BTreeSet<String>, Reply, bool), Reply>,
    /// The methods of the other requests sent on A.
    others: Vec<String>,
}

/// [`list_per_connection`] for one list: new connections A and B, the list
/// walked on both side by side, then on A the [`other_requests`] and the
/// walk again.
async fn one_list(s: &Session, list: ListKind) -> Result<OneList, Judgement> {
    let (a, b) = tokio::join!(s.client.dedicated(), s.client.dedicated());
    let (mut a, mut b) = match (a, b) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            return Err(Judgement::skip(format!(
                "could not open a new connection: {e}"
            )));
        }
    };
    let (before, on_b) = tokio::join!(
        list_names(&s.client, &mut a, list),
        list_names(&s.client, &mut b, list)
    );
    let others = other_requests(s, list);
    // A server that closes every connection after one answer keeps nothing
    // on a connection: the side-effect half has nothing to judge, the
    // per-connection half still does.
    for probe in &others {
        if a.closed().is_some() {
            break;
        }
        let _ = s.client.send_on(&mut a, probe, Spelling::Lower).await;
    }
    let after = match a.closed() {
        Some(why) => Err(format!(
            "closed after {} answer{} ({why})",
            a.answered,
            if a.answered == 1 { "" } else { "s" }
        )),
        None => Ok(list_names(&s.client, &mut a, list).await),
    };
    Ok(OneList {
        before,
        after,
        on_b,
        others: others.iter().map(|p| p.method.clone()).collect(),
    })
}

/// The other requests [`list_per_connection`] sends on a connection between
/// two walks of `list`: a discover declaring capabilities, a call of the
/// first tool protocheck may run (else of one that does not exist), and for
/// a resource list a read of the first listed resource, for the prompt list
/// a get of the first listed prompt.
fn other_requests(s: &Session, list: ListKind) -> Vec<Probe> {
    let c = &s.client;
    let mut others = vec![
        c.request("server/discover", json!({}))
            .with_capabilities(json!({"elicitation": {}, "roots": {}, "sampling": {}})),
    ];
    if s.advertises("tools") {
        let (name, arguments) = match s.survey.callable.first() {
            Some(tool) => (
                tool.get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                super::survey::placeholder_arguments(
                    tool.get("inputSchema").unwrap_or(&Value::Null),
                ),
            ),
            None => (super::survey::unknown_name("tool"), json!({})),
        };
        others.push(c.request("tools/call", json!({"name": name, "arguments": arguments})));
    }
    if list.capability == "resources"
        && let Some(uri) = s.survey.resources.names("uri").into_iter().next()
    {
        others.push(c.request("resources/read", json!({"uri": uri})));
    }
    if list.capability == "prompts"
        && let Some(prompt) = s.survey.prompts.items.first()
    {
        let name = prompt
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        others.push(c.request(
            "prompts/get",
            json!({"name": name, "arguments": super::survey::prompt_arguments(prompt)}),
        ));
    }
    others
}

async fn list_per_connection(s: &Session) -> Judgement {
    // tools#capabilities: the list "MUST NOT vary per-connection or as a side
    // effect of other requests on the connection"; the same words hold the
    // resource, template and prompt lists. The first lists (the survey's)
    // are compared with: a dedicated connection's lists; the same
    // connection's lists again after other requests on it (a tool call
    // protocheck may make, a read, a get); and a second dedicated
    // connection's lists. Each dedicated connection carries all its
    // requests itself (§15 amendment), so the verdict does not depend on how
    // a pool spreads them.
    let mut lists: Vec<ListKind> = Vec::new();
    let mut firsts: Vec<Option<BTreeSet<String>>> = Vec::new();
    let mut unread = Vec::new();
    for list in LISTS {
        if !s.advertises(list.capability) {
            continue;
        }
        let listing = match list.method {
            "tools/list" => &s.survey.tools,
            "resources/list" => &s.survey.resources,
            "resources/templates/list" => &s.survey.templates,
            _ => &s.survey.prompts,
        };
        if listing.problem.is_some() || listing.pages.is_empty() {
            unread.push(format!(
                "`{}` ({})",
                list.method,
                listing.problem.as_deref().unwrap_or("no page")
            ));
            continue;
        }
        lists.push(list);
        // The survey keeps at most its item cap: a list that reached it is
        // compared with connection A's first walk instead.
        firsts.push(
            (listing.items.len() < super::survey::MAX_ITEMS)
                .then(|| listing.names(list.field).into_iter().collect()),
        );
    }
    if lists.is_empty() {
        if unread.is_empty() {
            return Judgement::skip("the server advertises no tools, resources or prompts");
        }
        return Judgement::skip(format!(
            "not verified: no list could be read completely: {}",
            unread.join("; ")
        ));
    }
    // Each list has connections of its own, A and B, and every list's go
    // side by side: the first walks on A and B together, and only then the
    // other requests on A and the walk again, so that B's list comes before
    // them on every run (a list that changes as a side effect of those
    // requests anywhere, not only on A, then differs on A every time).
    let per_list = futures::future::join_all(lists.iter().map(|list| one_list(s, *list))).await;
    let mut before = Vec::new();
    let mut after = Vec::new();
    let mut on_b = Vec::new();
    let mut notes = Vec::new();
    let mut others_sent = BTreeSet::new();
    for (list, found) in lists.iter().zip(per_list) {
        let found = match found {
            Ok(found) => found,
            Err(judgement) => return judgement,
        };
        on_b.push(found.on_b);
        others_sent.extend(found.others);
        match found.after {
            Ok(listed) => after.push(listed),
            Err(note) => {
                notes.push(format!("{}: {note}", list.method));
                // A closed connection carries no side effect: its first
                // walk stands for the second.
                after.push(found.before.clone());
            }
        }
        before.push(found.before);
    }
    let label_a = "a new connection A (one per list)".to_owned();
    let note = if notes.is_empty() {
        String::new()
    } else {
        format!(
            " (the server closed a connection A after its first answers, so no request could \
             follow another on it: {})",
            notes.join("; ")
        )
    };
    let mut found: Vec<Listed> = vec![(label_a.clone(), before)];
    found.push((
        format!(
            "{label_a}, after {} on it",
            some(
                &others_sent
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>(),
                8,
                ", "
            )
        ),
        after,
    ));
    found.push(("a second new connection B (one per list)".to_owned(), on_b));
    // The reference of each list: the survey's, else connection A's first.
    let firsts: Vec<Option<BTreeSet<String>>> = firsts
        .into_iter()
        .zip(&found[0].1)
        .map(|(first, a)| first.or_else(|| a.as_ref().ok().map(|(names, ..)| names.clone())))
        .collect();
    let mut capped = Vec::new();
    for (label, listed) in &found {
        for ((list, first), got) in lists.iter().zip(&firsts).zip(listed) {
            let method = list.method;
            match got {
                Err(reply) => {
                    if reply.status.is_none() {
                        return Judgement::skip(format!(
                            "not verified: `{method}` on {label} got no answer ({}); the probe \
                             needs the server to keep one connection open for several requests",
                            reply.describe()
                        ));
                    }
                    return Judgement::fail(format!(
                        "`{method}` on {label} answered {}, though it worked on the first \
                         connection; the set MUST NOT vary per connection",
                        reply.describe()
                    ))
                    .reply(reply);
                }
                Ok((names, reply, walk_capped)) => {
                    if *walk_capped && !capped.contains(&method) {
                        capped.push(method);
                    }
                    let Some(first) = first else { continue };
                    if names != first {
                        let extra = quote_names(names.difference(first));
                        let missing = quote_names(first.difference(names));
                        return Judgement::fail(format!(
                            "`{method}` on {label} differs from the first connection's (only \
                             there: {extra}; missing there: {missing}); the set MUST NOT vary \
                             per connection or as a side effect of other requests on the \
                             connection"
                        ))
                        .reply(reply);
                    }
                }
            }
        }
    }
    let shown = if note.is_empty() {
        format!("{label_a} before and after other requests on it")
    } else {
        label_a
    };
    let methods: Vec<String> = lists
        .iter()
        .zip(&firsts)
        .map(|(l, f)| {
            format!(
                "`{}` ({} items)",
                l.method,
                f.as_ref().map_or(0, BTreeSet::len)
            )
        })
        .collect();
    let mut message = format!(
        "{} gave the same sets on the first connection, on {shown}, and on a second new \
         connection{note}",
        methods.join(", ")
    );
    if !capped.is_empty() {
        message.push_str(&format!(
            "; the walk stopped at {MAX_LIST_PAGES} pages of {} (the survey's cap): later pages \
             were not compared",
            capped.join(", ")
        ));
    }
    if !unread.is_empty() {
        message.push_str(&format!("; not compared: {}", unread.join("; ")));
    }
    Judgement::pass(message)
}
