//! AUT — authorization (basic/authorization, authorization-server-discovery,
//! client-registration, security-considerations).
//!
//! Authorization is optional in MCP, and normative when a server uses it
//! (`mcp-2026-07-28.md` §15.9): every AUT rule is skipped with that reason when
//! none of the family probes sent without a token is answered with 401. The probes of
//! this file go around the client's log and never carry the run's token: they
//! are unauthenticated, fetch public discovery documents, or carry a token made
//! up for the purpose.

use super::aut_survey::{self, Asked, AuthServer, AuthSurvey, parse_bearer_challenge};
use super::client::{clip, some};
use super::rule::{Keyword, McpRule, spec};
use super::session::{Judgement, Session};
use super::wire;
use crate::suite::Outcome;
use futures::FutureExt;
use serde_json::{Value, json};
use url::Url;

pub(crate) const CHALLENGE: McpRule = McpRule::new(
    "MCP-AUT-001",
    "Unauthenticated request returns 401 with WWW-Authenticate resource_metadata",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/authorization/authorization-server-discovery"),
    "AUT",
    |s| challenge(s).boxed(),
)
.says("an unauthenticated request MUST be answered 401, with WWW-Authenticate naming resource_metadata or a well-known PRM document")
.help(
    "protocheck sends every method the server serves without credentials, and again with a \
     made-up token; every AUT rule is skipped unless one of them gets HTTP 401. Every 401 must \
     carry a `WWW-Authenticate` Bearer challenge naming `resource_metadata` (which must serve the \
     metadata), or else protected resource metadata must be found at the well-known URIs; the \
     made-up token must get 401 too.",
    "The 401 comes from a gateway or framework without a `WWW-Authenticate` header, with a \
     `Basic` challenge only, or with a Bearer challenge lacking `resource_metadata` while nothing \
     is served at `/.well-known/oauth-protected-resource`.",
    "Answer unauthenticated requests with 401 and `WWW-Authenticate: Bearer \
     resource_metadata=\"...\"` pointing at your protected resource metadata (a `scope` parameter \
     is recommended too), and serve that document.",
)
.requires(&[])
.http_only("HTTP authorization: 401 challenges, bearer tokens and OAuth metadata");

pub(crate) const PRM_SERVED: McpRule = McpRule::new(
    "MCP-AUT-002",
    "RFC 9728 Protected Resource Metadata is served and valid",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/authorization/authorization-server-discovery"),
    "AUT",
    |s| prm_served(s).boxed(),
)
.says("servers MUST serve RFC 9728 Protected Resource Metadata with at least one authorization_servers entry")
.help(
    "After the unauthenticated 401, protocheck GETs the protected resource metadata from the \
     challenge's `resource_metadata` URL, else from the path-inserted and then the root \
     `/.well-known/oauth-protected-resource` URI, and checks for a `resource` string and a \
     non-empty `authorization_servers` array of strings.",
    "The document is not served (404), lives at a path other than those tried, is not a JSON \
     object, or lacks `resource` or `authorization_servers`; this is common when only the \
     authorization server's metadata was set up.",
    "Serve RFC 9728 metadata at `/.well-known/oauth-protected-resource`, with the endpoint's path \
     appended when it has one, or point to it from the challenge; include `resource` and list \
     your issuer(s) in `authorization_servers`.",
)
.requires(&[])
.http_only("HTTP authorization: 401 challenges, bearer tokens and OAuth metadata");

pub(crate) const PRM_RESOURCE: McpRule = McpRule::new(
    "MCP-AUT-003",
    "PRM resource equals the canonical server URI",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/authorization#canonical-server-uri"),
    "AUT",
    |s| prm_resource(s).boxed(),
)
.says("the PRM resource MUST identify this server (its canonical URI)")
.help(
    "protocheck compares the metadata's `resource` with the endpoint URL it probes (query and \
     fragment dropped): same scheme, host, port and path, ignoring a trailing slash. A \
     same-origin URI whose path is a whole-segment prefix of the endpoint's path also passes.",
    "`resource` names another host or scheme (an internal host name, `http://` behind a \
     TLS-terminating proxy, a staging URL) or another path, usually copied from a development \
     configuration.",
    "Set `resource` to the public canonical URI clients use, such as \
     `https://mcp.example.com/mcp`, taken from configuration rather than built from the incoming \
     request behind a proxy.",
)
.requires(&[])
.http_only("HTTP authorization: 401 challenges, bearer tokens and OAuth metadata");

pub(crate) const AS_METADATA: McpRule = McpRule::new(
    "MCP-AUT-004",
    "Each listed authorization server exposes RFC 8414 or OIDC discovery metadata",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/authorization/authorization-server-discovery"),
    "AUT",
    |s| as_metadata(s).boxed(),
)
.says("each authorization server MUST publish RFC 8414 or OpenID Connect discovery metadata")
.help(
    "For each of the first 16 `authorization_servers` in the metadata, protocheck GETs the RFC \
     8414 and then the OpenID Connect discovery URLs built from the issuer, and checks that one \
     answers a JSON object whose `issuer` is identical to the issuer listed.",
    "The issuer publishes no discovery document at those URLs (often an issuer with a path whose \
     metadata lives elsewhere), or its `issuer` differs from the listed one by a trailing slash, \
     the scheme or the path.",
    "List each issuer in `authorization_servers` exactly as its metadata spells `issuer`, and \
     make sure `/.well-known/oauth-authorization-server` or `/.well-known/openid-configuration` \
     (path-inserted for an issuer with a path) serves it.",
)
.requires(&[])
.http_only("HTTP authorization: 401 challenges, bearer tokens and OAuth metadata");

pub(crate) const ISS_PARAMETER: McpRule = McpRule::new(
    "MCP-AUT-005",
    "AS advertises authorization_response_iss_parameter_supported: true",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/authorization#authorization-response-validation"),
    "AUT",
    |s| iss_parameter(s).boxed(),
)
.says("authorization servers SHOULD advertise authorization_response_iss_parameter_supported: true")
.help(
    "For each authorization server whose discovery metadata was found with a matching `issuer`, \
     protocheck checks that `authorization_response_iss_parameter_supported` is `true`.",
    "The authorization server does not support RFC 9207, or supports it without advertising the \
     flag; many providers leave it out of their metadata by default.",
    "Enable the `iss` parameter in authorization responses on the authorization server and \
     publish `authorization_response_iss_parameter_supported: true` in its metadata.",
)
.requires(&[])
.http_only("HTTP authorization: 401 challenges, bearer tokens and OAuth metadata");

