//! The web layer's one error type, [`WebError`], and its two renderings. The
//! route decides which one a client sees, never the error: the API answers
//! RFC 9457 problem+json (`WebError`'s own [`IntoResponse`]), the HTML pages
//! answer a page in the site's style (through [`AsPage`]). This file is the
//! only place that writes a problem document, so every API error has the same
//! shape. Internal failures are logged with their detail and shown to the user
//! without it.

use super::pages::Page;
use super::ratelimit::RateState;
use crate::store::RunStatus;
use askama::Template;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;
use uuid::Uuid;

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
    /// The request field or query parameter at fault (`invalid-field` and
    /// `invalid-parameter` problems only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Seconds until a submission is accepted again (`rate-limited` and
    /// `target-rate-limited` problems only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_s: Option<u64>,
}

/// Why a request of the API or of a page was not answered as asked.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// The body is not valid JSON or not the expected shape, or a form does
    /// not parse.
    #[error("{0}")]
    MalformedBody(String),
    /// The query string does not parse or lacks a parameter.
    #[error("{0}")]
    MalformedQuery(String),
    /// The body is larger than the API accepts.
    #[error("the request body exceeds {0} bytes")]
    BodyTooLarge(usize),
    #[error("send the body as application/json")]
    UnsupportedMediaType,
    /// Well-formed, but a value is not acceptable.
    #[error("{detail}")]
    Invalid { field: &'static str, detail: String },
    /// A query parameter whose value cannot be read (a sort column that does
    /// not exist, a cursor that is not one); `field` names the parameter.
    #[error("{detail}")]
    BadParameter { field: &'static str, detail: String },
    #[error("{0}")]
    Conflict(String),
    /// A sign-in at a server's authorization server that cannot start or go
    /// on (see [`crate::web::sign_in`]).
    #[error("{0}")]
    SignIn(String),
    #[error("{0}")]
    NotFound(String),
    /// A request the site refuses to act on (a form posted from elsewhere, an
    /// expired form).
    #[error("{0}")]
    Forbidden(String),
    /// An `Authorization` header that names no live API key; never taken for
    /// anonymous use.
    #[error("{0}")]
    Unauthorized(String),
    /// Too many submissions. `key` names the API key whose quota is used up,
    /// `None` for a client address; `rate` is the state of the limiter that
    /// refused, sent along as its `RateLimit-*` headers by the API.
    #[error("{}", rate_limited_detail(.key.as_deref(), .rate))]
    RateLimited {
        key: Option<String>,
        rate: RateState,
    },
    /// The API key keeps as many watches as its quota allows (#54): waiting
    /// does not help, ending one of them (or a larger quota) does.
    #[error(
        "the API key `{key}` keeps {kept} watches, its quota of {quota}; end one \
         (DELETE /api/v1/targets/{{id}}/watch) before watching another target"
    )]
    WatchQuota { key: String, quota: i64, kept: i64 },
    /// A new run would exceed what protocheck sends one target host or one
    /// target (see [`crate::submit::HostQuota`]), whoever submits it.
    #[error("{detail}")]
    TargetLimited { detail: String, retry_after_s: u64 },
    /// A report was asked of a run still queued or running.
    #[error("run `{id}` is {}; its report exists once it has finished", .status.as_str())]
    NotFinished { id: Uuid, status: RunStatus },
    /// The request body stopped arriving before it was complete.
    #[error("the request body stopped arriving before it was complete; send it whole")]
    BodyTimeout,
    /// The client follows as many progress streams as one address may.
    #[error(
        "this address already follows {0} progress streams; close one, or retry in {STREAM_RETRY_AFTER_S}s"
    )]
    TooManyStreams(usize),
    /// The database does not answer (a connection that fails or times out);
    /// the request may succeed once it is back.
    #[error("the database is not reachable; retry in {UNAVAILABLE_RETRY_AFTER_S}s")]
    Unavailable,
    /// A method the path does not answer; `allow` lists the ones it does.
    #[error("this path does not answer {method}; it answers {allow}")]
    MethodNotAllowed { method: String, allow: String },
    #[error("internal error")]
    Internal(String),
}

/// Seconds a client is told to wait while the database does not answer.
pub const UNAVAILABLE_RETRY_AFTER_S: u64 = 5;
/// Seconds a client over its progress streams is told to wait.
pub const STREAM_RETRY_AFTER_S: u64 = 10;

/// Seconds a refused client waits before trying again.
fn retry_after(rate: &RateState) -> u64 {
    rate.retry_after_s.unwrap_or(1)
}

fn rate_limited_detail(key: Option<&str>, rate: &RateState) -> String {
    match key {
        Some(name) => format!(
            "too many submissions with the API key `{name}`; retry in {}s",
            retry_after(rate)
        ),
        None => format!(
            "too many submissions from this address; retry in {}s",
            retry_after(rate)
        ),
    }
}

