//! The web layer's own extractors: the API's rejections come back as
//! problem+json, never as axum's plain-text defaults. `clippy.toml` forbids
//! axum's `Path` and `Json` everywhere else, so no route can fall back to
//! them by accident; this file wraps them once.
#![allow(
    clippy::disallowed_types,
    reason = "the one place that wraps axum's Path and Json extractors"
)]

use super::error::WebError;
use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::{
    BytesRejection, FormRejection, JsonRejection, PathRejection, QueryRejection,
};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A JSON object as the body. Size is bounded by the router's `DefaultBodyLimit`.
/// As an answer, the value serialised as `application/json`.
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

impl<T: Serialize> IntoResponse for ApiJson<T> {
    fn into_response(self) -> Response {
        Json(self.0).into_response()
    }
}

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = WebError;

    async fn from_request(req: Request, state: &S) -> Result<Self, WebError> {
        let content_type = req
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(|v| v.trim().to_ascii_lowercase());
        let is_json = content_type.is_some_and(|ct| {
            ct.strip_prefix("application/")
                .is_some_and(|sub| sub == "json" || sub.ends_with("+json"))
        });
        if !is_json {
            return Err(WebError::UnsupportedMediaType);
        }
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e| WebError::from(JsonRejection::from(e)))?;
        // Syntax first (400), then the shape: serde reads a struct from an
        // array too, by position, so anything but an object is refused here.
        let Json(value) = Json::<serde_json::Value>::from_bytes(&bytes)?;
        if !value.is_object() {
            return Err(WebError::Invalid {
                field: "body",
                detail: "the body must be a JSON object".into(),
            });
        }
        let Json(body) = Json::<T>::from_bytes(&bytes)?;
        Ok(Self(body))
    }
}

/// Path parameters.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(WebError))]
pub struct ApiPath<T>(pub T);

/// Path parameters of an HTML page. A path that does not decode is refused
/// with axum's own plain-text answer, as the pages always did.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Path))]
pub struct PagePath<T>(pub T);

/// Query parameters.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(WebError))]
pub struct ApiQuery<T>(pub T);

impl From<JsonRejection> for WebError {
    fn from(r: JsonRejection) -> Self {
        match r {
            JsonRejection::MissingJsonContentType(_) => Self::UnsupportedMediaType,
            JsonRejection::BytesRejection(b) => {
                if body_timed_out(&b) {
                    Self::BodyTimeout
                } else if b.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
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

impl From<PathRejection> for WebError {
    fn from(r: PathRejection) -> Self {
        Self::NotFound(r.body_text())
    }
}

impl From<QueryRejection> for WebError {
    fn from(r: QueryRejection) -> Self {
        Self::MalformedQuery(r.body_text())
    }
}

impl From<FormRejection> for WebError {
    fn from(r: FormRejection) -> Self {
        match r {
            FormRejection::BytesRejection(b)
                if b.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE =>
            {
                Self::BodyTooLarge(super::MAX_API_BODY_BYTES)
            }
            FormRejection::BytesRejection(b) if body_timed_out(&b) => Self::BodyTimeout,
            other => Self::MalformedBody(other.body_text()),
        }
    }
}

/// Whether reading the body failed because it stopped arriving (the router's
/// `RequestBodyTimeoutLayer`), found among the error's causes.
fn body_timed_out(e: &BytesRejection) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if c.is::<tower_http::timeout::TimeoutError>() {
            return true;
        }
        cause = c.source();
    }
    false
}
