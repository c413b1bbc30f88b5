//! The API's own extractors: rejections come back as problem+json, never as
//! axum's plain-text defaults.

use super::error::ApiError;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts};

/// A JSON body. Size is bounded by the router's `DefaultBodyLimit`.
#[derive(Debug, FromRequest)]
#[from_request(via(axum::Json), rejection(ApiError))]
pub struct ApiJson<T>(pub T);

/// Path parameters.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct ApiPath<T>(pub T);

/// Query parameters.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub struct ApiQuery<T>(pub T);

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> Self {
        match r {
            JsonRejection::MissingJsonContentType(_) => Self::UnsupportedMediaType,
            JsonRejection::BytesRejection(b) => {
                if b.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                    Self::BodyTooLarge(super::MAX_API_BODY_BYTES)
                } else {
                    Self::MalformedBody(b.body_text())
                }
            }
            JsonRejection::JsonDataError(e) => Self::Invalid {
                field: "body",
                detail: e.body_text(),
            },
            other => Self::MalformedBody(other.body_text()),
        }
    }
}

impl From<PathRejection> for ApiError {
    fn from(r: PathRejection) -> Self {
        Self::NotFound(r.body_text())
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> Self {
        Self::MalformedBody(r.body_text())
    }
}
