//! Authorization for the 2025-11-25 reference server
//! (https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization),
//! on with [`Mcp25ReferenceConfig::with_auth`], over HTTP only: every request
//! to `/mcp` needs a bearer token this server signed for its own endpoint
//! (scope `mcp:read`, and `mcp:tools` for `tools/call`); a request without
//! one gets 401 with a challenge naming the RFC 9728 metadata, which is also
//! served at the well-known URIs; the built-in authorization server
//! publishes RFC 8414 metadata. Tokens are those of the 2026-07-28 reference
//! server (HS256, minted for tests by [`Mcp25ReferenceConfig::mint_token`]).

use super::{Mcp25ReferenceConfig, faults};
use crate::reference::mcp::auth::{
    ISSUER_PATH, SCOPE_READ, SCOPE_TOOLS, json_response, prm_url, request_host, signed_claims,
};
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use std::sync::Arc;

/// Largest request body the guard reads to learn the JSON-RPC method.
const MAX_BODY: usize = 4 * 1024 * 1024;

/// `http://host:port` as the client addressed this server.
fn base_url(headers: &HeaderMap) -> String {
    format!("http://{}", request_host(headers))
}

fn with_challenge(mut resp: Response, challenge: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(challenge) {
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    resp
}

/// The bearer token of the `Authorization` header.
fn header_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let scheme = value.get(..7)?;
    scheme
        .eq_ignore_ascii_case("bearer ")
        .then(|| value[7..].trim())
}

/// The `access_token` query parameter (read only with MCP25-AUT-008's fault).
fn query_token(uri: &axum::http::Uri) -> Option<String> {
    url::form_urlencoded::parse(uri.query()?.as_bytes())
        .find(|(k, _)| k == "access_token")
        .map(|(_, v)| v.into_owned())
}

/// The guard in front of `/mcp`: lets a request through when its token is
/// good and has the scope its method needs.
pub(super) async fn guard(
    State(config): State<Arc<Mcp25ReferenceConfig>>,
    req: Request,
    next: Next,
) -> Response {
    let Some(key) = config.auth else {
        return next.run(req).await;
    };
    let (parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
        return StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    let method = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_owned));
    let base = base_url(&parts.headers);
    let resource = format!("{base}/mcp");
    let token = header_token(&parts.headers).map(str::to_owned).or_else(|| {
        config
            .breaks(faults::AUTH_QUERY_TOKEN)
            .then(|| query_token(&parts.uri))
            .flatten()
    });
    let claims = token
        .as_deref()
        .and_then(|t| signed_claims(&key, t))
        .filter(|c| c.get("aud").and_then(Value::as_str) == Some(resource.as_str()));
    let claims = match claims {
        Some(claims) => claims,
        None if token.is_some() && config.breaks(faults::AUTH_INVALID_TOKEN) => {
            json!({"scope": format!("{SCOPE_READ} {SCOPE_TOOLS}")})
        }
        None => return unauthorized(&config, &base, token.is_some()),
    };
    let scopes: Vec<&str> = claims
        .get("scope")
        .and_then(Value::as_str)
        .map(|s| s.split_ascii_whitespace().collect())
        .unwrap_or_default();
    let mut needed = vec![SCOPE_READ];
    if method.as_deref() == Some("tools/call") {
        needed.push(SCOPE_TOOLS);
    }
    if !needed.iter().all(|n| scopes.contains(n)) {
        let (status, error) = if config.breaks(faults::AUTH_INSUFFICIENT_SCOPE) {
            (StatusCode::UNAUTHORIZED, "invalid_token")
        } else {
            (StatusCode::FORBIDDEN, "insufficient_scope")
        };
        let challenge = format!(
            "Bearer error=\"{error}\", scope=\"{}\", resource_metadata=\"{}\"",
            needed.join(" "),
            prm_url(&base)
        );
        let body = json!({"error": error,
            "error_description": format!("this request needs scope {}", needed.join(" "))});
        return with_challenge(json_response(status, &body), &challenge);
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// 401 with the challenge a client starts discovery from.
fn unauthorized(config: &Mcp25ReferenceConfig, base: &str, had_token: bool) -> Response {
    let mut params = Vec::new();
    if !config.breaks(faults::AUTH_DISCOVERY) {
        params.push(format!("resource_metadata=\"{}\"", prm_url(base)));
    }
    if !config.breaks(faults::AUTH_CHALLENGE_SCOPE) {
        params.push(format!("scope=\"{SCOPE_READ} {SCOPE_TOOLS}\""));
    }
    if had_token {
        params.push("error=\"invalid_token\"".to_owned());
    }
    let challenge = if params.is_empty() {
        "Bearer".to_owned()
    } else {
        format!("Bearer {}", params.join(", "))
    };
    let body = json!({"error": "invalid_token",
        "error_description": "a valid bearer token is required"});
    with_challenge(json_response(StatusCode::UNAUTHORIZED, &body), &challenge)
}

/// The discovery documents: RFC 9728 metadata at both well-known URIs, and
/// the RFC 8414 metadata of the built-in authorization server.
pub(super) fn discovery(config: Arc<Mcp25ReferenceConfig>) -> Router {
    Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(protected_resource),
        )
        .route(
            "/.well-known/oauth-protected-resource",
            get(protected_resource),
        )
        .route(
            &format!("/.well-known/oauth-authorization-server{ISSUER_PATH}"),
            get(authorization_server),
        )
        .route(
            &format!("/.well-known/oauth-authorization-server{ISSUER_PATH}-2"),
            get(authorization_server),
        )
        .route(
            &format!("/.well-known/oauth-authorization-server{ISSUER_PATH}-3"),
            get(authorization_server),
        )
        .route(
            &format!("/.well-known/oauth-authorization-server{ISSUER_PATH}-4"),
            get(authorization_server),
        )
        .with_state(config)
}

