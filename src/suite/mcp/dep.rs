//! DEP — deprecated and removed features (changelog, deprecated page,
//! versioning#backward-compatibility…, streamable-http#backward-compatibility).
//!
//! These rules are judged whatever the server's era: on a legacy-only server
//! they say what a move to 2026-07-28 removes.

use super::client::Reply;
use super::era::{Era, LegacySession, negotiated_version};
use super::rule::{DISCOVER_ID, Keyword, McpRule, spec};
use super::session::{Judgement, Kind, Session};
use super::wire::{self, LEGACY_VERSION, LEGACY_VERSIONS, PROTOCOL_VERSION};
use crate::suite::Outcome;
use futures::FutureExt;
use serde_json::{Value, json};

pub(crate) const NO_PING: McpRule = McpRule::new(
    "MCP-DEP-001",
    "ping is no longer implemented",
    Keyword::May,
    Outcome::Warn,
    spec!("/changelog"),
    "DEP",
    |s| no_ping(s).boxed(),
)
.says("ping was removed in 2026-07-28: a modern server answers it like an unknown method")
.help(
    "protocheck sends `ping` as a valid 2026-07-28 request (on a legacy-only server, inside a \
     legacy session it opens with `initialize`) and warns when it is answered with a result.",
    "The server still registers a `ping` handler, usually one its SDK keeps by default for \
     2025-11-25 clients. On a legacy-only server the warning shows what a move to 2026-07-28 \
     removes.",
    "Stop answering `ping` on 2026-07-28 requests so that it falls through to HTTP 404 with \
     -32601; a dual-era server can keep it for sessions opened with `initialize`.",
)
.requires(&[])
.on_legacy();

pub(crate) const NO_SET_LEVEL: McpRule = McpRule::new(
    "MCP-DEP-002",
    "logging/setLevel is no longer implemented",
    Keyword::May,
    Outcome::Warn,
    spec!("/changelog"),
    "DEP",
    |s| no_set_level(s).boxed(),
)
.says("logging/setLevel was removed: the log level travels in per-request _meta")
.help(
    "protocheck sends `logging/setLevel` with level `info` as a valid 2026-07-28 request (on a \
     legacy-only server, inside a legacy session it opens with `initialize`) and warns when it is \
     answered with a result.",
    "The server still implements the 2025-era `logging/setLevel`, usually because its SDK \
     registers the logging utility by default. On a legacy-only server the warning shows what a \
     move to 2026-07-28 removes.",
    "Stop answering `logging/setLevel` on 2026-07-28 requests and read the log level each request \
     carries in its `_meta` instead; a dual-era server can keep the method for legacy sessions.",
)
.requires(&[])
.on_legacy();

pub(crate) const NO_SUBSCRIBE: McpRule = McpRule::new(
    "MCP-DEP-003",
    "resources/subscribe and resources/unsubscribe replaced by subscriptions/listen",
    Keyword::May,
    Outcome::Warn,
    spec!("/changelog"),
    "DEP",
    |s| no_subscribe(s).boxed(),
)
.says(
    "resources/subscribe and resources/unsubscribe were removed in favour of subscriptions/listen",
)
.help(
    "protocheck sends `resources/subscribe` and `resources/unsubscribe` for the first listed \
     resource URI (or `protocheck://probe`) as valid 2026-07-28 requests, inside a legacy session \
     on a legacy-only server, and warns when either is answered with a result.",
    "The server still implements the 2025-era per-resource subscriptions, usually because its \
     subscribe and unsubscribe handlers are still registered or `resources.subscribe` is still \
     advertised.",
    "Remove `resources/subscribe` and `resources/unsubscribe` from 2026-07-28 handling and \
     deliver resource updates through `subscriptions/listen` with `resourceSubscriptions`.",
)
.requires(&[])
.on_legacy();

