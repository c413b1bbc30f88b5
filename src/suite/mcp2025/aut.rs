//! AUT — authorization (basic/authorization), over HTTP, for servers that
//! ask for it: an unauthenticated `initialize` answered with 401 (digest,
//! D13). Discovery (RFC 9728 metadata, then RFC 8414 / OpenID Connect
//! metadata of the authorization servers) is public and read-only; tokens
//! given with the run are sent only to the endpoint and never shown.

use super::client::{Credentials, Reply, Transport};
use super::rule::{Mcp25Rule, spec};
use super::session::{Judgement, Session, needs_task};
use crate::suite::Exchange;
use crate::suite::Outcome;
use crate::suite::mcp::Keyword;
use crate::suite::mcp::aut_survey::{
    Challenge, metadata_urls, parse_bearer_challenge, prm_well_known,
};
use crate::suite::mcp::client::clip;
use crate::transport::HttpRequest;
use futures::FutureExt;
use serde_json::{Value, json};
use std::time::Duration;
use url::Url;

/// Longest wait for a discovery document (digest, D19).
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest discovery document read (digest, D19).
const MAX_DOCUMENT: usize = 64 * 1024;

const DISCOVERY_ID: &str = "MCP25-AUT-001";
const SERVERS_ID: &str = "MCP25-AUT-002";

pub(crate) const DISCOVERY: Mcp25Rule = Mcp25Rule::new(
    DISCOVERY_ID,
    "Protected resource metadata is discoverable: the 401's `WWW-Authenticate` names \
     `resource_metadata`, or one of the well-known URIs serves it",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/authorization#protected-resource-metadata-discovery-requirements"),
    "AUT",
    |s| discovery(s).boxed(),
)
.says(
    "the server offers at least one route to its RFC 9728 metadata: `resource_metadata` in the \
     401 challenge, or the well-known URI",
)
.help(
    "protocheck sends `initialize` with no credentials on a new connection; on a 401 it reads the \
     Bearer `WWW-Authenticate` challenge and GETs its `resource_metadata` URL, then if needed the \
     well-known `oauth-protected-resource` URIs (path-suffixed, then root), without a token. Any \
     status but 401 means the AUT rules do not apply.",
    "Neither route leads to a JSON document: usually a 401 without `resource_metadata` on a \
     server with no well-known document, or a `resource_metadata` URL that fails or needs a \
     token. Metadata found only at a well-known URI is information.",
    "Serve the RFC 9728 metadata as public JSON at `/.well-known/oauth-protected-resource` \
     (followed by the endpoint's path) and name it in the 401: `WWW-Authenticate: Bearer \
     resource_metadata=\"https://…\"`.",
)
.only_on(Transport::Http);

pub(crate) const SERVERS: Mcp25Rule = Mcp25Rule::new(
    SERVERS_ID,
    "The metadata document is JSON with `authorization_servers` holding at least one URL",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/authorization#authorization-server-location"),
    "AUT",
    |s| servers(s).boxed(),
)
.says("the protected resource metadata lists at least one authorization server")
.help(
    "protocheck reads the metadata document found by MCP25-AUT-001 and checks that \
     `authorization_servers` is an array holding at least one `http` or `https` URL.",
    "The document lacks `authorization_servers`, holds it as a string, or lists names that are \
     not URLs, usually when it is written by hand or copied from an authorization server's own \
     metadata.",
    "Add `\"authorization_servers\": [\"https://auth.example.com\"]`, listing the issuer URL of \
     each authorization server that issues tokens for this endpoint.",
)
.requires(&[DISCOVERY_ID])
.only_on(Transport::Http);