pub(crate) const CHALLENGE_SCOPE: McpRule = McpRule::new(
    "MCP-AUT-006",
    "WWW-Authenticate includes a scope parameter",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/authorization#scope-selection-strategy"),
    "AUT",
    |s| challenge_scope(s).boxed(),
)
.says("WWW-Authenticate SHOULD carry a scope parameter naming the scopes needed")
.help(
    "protocheck reads the Bearer challenge in the `WWW-Authenticate` header of every 401 its \
     requests without credentials got (one per method the server serves), and checks that each \
     carries a non-empty `scope` parameter.",
    "The challenge names only `resource_metadata` (or an `error`), which is what much \
     authorization middleware emits by default; clients must then guess the scopes from \
     `scopes_supported`.",
    "Add `scope=\"...\"` to the `WWW-Authenticate` Bearer challenge, listing the scopes a token \
     needs for the refused request, so that clients ask for the right ones the first time.",
)
.requires(&[])
.http_only("HTTP authorization: 401 challenges, bearer tokens and OAuth metadata");

pub(crate) const INSUFFICIENT_SCOPE: McpRule = McpRule::new(
    "MCP-AUT-007",
    "Insufficient scope returns 403 with error=\"insufficient_scope\"",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/authorization#runtime-insufficient-scope-errors"),
    "AUT",
    |s| insufficient_scope(s).boxed(),
)
.says("a token lacking scope SHOULD be answered 403 with error=\"insufficient_scope\"")
.help(
    "With a limited token given for the run (`--limited-token`), protocheck sends every method \
     the server serves with it; with a bearer token, it reads the answers to the run's requests \
     that carried it. When a token was accepted on some and refused on others (401, or 403 with \
     `WWW-Authenticate`), each refusal must be 403 with `error=\"insufficient_scope\"`, the \
     `scope` needed and `resource_metadata` in the Bearer challenge.",
    "The server answers a token that lacks a scope with 401, which tells the client to sign in \
     again, or with 403 without `error=\"insufficient_scope\"`. Skipped without a token, or when \
     the token is never refused.",
    "When a valid token lacks the scope a method needs, answer 403 with `WWW-Authenticate: Bearer \
     error=\"insufficient_scope\", scope=\"...\"` naming the scopes needed, so the client can \
     step up; keep 401 for missing or invalid tokens.",
)
.requires(&[])
.run_wide()
.http_only("HTTP authorization: 401 challenges, bearer tokens and OAuth metadata");

pub(crate) const AUDIENCE: McpRule = McpRule::new(
    "MCP-AUT-008",
    "Tokens with a foreign audience are rejected",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/authorization#token-handling"),
    "AUT",
    |s| audience(s).boxed(),
)
.says("servers MUST reject tokens not issued for them (audience)")
.help(
    "protocheck sends the first request refused without credentials with a made-up JWT whose \
     `aud` is \
     `https://audience.protocheck.invalid/mcp`, naming the server's first issuer and its \
     advertised scopes, signed with a random key. Any 2xx answer fails; any refusal passes.",
    "The server only checks that a bearer token is present or well-formed, or decodes JWTs \
     without verifying the signature and the audience, so a token issued for any other resource \
     is accepted.",
    "Validate every token fully: the signature against the issuer's keys (or introspection), \
     expiry, issuer, and an audience equal to this server's canonical URI; refuse anything else \
     with 401.",
)
.requires(&[])
.http_only("HTTP authorization: 401 challenges, bearer tokens and OAuth metadata");

pub(crate) const NO_OFFLINE_ACCESS: McpRule = McpRule::new(
    "MCP-AUT-009",
    "offline_access absent from scopes_supported / challenge scope",
    Keyword::ShouldNot,
    Outcome::Info,
    spec!("/basic/authorization#refresh-tokens"),
    "AUT",
    |s| no_offline_access(s).boxed(),
)
.says("offline_access SHOULD NOT be requested or advertised by default")
.help(
    "protocheck looks for `offline_access` in the `scope` parameter of the Bearer challenge on \
     every 401 to its requests without credentials, and in `scopes_supported` of the protected \
     resource metadata.",
    "An info finding: the server asks for or advertises `offline_access`, usually because its \
     scope list was copied from the authorization server's supported scopes, so clients may \
     request refresh tokens by default.",
    "Leave `offline_access` out of the challenge's `scope` and of the resource metadata's \
     `scopes_supported`; whether refresh tokens are issued is for the client and the \
     authorization server to settle.",
)
.requires(&[])
.http_only("HTTP authorization: 401 challenges, bearer tokens and OAuth metadata");

pub(crate) const PKCE_S256: McpRule = McpRule::new(
    "MCP-AUT-010",
    "AS advertises S256 in code_challenge_methods_supported",
    Keyword::Must,
    Outcome::Fail,
    spec!("/basic/authorization/security-considerations"),
    "AUT",
    |s| pkce_s256(s).boxed(),
)
.says("authorization servers MUST support PKCE with S256")
.help(
    "For each authorization server whose discovery metadata was found with a matching `issuer`, \
     protocheck checks that `code_challenge_methods_supported` is present and contains `S256`.",
    "The metadata omits `code_challenge_methods_supported` even when the server supports PKCE, or \
     lists only `plain`; MCP clients refuse such an authorization server.",
    "Enable PKCE with S256 on the authorization server and publish \
     `code_challenge_methods_supported` containing `\"S256\"` in its metadata; `plain` alone is \
     not enough.",
)
.requires(&[])
.http_only("HTTP authorization: 401 challenges, bearer tokens and OAuth metadata");

pub(crate) const CIMD: McpRule = McpRule::new(
    "MCP-AUT-011",
    "AS supports Client ID Metadata Documents, not DCR alone",
    Keyword::Should,
    Outcome::Warn,
    spec!("/basic/authorization/client-registration#client-id-metadata-documents"),
    "AUT",
    |s| cimd(s).boxed(),
)
.says("authorization servers SHOULD support Client ID Metadata Documents; Dynamic Client Registration is deprecated")
.help(
    "For each authorization server whose discovery metadata was found with a matching `issuer`, \
     protocheck checks that `client_id_metadata_document_supported` is `true`, and says so when \
     only a `registration_endpoint` (Dynamic Client Registration) is offered.",
    "The authorization server relies on Dynamic Client Registration or pre-registered clients \
     alone, or supports Client ID Metadata Documents without advertising it in its metadata.",
    "Enable Client ID Metadata Document support on the authorization server, so clients can use \
     an HTTPS URL as their `client_id`, and publish `client_id_metadata_document_supported: \
     true`.",
)
.requires(&[])
.http_only("HTTP authorization: 401 challenges, bearer tokens and OAuth metadata");