pub(crate) const NO_LEGACY_SSE: McpRule = McpRule::new(
    "MCP-DEP-004",
    "No legacy HTTP+SSE endpoint is served",
    Keyword::ShouldNot,
    Outcome::Warn,
    spec!("/basic/transports/streamable-http#backward-compatibility"),
    "DEP",
    |s| no_legacy_sse(s).boxed(),
)
.says("the 2024-11-05 HTTP+SSE transport is deprecated")
.help(
    "protocheck sends a GET with `Accept: text/event-stream` to the MCP endpoint and to `sse`, \
     `events` and `messages` beside it, under it and at the origin's root, reads each stream as \
     far as its first event within a window derived from the run's round-trip times, and warns \
     when that event is `endpoint`, the opening of the 2024-11-05 HTTP+SSE transport.",
    "The server still mounts the deprecated HTTP+SSE transport, usually an `/sse` route kept \
     beside Streamable HTTP for old clients, or an SDK's SSE application left enabled.",
    "Remove the HTTP+SSE transport (the GET stream and its separate POST messages endpoint) and \
     serve clients over Streamable HTTP only, once any remaining legacy clients have moved.",
)
.requires(&[])
.on_legacy()
.watches(|w, client, endpoint| {
    for url in legacy_sse_urls(endpoint) {
        w.start_early(client, http::Method::GET, &url);
    }
})
.http_only("the HTTP+SSE endpoint of 2024-11-05");

pub(crate) const NO_DEPRECATED_CAPABILITIES: McpRule = McpRule::new(
    "MCP-DEP-005",
    "Roots / Sampling / Logging capabilities are not advertised",
    Keyword::May,
    Outcome::Info,
    spec!("/deprecated"),
    "DEP",
    |s| no_deprecated_capabilities(s).boxed(),
)
.says("Roots, Sampling and Logging are deprecated")
.help(
    "protocheck reads the capabilities of the `server/discover` answer and of the result to the \
     run's opening legacy `initialize` (on a dual-era or legacy-only server, what its legacy \
     clients see) and looks for `logging`, `roots` and `sampling` in each.",
    "An info finding: the server advertises a deprecated feature, usually `logging` left on by an \
     SDK default, or `roots` or `sampling`, which are client features a server never had to \
     advertise.",
    "Nothing is broken today. Drop `roots` and `sampling` from the server's capabilities, and \
     plan to remove `logging`, since these features may be removed from a revision on or after \
     2027-07-28.",
)
.requires(&[])
.on_legacy();

pub(crate) const ACCEPTS_INITIALIZE: McpRule = McpRule::new(
    "MCP-DEP-006",
    "Server accepts initialize (dual-era support)",
    Keyword::May,
    Outcome::Info,
    spec!("/basic/versioning#backward-compatibility-with-initialization-based-versions"),
    "DEP",
    |s| accepts_initialize(s).boxed(),
)
.says("a dual-era server MAY answer initialize with legacy semantics")
.help(
    "protocheck reads the answer to the run's opening `initialize` for 2025-11-25 (over stdio, \
     from a fresh process when the run's process refused it). A result negotiating a legacy \
     revision passes; one negotiating 2026-07-28 fails, as does a refusal while \
     `supportedVersions` lists a legacy revision.",
    "An info finding: `initialize` negotiated 2026-07-28, which belongs to per-request `_meta`, \
     or the DiscoverResult lists a legacy revision that legacy clients cannot reach because \
     `initialize` is refused. Skipped when the server lists no legacy revision and refuses \
     `initialize`.",
    "To serve legacy clients, answer `initialize` with a legacy revision such as 2025-11-25; \
     otherwise remove legacy revisions from `supportedVersions`. A modern-only server that lists \
     none needs no change.",
)
.requires(&[])
.on_legacy();

pub(crate) const INITIALIZE_ERROR: McpRule = McpRule::new(
    "MCP-DEP-007",
    "A modern-only server names its supported versions in the initialize error",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/versioning#backward-compatibility-with-initialization-based-versions"),
    "DEP",
    |s| initialize_error(s).boxed(),
)
.says("a modern-only server SHOULD name the protocol versions it supports in any error it returns to initialize")
.help(
    "On a server that speaks only 2026-07-28, protocheck reads the answer to the run's opening \
     `initialize` for 2025-11-25 and looks for `error.data.supported`, or for a version from \
     `supportedVersions` other than the one asked for in the error's text.",
    "The server answers `initialize` with a bare -32601, with a generic \"Unsupported protocol \
     version: 2025-11-25\" that only repeats the request, or with no JSON-RPC error at all, so a \
     legacy client cannot tell its user what to upgrade to.",
    "Answer `initialize` with a JSON-RPC error whose `data.supported` lists the versions the \
     server speaks, e.g. `[\"2026-07-28\"]`, and name them in the error message too.",
)
.requires(&[])
.on_legacy()
// versioning page: "a modern-only server SHOULD name the protocol versions it
// supports in any error it returns to an initialize request".
.modern_only();