pub(crate) const RESOURCE: Mcp25Rule = Mcp25Rule::new(
    "MCP25-AUT-003",
    "The metadata `resource` equals the MCP endpoint's resource identifier",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/authorization#authorization-server-location"),
    "AUT",
    |s| resource(s).boxed(),
)
.says(
    "the `resource` of the metadata matches the protected resource it was fetched for \
     (RFC 9728 §3.3)",
)
.help(
    "protocheck compares the `resource` of the metadata found by MCP25-AUT-001 with the MCP \
     endpoint URL (fragment removed): exactly, or once scheme and host case and a trailing slash \
     are set aside.",
    "`resource` names the server's origin or another path instead of the MCP endpoint, or a \
     development URL, usually because it was configured once and the endpoint moved, or a proxy \
     changes the public URL.",
    "Set `resource` to the endpoint's public URL as clients use it (such as \
     `https://api.example.com/mcp`), the URI clients pass as the `resource` parameter.",
)
.requires(&[DISCOVERY_ID])
.only_on(Transport::Http);

pub(crate) const AS_METADATA: Mcp25Rule = Mcp25Rule::new(
    "MCP25-AUT-004",
    "Each listed authorization server publishes RFC 8414 or OpenID Connect discovery metadata, \
     with `code_challenge_methods_supported` including `S256`",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/authorization#authorization-code-protection"),
    "AUT",
    |s| as_metadata(s).boxed(),
)
.says(
    "authorization servers offer RFC 8414 or OpenID Connect discovery, and advertise PKCE \
     support (`code_challenge_methods_supported`), without which clients must refuse them",
)
.help(
    "For up to ten authorization servers listed in the metadata (side by side), protocheck GETs \
     the RFC 8414 and OpenID Connect discovery URLs in the specification's order until one serves a JSON \
     object, and checks that its `code_challenge_methods_supported` includes `S256`.",
    "The issuer publishes no discovery document where expected (often an issuer with a path, \
     whose well-known suffix sits elsewhere), or its metadata omits \
     `code_challenge_methods_supported`, which some providers leave out although they support \
     PKCE.",
    "Publish discovery metadata for the issuer at `/.well-known/oauth-authorization-server` (or \
     `openid-configuration`) with `\"code_challenge_methods_supported\": [\"S256\"]`; with a \
     hosted provider, check its settings.",
)
.requires(&[SERVERS_ID])
.only_on(Transport::Http);

pub(crate) const CHALLENGE_SCOPE: Mcp25Rule = Mcp25Rule::new(
    "MCP25-AUT-005",
    "The 401 `WWW-Authenticate` carries a `scope` parameter",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/authorization#protected-resource-metadata-discovery-requirements"),
    "AUT",
    |s| challenge_scope(s).boxed(),
)
.says("the challenge should tell the client which scopes to request")
.help(
    "protocheck sends `initialize` with no credentials on a new connection and reads the Bearer \
     `WWW-Authenticate` challenge of the 401; it checks for a non-empty `scope` parameter.",
    "The challenge is a bare `Bearer`, or carries only `resource_metadata`, or there is no Bearer \
     challenge at all, usually a framework's default 401.",
    "Name the scopes a client needs in the 401's challenge, beside `resource_metadata`: \
     `WWW-Authenticate: Bearer resource_metadata=\"…\", scope=\"mcp:read mcp:tools\"`.",
)
.only_on(Transport::Http);

pub(crate) const INVALID_TOKEN: Mcp25Rule = Mcp25Rule::new(
    "MCP25-AUT-006",
    "An invalid bearer token gets 401",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/authorization#token-handling"),
    "AUT",
    |s| invalid_token(s).boxed(),
)
.says("invalid or expired tokens receive HTTP 401")
.help(
    "On a server that answers an unauthenticated `initialize` with 401, protocheck sends \
     `initialize` on a new connection with `Authorization: Bearer` and a made-up token \
     (`protocheck-invalid-` and random hex), and expects 401.",
    "The server serves the request (it checks only that a token is present), or answers 400, 403 \
     or 500, usually because the token validator's error is not mapped to 401.",
    "Validate every bearer token (signature, issuer, audience and expiry, or introspection) and \
     answer an invalid or expired one with `401 Unauthorized` and a Bearer `WWW-Authenticate` \
     challenge.",
)
.only_on(Transport::Http);

