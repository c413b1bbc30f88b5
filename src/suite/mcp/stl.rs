//! STL — statelessness and session removal (basic/index#statelessness;
//! streamable-http, "Earlier Streamable HTTP Revisions"; tools#capabilities).

use super::client::{McpClient, Probe, Reply, clip, some};
use super::engine::{Judgement, Session};
use super::era::{Era, recognised_modern};
use super::wire::{self, H_LAST_EVENT_ID, H_SESSION_ID};
use super::{Keyword, McpRule, spec};
use crate::suite::Outcome;
use crate::transport::HttpRequest;
use futures::FutureExt;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Duration;

pub(crate) const NO_SESSION_ID: McpRule = McpRule::new(
    "MCP-STL-001",
    "Server never mints or echoes Mcp-Session-Id",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http#earlier-streamable-http-revisions"),
    "STL",
    |s| no_session_id(s).boxed(),
);

pub(crate) const SESSION_IGNORED: McpRule = McpRule::new(
    "MCP-STL-002",
    "A client-supplied Mcp-Session-Id is ignored, not required",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http#earlier-streamable-http-revisions"),
    "STL",
    |s| session_ignored(s).boxed(),
);

pub(crate) const COLD_REQUEST: McpRule = McpRule::new(
    "MCP-STL-003",
    "A cold modern request succeeds with no prior handshake",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/index#statelessness"),
    "STL",
    |s| cold_request(s).boxed(),
);

pub(crate) const NO_CONNECTION_STATE: McpRule = McpRule::new(
    "MCP-STL-004",
    "Server does not rely on prior requests over the same connection",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/basic/index#statelessness"),
    "STL",
    |s| no_connection_state(s).boxed(),
);

pub(crate) const GET_405: McpRule = McpRule::new(
    "MCP-STL-005",
    "GET on the MCP endpoint returns 405",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/transports/streamable-http#earlier-streamable-http-revisions"),
    "STL",
    |s| get_405(s).boxed(),
)
.requires(&[]);

pub(crate) const DELETE_405: McpRule = McpRule::new(
    "MCP-STL-006",
    "DELETE on the MCP endpoint returns 405",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/transports/streamable-http#earlier-streamable-http-revisions"),
    "STL",
    |s| delete_405(s).boxed(),
)
.requires(&[]);

pub(crate) const LAST_EVENT_ID: McpRule = McpRule::new(
    "MCP-STL-007",
    "Last-Event-ID is ignored — streams are not resumable",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/transports/streamable-http#earlier-streamable-http-revisions"),
    "STL",
    |s| last_event_id(s).boxed(),
);

pub(crate) const LIST_PER_CONNECTION: McpRule = McpRule::new(
    "MCP-STL-008",
    "tools/list does not vary per connection",
    Keyword::Must,
    Outcome::Fail,
    spec!("/server/tools#capabilities"),
    "STL",
    |s| list_per_connection(s).boxed(),
);

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

/// How long GET and DELETE answers are read.
const BARE_WINDOW: Duration = Duration::from_secs(2);

fn session_header(exchange: &crate::suite::Exchange) -> Option<String> {
    exchange
        .response
        .as_ref()?
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(H_SESSION_ID))
        .map(|(_, v)| v.clone())
}