async fn protected_resource(
    State(config): State<Arc<Mcp25ReferenceConfig>>,
    headers: HeaderMap,
) -> Response {
    if config.auth.is_none() || config.breaks(faults::AUTH_DISCOVERY) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let base = base_url(&headers);
    let resource = if config.breaks(faults::AUTH_RESOURCE) {
        format!("{base}/other")
    } else {
        format!("{base}/mcp")
    };
    let servers = if config.breaks(faults::AUTH_SERVERS) {
        json!([])
    } else if config.breaks(faults::AUTH_PKCE) {
        // MCP25-AUT-004's fault: four issuers, only the last without S256.
        json!([
            format!("{base}{ISSUER_PATH}"),
            format!("{base}{ISSUER_PATH}-2"),
            format!("{base}{ISSUER_PATH}-3"),
            format!("{base}{ISSUER_PATH}-4")
        ])
    } else {
        json!([format!("{base}{ISSUER_PATH}")])
    };
    json_response(
        StatusCode::OK,
        &json!({
            "resource": resource,
            "authorization_servers": servers,
            "scopes_supported": [SCOPE_READ, SCOPE_TOOLS],
            "bearer_methods_supported": ["header"],
            "resource_name": "protocheck reference MCP server (2025-11-25)",
        }),
    )
}

async fn authorization_server(
    State(config): State<Arc<Mcp25ReferenceConfig>>,
    headers: HeaderMap,
    uri: axum::http::Uri,
) -> Response {
    if config.auth.is_none() {
        return StatusCode::NOT_FOUND.into_response();
    }
    let suffix = uri
        .path()
        .strip_prefix(&format!(
            "/.well-known/oauth-authorization-server{ISSUER_PATH}"
        ))
        .unwrap_or_default();
    let issuer = format!("{}{ISSUER_PATH}{suffix}", base_url(&headers));
    let pkce = if config.breaks(faults::AUTH_PKCE) && suffix == "-4" {
        json!(["plain"])
    } else {
        json!(["S256"])
    };
    json_response(
        StatusCode::OK,
        &json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": [SCOPE_READ, SCOPE_TOOLS],
            "code_challenge_methods_supported": pkce,
        }),
    )
}