pub(crate) const INSUFFICIENT_SCOPE: Mcp25Rule = Mcp25Rule::new(
    "MCP25-AUT-007",
    "A token lacking scope gets 403 with `error=\"insufficient_scope\"` in `WWW-Authenticate`",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/authorization#runtime-insufficient-scope-errors"),
    "AUT",
    |s| insufficient_scope(s).boxed(),
)
.says(
    "a request whose token lacks the scope it needs should get 403 with an \
     `insufficient_scope` challenge",
)
.help(
    "With a limited token given with the run, protocheck sends `initialize`, then `tools/list`, a \
     `tools/call` of a tool it may call and `resources/list`, stopping at the first 401, or 403 \
     with a challenge; that refusal should be 403 with `error=\"insufficient_scope\"` in \
     `WWW-Authenticate`.",
    "The server refuses a valid token that lacks scope with 401, as if it were invalid, or with a \
     403 without a Bearer challenge, usually because scope checks reuse the authentication \
     failure path.",
    "Tell a missing scope apart from a bad token: answer `403 Forbidden` with `WWW-Authenticate: \
     Bearer error=\"insufficient_scope\", scope=\"…\"` naming the scope needed.",
)
.only_on(Transport::Http);

pub(crate) const QUERY_TOKEN: Mcp25Rule = Mcp25Rule::new(
    "MCP25-AUT-008",
    "A valid token sent only in the URI query string is not accepted",
    Keyword::MustNot,
    Outcome::Warn,
    spec!("/basic/authorization#token-requirements"),
    "AUT",
    |s| query_token(s).boxed(),
)
.says(
    "access tokens travel in the Authorization header, never in the query string (the sentence \
     binds the client; OAuth 2.1 resource servers do not take tokens from the query)",
)
.help(
    "With the run's valid bearer token, protocheck sends `initialize` on a new connection with \
     the token only in the `access_token` query parameter and no `Authorization` header; a 2xx \
     answer is a warning.",
    "The server's authentication middleware also reads tokens from the query string (an option \
     often enabled for WebSocket or browser links), which leaks them into logs and referrers.",
    "Accept access tokens only from the `Authorization: Bearer` header, and turn off query-string \
     token extraction in the authentication middleware.",
)
.only_on(Transport::Http);

pub(crate) const RULES: &[Mcp25Rule] = &[
    DISCOVERY,
    SERVERS,
    RESOURCE,
    AS_METADATA,
    CHALLENGE_SCOPE,
    INVALID_TOKEN,
    INSUFFICIENT_SCOPE,
    QUERY_TOKEN,
];

/// `initialize` on a new connection that sends `credentials`; the
/// connection is closed again.
async fn initialize_as(s: &Session, credentials: Credentials) -> Result<Reply, Judgement> {
    let conn = s
        .client
        .connect_as(credentials)
        .await
        .map_err(|e| Judgement::skip(format!("not verified: a new connection failed: {e}")))?;
    let reply = conn
        .initialize_unlogged(super::client::PROTOCOL_VERSION)
        .await;
    conn.close().await;
    Ok(reply)
}

/// A response header of `reply` (names are kept lower-case).
fn header<'a>(reply: &'a Reply, name: &str) -> Option<&'a str> {
    reply
        .exchange
        .response
        .as_ref()?
        .headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// The unauthenticated `initialize` answered with 401, or the skip of a
/// server that does not ask for authorization.
async fn challenge(s: &Session) -> Result<(Reply, Option<Challenge>), Judgement> {
    let reply = initialize_as(s, Credentials::Nothing).await?;
    match reply.status {
        Some(401) => {
            let challenge = header(&reply, "www-authenticate").and_then(parse_bearer_challenge);
            Ok((reply, challenge))
        }
        Some(code) => Err(Judgement::skip(format!(
            "not applicable: an unauthenticated `initialize` got HTTP {code}, not 401 (judged \
             as a server that does not require authorization)"
        ))
        .reply(&reply)),
        None => Err(Judgement::skip(format!(
            "not verified: the unauthenticated `initialize` was answered {}",
            reply.describe()
        ))
        .reply(&reply)),
    }
}

