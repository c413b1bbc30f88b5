//! STL — statelessness and session removal (basic/index#statelessness;
//! streamable-http, "Earlier Streamable HTTP Revisions"; tools#capabilities).

use super::client::{McpClient, Probe, Reply, Spelling, clip, some};
use super::era::recognised_modern;
use super::rule::{DISCOVER_ID, Keyword, McpRule, spec};
use super::session::{Judgement, Session};
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
    "protocheck sends `server/discover` with a made-up `Mcp-Session-Id` header and checks that \
     the answer carries no `Mcp-Session-Id`; it then checks every answer to the run's valid \
     requests for one.",
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
    "protocheck sends `server/discover` with a made-up `Mcp-Session-Id` header and compares the \
     answer's status, error code and presence of a result with those of the run's \
     `server/discover` without the header; they must be the same.",
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
     with `tools`; without, a 2026-07-28 answer such as 404 with -32601 passes.",
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
    "For `server/discover` without `clientCapabilities` and each advertised list method, \
     protocheck opens a dedicated HTTP/1.1 connection and sends the request, then a \
     `server/discover` declaring `elicitation` and `roots`, then the request again; status, error \
     code and listed names must be the same both times.",
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
    "protocheck sends `server/discover` with `Last-Event-ID: protocheck-0` and compares the \
     answer's status, error code and presence of a result with those of the run's \
     `server/discover` without that header. Judged only on servers that speak 2026-07-28 alone.",
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
    "protocheck compares the tool names of the survey's `tools/list` with `tools/list` (every \
     page) on a new dedicated connection A, on A again after a `server/discover` declaring \
     capabilities and a `tools/call` of a made-up tool, and on a second new connection B. All \
     sets must be equal.",
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

