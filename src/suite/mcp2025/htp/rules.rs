//! The HTP rules and their checks, on the probes of the parent module.

use super::sessions::{
    deleted_404, origin, session_ascii, session_required, session_unique, unknown_404,
    version_header,
};
use super::{
    End, PostStream, Raw, Read, get, is_response, linger, own_session, post_ping, post_streams,
    rule,
};
use crate::suite::Outcome;
use crate::suite::mcp::Keyword;
use crate::suite::mcp::client::clip;
use crate::suite::mcp2025::client::Awaiting;
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
.run_wide();

pub(crate) const ACCEPTED_202: Mcp25Rule = rule(
    "MCP25-HTP-002",
    "An accepted notification POST returns 202 with an empty body",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports#sending-messages-to-the-server"),
    |s| accepted_202(s).boxed(),
)
.says("a notification or response the server accepts gets HTTP 202 Accepted with no body");

pub(crate) const REFUSED_STATUS: Mcp25Rule = rule(
    "MCP25-HTP-003",
    "A response the server will not accept gets an HTTP error status, not 200",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports#sending-messages-to-the-server"),
    |s| refused_status(s).boxed(),
)
.says("input the server cannot accept is refused with an HTTP error status such as 400");

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
);

pub(crate) const SSE_RESPONSE: Mcp25Rule = rule(
    "MCP25-HTP-005",
    "An SSE response stream eventually carries the JSON-RPC response",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/transports#sending-messages-to-the-server"),
    |s| sse_response(s).boxed(),
)
.says("the SSE stream opened for a request eventually carries the response to that request");

pub(crate) const SSE_ENDS: Mcp25Rule = rule(
    "MCP25-HTP-006",
    "After the JSON-RPC response, the server ends the SSE stream",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/transports#sending-messages-to-the-server"),
    |s| sse_ends(s).boxed(),
)
.says("once the response has been sent, the server terminates the SSE stream");

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
);

pub(crate) const GET_STREAM: Mcp25Rule = rule(
    "MCP25-HTP-008",
    "GET on the endpoint answers text/event-stream or 405",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports#listening-for-messages-from-the-server"),
    |s| get_stream(s).boxed(),
)
.says("a GET on the endpoint is answered with an SSE stream or with 405 Method Not Allowed");

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
);

pub(crate) const NO_FOREIGN_REPLAY: Mcp25Rule = rule(
    "MCP25-HTP-011",
    "Resuming with Last-Event-ID never replays messages of another stream",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/basic/transports#resumability-and-redelivery"),
    |s| no_foreign_replay(s).boxed(),
)
.says("a resumption replays only messages of the stream that was disconnected, never another's");

pub(crate) const SESSION_ASCII: Mcp25Rule = rule(
    "MCP25-HTP-012",
    "MCP-Session-Id, when issued, contains only visible ASCII",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports#session-management"),
    |s| session_ascii(s).boxed(),
)
.says("a session id contains only visible ASCII characters (0x21 to 0x7E)");

pub(crate) const SESSION_UNIQUE: Mcp25Rule = rule(
    "MCP25-HTP-013",
    "Two initializations get two different session ids",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/transports#session-management"),
    |s| session_unique(s).boxed(),
)
.says("a session id is globally unique and cryptographically secure");

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
);

pub(crate) const DELETED_404: Mcp25Rule = rule(
    "MCP25-HTP-015",
    "After a successful DELETE, requests with that session id get 404",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports#session-management"),
    |s| deleted_404(s).boxed(),
)
.says("once a session is terminated, requests naming its id get 404 Not Found");

pub(crate) const UNKNOWN_404: Mcp25Rule = rule(
    "MCP25-HTP-016",
    "A request naming a session id the server never issued gets 404",
    Keyword::Must,
    Outcome::Warn,
    spec!("/basic/transports#session-management"),
    |s| unknown_404(s).boxed(),
)
.says("a request naming a session that is not (or no longer) valid gets 404 Not Found");

pub(crate) const VERSION_HEADER: Mcp25Rule = rule(
    "MCP25-HTP-017",
    "An invalid or unsupported MCP-Protocol-Version header is refused with 400",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports#protocol-version-header"),
    |s| version_header(s).boxed(),
)
.says("a request with an invalid or unsupported MCP-Protocol-Version gets 400 Bad Request");

pub(crate) const ORIGIN: Mcp25Rule = rule(
    "MCP25-HTP-018",
    "A present, invalid Origin is refused with 403",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports#security-warning"),
    |s| origin(s).boxed(),
)
.says("the server validates Origin; a request whose Origin is present and invalid gets 403");

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

async fn accepted_202(s: &Session) -> Judgement {
    let cancelled = s
        .main
        .notify(
            "notifications/cancelled",
            json!({"requestId": format!("pc-never-sent-{}", s.client.next_id()),
                   "reason": "protocheck: no such request"}),
        )
        .await;
    let mut replies = Vec::new();
    if let Some(initialized) = &s.initialized {
        replies.push(("`notifications/initialized`", initialized.clone()));
    }
    replies.push((
        "`notifications/cancelled` for a request never sent",
        cancelled,
    ));
    let (mut accepted, mut bad, mut refused) = (Vec::new(), Vec::new(), Vec::new());
    for (label, reply) in &replies {
        match reply.status {
            Some(202) if reply.body_len == 0 => accepted.push(*label),
            Some(status) if is_2xx(status) => bad.push(format!("{label}: {}", reply.describe())),
            _ => refused.push(format!("{label}: {}", reply.describe())),
        }
    }
    let j = if !bad.is_empty() {
        Judgement::fail(format!(
            "a notification the server accepted did not get 202 with an empty body: {}",
            bad.join("; ")
        ))
    } else if accepted.is_empty() {
        Judgement::skip(format!(
            "not applicable: the server accepted neither notification ({}); \
             MCP25-HTP-003 judges refusals",
            refused.join("; ")
        ))
    } else if refused.is_empty() {
        Judgement::pass(format!(
            "{} got 202 with an empty body",
            accepted.join(" and ")
        ))
    } else {
        Judgement::pass(format!(
            "{} got 202 with an empty body (not judged here: {})",
            accepted.join(" and "),
            refused.join("; ")
        ))
    };
    replies.iter().fold(j, |j, (_, r)| j.reply(r))
}

async fn refused_status(s: &Session) -> Judgement {
    let text = json!({"jsonrpc": "2.0", "id": format!("pc-none-{}", s.client.next_id()),
                      "result": {}})
    .to_string();
    let reply = s
        .main
        .send_frame(
            "JSON-RPC response for an id never used",
            text,
            Awaiting::Nothing,
        )
        .await;
    let j = match reply.status {
        None => Judgement::skip(format!(
            "not verified: the POSTed response got {}",
            reply.describe()
        )),
        Some(202) if reply.body_len == 0 => Judgement::pass(
            "a JSON-RPC response for an id the server never used got 202 with an empty body \
             (accepted and ignored)",
        ),
        Some(status) if status >= 400 => Judgement::pass(format!(
            "a JSON-RPC response for an id the server never used was refused with HTTP {status}"
        )),
        Some(_) => Judgement::fail(format!(
            "a JSON-RPC response for an id the server never used got {}: a response the \
             server does not accept must get an HTTP error status, and one it accepts 202 with \
             no body",
            reply.describe()
        )),
    };
    j.reply(&reply)
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
    let window = linger(s);
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
    for n in 1..=2 {
        match post_ping(s, sid.as_deref()).await {
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