/// GETs a public discovery document (no token), within the bounds.
async fn fetch_json(s: &Session, url: &Url) -> (Exchange, Result<Value, String>) {
    let req = HttpRequest::get(url.clone())
        .header("accept", "application/json")
        .timeout(FETCH_TIMEOUT);
    let (exchange, result) = s.client.http().exchange(&req).await;
    let value = match result {
        Err(e) => Err(format!("no answer ({e})")),
        Ok(resp) if resp.status != 200 => Err(format!("HTTP {}", resp.status)),
        Ok(resp) if resp.body.len() > MAX_DOCUMENT => {
            Err(format!("a document over {} KiB", MAX_DOCUMENT / 1024))
        }
        Ok(resp) => match resp.json() {
            Some(v @ Value::Object(_)) => Ok(v),
            _ => Err("HTTP 200 without a JSON object".to_owned()),
        },
    };
    (exchange, value)
}

/// Where the metadata was found, and how the discovery went.
struct Found {
    doc: Value,
    url: Url,
    /// Found through the challenge's `resource_metadata`.
    via_challenge: bool,
    /// What failed before it was found.
    notes: Vec<String>,
    exchanges: Vec<Exchange>,
    challenge: Reply,
    /// The 401 carried a Bearer challenge (RFC 6750): it speaks OAuth.
    bearer: bool,
}

/// The discovery a client makes: the challenge's `resource_metadata`,
/// then the well-known URIs.
async fn discover(s: &Session) -> Result<Result<Found, (String, Found)>, Judgement> {
    let (reply, challenge) = challenge(s).await?;
    let Some(endpoint) = s.client.url().cloned() else {
        return Err(Judgement::skip("not applicable: not an HTTP target"));
    };
    let mut found = Found {
        doc: Value::Null,
        url: endpoint.clone(),
        via_challenge: false,
        notes: Vec::new(),
        exchanges: Vec::new(),
        challenge: reply,
        bearer: false,
    };
    let named = challenge.as_ref().and_then(|c| c.get("resource_metadata"));
    found.bearer = challenge.is_some();
    let mut named_broken = false;
    if let Some(named) = named {
        match Url::parse(named) {
            Ok(url) => {
                let (exchange, doc) = fetch_json(s, &url).await;
                found.exchanges.push(exchange);
                match doc {
                    Ok(doc) => {
                        found.doc = doc;
                        found.url = url;
                        found.via_challenge = true;
                        return Ok(Ok(found));
                    }
                    Err(e) => {
                        named_broken = true;
                        found
                            .notes
                            .push(format!("`resource_metadata` <{url}> gave {e}"));
                    }
                }
            }
            Err(e) => {
                named_broken = true;
                found.notes.push(format!(
                    "`resource_metadata` {:?} is not a URL ({e})",
                    clip(named, 120)
                ));
            }
        }
    } else {
        found.notes.push(if challenge.is_some() {
            "the Bearer challenge names no `resource_metadata`".to_owned()
        } else {
            "the 401 has no Bearer `WWW-Authenticate` challenge".to_owned()
        });
    }
    for url in prm_well_known(&endpoint) {
        let (exchange, doc) = fetch_json(s, &url).await;
        found.exchanges.push(exchange);
        match doc {
            Ok(doc) => {
                found.doc = doc;
                found.url = url;
                if named_broken {
                    let why = format!(
                        "the metadata is served at <{}>, but {}; clients try the challenge's \
                         URL first",
                        found.url,
                        found.notes.join("; ")
                    );
                    return Ok(Err((why, found)));
                }
                return Ok(Ok(found));
            }
            Err(e) => found.notes.push(format!("<{url}> gave {e}")),
        }
    }
    let why = format!(
        "no route to the protected resource metadata: {}",
        found.notes.join("; ")
    );
    Ok(Err((why, found)))
}

fn with_found(mut j: Judgement, found: &Found) -> Judgement {
    j = j.reply(&found.challenge);
    for exchange in &found.exchanges {
        j = j.with(exchange);
    }
    j
}

