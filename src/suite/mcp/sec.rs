//! SEC — security posture: Origin validation (streamable-http "Security &
//! Endpoint"), reflection of request headers and credentials, icon URIs
//! (basic/index#icons), network `$ref`s and schema bounds
//! (basic/index#ref-resolution, #composition-keyword-resource-use).
//!
//! MCP-SEC-002 judges the connection itself: every request of the run goes
//! through a client that verifies the chain, host name and validity against
//! its trusted roots, so a run that got this far over https passed them. When
//! the handshake fails, the engine reports the rule that judges TLS (this one)
//! failed and skips the rest.

use super::client::{BareReply, CANARY_HEADER, McpClient, Probe, Reply, clip, some};
use super::origin;
use super::rule::{Keyword, McpRule, spec};
use super::session::{Judgement, Session, Unreached};
use super::survey::{Provoked, send_family, unknown_name};
use super::wire::{self, H_METHOD, H_PROTOCOL_VERSION, META_SERVER_INFO};
use crate::suite::{Exchange, Outcome};
use crate::transport::HttpRequest;
use futures::FutureExt;
use serde_json::{Value, json};
use std::time::Duration;
use url::Url;

pub(crate) const ORIGIN_403: McpRule = McpRule::new(
    "MCP-SEC-001",
    "Invalid Origin header returns HTTP 403",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/transports/streamable-http"),
    "SEC",
    |s| origin_403(s).boxed(),
)
.says("servers MUST validate Origin and answer an invalid one with HTTP 403")
.help(
    "For each method the server serves, protocheck sends an otherwise valid request with \
     `Origin: https://dns-rebinding.protocheck.invalid` and expects 403 (an authorization \
     refusal, a 401 or a 403 `insufficient_scope` with its Bearer challenge, leaves that method \
     unjudged); so must a notification POST, and a GET or DELETE on the endpoint must not be \
     served. On every method refused it also sends look-alikes such as `null`, a foreign host \
     on the server's own port, `http://localhost.protocheck.invalid` and \
     `http://attacker-localhost`.",
    "The server does not validate `Origin` at all, validates it on requests but not on \
     notifications or GETs, refuses with 400 or 401 instead of 403, or matches allowed origins \
     by prefix, suffix or port so that a look-alike gets through; permissive CORS middleware is \
     a common cause.",
    "Compare the `Origin` header, when present, with an exact allow-list of scheme, host and \
     port, and answer any other value, `null` included, with HTTP 403 before doing anything else \
     with the request.",
)
.http_only("the Origin header and HTTP 403");

pub(crate) const HTTPS: McpRule = McpRule::new(
    HTTPS_ID,
    "Endpoint is HTTPS with a valid, unexpired certificate chain",
    Keyword::May,
    Outcome::Fail,
    spec!("/basic/authorization/security-considerations"),
    "SEC",
    |s| https(s).boxed(),
)
.says("the endpoint is served over HTTPS with a valid certificate chain")
.help(
    "protocheck looks at the endpoint URL. Over `https`, every connection of the run verifies the \
     certificate chain against trusted roots, the host name and the validity period, and a failed \
     handshake fails this rule; plain `http` fails unless the host is loopback, which is skipped.",
    "The endpoint is served over plain `http` on a public or LAN address, or its certificate is \
     self-signed, expired, issued for another host name, or served without its intermediate \
     certificates.",
    "Serve the endpoint over HTTPS with a certificate from a trusted CA for its host name, send \
     the full intermediate chain, and renew it before it expires; a reverse proxy with automatic \
     certificates is the easiest route.",
)
.requires(&[])
.judges_tls()
.pool_independent()
.http_only("the endpoint URL and its TLS certificate");

pub(crate) const HTTPS_ID: &str = "MCP-SEC-002";

pub(crate) const NO_ECHO: McpRule = McpRule::new(
    "MCP-SEC-003",
    "Error messages do not echo request headers or credentials",
    Keyword::May,
    Outcome::Warn,
    spec!("/basic/authorization/security-considerations"),
    "SEC",
    |s| no_echo(s).boxed(),
)
.says("error messages should not repeat request headers or credentials")
.help(
    "Every request of the run carries an `x-protocheck-canary` header with a random value. \
     protocheck also sends a `tools/call` without `Mcp-Method` to provoke an error, then searches \
     the headers and body of that answer and of every answer to the run's valid requests for the \
     canary.",
    "Error messages or debug output include the request headers: typically a framework's verbose \
     error page, a handler that formats the whole request into its message, or a debugging \
     middleware that echoes headers.",
    "Build error messages from fixed text and the specific field that failed, never from the raw \
     request, and turn off debug error pages and header echoing in production.",
)
.run_wide()
.http_only("the request headers an error message could echo");