pub(crate) const RULES: &[McpRule] = &[
    NO_PING,
    NO_SET_LEVEL,
    NO_SUBSCRIBE,
    NO_LEGACY_SSE,
    NO_DEPRECATED_CAPABILITIES,
    ACCEPTS_INITIALIZE,
    INITIALIZE_ERROR,
];

/// Sends a removed method the way the server's era expects: a modern request,
/// or, on a legacy-only server, a request inside a legacy session. A modern
/// request naming a resource carries it in `Mcp-Name` too, as a server that
/// still implements the method would read it from there as it does for
/// `resources/read`: a refusal for a missing header then says nothing.
async fn removed_method(s: &Session, method: &str, params: Value) -> Option<Reply> {
    if let Era::Legacy { .. } = s.era {
        let opened = s
            .legacy
            .get_or_init(|| async {
                if s.client.is_stdio() {
                    LegacySession::adopt(&s.client, &s.initialize).await
                } else {
                    LegacySession::open(&s.client).await.map(|(l, _)| l)
                }
            })
            .await;
        let legacy = opened.as_ref()?;
        let probe = legacy.probe(json!(s.client.next_id()), method, params);
        return Some(s.client.send(&probe).await);
    }
    let name = params.get("uri").and_then(Value::as_str).map(str::to_owned);
    let mut probe = s.client.request(method, params);
    if let Some(name) = name {
        probe = probe.with_header(wire::H_NAME, wire::encode_header_value(&name));
    }
    Some(s.client.send(&probe).await)
}

/// Judges removed methods: a result means the method is still implemented.
async fn judge_removed(s: &Session, calls: &[(&str, Value)], replaced_by: &str) -> Judgement {
    let mut still = Vec::new();
    let mut answers = Vec::new();
    let mut refused_by_headers = Vec::new();
    for (method, params) in calls {
        let Some(reply) = removed_method(s, method, params.clone()).await else {
            return Judgement::skip(
                "not verified: a legacy session could not be opened to send the request",
            );
        };
        if reply.transport_error.is_some() && reply.status.is_none() {
            return Judgement::skip(format!("`{method}` got no answer: {}", reply.describe()));
        }
        answers.push(format!("`{method}` answered {}", reply.describe()));
        if reply.result().is_some() {
            still.push((method.to_string(), reply));
        } else if reply.error_code() == Some(wire::code::HEADER_MISMATCH) {
            refused_by_headers.push((method.to_string(), reply));
        }
    }
    if still.is_empty() && !refused_by_headers.is_empty() {
        // A refusal by header validation comes before the method is looked
        // up: it shows neither that the method is gone nor that it is served.
        let names: Vec<String> = refused_by_headers
            .iter()
            .map(|(m, _)| format!("`{m}`"))
            .collect();
        let mut j = Judgement::skip(format!(
            "not verified: {} was refused by header validation (-32020), which comes before \
             the method is looked up and says nothing of whether it is still implemented ({})",
            names.join(" and "),
            answers.join("; ")
        ));
        for (_, r) in &refused_by_headers {
            j = j.reply(r);
        }
        return j;
    }
    if still.is_empty() {
        return Judgement::pass(format!(
            "{}: no result, as for a method that is not implemented",
            answers.join("; ")
        ));
    }
    let names: Vec<String> = still.iter().map(|(m, _)| format!("`{m}`")).collect();
    let mut j = Judgement::fail(format!(
        "{} still answered with a result; {} removed {} ({replaced_by}); a {} server answers \
         404 with -32601",
        names.join(" and "),
        PROTOCOL_VERSION,
        if still.len() == 1 { "it" } else { "them" },
        PROTOCOL_VERSION
    ));
    for (_, r) in &still {
        j = j.reply(r);
    }
    j
}