/// The metadata found by MCP25-AUT-001's discovery, or the skip.
async fn metadata(s: &Session) -> Result<Found, Judgement> {
    match discover(s).await? {
        Ok(found) => Ok(found),
        Err((_, found)) if !found.doc.is_null() => Ok(found),
        Err((why, _)) => Err(Judgement::skip(format!(
            "not verified: {DISCOVERY_ID} found no metadata ({})",
            clip(&why, 300)
        ))),
    }
}

async fn discovery(s: &Session) -> Judgement {
    match discover(s).await {
        Err(skip) => skip,
        Ok(Ok(found)) if found.via_challenge => with_found(
            Judgement::pass(format!(
                "the 401 challenge names `resource_metadata` <{}>, which serves a JSON document",
                found.url
            )),
            &found,
        ),
        Ok(Ok(found)) => with_found(
            Judgement::info(format!(
                "the metadata is served at the well-known URI <{}> ({}); that route alone is \
                 allowed, though `resource_metadata` in the challenge spares clients the probing",
                found.url,
                found.notes.join("; ")
            )),
            &found,
        ),
        // No Bearer challenge and no metadata anywhere: the server uses a
        // credential scheme of its own. "Authorization is OPTIONAL for MCP
        // implementations", and one over HTTP only "SHOULD conform to this
        // specification" (basic/authorization, "Introduction"): a warning.
        // A Bearer challenge speaks OAuth, and is held to it.
        Ok(Err((why, found))) if found.doc.is_null() && !found.bearer => with_found(
            Judgement::warn(format!(
                "{why}: the server seems to use a credential scheme of its own, not MCP's \
                 OAuth-based authorization. A warning, not a failure: authorization is \
                 OPTIONAL, and an implementation over HTTP SHOULD conform to it"
            )),
            &found,
        ),
        Ok(Err((why, found))) => with_found(Judgement::fail(why), &found),
    }
}

/// The listed authorization servers that are URLs.
fn listed_servers(doc: &Value) -> Result<Vec<Url>, String> {
    let Some(list) = doc.get("authorization_servers") else {
        return Err("has no `authorization_servers`".to_owned());
    };
    let Some(items) = list.as_array() else {
        return Err(format!(
            "has `authorization_servers` {}, not an array",
            clip(&list.to_string(), 80)
        ));
    };
    let urls: Vec<Url> = items
        .iter()
        .filter_map(Value::as_str)
        .filter_map(|u| Url::parse(u).ok())
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .collect();
    if urls.is_empty() {
        return Err(format!(
            "lists no authorization server URL (`authorization_servers`: {})",
            clip(&list.to_string(), 120)
        ));
    }
    Ok(urls)
}

async fn servers(s: &Session) -> Judgement {
    let found = match metadata(s).await {
        Ok(found) => found,
        Err(skip) => return skip,
    };
    let j = match listed_servers(&found.doc) {
        Ok(urls) => Judgement::pass(format!(
            "the metadata at <{}> lists {} authorization server(s): {}",
            found.url,
            urls.len(),
            urls.iter().map(Url::as_str).collect::<Vec<_>>().join(", ")
        )),
        Err(what) => Judgement::fail(format!("the metadata at <{}> {what}", found.url)),
    };
    with_found(j, &found)
}

/// `url` with scheme and host in lower case and no trailing slash.
fn normalised(url: &str) -> String {
    match Url::parse(url) {
        Ok(u) => u.as_str().trim_end_matches('/').to_owned(),
        Err(_) => url.trim_end_matches('/').to_owned(),
    }
}