pub(crate) const ICONS: McpRule = McpRule::new(
    "MCP-SEC-004",
    "icons[].src is https: or data:, same-origin, no unsafe scheme",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/index#icons"),
    "SEC",
    |s| icons(s).boxed(),
)
.says("icon URIs MUST be https: or data: and same-origin; no unsafe scheme")
.help(
    "protocheck collects every `icons` array on `serverInfo` (in the DiscoverResult and its \
     `_meta`) and on the listed tools, prompts, resources and templates, and checks each `src`: \
     `data:` or `https:` passes, any other scheme fails, and an `https:` icon on another host \
     than the endpoint's warns.",
    "Icons are served over `http:`, given as relative paths or `file:` URIs, or hosted on a CDN \
     or a third-party domain rather than on the server's own host.",
    "Serve icons from `https:` URLs on the server's own host, or embed small ones as `data:` \
     URIs; never use `http:`, `file:`, `javascript:` or relative paths.",
);

pub(crate) const NETWORK_REF: McpRule = McpRule::new(
    "MCP-SEC-005",
    "No $ref in tool schemas resolves to a network URI",
    Keyword::MustNot,
    Outcome::Fail,
    spec!("/basic/index#ref-resolution"),
    "SEC",
    |s| network_ref(s).boxed(),
)
.says("implementations MUST NOT automatically dereference network $ref URIs")
.help(
    "protocheck walks every subschema of each listed tool's `inputSchema` and `outputSchema` and \
     checks each `$ref` and `$dynamicRef`: an absolute http(s), ftp or ws(s) URI, a `//host` \
     reference, or a relative one resolved against a network `$id` fails.",
    "The schema points at a shared definition on the web, such as \
     `https://example.com/schemas/address.json`, instead of carrying it, usually because a schema \
     generator emits remote references or `$id` values by default.",
    "Bundle every referenced definition into the schema's own `$defs` and reference it locally, \
     e.g. `#/$defs/Address`; remove network `$id` values that turn relative references into URLs.",
);

pub(crate) const SCHEMA_BOUNDS: McpRule = McpRule::new(
    "MCP-SEC-006",
    "Schema depth and subschema count stay within safe bounds",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/index#composition-keyword-resource-use"),
    "SEC",
    |s| schema_bounds(s).boxed(),
)
.says("implementations SHOULD bound schema depth and subschema count")
.help(
    "protocheck walks each listed tool's `inputSchema` and `outputSchema` through every subschema \
     keyword and warns when subschemas nest more than 32 levels deep or one schema holds more \
     than 1000 subschemas.",
    "The schema was generated from a large type graph, with deeply nested objects, or with shared \
     definitions expanded inline instead of referenced; clients validating it may spend unbounded \
     time on it or refuse the tool.",
    "Keep tool schemas small and shallow: reference repeated definitions through `$defs` instead \
     of inlining them, split very large tools, and limit nesting to what a caller can reasonably \
     fill in.",
);

pub(crate) const NO_AUTH_REFLECTION: McpRule = McpRule::new(
    "MCP-SEC-007",
    "Server does not reflect the Authorization header into responses",
    Keyword::May,
    Outcome::Fail,
    spec!("/basic/authorization/security-considerations"),
    "SEC",
    |s| no_auth_reflection(s).boxed(),
)
.says("servers must not reflect Authorization header values into responses")
.help(
    "protocheck sends a made-up `Authorization: Bearer pc-authz-canary-...` on a `tools/call` \
     without `Mcp-Method` and on a valid `server/discover`, and searches both answers' headers \
     and bodies for it; with a run token, it also searches every answer of the run for that \
     token.",
    "An error or debug response repeats the `Authorization` header, typically an \"invalid token: \
     <token>\" message, a verbose framework error page, or a middleware that echoes request \
     headers.",
    "Never put credentials into responses or error messages: say that the token was missing, \
     invalid or expired without repeating it, and redact `Authorization` wherever requests are \
     logged or echoed.",
)
.run_wide()
.http_only("the Authorization header");

pub(crate) const RULES: &[McpRule] = &[
    ORIGIN_403,
    HTTPS,
    NO_ECHO,
    ICONS,
    NETWORK_REF,
    SCHEMA_BOUNDS,
    NO_AUTH_REFLECTION,
];