impl WebError {
    /// Status, problem slug and problem title.
    fn problem_parts(&self) -> (StatusCode, &'static str, &'static str) {
        match self {
            Self::MalformedBody(_) => (
                StatusCode::BAD_REQUEST,
                "malformed-body",
                "Malformed request body",
            ),
            Self::MalformedQuery(_) => (
                StatusCode::BAD_REQUEST,
                "malformed-query",
                "Malformed query string",
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
            Self::BadParameter { .. } => (
                StatusCode::BAD_REQUEST,
                "invalid-parameter",
                "Invalid query parameter",
            ),
            Self::SignIn(_) => (StatusCode::CONFLICT, "sign-in", "Sign-in cannot go on"),
            Self::MethodNotAllowed { .. } => (
                StatusCode::METHOD_NOT_ALLOWED,
                "method-not-allowed",
                "Method not allowed",
            ),
            Self::Conflict(_) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "idempotency-key-reused",
                "Idempotency-Key reused",
            ),
            Self::NotFound(_) => (StatusCode::NOT_FOUND, "not-found", "Not found"),
            Self::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden", "Forbidden"),
            Self::Unauthorized(_) => (StatusCode::UNAUTHORIZED, "invalid-token", "Invalid API key"),
            Self::RateLimited { .. } => (
                StatusCode::TOO_MANY_REQUESTS,
                "rate-limited",
                "Too many requests",
            ),
            Self::TargetLimited { .. } => (
                StatusCode::TOO_MANY_REQUESTS,
                "target-rate-limited",
                "Too many runs of this target",
            ),
            Self::WatchQuota { .. } => (
                StatusCode::TOO_MANY_REQUESTS,
                "watch-quota",
                "Watch quota used up",
            ),
            Self::NotFinished { .. } => {
                (StatusCode::CONFLICT, "run-not-finished", "Run not finished")
            }
            Self::BodyTimeout => (
                StatusCode::REQUEST_TIMEOUT,
                "body-timeout",
                "Request body timed out",
            ),
            Self::TooManyStreams(_) => (
                StatusCode::TOO_MANY_REQUESTS,
                "too-many-streams",
                "Too many progress streams",
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

    /// The API's rendering: an RFC 9457 problem document.
    fn problem_response(self) -> Response {
        let (status, slug, title) = self.problem_parts();
        if let Self::Internal(detail) = &self {
            tracing::error!(%detail, "internal error answering a request");
        }
        // Only an address's refusal repeats the wait in the body; a key's
        // refusal tells it in the `Retry-After` of the limiter's headers.
        let body_retry_after = match &self {
            Self::RateLimited { key: None, rate } => Some(retry_after(rate)),
            Self::TooManyStreams(_) => Some(STREAM_RETRY_AFTER_S),
            Self::Unavailable => Some(UNAVAILABLE_RETRY_AFTER_S),
            Self::TargetLimited { retry_after_s, .. } => Some(*retry_after_s),
            _ => None,
        };
        let problem = Problem {
            problem_type: format!("/problems/{slug}"),
            title: title.to_owned(),
            status: status.as_u16(),
            detail: self.to_string(),
            field: match &self {
                Self::Invalid { field, .. } | Self::BadParameter { field, .. } => {
                    Some((*field).to_owned())
                }
                _ => None,
            },
            retry_after_s: body_retry_after,
        };
        let body = match &self {
            // Points the client at what to follow until the report exists.
            Self::NotFinished { id, status } => {
                let mut doc = serde_json::to_value(&problem).unwrap_or_default();
                if let Some(members) = doc.as_object_mut() {
                    members.insert("run_status".into(), json!(status));
                    members.insert(
                        "links".into(),
                        json!({
                            "run": format!("/api/v1/runs/{id}"),
                            "events": format!("/api/v1/runs/{id}/events"),
                        }),
                    );
                }
                doc.to_string()
            }
            // The quota and what the key keeps, for a client to act on.
            Self::WatchQuota { quota, kept, .. } => {
                let mut doc = serde_json::to_value(&problem).unwrap_or_default();
                if let Some(members) = doc.as_object_mut() {
                    members.insert("watch_quota".into(), json!(quota));
                    members.insert("watches".into(), json!(kept));
                }
                doc.to_string()
            }
            _ => serde_json::to_string(&problem).unwrap_or_default(),
        };
        let mut resp = (status, body).into_response();
        let h = resp.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if let Some(secs) = body_retry_after {
            h.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        match &self {
            Self::RateLimited { rate, .. } => h.extend(rate.headers()),
            // RFC 6750 §3.1.
            Self::Unauthorized(_) => {
                h.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(r#"Bearer error="invalid_token""#),
                );
            }
            // A run takes seconds: come back in a moment.
            Self::NotFinished { .. } => {
                h.insert(header::RETRY_AFTER, HeaderValue::from_static("2"));
            }
            _ => {}
        }
        resp
    }

    /// The pages' rendering: an HTML page in the site's style, written for
    /// people rather than programs.
    fn page_response(self) -> Response {
        let (status, title, detail, retry) = match self {
            Self::NotFound(d) => (StatusCode::NOT_FOUND, "Not found", d, None),
            Self::Forbidden(d) => (StatusCode::FORBIDDEN, "Forbidden", d, None),
            Self::MalformedBody(d) | Self::MalformedQuery(d) => {
                (StatusCode::BAD_REQUEST, "Bad request", d, None)
            }
            Self::BadParameter { field, detail } => (
                StatusCode::BAD_REQUEST,
                "Bad request",
                format!("{field}: {detail}"),
                None,
            ),
            // Pages send only `Retry-After`, not the limiter's `RateLimit-*` headers.
            Self::RateLimited { rate, .. } => {
                let s = retry_after(&rate);
                (
                    StatusCode::TOO_MANY_REQUESTS,
                    "Too many submissions",
                    format!("This address has submitted too many runs. Try again in {s} seconds."),
                    Some(s),
                )
            }
            Self::Unavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                "Temporarily unavailable",
                format!(
                    "protocheck cannot reach its database right now. Try again in {UNAVAILABLE_RETRY_AFTER_S} seconds."
                ),
                Some(UNAVAILABLE_RETRY_AFTER_S),
            ),
            Self::BodyTimeout => (
                StatusCode::REQUEST_TIMEOUT,
                "Request timed out",
                "The form arrived incomplete. Submit it again.".to_owned(),
                None,
            ),
            Self::TargetLimited {
                detail,
                retry_after_s,
            } => (
                StatusCode::TOO_MANY_REQUESTS,
                "Too many runs of this target",
                detail,
                Some(retry_after_s),
            ),
            Self::Internal(d) => {
                tracing::error!(detail = %d, "internal error rendering a page");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Something went wrong",
                    "protocheck could not answer this request. Try again later.".to_owned(),
                    None,
                )
            }
            // No page reports these today; they read as the API words them.
            other => {
                let (status, _, title) = other.problem_parts();
                (status, title, other.to_string(), None)
            }
        };
        let mut resp = Page(
            status,
            ErrorPage {
                title: title.to_owned(),
                detail,
            },
        )
        .into_response();
        if let Some(s) = retry {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        resp
    }
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage {
    title: String,
    detail: String,
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        self.problem_response()
    }
}

/// A [`WebError`] shown as an HTML page: what the pages' handlers fail with.
#[derive(Debug)]
pub struct AsPage(pub WebError);

impl IntoResponse for AsPage {
    fn into_response(self) -> Response {
        self.0.page_response()
    }
}

impl From<WebError> for AsPage {
    fn from(e: WebError) -> Self {
        Self(e)
    }
}

impl From<crate::store::StoreError> for AsPage {
    fn from(e: crate::store::StoreError) -> Self {
        Self(e.into())
    }
}

impl From<crate::store::StoreError> for WebError {
    fn from(e: crate::store::StoreError) -> Self {
        if is_unreachable(&e) {
            tracing::warn!(error = %e, "the database did not answer a request");
            Self::Unavailable
        } else {
            Self::Internal(e.to_string())
        }
    }
}

/// Errors of the connection to the database, not of the statement: the
/// database is down, unreachable or out of connections, and the same request
/// can succeed later. Everything else (a constraint, a decoding error) stays
/// an internal error.
fn is_unreachable(e: &crate::store::StoreError) -> bool {
    use crate::store::StoreError;
    let StoreError::Database(e) = e else {
        return false;
    };
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        // SQLSTATE class 08 (connection exception) and 57P01-57P03 (the
        // server is shutting down or starting).
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|c| c.starts_with("08") || matches!(&*c, "57P01" | "57P02" | "57P03")),
        _ => false,
    }
}

impl From<crate::submit::SubmitError> for WebError {
    fn from(e: crate::submit::SubmitError) -> Self {
        use crate::submit::SubmitError as S;
        match e {
            S::Url(e) => Self::Invalid {
                field: "url",
                detail: e.to_string(),
            },
            S::Options(detail) => Self::Invalid {
                field: "options",
                detail,
            },
            S::WebhookNeedsKey => Self::Invalid {
                field: "options.webhook_url",
                detail: S::WebhookNeedsKey.to_string(),
            },
            S::CredentialsNeedKey => Self::Invalid {
                field: "credentials",
                detail: S::CredentialsNeedKey.to_string(),
            },
            S::CredentialsNotAccepted => Self::Invalid {
                field: "credentials",
                detail: S::CredentialsNotAccepted.to_string(),
            },
            S::Credentials(detail) => Self::Invalid {
                field: "credentials",
                detail,
            },
            S::IdempotencyKey => Self::Invalid {
                field: "Idempotency-Key",
                detail: S::IdempotencyKey.to_string(),
            },
            S::IdempotencyMismatch => Self::Conflict(S::IdempotencyMismatch.to_string()),
            S::TargetLimited {
                detail,
                retry_after_s,
            } => Self::TargetLimited {
                detail,
                retry_after_s,
            },
            S::Store(e) => e.into(),
        }
    }
}

/// What API handlers return: errors answer problem+json.
pub type ApiResult<T> = Result<T, WebError>;
/// What page handlers return: errors answer an HTML page.
pub type PageResult<T> = Result<T, AsPage>;