async fn resource(s: &Session) -> Judgement {
    let found = match metadata(s).await {
        Ok(found) => found,
        Err(skip) => return skip,
    };
    let Some(endpoint) = s.client.url() else {
        return Judgement::skip("not applicable: not an HTTP target");
    };
    let mut endpoint = endpoint.clone();
    endpoint.set_fragment(None);
    let j = match found.doc.get("resource").and_then(Value::as_str) {
        None => Judgement::fail(format!(
            "the metadata at <{}> has no string `resource`",
            found.url
        )),
        Some(r) if r == endpoint.as_str() => {
            Judgement::pass(format!("the metadata's `resource` is the endpoint <{r}>"))
        }
        Some(r) if normalised(r) == normalised(endpoint.as_str()) => Judgement::pass(format!(
            "the metadata's `resource` <{r}> is the endpoint <{endpoint}> once scheme and host \
             case and a trailing slash are set aside (both forms accepted)"
        )),
        Some(r) => Judgement::fail(format!(
            "the metadata at <{}> names `resource` <{}>, not the endpoint it protects <{endpoint}>",
            found.url,
            clip(r, 200)
        )),
    };
    with_found(j, &found)
}

async fn as_metadata(s: &Session) -> Judgement {
    let found = match metadata(s).await {
        Ok(found) => found,
        Err(skip) => return skip,
    };
    let issuers = match listed_servers(&found.doc) {
        Ok(urls) => urls,
        Err(what) => return Judgement::skip(format!("not verified: the metadata {what}")),
    };
    // The issuers are independent: fetched side by side, at most
    // MAX_ISSUERS of them.
    let checks = futures::future::join_all(
        issuers
            .iter()
            .take(MAX_ISSUERS)
            .map(|issuer| issuer_pkce(s, issuer)),
    )
    .await;
    let mut bad = Vec::new();
    let mut good = Vec::new();
    let mut exchanges = Vec::new();
    for (verdict, fetched) in checks {
        exchanges.extend(fetched);
        match verdict {
            Ok(g) => good.push(g),
            Err(b) => bad.push(b),
        }
    }
    let stopped = if issuers.len() > MAX_ISSUERS {
        format!(
            " (protocheck fetches at most {MAX_ISSUERS} authorization servers; the metadata \
             lists {}, the ones after <{}> were not fetched)",
            issuers.len(),
            issuers[MAX_ISSUERS - 1]
        )
    } else {
        String::new()
    };
    let j = if bad.is_empty() {
        Judgement::pass(format!(
            "every authorization server publishes metadata advertising S256 PKCE: {}{stopped}",
            good.join(", ")
        ))
    } else {
        Judgement::fail(format!("{}{stopped}", bad.join("; ")))
    };
    exchanges.iter().fold(j, |j, e| j.with(e))
}

/// How many listed authorization servers MCP25-AUT-004 fetches.
const MAX_ISSUERS: usize = 10;

/// One authorization server's discovery metadata, fetched at the well-known
/// URLs in the spec's order: `Ok` naming it when it advertises S256, `Err`
/// saying what is wrong; with the exchanges made.
async fn issuer_pkce(s: &Session, issuer: &Url) -> (Result<String, String>, Vec<Exchange>) {
    let mut tried = Vec::new();
    let mut exchanges = Vec::new();
    let mut doc = None;
    for url in metadata_urls(issuer) {
        let (exchange, got) = fetch_json(s, &url).await;
        exchanges.push(exchange);
        match got {
            Ok(d) => {
                doc = Some((url, d));
                break;
            }
            Err(e) => tried.push(format!("<{url}> gave {e}")),
        }
    }
    let Some((url, doc)) = doc else {
        return (
            Err(format!(
                "authorization server <{issuer}> publishes no RFC 8414 or OpenID Connect \
                 metadata ({})",
                tried.join("; ")
            )),
            exchanges,
        );
    };
    let methods = doc.get("code_challenge_methods_supported");
    let s256 = methods
        .and_then(Value::as_array)
        .is_some_and(|m| m.iter().any(|v| v.as_str() == Some("S256")));
    let verdict = if s256 {
        Ok(format!("<{issuer}> (metadata at <{url}>)"))
    } else {
        Err(format!(
            "the metadata of <{issuer}> at <{url}> has `code_challenge_methods_supported` {}, \
             without S256: clients must refuse it",
            methods.map_or("absent".to_owned(), |m| clip(&m.to_string(), 80))
        ))
    };
    (verdict, exchanges)
}