/// An origin no MCP server serves: only sent as a header, never contacted.
const FOREIGN_ORIGIN: &str = "https://dns-rebinding.protocheck.invalid";

/// Deepest nesting of subschemas accepted (MCP-SEC-006). The spec gives no
/// number (§8 of the digest); 32 levels is far beyond any hand-written tool
/// schema and well inside what a recursive validator handles safely.
pub const MAX_SCHEMA_DEPTH: usize = 32;
/// Most subschemas in one tool schema (MCP-SEC-006), for the same reasons.
pub const MAX_SUBSCHEMAS: usize = 1000;

/// A notification POST, a GET and a DELETE on the endpoint, each with the
/// foreign Origin: the other requests "all incoming connections" covers.
struct OtherRequests {
    notification: Reply,
    get: BareReply,
    delete: BareReply,
}

/// Sends the [`OtherRequests`] side by side.
async fn other_requests(s: &Session) -> OtherRequests {
    let notification = Probe::notification(
        "notifications/cancelled",
        json!({"requestId": "protocheck-unused-id", "reason": "protocheck: Origin probe"}),
    )
    .with_header("origin", FOREIGN_ORIGIN);
    let bare = |method: http::Method, accept: &'static str| {
        let req = HttpRequest {
            method,
            ..HttpRequest::get(s.url.clone())
        }
        .header("accept", accept)
        .header(H_PROTOCOL_VERSION, wire::PROTOCOL_VERSION)
        .header("origin", FOREIGN_ORIGIN);
        // Only the status is judged: the window is for a stream's first
        // event, which nothing here reads.
        s.client.bare(req, Duration::from_millis(100))
    };
    let (notification, get, delete) = tokio::join!(
        s.client.send(&notification),
        bare(http::Method::GET, "text/event-stream"),
        bare(http::Method::DELETE, "application/json, text/event-stream"),
    );
    OtherRequests {
        notification,
        get,
        delete,
    }
}

