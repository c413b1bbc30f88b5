//! OAuth for the MCP reference server (`--auth`): the resource-server side of
//! basic/authorization, and the discovery documents of a built-in
//! authorization server, whose endpoints are in `authorization`. Tests can
//! also mint tokens directly with
//! [`McpReferenceConfig::mint_token`](super::McpReferenceConfig::mint_token);
//! the CLI prints two at start-up.
//!
//! A token is a JWT signed with HS256 under a key made at start-up; the server
//! checks its signature, audience (its own canonical URI, RFC 8707), expiry
//! and scope.

use super::{Allowed, AuthShape, Inner, hmac_sha256};
use crate::suite::mcp::aut;
use crate::suite::mcp::wire::{base64url_decode, base64url_encode};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Needed for every request.
pub const SCOPE_READ: &str = "mcp:read";
/// Needed for `tools/call` as well.
pub const SCOPE_TOOLS: &str = "mcp:tools";
/// Path of the built-in authorization server (its issuer has a path, so
/// discovery takes the path-inserted form, authorization-server-discovery).
pub const ISSUER_PATH: &str = "/as";

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A signed token for `audience` with `scope`, valid for `lifetime`.
pub(crate) fn mint(key: &[u8; 32], audience: &str, scope: &str, lifetime: Duration) -> String {
    let header = base64url_encode(json!({"alg": "HS256", "typ": "JWT"}).to_string().as_bytes());
    let claims = json!({
        "iss": "protocheck-reference",
        "aud": audience,
        "scope": scope,
        "iat": now(),
        "exp": now().saturating_add(lifetime.as_secs()),
    });
    let payload = base64url_encode(claims.to_string().as_bytes());
    let signed = format!("{header}.{payload}");
    let signature = base64url_encode(&hmac_sha256(key, signed.as_bytes()));
    format!("{signed}.{signature}")
}

/// The claims of `token` when it is signed with `key` and unexpired (its
/// audience is the caller's to check). For the 2025-11-25 reference server.
pub(crate) fn signed_claims(key: &[u8; 32], token: &str) -> Option<Value> {
    let mut parts = token.split('.');
    let (header, payload, signature) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let expected = hmac_sha256(key, format!("{header}.{payload}").as_bytes());
    if base64url_decode(signature)? != expected {
        return None;
    }
    let claims: Value = serde_json::from_slice(&base64url_decode(payload)?).ok()?;
    if claims
        .get("exp")
        .and_then(Value::as_u64)
        .is_none_or(|exp| exp <= now())
    {
        return None;
    }
    Some(claims)
}

/// The claims of a token this server accepts for `resource`. With the
/// MCP-AUT-008 fault, neither the signature nor the audience is checked.
fn verify(state: &Inner, key: &[u8; 32], token: &str, resource: &str) -> Option<Value> {
    let mut parts = token.split('.');
    let (header, payload, signature) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let claims: Value = serde_json::from_slice(&base64url_decode(payload)?).ok()?;
    if !state.breaks(&aut::AUDIENCE) {
        let expected = hmac_sha256(key, format!("{header}.{payload}").as_bytes());
        // Compared in full; the key is per process and the tokens are test tokens.
        if base64url_decode(signature)? != expected {
            return None;
        }
        if claims.get("aud").and_then(Value::as_str) != Some(resource) {
            return None;
        }
    }
    if claims
        .get("exp")
        .and_then(Value::as_u64)
        .is_none_or(|exp| exp <= now())
    {
        return None;
    }
    Some(claims)
}

/// `http://host:port` as the client addressed this server.
pub(super) fn base_url(state: &Inner, headers: &HeaderMap) -> String {
    let scheme = if state.config.tls { "https" } else { "http" };
    format!("{scheme}://{}", request_host(headers))
}

/// The `Host` the client addressed, when it is a plain host and port;
/// `127.0.0.1` otherwise, so that no header text reaches a URL this server
/// writes.
pub(crate) fn request_host(headers: &HeaderMap) -> &str {
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            h.chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-:[]".contains(c))
        })
        .unwrap_or("127.0.0.1")
}

/// The RFC 9728 metadata URL of the `/mcp` endpoint at `base`.
pub(crate) fn prm_url(base: &str) -> String {
    format!("{base}/.well-known/oauth-protected-resource/mcp")
}

