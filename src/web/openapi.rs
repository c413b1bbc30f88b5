//! The API's OpenAPI 3.1 document, served at `GET /api/openapi.json`.
//!
//! Every documented route is registered through [`utoipa_axum`]'s
//! `OpenApiRouter` (see [`super::api_routes`]), so a documented path is a
//! served path: the document is built from the same router the service runs.
//! The operations, their parameters and their responses are written beside
//! each handler in `#[utoipa::path]`; what several share lives here: the
//! problem responses, and the schemas of types defined outside the web layer.

use super::error::Problem;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use std::sync::OnceLock;
use utoipa::{OpenApi, ToResponse, ToSchema};

/// Where the document is served.
pub const DOCUMENT_PATH: &str = "/api/openapi.json";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "protocheck",
        description = "Conformance-as-a-service for protocol servers (MCP, RCP). Errors are \
            RFC 9457 problem documents (`application/problem+json`).",
        license(name = "MIT", identifier = "MIT"),
    ),
    tags(
        (name = "runs", description = "Submit conformance runs and follow them"),
        (name = "targets", description = "Servers under test and their history"),
        (name = "directory", description = "The public directory of judged MCP servers"),
        (name = "reports", description = "Reports of finished runs for CI: JSON, JUnit XML, SARIF"),
        (name = "rules", description = "Every rule: the requirement, how protocheck probes it, how to fix it"),
        (name = "badges", description = "Conformance badges and their snippets"),
        (name = "attestations", description = "Signed verdicts and their verification"),
        (name = "operations", description = "Health, readiness, metrics and this document"),
    ),
    modifiers(&ApiKeyScheme),
    components(
        schemas(Problem),
        responses(
            BadRequest,
            NotFound,
            PayloadTooLarge,
            UnsupportedMediaType,
            Unprocessable,
            TooManyRequests,
            InvalidApiKey,
            RunNotFinished,
            InternalError,
            TimedOut,
            BodyTimedOut,
            TooManyStreams,
        ),
    ),
)]
pub struct ApiDoc;

/// `Authorization: Bearer <API key>`, made with `protocheck keys create`.
pub struct ApiKeyScheme;

impl utoipa::Modify for ApiKeyScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "An API key (`protocheck keys create`): its own submission rate, \
                         and runs marked with its owner",
                    ))
                    .build(),
            ),
        );
    }
}

/// The request is not well-formed: a body that is not JSON, or a query string
/// that does not parse or names an unknown parameter.
#[derive(ToResponse)]
#[response(content_type = "application/problem+json")]
pub struct BadRequest(pub Problem);

/// Nothing is known by this id or name.
#[derive(ToResponse)]
#[response(content_type = "application/problem+json")]
pub struct NotFound(pub Problem);

/// The request body is larger than 64 KiB.
#[derive(ToResponse)]
#[response(content_type = "application/problem+json")]
pub struct PayloadTooLarge(pub Problem);

/// The body was not sent as `application/json`.
#[derive(ToResponse)]
#[response(content_type = "application/problem+json")]
pub struct UnsupportedMediaType(pub Problem);

/// Well-formed, but a value is not acceptable; `field` names it.
#[derive(ToResponse)]
#[response(content_type = "application/problem+json")]
pub struct Unprocessable(pub Problem);

/// Too many submissions from this client address or with this API key
/// (`rate-limited`), or a new run would exceed what protocheck sends the
/// target's host or the target (`target-rate-limited`, whoever submits), or
/// a new watch would exceed the API key's watch quota (`watch-quota`, with
/// `watch_quota` and `watches`, the watches the key keeps; no `Retry-After`).
#[derive(ToResponse)]
#[response(
    content_type = "application/problem+json",
    headers(("Retry-After" = u64, description = "Seconds until a submission is accepted again"))
)]
pub struct TooManyRequests(pub Problem);