async fn origin_403(s: &Session) -> Judgement {
    // Requests valid in every other respect, so the only reason to refuse them
    // is the Origin (streamable-http "Security & Endpoint": DNS rebinding), on
    // every method the server serves (the family probes), and the other
    // requests "all incoming connections" covers: a notification POST, a GET
    // and a DELETE. Only the status is judged: the body of the 403 MAY be a
    // JSON-RPC error, so it may be anything.
    //
    // The spec does not order Origin validation and authorization: a 401 (the
    // run's credentials do not reach that method) or a 403 `insufficient_scope`
    // with its Bearer challenge is authorization's answer and says nothing
    // about the Origin, so that method is left out and named (§15.8).
    let mut methods = Vec::new();
    let mut unreached = Unreached::default();
    let mut plain_401 = Vec::new();
    // The methods whose foreign Origin got 403: there the Origin check is
    // known to come first, so the look-alikes go to each.
    let mut refused: Vec<Probe> = Vec::new();
    let sends: Vec<_> = s
        .family_probes()
        .into_iter()
        .map(|template| async move {
            let probe = template.clone().with_header("origin", FOREIGN_ORIGIN);
            let reply = send_family(&s.client, &probe).await;
            (template, reply)
        })
        .collect();
    let (replies, others) = tokio::join!(s.each(sends), other_requests(s));
    // The probes are independent (see `Session::each`); judged in order.
    for (template, reply) in replies {
        let method = template.method.clone();
        if unreached.refused(&method, &reply) {
            continue;
        }
        match reply.status {
            Some(403) => {
                methods.push(format!("`{method}`"));
                refused.push(template);
            }
            Some(401) => plain_401.push(format!("`{method}`")),
            Some(code) if (400..500).contains(&code) => {
                return Judgement::fail(format!(
                    "`{method}` with Origin {FOREIGN_ORIGIN} got {}; an invalid Origin MUST be \
                     answered with 403 Forbidden (another 4xx is not the status the spec names)",
                    reply.describe()
                ))
                .reply(&reply);
            }
            _ => {
                return Judgement::fail(format!(
                    "`{method}` with Origin {FOREIGN_ORIGIN} got {}; servers MUST validate \
                     Origin and answer an invalid one with 403, or a web page can reach the \
                     server through DNS rebinding",
                    reply.describe()
                ))
                .reply(&reply);
            }
        }
    }
    // The notification POST: the same requirement, no JSON-RPC answer.
    let notification = &others.notification;
    let notification_note = if unreached.refused("notifications/cancelled", notification) {
        String::new()
    } else {
        match notification.status {
            Some(403) => "; so was a notification POST (`notifications/cancelled`)".to_owned(),
            Some(401) => {
                plain_401.push("the notification POST".to_owned());
                String::new()
            }
            _ => {
                return Judgement::fail(format!(
                    "a notification POST (`notifications/cancelled`) with Origin \
                     {FOREIGN_ORIGIN} got {}; servers MUST validate Origin on all incoming \
                     connections and answer an invalid one with 403{}",
                    notification.describe(),
                    if notification.status.is_some_and(|c| (200..300).contains(&c)) {
                        ": the server accepted it, so a page can reach it through DNS rebinding"
                    } else {
                        ""
                    }
                ))
                .reply(notification);
            }
        }
    };
    // GET and DELETE: 2026-07-28 defines neither, so a server that refuses
    // them for that (405, 404) serves nothing to the page either; that
    // reading is accepted and named. Serving one (2xx) fails.
    let mut bare_readings = Vec::new();
    for (name, reply) in [("GET", &others.get), ("DELETE", &others.delete)] {
        match reply.status {
            Some(403) => bare_readings.push(format!("{name} got 403")),
            Some(code) if (200..300).contains(&code) => {
                return Judgement::fail(format!(
                    "a {name} on the endpoint with Origin {FOREIGN_ORIGIN} was served with HTTP \
                     {code}{}; servers MUST validate Origin on all incoming connections and \
                     answer an invalid one with 403, or a web page can reach the server through \
                     DNS rebinding",
                    if reply.sse { " and an SSE stream" } else { "" }
                ))
                .with(&reply.exchange);
            }
            Some(code) => bare_readings.push(format!(
                "{name} got HTTP {code}, not 403 (accepted: 2026-07-28 defines no {name}, and \
                 refusing it serves the page nothing)"
            )),
            None => bare_readings.push(format!("{name} got no answer")),
        }
    }
    if refused.is_empty() {
        let mut why = unreached.skip().message;
        if !plain_401.is_empty() {
            why = format!(
                "not verified: every request with a foreign Origin was refused by authorization \
                 first ({}{}), before any Origin check could show",
                plain_401.join(", "),
                unreached.note()
            );
        }
        return Judgement::skip(why);
    }
    if let Some(failed) = lookalikes_refused(s, &refused).await {
        return failed;
    }
    let note = if plain_401.is_empty() {
        String::new()
    } else {
        format!(
            " ({} answered 401 first: authorization was checked before the Origin, which the \
             spec does not order)",
            plain_401.join(", ")
        )
    };
    let lookalikes = origin::lookalikes(&s.url).join(", ");
    Judgement::pass(format!(
        "{} with Origin {FOREIGN_ORIGIN} were each refused with 403{note}{notification_note}; \
         {}; each of them was refused with 403 under each look-alike Origin ({lookalikes}){}; \
         another port or scheme of the same host is not sent: the spec leaves it to the \
         server, which may allow it",
        methods.join(", "),
        bare_readings.join(", "),
        unreached.note()
    ))
}

/// Sends each of `refused` (the family probes a foreign Origin got 403 on)
/// once with each look-alike Origin (see [`origin`]): a server that refused a
/// plainly foreign Origin on a method, yet lets one of these in, compares
/// Origins by prefix or suffix, or by port alone. Side by side. `None` when
/// each got 403 (a skip when one got no answer).
async fn lookalikes_refused(s: &Session, refused: &[Probe]) -> Option<Judgement> {
    let mut sends = Vec::new();
    for template in refused {
        for lookalike in origin::lookalikes(&s.url) {
            let mut probe = template.clone().with_header("origin", lookalike.as_str());
            probe.body["id"] = json!(s.client.next_id());
            sends.push(async move {
                let reply = send_family(&s.client, &probe).await;
                (probe.method, lookalike, reply)
            });
        }
    }
    let replies = s.each(sends).await;
    let (method, lookalike, reply) = replies
        .into_iter()
        .find(|(_, _, reply)| reply.status != Some(403))?;
    let why = match reply.status {
        // No answer is no evidence the Origin got through.
        None => {
            return Some(
                Judgement::skip(format!(
                    "not verified: `{method}` with Origin {lookalike} got {}",
                    reply.describe()
                ))
                .reply(&reply),
            );
        }
        // The foreign Origin got 403 on this method with the same
        // credentials, so the Origin check comes first on it.
        Some(401) => {
            "(an inference: the 401 means the Origin check let it through to \
                      authorization, since a foreign Origin got 403 here first)"
        }
        Some(code) if (200..300).contains(&code) => {
            "(the server validates Origin, but this look-alike got through: a web page served \
             from such a name can reach the server through DNS rebinding)"
        }
        Some(_) => "(not the status the spec names)",
    };
    Some(
        Judgement::fail(format!(
            "`{method}` with Origin {lookalike} got {}, though Origin {FOREIGN_ORIGIN} got 403; \
             that Origin is invalid for every server ({}), and an invalid Origin MUST be \
             answered with 403 Forbidden {why}",
            reply.describe(),
            origin::why_invalid(&lookalike)
        ))
        .reply(&reply),
    )
}

