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

use super::client::{BareReply, CANARY_HEADER, Echo, McpClient, Probe, Reply, Seen, clip, some};
use super::origin;
use super::rule::{Keyword, McpRule, spec};
use super::session::{Judgement, Session, Unreached};
use super::survey::{Provoked, send_family, unknown_name};
use super::wire::{self, H_METHOD, H_PROTOCOL_VERSION, META_SERVER_INFO};
use crate::suite::{Exchange, Outcome, ResponseRecord};
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
     protocheck also sends a `tools/call` without `Mcp-Method`, an unknown method and an \
     unsupported protocol version to provoke errors, then searches the headers and whole body of \
     those answers and of every answer to the run's valid requests for the canary, the \
     User-Agent, the Authorization credentials and any other header value the body does not hold.",
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
    "protocheck collects every `icons` array on `serverInfo` (in every result of the run that \
     carries one, in `_meta` or at the top level, and in the `initialize` result) and on the \
     listed tools, prompts, resources and templates, and checks each `src`: `data:` or `https:` \
     passes, any other scheme fails, and an `https:` icon of another origin (scheme, host, port) \
     than the endpoint's warns. Each https icon is fetched once without credentials, its \
     redirects followed by hand: one to another scheme fails, one to another origin warns.",
    "Icons are served over `http:`, given as relative paths or `file:` URIs, or hosted on a CDN \
     or a third-party domain rather than on the server's own host.",
    "Serve icons from `https:` URLs on the server's own host, or embed small ones as `data:` \
     URIs; never use `http:`, `file:`, `javascript:` or relative paths.",
)
.run_wide();

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
     without `Mcp-Method`, on a valid `server/discover` and on a request of every method the \
     server serves, and searches those answers' headers (before redaction) and whole bodies for \
     it; with a run token, it also searches every answer of the run for that token. A finding \
     names where the value came back, never the value.",
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

/// One answer as MCP-SEC-003 and MCP-SEC-007 judge it: what was asked, its
/// status, whether it is an error, its exchange and the request header
/// values that came back in it.
struct Judged {
    method: String,
    status: Option<u16>,
    error: bool,
    exchange: Exchange,
    echoes: Vec<Echo>,
}

impl Judged {
    fn of_reply(reply: &Reply) -> Self {
        Self {
            method: reply.method.clone(),
            status: reply.status,
            error: reply.status.is_some_and(|c| c >= 400) || reply.error().is_some(),
            exchange: reply.exchange.clone(),
            echoes: reply.echoes.clone(),
        }
    }

    fn of_seen(seen: &Seen) -> Self {
        Self {
            method: seen.method.clone(),
            status: seen.status,
            error: seen.status.is_some_and(|c| c >= 400) || seen.error_code.is_some(),
            exchange: seen.exchange.clone(),
            echoes: seen.echoes.clone(),
        }
    }

    /// `tools/call (HTTP 400): `x-protocheck-canary` in body`, for the
    /// echoes `keep` selects.
    fn describe(&self, keep: &dyn Fn(&Echo) -> bool) -> String {
        let places: Vec<String> = self
            .echoes
            .iter()
            .filter(|e| keep(e))
            .map(|e| format!("`{}` in {}", e.header, e.place))
            .collect();
        format!(
            "{} ({}): {}",
            self.method,
            status_text(self.status),
            some(&places, 3, ", ")
        )
    }
}

/// Whether an echo is of a credential header (MCP-SEC-007).
fn is_authorization(echo: &Echo) -> bool {
    echo.header == "authorization"
}