async fn no_ping(s: &Session) -> Judgement {
    judge_removed(
        s,
        &[("ping", json!({}))],
        "liveness is the transport's concern; any request can serve as one",
    )
    .await
}

async fn no_set_level(s: &Session) -> Judgement {
    judge_removed(
        s,
        &[("logging/setLevel", json!({"level": "info"}))],
        "the log level now travels per request in `_meta` io.modelcontextprotocol/logLevel",
    )
    .await
}

async fn no_subscribe(s: &Session) -> Judgement {
    let uri = s
        .survey
        .resources
        .names("uri")
        .into_iter()
        .next()
        .unwrap_or_else(|| "protocheck://probe".to_owned());
    judge_removed(
        s,
        &[
            ("resources/subscribe", json!({"uri": uri})),
            ("resources/unsubscribe", json!({"uri": uri})),
        ],
        "use subscriptions/listen with resourceSubscriptions",
    )
    .await
}

/// The path names under which the 2024-11-05 HTTP+SSE transport is commonly
/// served: `sse` for its GET stream (the name the spec's examples and the
/// SDKs use), `events` (another frequent name), and `messages`, the POST
/// endpoint some servers also answer a GET on.
const LEGACY_SSE_NAMES: &[&str] = &["sse", "events", "messages"];

/// Where a legacy HTTP+SSE stream may be served: the MCP URL itself, and
/// each of [`LEGACY_SSE_NAMES`] beside it (resolved against it), under it
/// (`/mcp/sse`) and at the origin's root (`/sse`), each URL once.
fn legacy_sse_urls(url: &url::Url) -> Vec<url::Url> {
    let mut urls = vec![url.clone()];
    let mut under = url.clone();
    under.set_query(None);
    under.set_fragment(None);
    let base = format!("{}/", under.path().trim_end_matches('/'));
    under.set_path(&base);
    for name in LEGACY_SSE_NAMES {
        let candidates = [
            url.join(name).ok(),
            under.join(name).ok(),
            url.join(&format!("/{name}")).ok(),
        ];
        for candidate in candidates.into_iter().flatten() {
            if !urls.contains(&candidate) {
                urls.push(candidate);
            }
        }
    }
    urls
}

async fn no_legacy_sse(s: &Session) -> Judgement {
    // Each GET is a watch, started early by the engine and read as far as
    // its first event or for a window derived from the run's round-trip
    // times; awaited side by side, judged in the order listed.
    let urls = legacy_sse_urls(&s.url);
    let watches: Vec<_> = urls
        .iter()
        .map(|url| s.watch(http::Method::GET, url))
        .collect();
    let replies = s.each(watches).await;
    let mut looked = Vec::new();
    for (url, reply) in urls.iter().zip(&replies) {
        let endpoint = reply
            .first_event
            .as_ref()
            .filter(|e| e.event.as_deref() == Some("endpoint"));
        if let Some(event) = endpoint {
            return Judgement::fail(format!(
                "GET {url} opened an event stream whose first event is `endpoint` (data {:?}): \
                 the deprecated 2024-11-05 HTTP+SSE transport is still served; new \
                 implementations SHOULD NOT offer it, existing ones SHOULD migrate to Streamable HTTP",
                super::client::clip(&event.data, 80)
            ))
            .with(&reply.exchange);
        }
        looked.push(format!(
            "GET {url}: {}",
            reply
                .status
                .map_or_else(|| "no answer".to_owned(), |st| format!("HTTP {st}"))
        ));
    }
    Judgement::pass(format!(
        "no legacy HTTP+SSE `endpoint` event was served at the {} URLs where one is commonly \
         mounted ({}); a stream at a path of another name would not be found",
        looked.len(),
        looked.join("; ")
    ))
}