/// Whether the endpoint is on this machine (`mcp-2026-07-28.md` §15.10).
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

async fn https(s: &Session) -> Judgement {
    let host = s.url.host_str().unwrap_or("?").to_owned();
    if s.url.scheme() == "https" {
        // reqwest (rustls) refuses a connection whose chain does not reach a
        // trusted root, names another host, or has expired; the run's requests
        // were answered, so the handshake passed all three.
        return match &s.discover.transport_error {
            None => Judgement::pass(format!(
                "https: the certificate chain for {host} was verified (trusted root, host name, \
                 validity) on the connections of this run"
            )),
            Some(e) => Judgement::fail(format!("the https connection to {host} failed: {e}"))
                .reply(&s.discover),
        };
    }
    if is_loopback(&s.url) {
        return Judgement::skip(format!(
            "the endpoint is on loopback ({host}), a developer's own machine: plain http is not \
             judged there"
        ));
    }
    Judgement::fail(format!(
        "the endpoint is plain http:// on {host}; tokens, tool arguments and results cross the \
         network unprotected (OAuth 2.1 communication security requires TLS)"
    ))
    .reply(&s.discover)
}

/// Whether `needle` appears in what was kept of a reply: its headers (credential
/// headers are already redacted there) and its body excerpt.
fn reflects(exchange: &Exchange, needle: &str) -> bool {
    exchange.response.as_ref().is_some_and(|r| {
        r.body.contains(needle) || r.headers.iter().any(|(_, v)| v.contains(needle))
    })
}

/// A request refused before dispatch (no `Mcp-Method`): an error reply, where
/// echoing the request is most common.
fn erroneous_request(client: &McpClient) -> Probe {
    client
        .request(
            "tools/call",
            json!({"name": unknown_name("tool"), "arguments": {}}),
        )
        .without_header(H_METHOD)
}

/// What MCP-SEC-003 and MCP-SEC-007 send to provoke an answer (see
/// [`Provoked`]): MCP-SEC-003's request sure to end in an error, then
/// MCP-SEC-007's made-up `Authorization: Bearer pc-authz-canary-…` on a
/// request refused before dispatch and on a valid `server/discover`; and
/// that made-up token. The survey sends them with its first requests.
pub(crate) fn provocations(client: &McpClient) -> ([Probe; 3], String) {
    let fake = format!("pc-authz-canary-{:016x}", rand::random::<u64>());
    let authorization = format!("Bearer {fake}");
    let broken = erroneous_request(client).with_header("authorization", authorization.clone());
    let valid = client
        .request("server/discover", json!({}))
        .with_header("authorization", authorization);
    ([erroneous_request(client), broken, valid], fake)
}

/// The answers to [`provocations`]: the survey's, or sent now where no
/// survey sent them.
async fn provoked(s: &Session) -> Provoked {
    if let Some(provoked) = &s.survey.provoked {
        return provoked.clone();
    }
    let ([echo, broken, valid], fake_token) = provocations(&s.client);
    let (echo, broken, valid) = tokio::join!(
        s.client.send(&echo),
        s.client.send(&broken),
        s.client.send(&valid)
    );
    Provoked {
        echo,
        fake_token,
        authorization: [broken, valid],
    }
}