pub(crate) const RULES: &[McpRule] = &[
    CHALLENGE,
    PRM_SERVED,
    PRM_RESOURCE,
    AS_METADATA,
    ISS_PARAMETER,
    CHALLENGE_SCOPE,
    INSUFFICIENT_SCOPE,
    AUDIENCE,
    NO_OFFLINE_ACCESS,
    PKCE_S256,
    CIMD,
];

/// The audience of the token MCP-AUT-008 makes up: a name no server owns.
const FOREIGN_AUDIENCE: &str = "https://audience.protocheck.invalid/mcp";

/// The survey, or the skip of a server that does not ask for authorization.
async fn survey(s: &Session) -> Result<AuthSurvey, Judgement> {
    let auth = s
        .auth
        .get_or_init(|| {
            aut_survey::take(
                &s.client,
                &s.url,
                &s.survey,
                s.options.limited_token.as_ref().map(|t| t.expose()),
            )
        })
        .await
        .clone();
    let statuses = || {
        auth.unauthenticated
            .iter()
            .map(|a| {
                format!(
                    "{} {}",
                    a.method,
                    a.status
                        .map_or_else(|| "no answer".to_owned(), |c| format!("HTTP {c}"))
                )
            })
            .collect::<Vec<_>>()
    };
    match auth.status {
        Some(401) => Ok(auth),
        Some(_) => Err(Judgement::skip(format!(
            "no request sent without a token got HTTP 401 ({}): judged as a server that does \
             not require authorization",
            some(&statuses(), 6, ", ")
        ))),
        None => Err(Judgement::skip(format!(
            "not verified: the requests sent without a token got no answer ({})",
            some(&statuses(), 6, ", ")
        ))),
    }
}

/// The methods of `asked`, joined.
fn methods<'a>(asked: impl IntoIterator<Item = &'a Asked>) -> String {
    let names: Vec<String> = asked
        .into_iter()
        .map(|a| format!("`{}`", a.method))
        .collect();
    some(&names, 4, ", ")
}

/// Whether the 401 is no OAuth challenge: no Bearer `WWW-Authenticate`
/// (RFC 6750) and no protected resource metadata at the well-known URIs.
/// Such a server uses a credential scheme of its own (an API key, a token
/// it issues itself), and "Authorization is OPTIONAL for MCP
/// implementations"; only "implementations using an HTTP-based transport
/// SHOULD conform to this specification" (basic/authorization). A Bearer
/// challenge speaks OAuth, and is judged as MCP's authorization.
fn own_scheme(auth: &AuthSurvey) -> bool {
    auth.prm.is_none() && auth.refused().all(|a| a.challenge.is_none())
}

/// The warning of MCP-AUT-001 and MCP-AUT-002 on a server of
/// [`own_scheme`].
fn own_scheme_warning(auth: &AuthSurvey) -> Judgement {
    let said = match &auth.www_authenticate {
        None => "the 401 carries no WWW-Authenticate header".to_owned(),
        Some(h) => format!(
            "the 401's WWW-Authenticate {:?} has no Bearer challenge",
            clip(h, 120)
        ),
    };
    Judgement::warn(format!(
        "{said} and no protected resource metadata is served ({}): the server seems to use a \
         credential scheme of its own. A warning, not a failure: authorization is OPTIONAL, and \
         an implementation over HTTP SHOULD conform to MCP's OAuth-based authorization",
        some(&auth.prm_tried, 2, "; ")
    ))
    .with(&auth.challenge_exchange)
}

async fn challenge(s: &Session) -> Judgement {
    let auth = match survey(s).await {
        Ok(a) => a,
        Err(skip) => return skip,
    };
    if own_scheme(&auth) {
        return own_scheme_warning(&auth);
    }
    let mut problems: Vec<String> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    let mut evidence: Vec<&crate::suite::Exchange> = Vec::new();
    let refused: Vec<&Asked> = auth.refused().collect();
    // Every 401 must carry the Bearer challenge (RFC 6750 §3).
    let bare: Vec<&Asked> = refused
        .iter()
        .copied()
        .filter(|a| a.www_authenticate.is_none())
        .collect();
    if !bare.is_empty() {
        problems.push(format!(
            "the 401 to {} carries no WWW-Authenticate header; every 401 MUST carry a Bearer \
             challenge (RFC 6750 §3)",
            methods(bare.iter().copied())
        ));
        evidence.extend(bare.iter().take(1).map(|a| &a.exchange));
    }
    let other: Vec<&Asked> = refused
        .iter()
        .copied()
        .filter(|a| a.www_authenticate.is_some() && a.challenge.is_none())
        .collect();
    if let Some(first) = other.first() {
        problems.push(format!(
            "the 401 to {} has no Bearer challenge (WWW-Authenticate {:?})",
            methods(other.iter().copied()),
            clip(first.www_authenticate.as_deref().unwrap_or_default(), 120)
        ));
        evidence.push(&first.exchange);
    }
    let unnamed: Vec<&Asked> = refused
        .iter()
        .copied()
        .filter(|a| {
            a.challenge
                .as_ref()
                .is_some_and(|c| c.get("resource_metadata").is_none())
        })
        .collect();
    if !unnamed.is_empty() && auth.prm.is_none() {
        problems.push(format!(
            "the Bearer challenge to {} has no resource_metadata and no metadata is at the \
             well-known URIs; a client cannot find the authorization server",
            methods(unnamed.iter().copied())
        ));
        evidence.extend(unnamed.iter().take(1).map(|a| &a.exchange));
    }
    for dead in &auth.dead_links {
        problems.push(format!(
            "the challenge's resource_metadata {} serves no metadata ({}); clients prefer it to \
             the well-known URIs",
            clip(&dead.url, 120),
            dead.why
        ));
        evidence.extend(dead.exchange.iter());
    }
    // The made-up token, on each method refused without a token.
    let mut no_error = Vec::new();
    for asked in &refused {
        let Some(bad) = auth.invalid.iter().find(|b| b.method == asked.method) else {
            continue;
        };
        match bad.status {
            None => {}
            Some(401) => match &bad.challenge {
                None => {
                    problems.push(format!(
                        "`{}` with an invalid bearer token got 401 without a Bearer challenge",
                        bad.method
                    ));
                    evidence.push(&bad.exchange);
                }
                Some(c) if c.get("error") != Some("invalid_token") => no_error.push(bad),
                Some(_) => {}
            },
            Some(code) => {
                problems.push(format!(
                    "`{}` with an invalid bearer token (opaque text no authorization server \
                     issued) got HTTP {code}; an invalid token MUST get 401",
                    bad.method
                ));
                evidence.push(&bad.exchange);
            }
        }
    }
    if let Some(first) = no_error.first() {
        warnings.push(format!(
            "the 401 to an invalid bearer token on {} names no error=\"invalid_token\" (RFC 6750 \
             §3.1: SHOULD)",
            methods(no_error.iter().copied())
        ));
        evidence.push(&first.exchange);
    }
    let open: Vec<&Asked> = auth
        .unauthenticated
        .iter()
        .filter(|a| a.status.is_some_and(|c| c != 401))
        .collect();
    let open_note = if open.is_empty() {
        String::new()
    } else {
        format!(
            "; {} answered without a token (read as methods the server leaves open)",
            methods(open.iter().copied())
        )
    };
    if !problems.is_empty() {
        let mut j = Judgement::fail(format!("{}{open_note}", some(&problems, 4, "; ")));
        for e in evidence.into_iter().take(3) {
            j = j.with(e);
        }
        return j;
    }
    let found = match refused.iter().find_map(|a| {
        a.challenge
            .as_ref()
            .and_then(|c| c.get("resource_metadata"))
    }) {
        Some(url) => format!("naming resource_metadata {}", clip(url, 120)),
        // The spec lets a server use the well-known URI instead of the header
        // (authorization "Authorization Server Location": "at least one of").
        None => match &auth.prm {
            Some(prm) => format!(
                "without resource_metadata; the metadata is at {} ({}), which the spec allows \
                 instead",
                prm.url, prm.via
            ),
            None => String::new(),
        },
    };
    let summary = format!(
        "401 with a Bearer challenge {found} to {} sent without a token, and 401 to an invalid \
         token{open_note}",
        methods(refused.iter().copied())
    );
    if warnings.is_empty() {
        return Judgement::pass(summary);
    }
    let mut j = Judgement::warn(format!("{summary}; but {}", warnings.join("; ")));
    for e in evidence.into_iter().take(2) {
        j = j.with(e);
    }
    j
}