async fn no_session_id(s: &mut Session) -> Judgement {
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

async fn session_ignored(s: &mut Session) -> Judgement {
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

async fn cold_request(s: &mut Session) -> Judgement {
    let cold = &s.cold;
    if s.advertises("tools") {
        if cold.ok() && cold.result().and_then(|r| r.get("tools")).is_some() {
            return Judgement::pass(
                "`tools/list` succeeded as the first request of the run, on a new connection, \
                 before any server/discover",
            );
        }
        return Judgement::fail(format!(
            "the first request of the run, `tools/list` on a new connection with no prior \
             `server/discover`, answered {}; every request carries its own version and \
             capabilities, so any RPC may come first with no handshake",
            cold.describe()
        ))
        .reply(cold);
    }
    if cold.ok() || recognised_modern(cold) {
        Judgement::pass(format!(
            "the first request of the run (`tools/list` on a new connection) answered {}, \
             as a server without tools answers it at any time",
            cold.describe()
        ))
    } else {
        Judgement::fail(format!(
            "the first request of the run, `tools/list` on a new connection, answered {}; a \
             server without tools answers 404 with -32601 at any time, with no handshake first",
            cold.describe()
        ))
        .reply(cold)
    }
}

async fn no_connection_state(s: &mut Session) -> Judgement {
    let client = match s.client.fresh_connection() {
        Ok(c) => c,
        Err(e) => return Judgement::skip(format!("could not open a new connection: {e}")),
    };
    // The probe lacks clientCapabilities; a server that fills them in from an
    // earlier request on the connection answers it differently once warmed up.
    let lacking = |c: &McpClient| {
        c.request("server/discover", json!({}))
            .without_meta(wire::META_CLIENT_CAPABILITIES)
    };
    let cold = client.send(&lacking(&client)).await;
    let warm_up = client
        .request("server/discover", json!({}))
        .with_capabilities(json!({"elicitation": {}, "roots": {}}));
    let warmed = client.send(&warm_up).await;
    let warm = client.send(&lacking(&client)).await;
    if shape(&cold) == shape(&warm) {
        Judgement::pass(format!(
            "the same request answered {} on a new connection and again after another \
             request on that connection",
            cold.describe()
        ))
    } else {
        Judgement::fail(format!(
            "`server/discover` without `_meta` clientCapabilities answered {} on a new \
             connection but {} after a request declaring capabilities on the same connection; \
             servers MUST NOT take capabilities, version or identity from earlier requests",
            cold.describe(),
            warm.describe()
        ))
        .reply(&cold)
        .reply(&warmed)
        .reply(&warm)
    }
}

fn bare(s: &Session, method: http::Method) -> HttpRequest {
    HttpRequest {
        method,
        ..HttpRequest::get(s.url.clone())
    }
    .header("accept", "text/event-stream")
    .timeout(s.client.timeout())
}

/// A dual-era server may keep the 2025-11-25 GET stream, DELETE and resumption
/// for its legacy clients: the SHOULDs are written for modern-only servers.
fn dual_era_reason(s: &Session) -> Option<String> {
    match &s.era {
        Era::Dual { .. } => Some(format!(
            "{}; the 405 and resumption SHOULDs apply to servers that support only {}",
            s.era.describe(),
            wire::PROTOCOL_VERSION
        )),
        _ => None,
    }
}

async fn method_405(s: &mut Session, method: http::Method) -> Judgement {
    if let Some(reason) = dual_era_reason(s) {
        return Judgement::skip(reason);
    }
    let reply = s.client.bare(bare(s, method.clone()), BARE_WINDOW).await;
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

async fn get_405(s: &mut Session) -> Judgement {
    method_405(s, http::Method::GET).await
}

async fn delete_405(s: &mut Session) -> Judgement {
    method_405(s, http::Method::DELETE).await
}

async fn last_event_id(s: &mut Session) -> Judgement {
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

/// Tool names from every page of `tools/list` sent through `client`.
async fn tool_names(client: &McpClient) -> Result<BTreeSet<String>, Reply> {
    let mut names = BTreeSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..10 {
        let params = cursor
            .as_ref()
            .map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let reply = client.send(&client.request("tools/list", params)).await;
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
        match reply
            .result()
            .and_then(|r| r.get("nextCursor"))
            .and_then(Value::as_str)
        {
            Some(next) if Some(next) != cursor.as_deref() => cursor = Some(next.to_owned()),
            _ => break,
        }
    }
    Ok(names)
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

async fn list_per_connection(s: &mut Session) -> Judgement {
    if !s.advertises("tools") {
        return Judgement::skip("the server does not advertise tools");
    }
    if s.survey.tools.problem.is_some() || s.survey.tools.pages.is_empty() {
        return Judgement::skip(format!(
            "not verified: tools/list could not be read ({})",
            s.survey.tools.problem.as_deref().unwrap_or("no page")
        ));
    }
    let first: BTreeSet<String> = s.survey.tools.names("name").into_iter().collect();
    for attempt in 1..=2 {
        let client = match s.client.fresh_connection() {
            Ok(c) => c,
            Err(e) => return Judgement::skip(format!("could not open a new connection: {e}")),
        };
        match tool_names(&client).await {
            Err(reply) => {
                return Judgement::fail(format!(
                    "`tools/list` on new connection {attempt} answered {}, though it worked on \
                     the first connection; the set MUST NOT vary per connection",
                    reply.describe()
                ))
                .reply(&reply);
            }
            Ok(names) if names != first => {
                let extra = quote_names(names.difference(&first));
                let missing = quote_names(first.difference(&names));
                let mut j = Judgement::fail(format!(
                    "`tools/list` on new connection {attempt} differs from the first connection \
                     (only there: {extra}; missing there: {missing}); the set MUST NOT vary per \
                     connection or as a side effect of other requests"
                ));
                if let Some(page) = s.survey.tools.pages.first() {
                    j = j.reply(page);
                }
                let seen = client.seen().await;
                if let Some(last) = seen.iter().rev().find(|r| r.method == "tools/list") {
                    j = j.with(&last.exchange);
                }
                return j;
            }
            Ok(_) => {}
        }
    }
    Judgement::pass(format!(
        "tools/list gave the same {} tools on three connections",
        first.len()
    ))
}