async fn no_echo(s: &Session) -> Judgement {
    // Every request of the run carries the canary header (and the client's
    // User-Agent, and with a run token its Authorization); each answer was
    // searched for their values as it was read (`EchoSearch`: headers before
    // redaction, every body byte read). The answers judged: this rule's own
    // requests sure to end in an error (one sent with the survey, see
    // `provocations`; an unknown method and an unsupported version sent
    // now, side by side), and the answers to the run's valid requests (the
    // answers to other rules' invalid probes belong to those rules, §15
    // amendment).
    let unknown = s.client.request("protocheck/no-such-method", json!({}));
    let unsupported = s
        .client
        .request("server/discover", json!({}))
        .with_version("1900-01-01");
    let (provoked, unknown, unsupported) = tokio::join!(
        provoked(s),
        s.client.send(&unknown),
        s.client.send(&unsupported)
    );
    let mut judged: Vec<Judged> = s.client.seen().await.iter().map(Judged::of_seen).collect();
    for own in [&provoked.echo, &unknown, &unsupported] {
        if own.status.is_some() {
            judged.push(Judged::of_reply(own));
        }
    }
    let errors = judged.iter().filter(|r| r.error).count();
    let echoed: Vec<&Judged> = judged.iter().filter(|r| !r.echoes.is_empty()).collect();
    if echoed.is_empty() {
        return Judgement::pass(format!(
            "no distinctive request header value ({CANARY_HEADER}, User-Agent, the credentials \
             of Authorization, any header whose value the body does not hold) came back in the \
             headers or bodies of {} replies ({errors} of them errors, among them this rule's \
             missing `Mcp-Method`, unknown method and unsupported version)",
            judged.len()
        ));
    }
    let shown: Vec<String> = echoed.iter().map(|r| r.describe(&|_| true)).collect();
    let mut j = Judgement::fail(format!(
        "request header values came back in {} of {} replies: {}; echoing request headers into \
         responses leaks whatever a client or proxy put there (the values are not shown here)",
        echoed.len(),
        judged.len(),
        some(&shown, 4, "; ")
    ));
    for r in echoed.iter().take(2) {
        j = j.with(&r.exchange);
    }
    j
}

fn status_text(status: Option<u16>) -> String {
    status.map_or_else(|| "no status".to_owned(), |c| format!("HTTP {c}"))
}

async fn no_auth_reflection(s: &Session) -> Judgement {
    // A made-up token, so that a reflection shows without exposing a real
    // one: sent with the survey on a request refused before dispatch and on
    // a valid `server/discover` (see `provocations`), and now on each of the
    // family probes (every method the server serves), side by side. Each
    // answer was searched for the token as it was read (headers before
    // redaction, every body byte read); a finding names where, never the value.
    let Provoked {
        fake_token: fake,
        authorization: provoked_replies,
        ..
    } = provoked(s).await;
    let bearer = format!("Bearer {fake}");
    let sends: Vec<_> = s
        .family_probes()
        .into_iter()
        .map(|template| {
            let probe = template.with_header("authorization", bearer.clone());
            async move { send_family(&s.client, &probe).await }
        })
        .collect();
    let family = s.each(sends).await;
    let mut judged: Vec<Judged> = provoked_replies
        .iter()
        .chain(&family)
        .filter(|r| r.status.is_some())
        .map(Judged::of_reply)
        .collect();
    // The run's own token, on every valid request of the run; the engine
    // redacts it from whatever evidence is shown.
    if s.client.bearer().is_some() {
        judged.extend(s.client.seen().await.iter().map(Judged::of_seen));
    }
    let leaks: Vec<&Judged> = judged
        .iter()
        .filter(|r| r.echoes.iter().any(is_authorization))
        .collect();
    if leaks.is_empty() {
        return Judgement::pass(format!(
            "no Authorization credential came back in the headers or bodies of {} replies{}",
            judged.len(),
            if s.client.bearer().is_some() {
                " (the made-up token's, on every method served, and the run token's)"
            } else {
                " (a made-up token's, on every method served)"
            }
        ));
    }
    let shown: Vec<String> = leaks
        .iter()
        .map(|r| r.describe(&|e| is_authorization(e)))
        .collect();
    let mut j = Judgement::fail(format!(
        "the credentials of the request's Authorization header came back in {} replies: {}; a \
         server must not repeat credentials into responses, where logs, proxies and error pages \
         keep them (the value is not shown here)",
        leaks.len(),
        some(&shown, 4, "; ")
    ));
    for r in leaks.iter().take(2) {
        j = j.with(&r.exchange);
    }
    j
}