async fn prm_served(s: &Session) -> Judgement {
    let auth = match survey(s).await {
        Ok(a) => a,
        Err(skip) => return skip,
    };
    if own_scheme(&auth) {
        return own_scheme_warning(&auth);
    }
    let Some(prm) = &auth.prm else {
        let mut j = Judgement::fail(format!(
            "no protected resource metadata was found: {}; RFC 9728 metadata MUST be served",
            some(&auth.prm_tried, 3, "; ")
        ));
        for e in auth.prm_exchanges.iter().take(3) {
            j = j.with(e);
        }
        return j;
    };
    let mut problems = Vec::new();
    if !prm.doc.get("resource").is_some_and(Value::is_string) {
        problems.push("has no `resource` string (RFC 9728 §2 requires it)".to_owned());
    }
    match prm
        .doc
        .get("authorization_servers")
        .and_then(Value::as_array)
    {
        Some(list) if !list.is_empty() && list.iter().all(Value::is_string) => {}
        Some(list) if !list.is_empty() => {
            problems.push("lists authorization_servers that are not all strings".into());
        }
        _ => problems.push("lists no authorization_servers (MCP requires at least one)".to_owned()),
    }
    problems.extend(member_problems(&prm.doc));
    let dead: Vec<String> = auth
        .dead_links
        .iter()
        .map(|d| {
            format!(
                "the challenge's resource_metadata {} serves none ({})",
                clip(&d.url, 120),
                d.why
            )
        })
        .collect();
    if problems.is_empty() && dead.is_empty() {
        return Judgement::pass(format!(
            "protected resource metadata found at {} through {}, its members of the types RFC \
             9728 §2 gives",
            prm.url, prm.via
        ));
    }
    let mut parts = Vec::new();
    if !problems.is_empty() {
        parts.push(format!(
            "the protected resource metadata at {} {}",
            prm.url,
            some(&problems, 4, "; ")
        ));
    }
    if !dead.is_empty() {
        parts.push(format!(
            "{}; the document was found at {} instead, but a client prefers the header's URL",
            some(&dead, 2, "; "),
            prm.url
        ));
    }
    let mut j = Judgement::fail(parts.join("; "));
    if !problems.is_empty() {
        j = j.with(&prm.exchange);
    }
    for d in auth.dead_links.iter().take(2) {
        if let Some(e) = &d.exchange {
            j = j.with(e);
        }
    }
    j
}

/// The members of an RFC 9728 §2 document (other than `resource` and
/// `authorization_servers`) whose value is not of the type the RFC gives.
/// Members it does not define are ignored, as RFC 9728 §2 says; a
/// human-readable member may carry a language tag (`resource_name#fr`,
/// RFC 9728 §2.1).
fn member_problems(doc: &Value) -> Vec<String> {
    let mut out = members_of(doc, true);
    out.truncate(8);
    out
}

/// The claims of a compact JWT, unverified.
fn jwt_claims(token: &str) -> Option<Value> {
    let payload = token.split('.').nth(1)?;
    let claims: Value = serde_json::from_slice(&wire::base64url_decode(payload)?).ok()?;
    claims.is_object().then_some(claims)
}