async fn no_echo(s: &Session) -> Judgement {
    // Every request of the run carries the canary header; this one is sure to
    // end in an error (sent with the survey, see `provocations`).
    // The answers judged: this rule's own erroneous request, and the answers
    // to the run's valid requests (the answers to other rules' invalid probes
    // belong to those rules, §15 amendment).
    let own = provoked(s).await.echo;
    let canary = s.client.canary().to_owned();
    let mut seen: Vec<(String, Option<u16>, bool, Exchange)> = s
        .client
        .seen()
        .await
        .into_iter()
        .map(|r| {
            let error = r.status.is_some_and(|c| c >= 400) || r.error_code.is_some();
            (r.method, r.status, error, r.exchange)
        })
        .collect();
    if own.status.is_some() {
        seen.push((own.method.clone(), own.status, true, own.exchange.clone()));
    }
    let errors = seen.iter().filter(|r| r.2).count();
    let echoed: Vec<&(String, Option<u16>, bool, Exchange)> =
        seen.iter().filter(|r| reflects(&r.3, &canary)).collect();
    if echoed.is_empty() {
        return Judgement::pass(format!(
            "the {CANARY_HEADER} header sent with every request was repeated in none of {} \
             replies ({errors} of them errors)",
            seen.len()
        ));
    }
    let methods: Vec<String> = echoed
        .iter()
        .map(|r| format!("{} ({})", r.0, status_text(r.1)))
        .collect();
    let mut j = Judgement::fail(format!(
        "the value of the request header {CANARY_HEADER} came back in {} of {} replies: {}; \
         echoing request headers into responses leaks whatever a client or proxy put there",
        echoed.len(),
        seen.len(),
        some(&methods, 4, ", ")
    ));
    for r in echoed.iter().take(2) {
        j = j.with(&r.3);
    }
    j
}

fn status_text(status: Option<u16>) -> String {
    status.map_or_else(|| "no status".to_owned(), |c| format!("HTTP {c}"))
}

async fn no_auth_reflection(s: &Session) -> Judgement {
    // A made-up token, so that a reflection shows without exposing a real one;
    // sent on a request refused before dispatch and on a valid one (with the
    // survey, see `provocations`).
    let Provoked {
        fake_token: fake,
        authorization: replies,
        ..
    } = provoked(s).await;
    let mut leaks: Vec<Exchange> = replies
        .iter()
        .filter(|r| reflects(&r.exchange, &fake))
        .map(|r| r.exchange.clone())
        .collect();
    let mut checked = replies.len();
    // The run's own token, on every reply of the run; the engine redacts it
    // from whatever evidence is shown.
    if let Some(token) = s.client.bearer().map(|t| t.expose().to_owned()) {
        let seen = s.client.seen().await;
        checked = seen.len();
        leaks.extend(
            seen.iter()
                .filter(|r| reflects(&r.exchange, &token))
                .map(|r| r.exchange.clone()),
        );
    }
    if leaks.is_empty() {
        return Judgement::pass(format!(
            "no Authorization value came back in {checked} replies"
        ));
    }
    let mut j = Judgement::fail(format!(
        "an Authorization header value came back in {} replies; a server must not repeat \
         credentials into responses, where logs, proxies and error pages keep them",
        leaks.len()
    ));
    for e in leaks.iter().take(2) {
        j = j.with(e);
    }
    j
}

/// Every `icons` array the server showed: on its Implementation (discover
/// `_meta` and result) and on listed tools, prompts, resources and templates.
fn icon_sources(s: &Session) -> Vec<(String, Value, Option<&Reply>)> {
    let mut found = Vec::new();
    if let Some(result) = s.discover_result() {
        for (what, info) in [
            (
                "serverInfo in _meta",
                result.get("_meta").and_then(|m| m.get(META_SERVER_INFO)),
            ),
            ("serverInfo", result.get("serverInfo")),
        ] {
            if let Some(icons) = info.and_then(|i| i.get("icons")) {
                found.push((what.to_owned(), icons.clone(), Some(&s.discover)));
            }
        }
    }
    for (kind, listing, key) in [
        ("tool", &s.survey.tools, "name"),
        ("prompt", &s.survey.prompts, "name"),
        ("resource", &s.survey.resources, "uri"),
        ("resource template", &s.survey.templates, "uriTemplate"),
    ] {
        for item in &listing.items {
            if let Some(icons) = item.get("icons") {
                let name = item.get(key).and_then(Value::as_str).unwrap_or("?");
                found.push((
                    format!("{kind} `{}`", clip(name, 60)),
                    icons.clone(),
                    listing.pages.first(),
                ));
            }
        }
    }
    found
}