/// A session id no server minted: a conforming server never sees it as anything.
fn bogus_session() -> String {
    format!("protocheck-session-{:016x}", rand::random::<u64>())
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

async fn no_session_id(s: &Session) -> Judgement {
    let sent = bogus_session();
    let probe = s
        .client
        .request("server/discover", json!({}))
        .with_header(H_SESSION_ID, sent.clone());
    let echo = s.client.send(&probe).await;
    if let Some(value) = &echo.session_id {
        let how = if *value == sent {
            "echoed"
        } else {
            "answered with"
        };
        return Judgement::fail(format!(
            "a request carrying `Mcp-Session-Id: {sent}` was {how} `Mcp-Session-Id: {value}`; \
             {} has no sessions: ignore the header and never mint or echo one",
            wire::PROTOCOL_VERSION
        ))
        .reply(&echo);
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
    Judgement::pass(format!(
        "no answer among {} carried Mcp-Session-Id, including one to a request that sent it",
        seen.len()
    ))
}

/// `(status, error code, has result)`: what two answers must share to count as the same.
fn shape(reply: &Reply) -> (Option<u16>, Option<i64>, bool) {
    (reply.status, reply.error_code(), reply.result().is_some())
}

async fn session_ignored(s: &Session) -> Judgement {
    let sent = bogus_session();
    let probe = s
        .client
        .request("server/discover", json!({}))
        .with_header(H_SESSION_ID, sent.clone());
    let reply = s.client.send(&probe).await;
    if shape(&reply) == shape(&s.discover) {
        Judgement::pass(
            "a request carrying an unknown Mcp-Session-Id was answered like one without it",
        )
    } else {
        Judgement::fail(format!(
            "`server/discover` carrying `Mcp-Session-Id: {sent}` answered {} while the same \
             request without it answered {}; a {} server MUST NOT require or validate session \
             ids: ignore the header",
            reply.describe(),
            s.discover.describe(),
            wire::PROTOCOL_VERSION
        ))
        .reply(&reply)
        .reply(&s.discover)
    }
}

async fn cold_request(s: &Session) -> Judgement {
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
    (status, code, result, listed)
}

async fn no_connection_state(s: &Session) -> Judgement {
    // §15 amendment "Same-connection rules run on one dedicated, verified
    // connection": a pool may carry the warm-up and the probe on different
    // connections, and the verdict would then depend on the pool. Each probe
    // gets its own HTTP/1.1 connection that carries its three requests in
    // order, or the rule is skipped.
    //
    // BASIC "Statelessness": servers MUST NOT rely on prior requests over the
    // same connection to establish context. The whole requirement is probed:
    // `server/discover` without clientCapabilities (context taken from an
    // earlier request's capabilities) and every list method the server
    // advertises (a set or an answer that changes once another request was
    // seen on the connection), each as the first request on a new connection
    // and again after a `server/discover` declaring capabilities.
    let mut probes: Vec<(&str, Probe)> = vec![(
        "server/discover without clientCapabilities",
        s.client
            .request("server/discover", json!({}))
            .without_meta(wire::META_CLIENT_CAPABILITIES),
    )];
    for (capability, method) in [
        ("tools", "tools/list"),
        ("resources", "resources/list"),
        ("prompts", "prompts/list"),
    ] {
        if s.advertises(capability) {
            probes.push((method, s.client.request(method, json!({}))));
        }
    }
    let warm_up = s
        .client
        .request("server/discover", json!({}))
        .with_capabilities(json!({"elicitation": {}, "roots": {}}));
    // Each probe has a connection of its own, and they go side by side in
    // three steps: every first request, then every warm-up, then every
    // probe again. No warm-up is sent before every first request is
    // answered, so a server that (wrongly) keeps such context for all its
    // connections answers every first request cold on every run. The first
    // probe in the list that is not answered alike decides, as if they had
    // gone one after another.
    let opened = futures::future::join_all(probes.iter().map(|_| s.client.dedicated())).await;
    let mut conns = Vec::new();
    for conn in opened {
        match conn {
            Ok(c) => conns.push(c),
            Err(e) => return Judgement::skip(format!("could not open a new connection: {e}")),
        }
    }
    let addresses: Vec<String> = conns
        .iter()
        .map(|c| format!("{} → {}", c.local_addr(), c.peer_addr()))
        .collect();
    let firsts: Vec<&Probe> = probes.iter().map(|(_, p)| p).collect();
    let warm_ups = vec![&warm_up; probes.len()];
    let mut steps: Vec<Vec<Result<Reply, String>>> = Vec::new();
    for sent in [&firsts, &warm_ups, &firsts] {
        let going: Vec<bool> = (0..conns.len())
            .map(|i| steps.iter().all(|step| step[i].is_ok()))
            .collect();
        let step = same_step(s, &mut conns, sent, &going).await;
        steps.push(step);
    }
    let mut judged = Vec::new();
    for (i, ((what, _), address)) in probes.iter().zip(&addresses).enumerate() {
        let [cold, warmed, warm] = [&steps[0][i], &steps[1][i], &steps[2][i]];
        let (cold, warmed, warm) = match (cold, warmed, warm) {
            (Ok(cold), Ok(warmed), Ok(warm)) => (cold, warmed, warm),
            (Err(reason), ..) | (_, Err(reason), _) | (.., Err(reason)) => {
                return Judgement::skip(reason.clone());
            }
        };
        if content(cold) != content(warm) {
            return Judgement::fail(format!(
                "on one connection ({address}, all three requests on that TCP connection), \
                 {what} answered {} as the first request but {} after a `server/discover` \
                 declaring capabilities{}; servers MUST NOT rely on prior requests over the \
                 same connection for version, capabilities or identity",
                cold.describe(),
                warm.describe(),
                if shape(cold) == shape(warm) {
                    " (a different list)"
                } else {
                    ""
                }
            ))
            .reply(cold)
            .reply(warmed)
            .reply(warm);
        }
        judged.push(format!("{what} ({address})"));
    }
    Judgement::pass(format!(
        "each probe, on its own connection, was answered alike as the first request and again \
         after a `server/discover` declaring capabilities on that connection: {}",
        judged.join("; ")
    ))
}

/// One step of [`no_connection_state`]: `sent[i]` on `conns[i]`, side by
/// side, where `going[i]`. Each answer, or why its connection could not
/// carry it (a skip reason); where not going, an empty reason that is
/// never read (an earlier step's reason decides).
async fn same_step(
    s: &Session,
    conns: &mut [RawConnection],
    sent: &[&Probe],
    going: &[bool],
) -> Vec<Result<Reply, String>> {
    let sending = conns
        .iter_mut()
        .zip(sent)
        .zip(going)
        .map(|((conn, probe), go)| async move {
            if !*go {
                return Err(String::new());
            }
            let reply = s.client.send_on(conn, probe, Spelling::Lower).await;
            match connection_lost(conn, &reply) {
                Some(reason) => Err(reason),
                None => Ok(reply),
            }
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
    let probe: Probe = s
        .client
        .request("server/discover", json!({}))
        .with_header(H_LAST_EVENT_ID, "protocheck-0");
    let reply = s.client.send(&probe).await;
    if shape(&reply) == shape(&s.discover) {
        Judgement::pass("a request carrying `Last-Event-ID` was answered like one without it")
    } else {
        Judgement::fail(format!(
            "`server/discover` carrying `Last-Event-ID: protocheck-0` answered {} while the same \
             request without it answered {}; streams are not resumable in {}, so the header \
             SHOULD be ignored",
            reply.describe(),
            s.discover.describe(),
            wire::PROTOCOL_VERSION
        ))
        .reply(&reply)
        .reply(&s.discover)
    }
}

/// Tool names from every page of `tools/list`, all sent on `conn`.
async fn tool_names(
    client: &McpClient,
    conn: &mut RawConnection,
) -> Result<(BTreeSet<String>, Reply), Reply> {
    let mut names = BTreeSet::new();
    let mut cursor: Option<String> = None;
    let mut last = None;
    for _ in 0..10 {
        let params = cursor
            .as_ref()
            .map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let reply = client
            .send_on(conn, &client.request("tools/list", params), Spelling::Lower)
            .await;
        let Some(tools) = reply
            .result()
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array)
        else {
            return Err(reply);
        };
        names.extend(
            tools
                .iter()
                .filter_map(|t| t.get("name").and_then(Value::as_str).map(str::to_owned)),
        );
        let next = reply
            .result()
            .and_then(|r| r.get("nextCursor"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        last = Some(reply);
        match next {
            Some(next) if Some(next.as_str()) != cursor.as_deref() => cursor = Some(next),
            _ => break,
        }
    }
    match last {
        Some(reply) => Ok((names, reply)),
        None => Err(Reply::empty("tools/list")),
    }
}

/// Tool names for a message: quoted, clipped, and not too many.
fn quote_names<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let items: Vec<String> = names.map(|n| format!("`{}`", clip(n, 60))).collect();
    if items.is_empty() {
        "none".to_owned()
    } else {
        some(&items, 5, ", ")
    }
}

/// What [`list_per_connection`] finds on a tool list of a connection.
type Listed = (String, Result<(BTreeSet<String>, Reply), Reply>);

/// [`list_per_connection`] on a new connection `name` (A or B): the
/// connection and its first list, labelled with the connection.
async fn list_on_new(s: &Session, name: &str) -> Result<(RawConnection, Listed), Judgement> {
    let mut conn = match s.client.dedicated().await {
        Ok(c) => c,
        Err(e) => {
            return Err(Judgement::skip(format!(
                "could not open a new connection: {e}"
            )));
        }
    };
    let label = format!(
        "new connection {name} ({} → {})",
        conn.local_addr(),
        conn.peer_addr()
    );
    let listed = tool_names(&s.client, &mut conn).await;
    Ok((conn, (label, listed)))
}

async fn list_per_connection(s: &Session) -> Judgement {
    if !s.advertises("tools") {
        return Judgement::skip("the server does not advertise tools");
    }
    if s.survey.tools.problem.is_some() || s.survey.tools.pages.is_empty() {
        return Judgement::skip(format!(
            "not verified: tools/list could not be read ({})",
            s.survey.tools.problem.as_deref().unwrap_or("no page")
        ));
    }
    // tools#capabilities: the list "MUST NOT vary per-connection or as a side
    // effect of other requests on the connection". The first list (the
    // survey's) is compared with: a dedicated connection's list; the same
    // connection's list again after other requests on it; and a second
    // dedicated connection's list. Each dedicated connection carries all its
    // requests itself (§15 amendment), so the verdict does not depend on how a
    // pool spreads them.
    let first: BTreeSet<String> = s.survey.tools.names("name").into_iter().collect();
    // Connections A and B are independent: their first lists go side by
    // side, and only then other requests on A, so that B's list comes before
    // them on every run (a list that changes as a side effect of those
    // requests anywhere, not only on A, then differs on A every time).
    let (on_a, on_b) = tokio::join!(list_on_new(s, "A"), list_on_new(s, "B"));
    let (mut a, listed_a) = match on_a {
        Ok(found) => found,
        Err(judgement) => return judgement,
    };
    let listed_b = match on_b {
        // B carries nothing more: its connection closes here.
        Ok((_, listed)) => listed,
        Err(judgement) => return judgement,
    };
    let label_a = listed_a.0.clone();
    let mut lists = vec![listed_a];
    // Other requests on A: a discover declaring capabilities, and a call of a
    // tool that does not exist (harmless whatever the server does with it).
    let others = [
        s.client
            .request("server/discover", json!({}))
            .with_capabilities(json!({"elicitation": {}, "roots": {}, "sampling": {}})),
        s.client.request(
            "tools/call",
            json!({"name": super::survey::unknown_name("tool"), "arguments": {}}),
        ),
    ];
    // A server that closes every connection after one answer keeps nothing
    // on a connection: the side-effect half has nothing to judge, the
    // per-connection half still does.
    let mut note = String::new();
    for probe in &others {
        if a.closed().is_some() {
            break;
        }
        let _ = s.client.send_on(&mut a, probe, Spelling::Lower).await;
    }
    if let Some(why) = a.closed() {
        note = format!(
            " (the server closed connection A after {} answer{} ({why}), so no request \
             could follow another on it)",
            a.answered,
            if a.answered == 1 { "" } else { "s" }
        );
    } else {
        lists.push((
            format!("{label_a}, after other requests on it"),
            tool_names(&s.client, &mut a).await,
        ));
    }
    lists.push(listed_b);
    for (label, list) in &lists {
        match list {
            Err(reply) => {
                if reply.status.is_none() {
                    return Judgement::skip(format!(
                        "not verified: `tools/list` on {label} got no answer ({}); the probe \
                         needs the server to keep one connection open for several requests",
                        reply.describe()
                    ));
                }
                return Judgement::fail(format!(
                    "`tools/list` on {label} answered {}, though it worked on the first \
                     connection; the set MUST NOT vary per connection",
                    reply.describe()
                ))
                .reply(reply);
            }
            Ok((names, reply)) if *names != first => {
                let extra = quote_names(names.difference(&first));
                let missing = quote_names(first.difference(names));
                let mut j = Judgement::fail(format!(
                    "`tools/list` on {label} differs from the first connection's (only there: \
                     {extra}; missing there: {missing}); the set MUST NOT vary per connection \
                     or as a side effect of other requests on the connection"
                ));
                if let Some(page) = s.survey.tools.pages.first() {
                    j = j.reply(page);
                }
                return j.reply(reply);
            }
            Ok(_) => {}
        }
    }
    let shown = if note.is_empty() {
        format!("{label_a} before and after other requests on it")
    } else {
        label_a
    };
    Judgement::pass(format!(
        "tools/list gave the same {} tools on the first connection, on {shown}, and on a \
         second new connection{note}",
        first.len()
    ))
}
