//! The API's one error type, rendered as RFC 9457 problem+json. Internal
//! failures are logged with their detail and shown to the user without it.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// An RFC 9457 problem: the body of every API error.
#[derive(Debug, Serialize, ToSchema)]
pub struct Problem {
    /// `/problems/{slug}`, e.g. `/problems/invalid-field`.
    #[serde(rename = "type")]
    pub problem_type: String,
    pub title: String,
    /// The HTTP status, repeated.
    pub status: u16,
    /// What was wrong, for people.
    pub detail: String,
    /// The request field at fault (`invalid-field` problems only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Seconds until a submission is accepted again (`rate-limited` problems only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_s: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The body is not valid JSON or not the expected shape.
    #[error("{0}")]
    MalformedBody(String),
    /// The body is larger than the API accepts.
    #[error("the request body exceeds {0} bytes")]
    BodyTooLarge(usize),
    #[error("send the body as application/json")]
    UnsupportedMediaType,
    /// Well-formed, but a value is not acceptable.
    #[error("{detail}")]
    Invalid { field: &'static str, detail: String },
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    NotFound(String),
    #[error("too many submissions from this address; retry in {retry_after_s}s")]
    RateLimited { retry_after_s: u64 },
    #[error("the database is not reachable")]
    Unavailable,
    #[error("internal error")]
    Internal(String),
}

impl ApiError {
    fn parts(&self) -> (StatusCode, &'static str, &'static str) {
        match self {
            Self::MalformedBody(_) => (
                StatusCode::BAD_REQUEST,
                "malformed-body",
                "Malformed request body",
            ),
            Self::BodyTooLarge(_) => (
                StatusCode::PAYLOAD_TOO_LARGE,
                "body-too-large",
                "Request body too large",
            ),
            Self::UnsupportedMediaType => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported-media-type",
                "Unsupported media type",
            ),
            Self::Invalid { .. } => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid-field",
                "Invalid request",
            ),
            Self::Conflict(_) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "idempotency-key-reused",
                "Idempotency-Key reused",
            ),
            Self::NotFound(_) => (StatusCode::NOT_FOUND, "not-found", "Not found"),
            Self::RateLimited { .. } => (
                StatusCode::TOO_MANY_REQUESTS,
                "rate-limited",
                "Too many requests",
            ),
            Self::Unavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "Service unavailable",
            ),
            Self::Internal(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "Internal error",
            ),
        }
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(e: crate::store::StoreError) -> Self {
        Self::Internal(e.to_string())
    }
}

impl From<crate::queue::SubmitError> for ApiError {
    fn from(e: crate::queue::SubmitError) -> Self {
        use crate::queue::SubmitError as S;
        match e {
            S::Url(e) => Self::Invalid {
                field: "url",
                detail: e.to_string(),
            },
            S::Options(detail) => Self::Invalid {
                field: "options",
                detail,
            },
            S::IdempotencyKey => Self::Invalid {
                field: "Idempotency-Key",
                detail: S::IdempotencyKey.to_string(),
            },
            S::IdempotencyMismatch => Self::Conflict(S::IdempotencyMismatch.to_string()),
            S::Store(e) => e.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, slug, title) = self.parts();
        if let Self::Internal(detail) = &self {
            tracing::error!(%detail, "internal error answering a request");
        }
        let retry_after = match &self {
            Self::RateLimited { retry_after_s } => Some(*retry_after_s),
            _ => None,
        };
        let body = Problem {
            problem_type: format!("/problems/{slug}"),
            title: title.to_owned(),
            status: status.as_u16(),
            detail: self.to_string(),
            field: match &self {
                Self::Invalid { field, .. } => Some((*field).to_owned()),
                _ => None,
            },
            retry_after_s: retry_after,
        };
        let body = serde_json::to_string(&body).unwrap_or_default();
        let mut resp = (status, body).into_response();
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if let Some(secs) = retry_after {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        resp
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