/// [`member_problems`] of one object; `outer` reads `signed_metadata`'s
/// claims too (RFC 9728 §2.2: a JWT whose claims are metadata members).
fn members_of(doc: &Value, outer: bool) -> Vec<String> {
    let mut out = Vec::new();
    let Some(members) = doc.as_object() else {
        return out;
    };
    let url = |v: &Value| v.as_str().is_some_and(|t| Url::parse(t).is_ok());
    for (name, value) in members {
        let (base, tagged) = match name.split_once('#') {
            Some((base, _)) => (base, true),
            None => (name.as_str(), false),
        };
        let shown = clip(name, 60);
        let problem = match base {
            "resource" if !tagged => match value.as_str().map(Url::parse) {
                Some(Ok(u)) if u.fragment().is_some() => {
                    Some(format!("`{shown}` has a fragment (RFC 9728 §2 forbids it)"))
                }
                Some(Err(_)) => Some(format!("`{shown}` is not a URL")),
                _ => None,
            },
            "scopes_supported"
            | "bearer_methods_supported"
            | "resource_signing_alg_values_supported"
            | "authorization_details_types_supported"
            | "dpop_signing_alg_values_supported"
                if !tagged =>
            {
                match value.as_array() {
                    Some(list) if list.iter().all(Value::is_string) => (base
                        == "resource_signing_alg_values_supported"
                        && list.iter().any(|v| v.as_str() == Some("none")))
                    .then(|| format!("`{shown}` lists \"none\", which MUST NOT be used")),
                    _ => Some(format!("`{shown}` is not a JSON array of strings")),
                }
            }
            "jwks_uri" if !tagged => {
                (!url(value)).then(|| format!("`{shown}` is not a URL string"))
            }
            "resource_documentation" | "resource_policy_uri" | "resource_tos_uri" => {
                (!url(value)).then(|| format!("`{shown}` is not a URL string"))
            }
            "resource_name" => (!value.is_string()).then(|| format!("`{shown}` is not a string")),
            "tls_client_certificate_bound_access_tokens" | "dpop_bound_access_tokens_required"
                if !tagged =>
            {
                (!value.is_boolean()).then(|| format!("`{shown}` is not a boolean"))
            }
            "signed_metadata" if !tagged && outer => match value.as_str().map(jwt_claims) {
                Some(Some(claims)) => {
                    if !claims.get("iss").is_some_and(Value::is_string) {
                        out.push(format!(
                            "`{shown}` has no `iss` claim (RFC 9728 §2.2 requires it)"
                        ));
                    }
                    out.extend(
                        members_of(&claims, false)
                            .into_iter()
                            .map(|p| format!("in `signed_metadata`, {p}")),
                    );
                    None
                }
                Some(None) => Some(format!(
                    "`{shown}` is not a JWT whose claims are a JSON object"
                )),
                None => Some(format!("`{shown}` is not a string (a JWT)")),
            },
            _ => None,
        };
        out.extend(problem);
    }
    out
}

/// Whether `resource` names `endpoint`: same scheme, host, port and path,
/// ignoring a trailing slash (the canonical URI prefers none).
fn same_resource(resource: &str, endpoint: &Url) -> bool {
    let Ok(r) = Url::parse(resource) else {
        return false;
    };
    r.scheme() == endpoint.scheme()
        && r.host_str() == endpoint.host_str()
        && r.port_or_known_default() == endpoint.port_or_known_default()
        && r.path().trim_end_matches('/') == endpoint.path().trim_end_matches('/')
        && r.fragment().is_none()
}

/// Whether `resource` is the same origin as `endpoint` with a path that is a
/// whole-segment prefix of the endpoint's.
fn less_specific(resource: &str, endpoint: &Url) -> bool {
    let Ok(r) = Url::parse(resource) else {
        return false;
    };
    let prefix = r.path().trim_end_matches('/');
    let path = endpoint.path();
    r.scheme() == endpoint.scheme()
        && r.host_str() == endpoint.host_str()
        && r.port_or_known_default() == endpoint.port_or_known_default()
        && r.query().is_none()
        && r.fragment().is_none()
        && path.starts_with(prefix)
        && path[prefix.len()..].starts_with('/')
}

async fn prm_resource(s: &Session) -> Judgement {
    let auth = match survey(s).await {
        Ok(a) => a,
        Err(skip) => return skip,
    };
    let Some(prm) = &auth.prm else {
        return Judgement::skip("not verified: MCP-AUT-002 found no protected resource metadata");
    };
    let Some(resource) = prm.doc.get("resource").and_then(Value::as_str) else {
        return Judgement::skip("not verified: MCP-AUT-002 found no `resource` in the metadata");
    };
    let mut canonical = s.url.clone();
    canonical.set_query(None);
    canonical.set_fragment(None);
    if same_resource(resource, &canonical) {
        Judgement::pass(format!("resource {resource} is the server's canonical URI"))
    } else if less_specific(resource, &canonical) {
        // The spec lists `https://mcp.example.com` as a valid canonical URI for
        // a server under it (authorization "Canonical Server URI").
        Judgement::pass(format!(
            "resource {resource} is a less specific canonical URI of this server ({}), which \
             the spec allows",
            canonical.as_str().trim_end_matches('/')
        ))
    } else {
        Judgement::fail(format!(
            "resource {:?} is not the canonical URI of this server ({}); clients bind tokens to \
             it (RFC 8707), so tokens would be issued for another resource",
            clip(resource, 120),
            canonical.as_str().trim_end_matches('/')
        ))
        .with(&prm.exchange)
    }
}

/// The authorization servers whose metadata was found, or the skip.
fn found_servers(auth: &AuthSurvey) -> Result<Vec<(&AuthServer, &str, &Value)>, Judgement> {
    if auth.servers.is_empty() {
        return Err(Judgement::skip(
            "not verified: MCP-AUT-002 found no authorization server listed",
        ));
    }
    let found: Vec<_> = auth
        .servers
        .iter()
        .filter_map(|a| {
            let (url, doc) = a.metadata.as_ref()?;
            (doc.get("issuer").and_then(Value::as_str) == Some(a.issuer.as_str())).then_some((
                a,
                url.as_str(),
                doc,
            ))
        })
        .collect();
    if found.is_empty() {
        return Err(Judgement::skip(
            "not verified: MCP-AUT-004 found no usable authorization server metadata",
        ));
    }
    Ok(found)
}