async fn icons(s: &Session) -> Judgement {
    let owners = icon_sources(s);
    let server_host = s.url.host_str().map(str::to_ascii_lowercase);
    let mut unsafe_src = Vec::new();
    let mut foreign = Vec::new();
    let mut evidence: Vec<&Reply> = Vec::new();
    let mut count = 0;
    for (owner, icons, page) in &owners {
        let Some(list) = icons.as_array() else {
            unsafe_src.push(format!("{owner} has `icons` that is not an array"));
            evidence.extend(page);
            continue;
        };
        for icon in list {
            count += 1;
            let src = icon.get("src").and_then(Value::as_str).unwrap_or("");
            let shown = clip(src, 60);
            let scheme = src
                .split_once(':')
                .map(|(scheme, _)| scheme.to_ascii_lowercase());
            match scheme.as_deref() {
                Some("data") => {}
                Some("https") => match Url::parse(src) {
                    // Same origin is a SHOULD; compared by host because an http
                    // endpoint can never share an origin with an https icon.
                    Ok(url) if url.host_str().map(str::to_ascii_lowercase) == server_host => {}
                    // Over stdio the server has no origin to share: only
                    // the scheme is judged.
                    Ok(_) if s.client.is_stdio() => {}
                    Ok(_) => {
                        foreign.push(format!("{owner} icon {shown:?}"));
                        evidence.extend(page);
                    }
                    Err(_) => {
                        unsafe_src.push(format!("{owner} icon {shown:?} is not a valid URI"));
                        evidence.extend(page);
                    }
                },
                _ => {
                    unsafe_src.push(format!(
                        "{owner} icon {shown:?} uses {}",
                        scheme.map_or_else(|| "no scheme".to_owned(), |s| format!("`{s}:`"))
                    ));
                    evidence.extend(page);
                }
            }
        }
    }
    if count == 0 && unsafe_src.is_empty() {
        return Judgement::skip("the server shows no icons");
    }
    let attach = |mut j: Judgement| {
        for r in evidence.iter().take(2) {
            j = j.reply(r);
        }
        j
    };
    if !unsafe_src.is_empty() {
        return attach(Judgement::fail(format!(
            "{}; icon sources MUST be https: or data: URIs, and clients MUST refuse \
             javascript:, file:, http: and other schemes",
            some(&unsafe_src, 4, "; ")
        )));
    }
    if !foreign.is_empty() {
        return attach(Judgement::warn(format!(
            "{} on another host than the server; icons SHOULD be same-origin so a client \
             fetching them does not reach a third party",
            some(&foreign, 4, "; ")
        )));
    }
    Judgement::pass(if s.client.is_stdio() {
        format!("all {count} icons are data: or https: URIs (over stdio the server has no origin)")
    } else {
        format!("all {count} icons are data: URIs or https: on the server's host")
    })
}

/// Schema keywords whose value is one subschema, a map of them, or a list of them
/// (JSON Schema 2020-12 core and applicator vocabularies, with draft-07 names).
const SCHEMA_KEYWORDS: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "items",
    "additionalItems",
    "contains",
    "additionalProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];
const SCHEMA_MAP_KEYWORDS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
const SCHEMA_LIST_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];

/// Calls `visit` on `schema` and every subschema with its depth (root = 1).
fn walk_schemas(schema: &Value, depth: usize, visit: &mut dyn FnMut(&Value, usize)) {
    visit(schema, depth);
    let Some(obj) = schema.as_object() else {
        return;
    };
    for (key, value) in obj {
        let key = key.as_str();
        if SCHEMA_MAP_KEYWORDS.contains(&key) {
            if let Some(map) = value.as_object() {
                for sub in map.values() {
                    walk_schemas(sub, depth + 1, visit);
                }
            }
        } else if SCHEMA_LIST_KEYWORDS.contains(&key) && value.is_array() {
            for sub in value.as_array().into_iter().flatten() {
                walk_schemas(sub, depth + 1, visit);
            }
        } else if SCHEMA_KEYWORDS.contains(&key) && value.is_object() {
            walk_schemas(value, depth + 1, visit);
        }
    }
}

/// Each listed tool's name and its schemas (`inputSchema`, `outputSchema`).
fn tool_schemas(s: &Session) -> Result<Vec<(String, &'static str, &Value)>, Judgement> {
    if !s.advertises("tools") {
        return Err(Judgement::skip("the server does not advertise tools"));
    }
    if s.survey.tools.items.is_empty() {
        return Err(Judgement::skip("no tool was listed"));
    }
    let mut all = Vec::new();
    for tool in &s.survey.tools.items {
        let name = clip(tool.get("name").and_then(Value::as_str).unwrap_or("?"), 80);
        for field in ["inputSchema", "outputSchema"] {
            if let Some(schema) = tool.get(field) {
                all.push((name.clone(), field, schema));
            }
        }
    }
    Ok(all)
}