/// The run is still queued or running: its report exists once it has
/// finished (the problem adds `run_status` and `links` to the run and its
/// progress stream).
#[derive(ToResponse)]
#[response(
    content_type = "application/problem+json",
    headers(("Retry-After" = u64, description = "Seconds to wait before asking again"))
)]
pub struct RunNotFinished(pub Problem);

/// The `Authorization` header names no live API key (it is never taken for
/// anonymous use).
#[derive(ToResponse)]
#[response(
    content_type = "application/problem+json",
    headers(("WWW-Authenticate" = String, description = "`Bearer error=\"invalid_token\"`"))
)]
pub struct InvalidApiKey(pub Problem);

/// An internal failure (logged; the detail is not shown).
#[derive(ToResponse)]
#[response(content_type = "application/problem+json")]
pub struct InternalError(pub Problem);

/// The service cannot answer now: its database does not answer (a problem
/// document, `/problems/unavailable`, with `Retry-After`), or the request did
/// not finish within 30 seconds (the service is overloaded or shutting down;
/// no body).
#[derive(ToResponse)]
#[response(headers((
    "Retry-After" = u64,
    description = "Seconds to wait before trying again (database unreachable only)"
)))]
pub struct TimedOut;

/// The request body stopped arriving before it was complete.
#[derive(ToResponse)]
#[response(content_type = "application/problem+json")]
pub struct BodyTimedOut(pub Problem);

/// This client address already follows as many progress streams as one
/// address may.
#[derive(ToResponse)]
#[response(
    content_type = "application/problem+json",
    headers(("Retry-After" = u64, description = "Seconds to wait before opening another stream"))
)]
pub struct TooManyStreams(pub Problem);

/// A DSSE envelope (`application/vnd.in-toto+json` payload), as the
/// attestation endpoint serves it and `POST /api/v1/verify` reads it. Unknown
/// members are ignored.
#[derive(Serialize, ToSchema)]
pub struct Envelope {
    /// Base64 of the signed statement.
    pub payload: String,
    #[serde(rename = "payloadType")]
    pub payload_type: String,
    pub signatures: Vec<EnvelopeSignature>,
}

#[derive(Serialize, ToSchema)]
pub struct EnvelopeSignature {
    /// The signing key's `kid` in the published key set.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub keyid: String,
    /// Base64 of the Ed25519 signature.
    pub sig: String,
}

/// The service's public keys (RFC 7517 JWK Set): every key that ever signed.
#[derive(Serialize, ToSchema)]
pub struct Jwks {
    pub keys: Vec<Jwk>,
}

/// An Ed25519 public key (RFC 8037 `OKP`).
#[derive(Serialize, ToSchema)]
pub struct Jwk {
    #[schema(examples("OKP"))]
    pub kty: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crv: Option<String>,
    /// The public key, base64url.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kid: Option<String>,
    #[serde(rename = "use", skip_serializing_if = "Option::is_none")]
    pub use_: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alg: Option<String>,
}

/// A badge in the shields.io endpoint schema.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShieldsBadge {
    /// Always 1.
    pub schema_version: u32,
    pub label: String,
    pub message: String,
    pub color: String,
    pub is_error: bool,
    pub cache_seconds: u64,
}

/// The document, built once from the router's documented routes.
pub fn document() -> &'static str {
    static DOCUMENT: OnceLock<String> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        super::api_routes()
            .into_openapi()
            .to_json()
            .unwrap_or_else(|e| {
                tracing::error!(error = %e, "serialising the OpenAPI document failed");
                String::from("{}")
            })
    })
}

/// `GET /api/openapi.json`.
#[utoipa::path(
    get,
    path = "/api/openapi.json",
    tag = "operations",
    summary = "This document",
    responses((status = 200, description = "The API's OpenAPI 3.1 document",
        content_type = "application/json", body = Object)),
)]
pub async fn openapi_json() -> Response {
    let mut resp = document().into_response();
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    resp
}