/// Every `icons` array the server showed, with the exchange it came in: on
/// its Implementation (`serverInfo`, in `_meta` or at the top level) in every
/// result of the run that carries one (`seen`: the answers to the run's
/// valid probes, discover's among them) and in the opening legacy
/// `initialize` result, and on listed tools, prompts, resources and
/// templates. An array repeated unchanged by the same owner is kept once.
fn icon_sources(s: &Session, seen: &[Seen]) -> Vec<(String, Value, Option<Exchange>)> {
    let mut found: Vec<(String, Value, Option<Exchange>)> = Vec::new();
    let mut push = |owner: String, icons: &Value, exchange: Option<&Exchange>| {
        if !found.iter().any(|(o, i, _)| *o == owner && i == icons) {
            found.push((owner, icons.clone(), exchange.cloned()));
        }
    };
    let results = std::iter::once((s.discover_result(), "server/discover", &s.discover.exchange))
        .chain(
            seen.iter()
                .map(|r| (r.result.as_ref(), r.method.as_str(), &r.exchange)),
        )
        .chain(std::iter::once((
            s.initialize.result(),
            "initialize",
            &s.initialize.exchange,
        )));
    for (result, method, exchange) in results {
        let Some(result) = result else {
            continue;
        };
        for (what, info) in [
            (
                "serverInfo in _meta",
                result.get("_meta").and_then(|m| m.get(META_SERVER_INFO)),
            ),
            ("serverInfo", result.get("serverInfo")),
        ] {
            if let Some(icons) = info.and_then(|i| i.get("icons")) {
                push(
                    format!("{what} (`{}` result)", clip(method, 40)),
                    icons,
                    Some(exchange),
                );
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
                push(
                    format!("{kind} `{}`", clip(name, 60)),
                    icons,
                    listing.pages.first().map(|p| &p.exchange),
                );
            }
        }
    }
    found
}

/// Whether `a` and `b` are one origin: scheme, host (in any case) and port
/// (a default port written or not).
fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme().eq_ignore_ascii_case(b.scheme())
        && a.host_str().map(str::to_ascii_lowercase) == b.host_str().map(str::to_ascii_lowercase)
        && a.port_or_known_default() == b.port_or_known_default()
}

/// Most redirects of one icon followed (each hop a GET through the run's
/// guarded client, which follows none by itself). The spec sets no length
/// to a redirect chain.
const MAX_ICON_HOPS: usize = 5;
/// Most distinct icon URLs fetched in one run: the spec bounds no number of
/// icons, and each fetch is a request to whatever host the icon names.
const MAX_ICON_FETCHES: usize = 64;
/// Icon fetches in flight at once (they go to the icons' hosts, outside the
/// run's request permits).
const ICON_FETCHES_AT_ONCE: usize = 8;

/// What fetching an icon showed.
enum IconFetch {
    /// Answered without a redirect, or redirected only to https URLs of its
    /// own origin.
    Kept,
    /// A redirect to another scheme (`Location` named), a MUST.
    SchemeChange(String, Exchange),
    /// A redirect to another origin, a SHOULD.
    CrossOrigin(String, Exchange),
    /// No answer, or a redirect without a usable `Location`: not judged.
    Unjudged(String),
    /// The chain went on past [`MAX_ICON_HOPS`].
    TooLong,
}

/// Fetches `src` without credentials (a GET through the run's guarded
/// client, which refuses addresses the run may not reach and follows no
/// redirect), reading only the status and headers, and follows each
/// redirect to an https URL of the same origin by hand.
async fn fetch_icon(
    http: &crate::transport::HttpClient,
    timeout: Duration,
    src: &Url,
) -> IconFetch {
    let mut at = src.clone();
    for _ in 0..=MAX_ICON_HOPS {
        let req = HttpRequest::get(at.clone())
            .header("accept", "image/*")
            .timeout(timeout);
        let evidence_bytes = http.limits().evidence_bytes;
        let record = req.record(evidence_bytes);
        let resp = match http.send_streaming(&req).await {
            Ok(resp) => resp,
            Err(e) => return IconFetch::Unjudged(format!("GET {at}: {e}")),
        };
        let location = resp
            .headers
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let exchange = Exchange {
            request: record,
            response: Some(ResponseRecord {
                status: Some(resp.status),
                headers: crate::transport::redact_headers(
                    resp.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())),
                ),
                body: String::new(),
                truncated: true,
                elapsed_ms: u64::try_from(resp.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            }),
            error: None,
        };
        drop(resp);
        let Some(location) = location.filter(|_| (300..400).contains(&exchange_status(&exchange)))
        else {
            return IconFetch::Kept;
        };
        let Ok(next) = at.join(&location) else {
            return IconFetch::Unjudged(format!(
                "GET {at} redirected to {:?}, which is no URI",
                clip(&location, 80)
            ));
        };
        if next.scheme() != "https" {
            return IconFetch::SchemeChange(
                format!("redirects to {:?}", clip(next.as_str(), 80)),
                exchange,
            );
        }
        if !same_origin(&next, src) {
            return IconFetch::CrossOrigin(
                format!("redirects to {:?}", clip(next.as_str(), 80)),
                exchange,
            );
        }
        at = next;
    }
    IconFetch::TooLong
}