async fn no_deprecated_capabilities(s: &Session) -> Judgement {
    // What each era's clients see: the `server/discover` capabilities and,
    // on a server that answers the opening legacy `initialize` with a
    // result (dual-era or legacy-only), that result's capabilities, which
    // its legacy clients see. Both come from the run's opening probes.
    let sources: Vec<(&str, &Reply)> = [
        ("server/discover", &s.discover),
        ("the initialize result", &s.initialize),
    ]
    .into_iter()
    .filter(|(_, reply)| {
        reply
            .result()
            .and_then(|r| r.get("capabilities"))
            .is_some_and(Value::is_object)
    })
    .collect();
    if sources.is_empty() {
        return Judgement::skip(match &s.era {
            Era::Legacy { .. } => {
                "not verified: the initialize result has no capabilities".to_owned()
            }
            _ => {
                format!("not verified: {DISCOVER_ID} failed (server/discover gave no capabilities)")
            }
        });
    }
    // Roots and Sampling are client features; a server listing them is
    // advertising something that was never its to offer, and now deprecated too.
    let mut found = Vec::new();
    let mut evidence = Vec::new();
    for (source, reply) in &sources {
        let caps = reply.result().and_then(|r| r.get("capabilities"));
        let listed: Vec<&str> = ["logging", "roots", "sampling"]
            .into_iter()
            .filter(|k| caps.and_then(|c| c.get(*k)).is_some())
            .collect();
        if !listed.is_empty() {
            found.push(format!("{source} advertises {listed:?}"));
            evidence.push(*reply);
        }
    }
    let read: Vec<&str> = sources.iter().map(|(source, _)| *source).collect();
    if found.is_empty() {
        return Judgement::pass(format!(
            "{} advertise{} none of logging, roots or sampling",
            read.join(" and "),
            if read.len() == 1 { "s" } else { "" }
        ));
    }
    let mut j = Judgement::fail(format!(
        "{}; Roots, Sampling and Logging are deprecated (SEP-2577) and may be removed from a \
         revision on or after 2027-07-28: plan their removal",
        found.join("; ")
    ));
    for reply in evidence {
        j = j.reply(reply);
    }
    j
}

/// The `initialize` probe as a finding names it: what it asked for and,
/// over stdio, which process it went to.
fn initialize_sent(s: &Session) -> String {
    match &s.initialize_fresh {
        Some(first) => format!(
            "an `initialize` asking for {LEGACY_VERSION}, sent as the first line to a new \
             process (the run's process, opened with `server/discover`, had answered it: {first})"
        ),
        None => format!("an `initialize` asking for {LEGACY_VERSION}"),
    }
}

async fn accepts_initialize(s: &Session) -> Judgement {
    let legacy_listed: Vec<String> = s
        .supported_versions()
        .unwrap_or_default()
        .into_iter()
        .filter(|v| LEGACY_VERSIONS.contains(&v.as_str()))
        .collect();
    let sent = initialize_sent(s);
    match negotiated_version(&s.initialize) {
        Some(v) if v == PROTOCOL_VERSION => Judgement::fail(format!(
            "{sent} was answered with a result negotiating {PROTOCOL_VERSION}; `initialize` \
             selects the legacy lifecycle, so it should negotiate a legacy revision (such as {}) \
             and leave {PROTOCOL_VERSION} to per-request `_meta`",
            wire::LEGACY_VERSION
        ))
        .reply(&s.initialize),
        Some(v) => Judgement::pass(format!("{sent} was answered with a result negotiating {v}")),
        None if !legacy_listed.is_empty() => Judgement::fail(format!(
            "server/discover lists the legacy revision(s) {legacy_listed:?}, but {sent} was \
             answered {}; a legacy client, which opens with `initialize`, would not reach those \
             revisions",
            s.initialize.describe()
        ))
        .reply(&s.initialize)
        .reply(&s.discover),
        None => Judgement::skip(format!(
            "not applicable: {sent} was answered {}, and server/discover's supportedVersions \
             lists no legacy revision; serving legacy clients is optional (MAY)",
            s.initialize.describe()
        )),
    }
}

