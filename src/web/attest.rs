//! Attestation endpoints: the published key set, a run's signed attestation, and
//! verification of an envelope against the service's keys.

use super::AppState;
use super::error::{ApiResult, WebError};
use super::extract::{ApiJson, ApiPath};
use super::openapi::{
    BadRequest, InternalError, NotFound, PayloadTooLarge, TimedOut, Unprocessable,
    UnsupportedMediaType,
};
use crate::attest::dsse::{self, Envelope};
use crate::attest::statement::Statement;
use crate::attest::{self, AttestError, verify_envelope};
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

/// `GET /.well-known/protocheck/keys.json`: every public key that ever signed.
#[utoipa::path(
    get,
    path = "/.well-known/protocheck/keys.json",
    tag = "attestations",
    summary = "The service's public keys",
    responses(
        (status = 200, description = "Every public key that ever signed a verdict",
            content_type = "application/jwk-set+json", body = super::openapi::Jwks,
            headers(("Cache-Control" = String, description = "`max-age=60`"))),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn keys(State(state): State<AppState>) -> ApiResult<Response> {
    let (jwks, _) = attest::service_keys(state.store.as_ref(), state.attestor.as_ref()).await?;
    let mut resp = ApiJson(jwks).into_response();
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/jwk-set+json"),
    );
    // Short: a new key appears on rotation, and verifiers should see it soon.
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("max-age=60"),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    Ok(resp)
}

fn no_attestation(id: Uuid, why: impl std::fmt::Display) -> WebError {
    WebError::NotFound(format!("run `{id}` has no attestation: {why}"))
}

/// `GET /api/v1/runs/{id}/attestation`: the DSSE envelope, byte for byte as
/// stored. A verdict that was not signed when its run ended is signed now.
#[utoipa::path(
    get,
    path = "/api/v1/runs/{id}/attestation",
    tag = "attestations",
    summary = "A run's signed verdict",
    params(("id" = String, Path, description = "The run's id (a UUID)")),
    responses(
        (status = 200, description = "The DSSE envelope of the run's in-toto statement, byte for \
            byte as stored", content_type = "application/json", body = super::openapi::Envelope,
            headers(("Cache-Control" = String, description = "`max-age=86400, immutable`"))),
        (status = 404, response = NotFound),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn show_attestation(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Response> {
    let id = Uuid::parse_str(&id).map_err(|_| {
        WebError::NotFound(format!(
            "no run has the id `{}`",
            id.chars().take(64).collect::<String>()
        ))
    })?;
    let stored = match state.store.get_attestation(id).await? {
        Some(stored) => stored,
        None => {
            let Some(attestor) = &state.attestor else {
                return Err(no_attestation(id, "this service signs nothing"));
            };
            match attest::attest_run(state.store.as_ref(), attestor, id).await {
                Ok(stored) => stored,
                Err(AttestError::UnknownRun(_)) => {
                    return Err(WebError::NotFound(format!("no run has the id `{id}`")));
                }
                Err(e @ AttestError::NoVerdict(..)) => return Err(no_attestation(id, e)),
                Err(AttestError::Store(e)) => return Err(e.into()),
                Err(e @ AttestError::Statement(_)) => {
                    return Err(WebError::Internal(e.to_string()));
                }
            }
        }
    };
    let mut resp = stored.envelope.into_response();
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    // A run is attested once; its attestation never changes.
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("max-age=86400, immutable"),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    Ok(resp)
}

/// `POST /api/v1/verify`: a DSSE envelope in; `valid` and the signed statement
/// out, or the reason it is not valid. Input that is not an envelope is a 400
/// (not JSON) or 422 (not the shape of one, or undecodable base64).
#[utoipa::path(
    post,
    path = "/api/v1/verify",
    tag = "attestations",
    summary = "Verify an attestation",
    request_body(content = super::openapi::Envelope, content_type = "application/json"),
    responses(
        (status = 200, description = "Whether the envelope verifies against the service's keys",
            body = Verification),
        (status = 400, response = BadRequest),
        (status = 413, response = PayloadTooLarge),
        (status = 415, response = UnsupportedMediaType),
        (status = 422, response = Unprocessable),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn verify(
    State(state): State<AppState>,
    body: Result<ApiJson<Envelope>, WebError>,
) -> ApiResult<ApiJson<Verification>> {
    let ApiJson(envelope) = body?;
    let (_, keys) = attest::service_keys(state.store.as_ref(), state.attestor.as_ref()).await?;
    let verified = match verify_envelope(&envelope, &keys) {
        Ok(v) => v,
        Err(e) if e.is_malformed() => {
            return Err(WebError::Invalid {
                field: "envelope",
                detail: e.to_string(),
            });
        }
        Err(e) => {
            return Ok(ApiJson(Verification::Invalid(Invalid {
                valid: false,
                reason: e.to_string(),
            })));
        }
    };
    let run_id = Uuid::parse_str(&verified.statement.predicate.run_id).ok();
    // Whether this service still holds this very statement for the run: a valid
    // signature on an envelope the service never stored would mean a key leaked.
    let matches_stored = match run_id {
        Some(id) => match state.store.get_attestation(id).await? {
            Some(stored) => Some(
                attest::verify::parse_envelope(stored.envelope.as_bytes())
                    .ok()
                    .and_then(|s| dsse::decode(&s.payload))
                    == dsse::decode(&envelope.payload),
            ),
            None => Some(false),
        },
        None => None,
    };
    Ok(ApiJson(Verification::Valid(Box::new(Valid {
        valid: true,
        key_id: verified.key_id,
        statement: verified.statement,
        matches_stored_attestation: matches_stored,
        links: VerificationLinks {
            run: run_id.map(super::badge::report_path),
            keys: attest::verify::KEYS_PATH.to_owned(),
        },
    }))))
}

/// The answer of `POST /api/v1/verify`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum Verification {
    Valid(Box<Valid>),
    Invalid(Invalid),
}

/// A valid signature by one of the service's keys.
#[derive(Debug, Serialize, ToSchema)]
pub struct Valid {
    /// Always true.
    pub valid: bool,
    /// The `kid` of the key that signed.
    pub key_id: String,
    /// The signed in-toto statement.
    #[schema(value_type = Object)]
    pub statement: Statement,
    /// Whether this service holds this very statement for the run it names;
    /// null when the statement names no run id.
    #[schema(required = true)]
    pub matches_stored_attestation: Option<bool>,
    pub links: VerificationLinks,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct VerificationLinks {
    /// The report of the run the statement names.
    #[schema(required = true)]
    pub run: Option<String>,
    /// The published key set.
    pub keys: String,
}

/// A well-formed envelope that does not verify.
#[derive(Debug, Serialize, ToSchema)]
pub struct Invalid {
    /// Always false.
    pub valid: bool,
    /// Why it does not verify.
    pub reason: String,
}