async fn challenge_scope(s: &Session) -> Judgement {
    let (reply, challenge) = match challenge(s).await {
        Ok(got) => got,
        Err(skip) => return skip,
    };
    match challenge.as_ref().and_then(|c| c.get("scope")) {
        Some(scope) if !scope.trim().is_empty() => Judgement::pass(format!(
            "the 401 challenge names scope {:?}",
            clip(scope, 120)
        )),
        _ if challenge.is_none() => {
            Judgement::fail("the 401 carries no Bearer `WWW-Authenticate` challenge, so no scope")
        }
        _ => Judgement::fail(
            "the 401 Bearer challenge has no `scope` parameter; clients must guess the scopes \
             from `scopes_supported`",
        ),
    }
    .reply(&reply)
}

async fn invalid_token(s: &Session) -> Judgement {
    if let Err(skip) = challenge(s).await {
        return skip;
    }
    let token = format!("protocheck-invalid-{:016x}", rand::random::<u64>());
    let reply = match initialize_as(s, Credentials::Bearer(token)).await {
        Ok(reply) => reply,
        Err(skip) => return skip,
    };
    // A server whose 401 has no Bearer challenge and which publishes no
    // protected resource metadata uses a credential scheme of its own (see
    // MCP25-AUT-001): the authorization page is OPTIONAL for it ("SHOULD
    // conform"), so its token handling warns rather than fails.
    let own_scheme = reply.status != Some(401)
        && matches!(
            discover(s).await,
            Ok(Err((_, ref found))) if found.doc.is_null() && !found.bearer
        );
    match reply.status {
        Some(401) => Judgement::pass("`initialize` with an invalid bearer token got 401"),
        Some(code) if own_scheme => Judgement::warn(format!(
            "`initialize` with an invalid bearer token got HTTP {code}, not 401{}. The server \
             seems to use a credential scheme of its own (its 401 has no Bearer challenge and \
             no protected resource metadata is served): a warning, not a failure, since \
             authorization is OPTIONAL and an implementation over HTTP SHOULD conform to it",
            if reply.result().is_some() {
                " (it was served)"
            } else {
                ""
            }
        )),
        Some(code) => Judgement::fail(format!(
            "`initialize` with an invalid bearer token got HTTP {code}, not 401{}",
            if reply.result().is_some() {
                " (it was served)"
            } else {
                ""
            }
        )),
        None => Judgement::fail(format!(
            "`initialize` with an invalid bearer token was answered {}",
            reply.describe()
        )),
    }
    .reply(&reply)
}

/// Whether `reply` is a refusal about the token: 401, or 403 with a challenge.
fn refused(reply: &Reply) -> bool {
    reply.status == Some(401)
        || (reply.status == Some(403) && header(reply, "www-authenticate").is_some())
}