async fn initialize_error(s: &Session) -> Judgement {
    if let Some(v) = negotiated_version(&s.initialize) {
        return Judgement::skip(format!(
            "the server accepts `initialize` (negotiated {v}); there is no error to judge"
        ));
    }
    let reply = &s.initialize;
    let sent = initialize_sent(s);
    let Some(error) = reply.error() else {
        return Judgement::fail(format!(
            "{sent} was answered {}, not with an error naming the versions the server \
             supports; legacy clients cannot fall forward, so the answer SHOULD name them (e.g. \
             in error.data.supported)",
            reply.describe()
        ))
        .reply(reply);
    };
    let legacy = names_versions(s, &sent, reply, error);
    if legacy.kind != Kind::Pass {
        return legacy;
    }
    // "Any error it returns to an `initialize` request": the same method sent
    // as a 2026-07-28 request too (headers, `_meta`, `protocolVersion`
    // 2026-07-28), which a modern-only server refuses as a method it does not
    // implement.
    let modern = s.client.request(
        "initialize",
        json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "protocheck", "version": env!("CARGO_PKG_VERSION")}
        }),
    );
    let answer = s.client.send(&modern).await;
    let Some(modern_error) = answer.error() else {
        return Judgement::pass(format!(
            "{}; an `initialize` sent as a {PROTOCOL_VERSION} request was answered {}, no \
             error to judge",
            legacy.message,
            answer.describe()
        ));
    };
    let sent_modern = format!("an `initialize` sent as a {PROTOCOL_VERSION} request");
    let judged = names_versions(s, &sent_modern, &answer, modern_error);
    if judged.kind != Kind::Pass {
        return judged;
    }
    Judgement::pass(format!("{}; {}", legacy.message, judged.message))
}

/// Whether `error`, the answer to the `initialize` described by `sent`,
/// names the versions the server supports.
fn names_versions(s: &Session, sent: &str, reply: &Reply, error: &Value) -> Judgement {
    // What the error says the server supports: `error.data.supported`, else
    // the versions its message or data name. The version the `initialize`
    // asked for is left out of the text search: an error that only repeats
    // it ("Unsupported protocol version: 2025-11-25") says what was asked,
    // not what is spoken.
    let listed: Vec<String> = error
        .pointer("/data/supported")
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if !listed.is_empty() {
        return Judgement::pass(format!(
            "{sent} was answered with an error whose error.data.supported lists {listed:?}"
        ));
    }
    let mut versions: Vec<String> = s.supported_versions().unwrap_or_default();
    if !versions.iter().any(|v| v == PROTOCOL_VERSION) {
        versions.push(PROTOCOL_VERSION.to_owned());
    }
    versions.retain(|v| v != LEGACY_VERSION);
    let text = error.to_string();
    let named: Vec<&str> = versions
        .iter()
        .map(String::as_str)
        .filter(|v| text.contains(v))
        .collect();
    if !named.is_empty() {
        Judgement::pass(format!(
            "{sent} was answered {}, whose text names {named:?}, versions the server \
             speaks by its `server/discover` answer",
            reply.describe()
        ))
    } else {
        Judgement::fail(format!(
            "{sent} was answered {} without naming a version the server supports (the error \
             has no error.data.supported, and its text names no version server/discover lists, \
             apart from the one asked for); a legacy \
             client can only show this error to its user, so it SHOULD say which versions the \
             server speaks (e.g. \"supports {PROTOCOL_VERSION}\" or error.data.supported)",
            reply.describe()
        ))
        .reply(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::legacy_sse_urls;

    fn paths(endpoint: &str) -> Vec<String> {
        let url = url::Url::parse(endpoint).expect("a URL");
        legacy_sse_urls(&url)
            .into_iter()
            .map(|u| u.path().to_owned())
            .collect()
    }

    #[test]
    fn legacy_sse_urls_cover_the_common_mounts() {
        assert_eq!(
            paths("http://127.0.0.1:1/api/mcp"),
            [
                "/api/mcp",
                "/api/sse",
                "/api/mcp/sse",
                "/sse",
                "/api/events",
                "/api/mcp/events",
                "/events",
                "/api/messages",
                "/api/mcp/messages",
                "/messages",
            ]
        );
        // At the root, beside and at the root are one URL each.
        assert_eq!(
            paths("http://127.0.0.1:1/mcp"),
            [
                "/mcp",
                "/sse",
                "/mcp/sse",
                "/events",
                "/mcp/events",
                "/messages",
                "/mcp/messages"
            ]
        );
        assert_eq!(
            paths("http://127.0.0.1:1/"),
            ["/", "/sse", "/events", "/messages"]
        );
    }
}