async fn as_metadata(s: &Session) -> Judgement {
    let auth = match survey(s).await {
        Ok(a) => a,
        Err(skip) => return skip,
    };
    if auth.servers.is_empty() {
        return Judgement::skip("not verified: MCP-AUT-002 found no authorization server listed");
    }
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    let mut evidence = Vec::new();
    for server in &auth.servers {
        match (&server.metadata, &server.wrong_issuer) {
            (None, None) => {
                problems.push(format!(
                    "{}: no metadata ({})",
                    clip(&server.issuer, 80),
                    some(&server.tried, 3, "; ")
                ));
                evidence.extend(server.exchanges.iter().take(1));
            }
            (None, Some((url, doc))) => {
                let issuer = doc.get("issuer").and_then(Value::as_str);
                // Exact comparison, no normalisation (RFC 8414 §3.3).
                problems.push(format!(
                    "{} names issuer {} at {url}, and no later discovery URL serves one naming \
                     it ({}); it MUST be identical to the issuer the URL was built from, or \
                     clients MUST NOT use it",
                    clip(&server.issuer, 80),
                    issuer.map_or_else(|| "none".to_owned(), |i| format!("{:?}", clip(i, 80))),
                    some(&server.tried, 3, "; ")
                ));
                evidence.extend(server.exchanges.last());
            }
            (Some((url, _)), Some((wrong, _))) => notes.push(format!(
                "{}: {wrong} names another issuer, which a client skips; {url} names it",
                clip(&server.issuer, 80)
            )),
            (Some(_), None) => {}
        }
    }
    let left = if auth.servers_left > 0 {
        format!(
            "; {} more listed authorization server(s) were not probed (protocheck stops after \
             the first {}: the spec gives no number)",
            auth.servers_left,
            aut_survey::MAX_AUTH_SERVERS
        )
    } else {
        String::new()
    };
    let noted = if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", some(&notes, 2, "; "))
    };
    if problems.is_empty() {
        return Judgement::pass(format!(
            "{} authorization server(s) serve discovery metadata with a matching issuer{noted}{left}",
            auth.servers.len()
        ));
    }
    let mut j = Judgement::fail(format!("{}{left}", some(&problems, 3, "; ")));
    for e in evidence.into_iter().take(3) {
        j = j.with(e);
    }
    j
}

/// Judges one metadata field on every authorization server found.
fn judge_metadata(
    auth: &AuthSurvey,
    problem: impl Fn(&Value) -> Option<String>,
    pass: &str,
    advice: &str,
) -> Judgement {
    let found = match found_servers(auth) {
        Ok(f) => f,
        Err(skip) => return skip,
    };
    let mut problems = Vec::new();
    let mut evidence = Vec::new();
    for (server, url, doc) in &found {
        if let Some(p) = problem(doc) {
            problems.push(format!("{} ({url}) {p}", clip(&server.issuer, 80)));
            evidence.extend(server.exchanges.last());
        }
    }
    if problems.is_empty() {
        return Judgement::pass(format!("{} authorization server(s) {pass}", found.len()));
    }
    let mut j = Judgement::fail(format!("{}; {advice}", some(&problems, 3, "; ")));
    for e in evidence.into_iter().take(3) {
        j = j.with(e);
    }
    j
}

async fn iss_parameter(s: &Session) -> Judgement {
    let auth = match survey(s).await {
        Ok(a) => a,
        Err(skip) => return skip,
    };
    judge_metadata(
        &auth,
        |doc| {
            (doc.get("authorization_response_iss_parameter_supported") != Some(&Value::Bool(true)))
                .then(|| {
                    "does not advertise authorization_response_iss_parameter_supported: true".into()
                })
        },
        "advertise the iss parameter (RFC 9207)",
        "an authorization server SHOULD send iss in authorization responses and say so, which \
         protects clients against mix-up attacks",
    )
}

async fn challenge_scope(s: &Session) -> Judgement {
    let auth = match survey(s).await {
        Ok(a) => a,
        Err(skip) => return skip,
    };
    let challenged: Vec<&Asked> = auth.refused().filter(|a| a.challenge.is_some()).collect();
    if challenged.is_empty() {
        return Judgement::skip("not verified: MCP-AUT-001 found no Bearer challenge");
    }
    let scope_of = |a: &Asked| {
        a.challenge
            .as_ref()
            .and_then(|c| c.get("scope"))
            .filter(|s| !s.trim().is_empty())
            .map(str::to_owned)
    };
    let without: Vec<&Asked> = challenged
        .iter()
        .copied()
        .filter(|a| scope_of(a).is_none())
        .collect();
    if without.is_empty() {
        let scopes: Vec<String> = challenged
            .iter()
            .filter_map(|a| scope_of(a).map(|s| format!("`{}` {:?}", a.method, clip(&s, 60))))
            .collect();
        return Judgement::pass(format!(
            "the challenge to each of {} requests names a scope: {}",
            challenged.len(),
            some(&scopes, 4, ", ")
        ));
    }
    let mut j = Judgement::fail(format!(
        "the Bearer challenge to {} names no scope; it SHOULD say which scopes a token needs \
         (RFC 6750 §3), or clients must guess from scopes_supported",
        methods(without.iter().copied())
    ));
    for a in without.iter().take(2) {
        j = j.with(&a.exchange);
    }
    j
}

/// What is wrong with a refusal of a token that the server accepts
/// elsewhere: anything but 403 with a Bearer challenge naming
/// `error="insufficient_scope"`, the `scope` needed and `resource_metadata`
/// (authorization, "Runtime Insufficient Scope Errors").
fn scope_refusal_problem(
    method: &str,
    status: Option<u16>,
    headers: &[(String, String)],
) -> Option<String> {
    let challenge = headers
        .iter()
        .filter(|(n, _)| n == "www-authenticate")
        .find_map(|(_, v)| parse_bearer_challenge(v));
    let error = challenge.as_ref().and_then(|c| c.get("error"));
    if status != Some(403) || error != Some("insufficient_scope") {
        return Some(format!(
            "`{method}` got HTTP {} with error {}",
            status.unwrap_or(0),
            error.map_or_else(|| "none".to_owned(), |e| format!("{:?}", clip(e, 40)))
        ));
    }
    let mut missing = Vec::new();
    if challenge
        .as_ref()
        .and_then(|c| c.get("scope"))
        .is_none_or(|s| s.trim().is_empty())
    {
        missing.push("scope");
    }
    if challenge
        .as_ref()
        .and_then(|c| c.get("resource_metadata"))
        .is_none_or(|s| s.trim().is_empty())
    {
        missing.push("resource_metadata");
    }
    (!missing.is_empty()).then(|| {
        format!(
            "`{method}` got 403 insufficient_scope whose challenge lacks {}",
            missing.join(" and ")
        )
    })
}

/// Whether a 401 or 403 answer carries a `WWW-Authenticate` header: a 403
/// without one is some other refusal (an Origin, MCP-SEC-001), not an
/// answer about the token.
fn refused_for_token(status: Option<u16>, headers: &[(String, String)]) -> bool {
    status == Some(401)
        || (status == Some(403) && headers.iter().any(|(n, _)| n == "www-authenticate"))
}

fn headers_of(exchange: &crate::suite::Exchange) -> &[(String, String)] {
    exchange
        .response
        .as_ref()
        .map_or(&[][..], |r| r.headers.as_slice())
}