async fn insufficient_scope(s: &Session) -> Judgement {
    if let Err(skip) = challenge(s).await {
        return skip;
    }
    let Some(token) = &s.limited_token else {
        return Judgement::skip(
            "not applicable: needs a token with less scope than the run's, given with the run \
             (`protocheck check --limited-token`)",
        );
    };
    let conn = match s
        .client
        .connect_as(Credentials::Bearer(token.expose().to_owned()))
        .await
    {
        Ok(conn) => conn,
        Err(e) => return Judgement::skip(format!("not verified: a new connection failed: {e}")),
    };
    // Requests in growing need of scope, up to the first refusal: the
    // session, then reading lists, then a tool protocheck may call.
    let mut sent: Vec<Reply> = Vec::new();
    let init = conn
        .initialize_unlogged(super::client::PROTOCOL_VERSION)
        .await;
    let mut refusal = refused(&init).then(|| init.clone());
    sent.push(init);
    if refusal.is_none() && sent[0].result().is_some() {
        conn.initialized().await;
        let tool = s
            .list_tools()
            .await
            .ok()
            .and_then(|(tools, _)| tools.into_iter().find(|t| s.may_call(t) && !needs_task(t)));
        let mut probes = vec![("tools/list", json!({}))];
        if let Some(tool) = tool {
            probes.push((
                "tools/call",
                json!({"name": tool.get("name").cloned().unwrap_or(Value::Null), "arguments": {}}),
            ));
        }
        probes.push(("resources/list", json!({})));
        for (method, params) in probes {
            // A tool the limited token may call works within the tool
            // budget, as every tool call of the run (MCP25-TOL-010).
            let reply = if method == "tools/call" {
                conn.request_unlogged_within(method, params, s.client.tool_budget())
                    .await
            } else {
                conn.request_unlogged(method, params).await
            };
            let stop = refused(&reply);
            sent.push(reply);
            if stop {
                refusal = sent.last().cloned();
                break;
            }
        }
    }
    conn.close().await;
    let Some(refusal) = refusal else {
        let methods: Vec<&str> = sent.iter().map(|r| r.method.as_str()).collect();
        return Judgement::skip(format!(
            "not applicable: the limited token was accepted for every request tried ({})",
            methods.join(", ")
        ));
    };
    let challenge = header(&refusal, "www-authenticate").and_then(parse_bearer_challenge);
    let error = challenge.as_ref().and_then(|c| c.get("error"));
    let what = format!("`{}` with the limited token", refusal.method);
    match (refusal.status, error) {
        (Some(403), Some("insufficient_scope")) => Judgement::pass(format!(
            "{what} got 403 with error=\"insufficient_scope\"{}",
            challenge
                .as_ref()
                .and_then(|c| c.get("scope"))
                .map(|sc| format!(" and scope {:?}", clip(sc, 80)))
                .unwrap_or_default()
        )),
        (status, error) => Judgement::fail(format!(
            "{what} got HTTP {} with {}; a token that is valid but lacks scope should get 403 \
             with error=\"insufficient_scope\"",
            status.map_or("(none)".to_owned(), |c| c.to_string()),
            error.map_or("no Bearer error".to_owned(), |e| format!(
                "error={:?}",
                clip(e, 40)
            ))
        )),
    }
    .reply(&refusal)
}

async fn query_token(s: &Session) -> Judgement {
    if let Err(skip) = challenge(s).await {
        return skip;
    }
    let Some(token) = s.client.bearer() else {
        return Judgement::skip("not applicable: needs a valid bearer token given with the run");
    };
    let reply = match initialize_as(s, Credentials::Query(token)).await {
        Ok(reply) => reply,
        Err(skip) => return skip,
    };
    match reply.status {
        Some(code) if (200..300).contains(&code) => Judgement::fail(format!(
            "`initialize` with the run's valid token only in the `access_token` query parameter \
             got HTTP {code}{}: the token was taken from the URI",
            if reply.result().is_some() {
                " and a result"
            } else {
                ""
            }
        )),
        Some(code) => Judgement::pass(format!(
            "`initialize` with the token only in the query string got HTTP {code}: not accepted"
        )),
        None => Judgement::skip(format!(
            "not verified: `initialize` with the token in the query string was answered {}",
            reply.describe()
        )),
    }
    .reply(&reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_uris_path_first() {
        let url = Url::parse("https://example.com/api/mcp").expect("url");
        let got: Vec<String> = prm_well_known(&url).iter().map(Url::to_string).collect();
        assert_eq!(
            got,
            [
                "https://example.com/.well-known/oauth-protected-resource/api/mcp",
                "https://example.com/.well-known/oauth-protected-resource"
            ]
        );
    }

    #[test]
    fn resources_match_across_case_and_slash() {
        assert_eq!(
            normalised("HTTPS://Example.COM/mcp/"),
            normalised("https://example.com/mcp")
        );
        assert_ne!(
            normalised("https://example.com/other"),
            normalised("https://example.com/mcp")
        );
    }

    #[test]
    fn listed_servers_need_a_url() {
        assert!(listed_servers(&json!({"authorization_servers": []})).is_err());
        assert!(listed_servers(&json!({"authorization_servers": ["not a url"]})).is_err());
        assert_eq!(
            listed_servers(&json!({"authorization_servers": ["https://as.example"]}))
                .map(|v| v.len()),
            Ok(1)
        );
    }
}