fn exchange_status(exchange: &Exchange) -> u16 {
    exchange
        .response
        .as_ref()
        .and_then(|r| r.status)
        .unwrap_or_default()
}

async fn icons(s: &Session) -> Judgement {
    let seen = s.client.seen().await;
    let owners = icon_sources(s, &seen);
    let mut unsafe_src = Vec::new();
    let mut foreign = Vec::new();
    let mut evidence: Vec<Exchange> = Vec::new();
    let mut count = 0;
    // The https icons to fetch, each URL once, with the first owner naming it.
    let mut to_fetch: Vec<(Url, String, Option<Exchange>)> = Vec::new();
    for (owner, icons, page) in &owners {
        let Some(list) = icons.as_array() else {
            unsafe_src.push(format!("{owner} has `icons` that is not an array"));
            evidence.extend(page.clone());
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
                    Ok(url) => {
                        // Same origin is a SHOULD, compared by scheme, host
                        // and port. Over stdio the server has no origin to
                        // share: only the scheme is judged.
                        if !s.client.is_stdio() && !same_origin(&url, &s.url) {
                            foreign.push(format!("{owner} icon {shown:?}"));
                            evidence.extend(page.clone());
                        }
                        if !to_fetch.iter().any(|(u, _, _)| *u == url) {
                            to_fetch.push((url, format!("{owner} icon {shown:?}"), page.clone()));
                        }
                    }
                    Err(_) => {
                        unsafe_src.push(format!("{owner} icon {shown:?} is not a valid URI"));
                        evidence.extend(page.clone());
                    }
                },
                _ => {
                    unsafe_src.push(format!(
                        "{owner} icon {shown:?} uses {}",
                        scheme.map_or_else(|| "no scheme".to_owned(), |s| format!("`{s}:`"))
                    ));
                    evidence.extend(page.clone());
                }
            }
        }
    }
    if count == 0 && unsafe_src.is_empty() {
        return Judgement::skip("the server shows no icons");
    }
    // Each https icon fetched, side by side, to see where it redirects.
    let fetched_total = to_fetch.len();
    to_fetch.truncate(MAX_ICON_FETCHES);
    let outcomes: Vec<IconFetch> = {
        use futures::StreamExt;
        let http = s.client.http().clone();
        let timeout = s.client.timeout();
        let fetches: Vec<_> = to_fetch
            .iter()
            .map(|(url, _, _)| {
                let (http, url) = (http.clone(), url.clone());
                async move { fetch_icon(&http, timeout, &url).await }
            })
            .collect();
        futures::stream::iter(fetches)
            .buffered(ICON_FETCHES_AT_ONCE)
            .collect()
            .await
    };
    let mut unjudged = Vec::new();
    let mut long_chains = Vec::new();
    for ((_, what, _), outcome) in to_fetch.iter().zip(outcomes) {
        match outcome {
            IconFetch::Kept => {}
            IconFetch::SchemeChange(why, x) => {
                unsafe_src.push(format!("{what} {why}, another scheme"));
                evidence.push(x);
            }
            IconFetch::CrossOrigin(why, x) => {
                foreign.push(format!("{what} {why}, another origin"));
                evidence.push(x);
            }
            IconFetch::Unjudged(why) => unjudged.push(why),
            IconFetch::TooLong => long_chains.push(what.clone()),
        }
    }
    let attach = |mut j: Judgement| {
        for x in evidence.iter().take(2) {
            j = j.with(x);
        }
        j
    };
    if !unsafe_src.is_empty() {
        return attach(Judgement::fail(format!(
            "{}; icon sources MUST be https: or data: URIs, and clients MUST refuse \
             javascript:, file:, http: and other schemes, and redirects that change the scheme",
            some(&unsafe_src, 4, "; ")
        )));
    }
    if !foreign.is_empty() {
        return attach(Judgement::warn(format!(
            "{} on another origin (scheme, host and port) than the server {}; icons SHOULD be \
             same-origin so a client fetching them does not reach a third party{}",
            some(&foreign, 4, "; "),
            s.url.origin().ascii_serialization(),
            if s.url.scheme() == "http" {
                " (the endpoint is plain http, so no https icon shares its origin: only data: \
                 icons can)"
            } else {
                ""
            }
        )));
    }
    let mut notes = String::new();
    if fetched_total > 0 {
        notes.push_str(&format!(
            "; {} of {fetched_total} https icon URLs fetched without credentials, none \
             redirecting to another scheme or origin",
            to_fetch.len()
        ));
    }
    if fetched_total > MAX_ICON_FETCHES {
        notes.push_str(&format!(
            " (the first {MAX_ICON_FETCHES}; the others were not fetched)"
        ));
    }
    if !long_chains.is_empty() {
        notes.push_str(&format!(
            "; not judged past {MAX_ICON_HOPS} same-origin redirects: {}",
            some(&long_chains, 3, ", ")
        ));
    }
    if !unjudged.is_empty() {
        notes.push_str(&format!("; not fetched: {}", some(&unjudged, 3, "; ")));
    }
    Judgement::pass(if s.client.is_stdio() {
        format!(
            "all {count} icons are data: or https: URIs (over stdio the server has no \
             origin){notes}"
        )
    } else {
        format!("all {count} icons are data: URIs or https: of the server's origin{notes}")
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
    fn origins_compare_scheme_host_and_port() {
        let url = |u: &str| Url::parse(u).expect("a URL");
        let server = url("https://MCP.example.com/mcp");
        assert!(same_origin(
            &url("https://mcp.example.com:443/icon.png"),
            &server
        ));
        assert!(!same_origin(
            &url("https://mcp.example.com:8443/icon.png"),
            &server
        ));
        assert!(!same_origin(
            &url("https://cdn.example.com/icon.png"),
            &server
        ));
        assert!(!same_origin(
            &url("https://127.0.0.1:8080/i.png"),
            &url("http://127.0.0.1:8080/mcp")
        ));
    }

    /// A loopback server answering `/kept` with 200, `/to-http` with a
    /// redirect to `http:`, `/away` with one to another origin, `/hop` with
    /// one to `/kept` on its own origin and `/loop` with one to itself.
    async fn icon_server() -> Url {
        use axum::http::{StatusCode, header};
        use axum::response::IntoResponse;
        use axum::routing::get;
        let redirect = |to: &'static str| {
            move || async move { (StatusCode::FOUND, [(header::LOCATION, to)]).into_response() }
        };
        let app = axum::Router::new()
            .route("/kept", get(|| async { "icon" }))
            .route("/to-http", get(redirect("javascript:alert(1)")))
            .route("/away", get(redirect("https://elsewhere.example/i.png")))
            .route("/hop", get(redirect("/kept")))
            .route("/loop", get(redirect("/loop")));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Url::parse(&format!("http://{addr}/")).expect("a URL")
    }

    #[tokio::test]
    async fn icon_redirects_are_followed_by_hand() {
        let base = icon_server().await;
        let http = crate::transport::HttpClient::new(
            crate::transport::AddressPolicy::AllowPrivate,
            crate::transport::Limits::default(),
        )
        .expect("client");
        let fetch = |path: &str| {
            let url = base.join(path).expect("a URL");
            let http = http.clone();
            async move { fetch_icon(&http, Duration::from_secs(5), &url).await }
        };
        assert!(matches!(fetch("kept").await, IconFetch::Kept));
        assert!(matches!(
            fetch("to-http").await,
            IconFetch::SchemeChange(why, _) if why.contains("javascript:")
        ));
        // Loopback is plain http: a same-origin hop is another scheme too,
        // which is what an https icon redirected to http would show.
        assert!(matches!(fetch("hop").await, IconFetch::SchemeChange(..)));
        assert!(matches!(fetch("away").await, IconFetch::CrossOrigin(..)));
    }

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