async fn insufficient_scope(s: &Session) -> Judgement {
    let auth = match survey(s).await {
        Ok(a) => a,
        Err(skip) => return skip,
    };
    let mut problems = Vec::new();
    let mut evidence = Vec::new();
    let mut judged = Vec::new();
    let mut skipped = Vec::new();
    // The run's limited token (`--limited-token`), on every family probe.
    if s.options.limited_token.is_some() {
        let accepted = auth
            .limited
            .iter()
            .filter(|a| a.status.is_some_and(|c| (200..300).contains(&c)))
            .count();
        let refused: Vec<&Asked> = auth
            .limited
            .iter()
            .filter(|a| refused_for_token(a.status, headers_of(&a.exchange)))
            .collect();
        if refused.is_empty() {
            skipped.push(format!(
                "the limited token was refused on none of {} requests",
                auth.limited.len()
            ));
        } else if accepted == 0 && refused.iter().all(|a| a.status == Some(401)) {
            skipped.push(format!(
                "the limited token got 401 on every request ({}): it is not a valid token for \
                 this server",
                methods(refused.iter().copied())
            ));
        } else {
            for a in &refused {
                if let Some(p) = scope_refusal_problem(&a.method, a.status, headers_of(&a.exchange))
                {
                    problems.push(format!("with the limited token, {p}"));
                    evidence.push(a.exchange.clone());
                }
            }
            judged.push(format!(
                "the limited token was refused on {} and accepted on {accepted} requests",
                methods(refused.iter().copied())
            ));
        }
    }
    // The run's token, over every request that carried it.
    if s.client.bearer().is_some() {
        let seen = s.client.seen().await;
        let mine: Vec<_> = seen.iter().filter(|r| r.authorized).collect();
        let accepted = mine
            .iter()
            .filter(|r| r.status.is_some_and(|c| (200..300).contains(&c)))
            .count();
        let refused: Vec<_> = mine
            .iter()
            .filter(|r| refused_for_token(r.status, headers_of(&r.exchange)))
            .collect();
        if accepted == 0 {
            skipped.push(format!(
                "the run's token was accepted on none of {} requests: it is not valid for this \
                 server",
                mine.len()
            ));
        } else if refused.is_empty() {
            skipped.push(format!(
                "the run's token was never refused for lack of scope ({accepted} requests \
                 accepted)"
            ));
        } else {
            for r in &refused {
                if let Some(p) = scope_refusal_problem(&r.method, r.status, headers_of(&r.exchange))
                {
                    problems.push(format!("with the run's token, {p}"));
                    evidence.push(r.exchange.clone());
                }
            }
            judged.push(format!(
                "the run's token was accepted on {accepted} requests and refused on {}",
                refused.len()
            ));
        }
    }
    if judged.is_empty() {
        if skipped.is_empty() {
            return Judgement::skip(
                "needs a token with too little scope, given with the run \
                 (`check --limited-token`, or a `--bearer-token` the server refuses somewhere)",
            );
        }
        return Judgement::skip(format!(
            "{}; give a token without some scope (`--limited-token`) to exercise this rule",
            skipped.join("; ")
        ));
    }
    if problems.is_empty() {
        return Judgement::pass(format!(
            "{}: each refusal was 403 with error=\"insufficient_scope\", the scope needed and \
             resource_metadata",
            judged.join("; ")
        ));
    }
    let mut j = Judgement::fail(format!(
        "{}: {}; a token that lacks scope SHOULD get 403 with error=\"insufficient_scope\", the \
         scope needed and resource_metadata, so the client can step up instead of starting over",
        judged.join("; "),
        some(&problems, 3, "; ")
    ));
    for e in evidence.iter().take(2) {
        j = j.with(e);
    }
    j
}

/// A JWT naming [`FOREIGN_AUDIENCE`], signed with a key nobody has.
fn foreign_token(issuer: Option<&str>, scope: &str) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let header = json!({"alg": "HS256", "typ": "JWT"});
    let mut claims = json!({
        "aud": FOREIGN_AUDIENCE,
        "sub": "protocheck",
        "scope": scope,
        "iat": now,
        "exp": now + 600,
    });
    if let Some(iss) = issuer {
        claims["iss"] = Value::String(iss.to_owned());
    }
    let signature: [u8; 32] = rand::random();
    format!(
        "{}.{}.{}",
        wire::base64url_encode(header.to_string().as_bytes()),
        wire::base64url_encode(claims.to_string().as_bytes()),
        wire::base64url_encode(&signature)
    )
}

async fn audience(s: &Session) -> Judgement {
    let auth = match survey(s).await {
        Ok(a) => a,
        Err(skip) => return skip,
    };
    // protocheck cannot obtain a real token for another resource; it presents a
    // well-formed one that names another audience and the server's own issuer
    // and scopes. A server that checks whose token it is refuses it.
    let issuers = auth.issuers();
    let scope = auth
        .challenge
        .as_ref()
        .and_then(|c| c.get("scope").map(str::to_owned))
        .or_else(|| {
            auth.prm_doc()
                .and_then(|d| d.get("scopes_supported"))
                .and_then(Value::as_array)
                .map(|l| {
                    l.iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" ")
                })
        })
        .unwrap_or_default();
    let token = foreign_token(issuers.first().map(String::as_str), &scope);
    // Sent as the first request refused without a token: a method the server
    // leaves open may ignore any token.
    let Some(refused) = auth
        .unauthenticated
        .iter()
        .position(|a| a.status == Some(401) && a.method != "subscriptions/listen")
        .and_then(|i| auth.probes.get(i))
    else {
        return Judgement::skip("not verified: no request sent without a token got 401");
    };
    let probe = refused
        .clone()
        .with_header("authorization", format!("Bearer {token}"));
    let (exchange, result) = s
        .client
        .http()
        .exchange(&s.client.plain_request(&probe))
        .await;
    match result {
        Ok(resp) if (200..300).contains(&resp.status) => Judgement::fail(format!(
            "a token issued for {FOREIGN_AUDIENCE} was accepted on `{}` (HTTP {}); servers MUST \
             validate that a token was issued for them and reject any other",
            probe.method, resp.status
        ))
        .with(&exchange),
        Ok(resp) => Judgement::pass(format!(
            "a token issued for another audience was refused on `{}` with HTTP {}",
            probe.method, resp.status
        )),
        Err(e) => Judgement::skip(format!("not verified: the probe got no answer ({e})")),
    }
}