/// Whether a `$ref` resolves to a network location: an absolute URI with a
/// network scheme, a network-path reference (`//host/…`), or a relative
/// reference resolved against a network `$id` (basic/index#ref-resolution).
fn network_target(reference: &str, base: Option<&Url>) -> Option<String> {
    let network = |url: &Url| {
        matches!(url.scheme(), "http" | "https" | "ftp" | "ws" | "wss").then(|| url.to_string())
    };
    if reference.starts_with('#') {
        return None;
    }
    match Url::parse(reference) {
        Ok(url) => network(&url),
        Err(_) => base
            .and_then(|b| b.join(reference).ok())
            .and_then(|u| network(&u)),
    }
    .or_else(|| reference.starts_with("//").then(|| reference.to_owned()))
}

async fn network_ref(s: &Session) -> Judgement {
    let schemas = match tool_schemas(s) {
        Ok(all) => all,
        Err(skip) => return skip,
    };
    let mut problems = Vec::new();
    let mut refs = 0;
    for (tool, field, schema) in &schemas {
        let base = schema
            .get("$id")
            .and_then(Value::as_str)
            .and_then(|id| Url::parse(id).ok());
        walk_schemas(schema, 1, &mut |sub, _| {
            for key in ["$ref", "$dynamicRef"] {
                if let Some(reference) = sub.get(key).and_then(Value::as_str) {
                    refs += 1;
                    if let Some(target) = network_target(reference, base.as_ref()) {
                        problems.push(format!(
                            "tool `{tool}` {field} has {key} {:?} → {}",
                            clip(reference, 80),
                            clip(&target, 80)
                        ));
                    }
                }
            }
        });
    }
    if problems.is_empty() {
        return Judgement::pass(format!(
            "{} tool schemas hold {refs} $ref, none to a network URI",
            schemas.len()
        ));
    }
    let mut j = Judgement::fail(format!(
        "{}; a schema that needs a network fetch to be understood cannot be validated safely, \
         and clients MUST NOT dereference it by default",
        some(&problems, 4, "; ")
    ));
    if let Some(page) = s.survey.tools.pages.first() {
        j = j.reply(page);
    }
    j
}

async fn schema_bounds(s: &Session) -> Judgement {
    let schemas = match tool_schemas(s) {
        Ok(all) => all,
        Err(skip) => return skip,
    };
    let mut problems = Vec::new();
    let mut deepest = 0;
    let mut largest = 0;
    for (tool, field, schema) in &schemas {
        let (mut depth, mut count) = (0, 0);
        walk_schemas(schema, 1, &mut |_, d| {
            depth = depth.max(d);
            count += 1;
        });
        deepest = deepest.max(depth);
        largest = largest.max(count);
        if depth > MAX_SCHEMA_DEPTH {
            problems.push(format!(
                "tool `{tool}` {field} nests subschemas {depth} deep (bound {MAX_SCHEMA_DEPTH})"
            ));
        }
        if count > MAX_SUBSCHEMAS {
            problems.push(format!(
                "tool `{tool}` {field} has {count} subschemas (bound {MAX_SUBSCHEMAS})"
            ));
        }
    }
    if problems.is_empty() {
        return Judgement::pass(format!(
            "{} tool schemas: at most {deepest} levels deep and {largest} subschemas, within \
             protocheck's bounds of {MAX_SCHEMA_DEPTH} and {MAX_SUBSCHEMAS}",
            schemas.len()
        ));
    }
    let mut j = Judgement::fail(format!(
        "{}; validators SHOULD bound the work a schema can cause, so clients may refuse such a \
         tool or spend unbounded time on it",
        some(&problems, 4, "; ")
    ));
    if let Some(page) = s.survey.tools.pages.first() {
        j = j.reply(page);
    }
    j
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_refs_are_recognised() {
        assert!(network_target("#/$defs/a", None).is_none());
        assert!(network_target("https://example.com/s.json", None).is_some());
        assert!(network_target("//example.com/s.json", None).is_some());
        assert!(network_target("urn:example:schema", None).is_none());
        let base = Url::parse("https://example.com/root.json").ok();
        assert!(network_target("other.json", base.as_ref()).is_some());
        assert!(network_target("other.json", None).is_none());
    }

    #[test]
    fn schema_walk_counts_depth_and_subschemas() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}});
        let (mut depth, mut count) = (0, 0);
        walk_schemas(&schema, 1, &mut |_, d| {
            depth = depth.max(d);
            count += 1;
        });
        assert_eq!((depth, count), (4, 5));
    }
}