pub(crate) fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Refuses a request without a good token: `None` lets it through. `method`
/// is the JSON-RPC method, when the body named one.
pub(super) fn check(state: &Inner, headers: &HeaderMap, method: Option<&str>) -> Option<Response> {
    let key = state.config.auth.as_deref()?;
    let open_discover =
        state.allows(Allowed::OpenDiscover) || state.shaped(AuthShape::OpenDiscoverBareChallenge);
    if open_discover && method == Some("server/discover") {
        return None;
    }
    let base = base_url(state, headers);
    let metadata_url = if state.shaped(AuthShape::DeadResourceMetadata) {
        format!("{base}/.well-known/oauth-protected-resource/missing")
    } else {
        prm_url(&base)
    };
    let resource = format!("{base}/mcp");
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.get(..7)
                .filter(|s| s.eq_ignore_ascii_case("bearer "))
                .map(|_| v[7..].trim())
        });
    let Some(claims) = token.and_then(|t| verify(state, key, t, &resource)) else {
        let mut challenge = format!("Bearer resource_metadata=\"{metadata_url}\"");
        if !state.breaks(&aut::CHALLENGE_SCOPE) {
            challenge.push_str(&format!(", scope=\"{SCOPE_READ} {SCOPE_TOOLS}\""));
        }
        if token.is_some() {
            challenge.push_str(", error=\"invalid_token\"");
        }
        let mut resp = json_response(
            StatusCode::UNAUTHORIZED,
            &json!({"error": "invalid_token", "error_description": "a valid bearer token is required"}),
        );
        if !state.breaks(&aut::CHALLENGE)
            && !state.shaped(AuthShape::OpenDiscoverBareChallenge)
            && let Ok(value) = HeaderValue::from_str(&challenge)
        {
            resp.headers_mut().insert(header::WWW_AUTHENTICATE, value);
        }
        return Some(resp);
    };
    let scopes: Vec<&str> = claims
        .get("scope")
        .and_then(Value::as_str)
        .map(|s| s.split_ascii_whitespace().collect())
        .unwrap_or_default();
    let mut needed = vec![SCOPE_READ];
    if method == Some("tools/call") {
        needed.push(SCOPE_TOOLS);
    }
    if needed.iter().all(|n| scopes.contains(n)) {
        return None;
    }
    // One challenge naming every scope needed (authorization, "Scope Challenge Handling").
    let (status, error) = if state.breaks(&aut::INSUFFICIENT_SCOPE) {
        (StatusCode::UNAUTHORIZED, "invalid_token")
    } else {
        (StatusCode::FORBIDDEN, "insufficient_scope")
    };
    let challenge = format!(
        "Bearer error=\"{error}\", scope=\"{}\", resource_metadata=\"{}\"",
        needed.join(" "),
        metadata_url
    );
    let mut resp = json_response(
        status,
        &json!({"error": error, "error_description": format!("this request needs scope {}", needed.join(" "))}),
    );
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    Some(resp)
}

/// RFC 9728 protected resource metadata.
pub(super) fn protected_resource(state: &Inner, headers: &HeaderMap) -> Response {
    if state.config.auth.is_none() {
        return StatusCode::NOT_FOUND.into_response();
    }
    let base = base_url(state, headers);
    let mut scopes = vec![SCOPE_READ, SCOPE_TOOLS];
    if state.breaks(&aut::NO_OFFLINE_ACCESS) {
        scopes.push("offline_access");
    }
    let resource = if state.breaks(&aut::PRM_RESOURCE) {
        format!("{base}/other")
    } else {
        format!("{base}/mcp")
    };
    let mut doc = json!({
        "resource": resource,
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": "protocheck reference MCP server",
    });
    if state.shaped(AuthShape::ScopesNotStrings) {
        doc["scopes_supported"] = Value::String(scopes.join(" "));
    }
    if !state.breaks(&aut::PRM_SERVED) {
        let mut servers = vec![format!("{base}{ISSUER_PATH}")];
        if state.shaped(AuthShape::SecondIssuerWithoutMetadata) {
            servers.push(format!("{base}{ISSUER_PATH}2"));
        }
        doc["authorization_servers"] = json!(servers);
    }
    json_response(StatusCode::OK, &doc)
}

/// RFC 8414 metadata of the built-in authorization server, at its RFC 8414
/// URL or (`openid`) its OpenID Connect one, which answers 404 unless
/// [`Allowed::ForeignIssuerFirst`] puts the right document there.
pub(super) fn authorization_server(state: &Inner, headers: &HeaderMap, openid: bool) -> Response {
    let foreign_first = state.allows(Allowed::ForeignIssuerFirst);
    if state.config.auth.is_none() || (openid && !foreign_first) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let base = base_url(state, headers);
    let issuer = format!("{base}{ISSUER_PATH}");
    let named = if state.breaks(&aut::AS_METADATA) || (foreign_first && !openid) {
        format!("{issuer}-elsewhere")
    } else {
        issuer.clone()
    };
    let mut doc = json!({
        "issuer": named,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": [SCOPE_READ, SCOPE_TOOLS],
        "code_challenge_methods_supported":
            if state.breaks(&aut::PKCE_S256) { json!(["plain"]) } else { json!(["S256"]) },
    });
    if !state.breaks(&aut::ISS_PARAMETER) {
        doc["authorization_response_iss_parameter_supported"] = Value::Bool(true);
    }
    // Dynamic registration is served either way; the CIMD fault leaves it
    // the only way in.
    doc["registration_endpoint"] = Value::String(format!("{issuer}/register"));
    if !state.breaks(&aut::CIMD) {
        doc["client_id_metadata_document_supported"] = Value::Bool(true);
    }
    json_response(StatusCode::OK, &doc)
}