async fn no_offline_access(s: &Session) -> Judgement {
    let auth = match survey(s).await {
        Ok(a) => a,
        Err(skip) => return skip,
    };
    let mut places = Vec::new();
    let mut evidence = Vec::new();
    let asking: Vec<&Asked> = auth
        .refused()
        .filter(|a| {
            a.challenge
                .as_ref()
                .is_some_and(|c| c.scopes().contains(&"offline_access"))
        })
        .collect();
    if let Some(first) = asking.first() {
        places.push(format!(
            "the WWW-Authenticate scope of the 401 to {}",
            methods(asking.iter().copied())
        ));
        evidence.push(&first.exchange);
    }
    if let Some(prm) = &auth.prm
        && prm
            .doc
            .get("scopes_supported")
            .and_then(Value::as_array)
            .is_some_and(|l| l.iter().any(|v| v.as_str() == Some("offline_access")))
    {
        places.push(format!("scopes_supported at {}", prm.url));
        evidence.push(&prm.exchange);
    }
    if auth.refused().all(|a| a.challenge.is_none()) && auth.prm.is_none() {
        return Judgement::skip("not verified: no challenge and no resource metadata to read");
    }
    if places.is_empty() {
        return Judgement::pass("offline_access is in neither the challenge nor scopes_supported");
    }
    let mut j = Judgement::fail(format!(
        "offline_access is listed in {}; a resource server SHOULD NOT ask for it (refresh \
         tokens are the authorization server's and the client's business)",
        places.join(" and ")
    ));
    for e in evidence {
        j = j.with(e);
    }
    j
}

async fn pkce_s256(s: &Session) -> Judgement {
    let auth = match survey(s).await {
        Ok(a) => a,
        Err(skip) => return skip,
    };
    judge_metadata(
        &auth,
        |doc| match doc
            .get("code_challenge_methods_supported")
            .and_then(Value::as_array)
        {
            None => Some("has no code_challenge_methods_supported".into()),
            Some(l) if l.iter().any(|m| m.as_str() == Some("S256")) => None,
            Some(l) => Some(format!(
                "lists code_challenge_methods_supported {} without S256",
                clip(&Value::Array(l.clone()).to_string(), 80)
            )),
        },
        "advertise PKCE with S256",
        "clients MUST refuse an authorization server without it and MUST use S256",
    )
}

async fn cimd(s: &Session) -> Judgement {
    let auth = match survey(s).await {
        Ok(a) => a,
        Err(skip) => return skip,
    };
    judge_metadata(
        &auth,
        |doc| {
            if doc.get("client_id_metadata_document_supported") == Some(&Value::Bool(true)) {
                return None;
            }
            Some(if doc.get("registration_endpoint").is_some() {
                "offers dynamic client registration alone (deprecated)".to_owned()
            } else {
                "does not advertise client_id_metadata_document_supported: true".to_owned()
            })
        },
        "accept Client ID Metadata Documents",
        "clients without a pre-registration SHOULD use a Client ID Metadata Document, which an \
         authorization server advertises with client_id_metadata_document_supported",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_uri_ignores_a_trailing_slash_only() {
        let endpoint = Url::parse("https://mcp.example/mcp").expect("url");
        assert!(same_resource("https://mcp.example/mcp/", &endpoint));
        assert!(same_resource("https://MCP.example:443/mcp", &endpoint));
        assert!(!same_resource("https://mcp.example/", &endpoint));
        assert!(!same_resource("http://mcp.example/mcp", &endpoint));
        assert!(less_specific("https://mcp.example", &endpoint));
        assert!(!less_specific("https://mcp.example/m", &endpoint));
        assert!(!less_specific("https://mcp.example/other", &endpoint));
    }

    #[test]
    fn rfc_9728_members_are_type_checked() {
        let good = json!({
            "resource": "https://mcp.example/mcp",
            "authorization_servers": ["https://as.example"],
            "scopes_supported": ["mcp:read"],
            "bearer_methods_supported": [],
            "resource_name": "x",
            "resource_name#fr": "y",
            "resource_documentation": "https://mcp.example/doc",
            "tls_client_certificate_bound_access_tokens": false,
            "x-own-member": 3,
        });
        assert!(
            member_problems(&good).is_empty(),
            "{:?}",
            member_problems(&good)
        );
        let bad = json!({
            "resource": "https://mcp.example/mcp#frag",
            "scopes_supported": "mcp:read mcp:tools",
            "bearer_methods_supported": ["header", 1],
            "resource_signing_alg_values_supported": ["RS256", "none"],
            "resource_documentation#de": "not a url",
            "resource_name": 4,
            "dpop_bound_access_tokens_required": "yes",
        });
        let problems = member_problems(&bad).join("\n");
        for name in [
            "`resource` has a fragment",
            "`scopes_supported` is not a JSON array of strings",
            "`bearer_methods_supported` is not a JSON array of strings",
            "lists \"none\"",
            "`resource_documentation#de` is not a URL string",
            "`resource_name` is not a string",
            "`dpop_bound_access_tokens_required` is not a boolean",
        ] {
            assert!(problems.contains(name), "{name} in {problems}");
        }
        let claims = wire::base64url_encode(br#"{"scopes_supported":"a b"}"#);
        let signed = json!({"signed_metadata": format!("e30.{claims}.c2ln")});
        let problems = member_problems(&signed).join("\n");
        assert!(problems.contains("no `iss` claim"), "{problems}");
        assert!(
            problems.contains("in `signed_metadata`, `scopes_supported`"),
            "{problems}"
        );
        assert!(!member_problems(&json!({"signed_metadata": "x"})).is_empty());
    }

    #[test]
    fn a_scope_refusal_names_error_scope_and_metadata() {
        let h = |v: &str| vec![("www-authenticate".to_owned(), v.to_owned())];
        let full =
            h(r#"Bearer error="insufficient_scope", scope="a", resource_metadata="https://x/prm""#);
        assert_eq!(scope_refusal_problem("tools/call", Some(403), &full), None);
        let bare = h(r#"Bearer error="insufficient_scope""#);
        let p = scope_refusal_problem("tools/call", Some(403), &bare).expect("problem");
        assert!(p.contains("lacks scope and resource_metadata"), "{p}");
        let p = scope_refusal_problem("tools/call", Some(401), &full).expect("problem");
        assert!(p.contains("HTTP 401"), "{p}");
        assert!(refused_for_token(Some(401), &[]));
        assert!(!refused_for_token(Some(403), &[]));
        assert!(refused_for_token(Some(403), &bare));
    }
}
