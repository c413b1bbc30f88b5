//! REST API v1 handlers.

use super::AppState;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiPath, ApiQuery};
use super::ratelimit::RateState;
use crate::keys;
use crate::queue::{self, Reason, Submission};
use crate::store::{
    ApiKey, HistoryCursor, Run, StoredFinding, Target, WebhookAttempt, WebhookDelivery,
};
use crate::suite::{RunOptions, SuiteChoice};
use crate::webhook;
use axum::Json;
use axum::extract::connect_info::ConnectInfo;
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use uuid::Uuid;

/// Runs listed per page of a target's history, unless the client asks for fewer.
const DEFAULT_PAGE: u32 = 20;
const MAX_PAGE: u32 = 100;

/// The client's address, as the connection reports it. Without connection
/// info (a router driven in-process) every client shares one bucket.
pub struct ClientAddr(pub IpAddr);

impl<S: Send + Sync> FromRequestParts<S> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let ip = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |c| c.0.ip());
        Ok(Self(ip))
    }
}

/// `POST /api/v1/runs`.
#[derive(Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SubmitBody {
    pub url: String,
    #[serde(default)]
    pub suite: Option<String>,
    #[serde(default)]
    pub options: Option<Value>,
    #[serde(default)]
    pub max_age_s: Option<u64>,
    #[serde(default)]
    pub force: Option<bool>,
}

/// `POST /api/v1/runs`. With `Authorization: Bearer <API key>` the submission
/// counts against the key's quota and the run records the key; without the header
/// it counts against the client address. A header that names no live key is
/// refused (401), never taken for anonymous use. Every answer after the rate
/// decision carries the limiter's `RateLimit-*` headers.
pub async fn submit_run(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    body: Result<ApiJson<SubmitBody>, ApiError>,
) -> ApiResult<Response> {
    let key = match headers.get(header::AUTHORIZATION) {
        None => None,
        Some(value) => match keys::authenticate(state.store.as_ref(), value.as_bytes()).await? {
            Ok(key) => Some(key),
            Err(refused) => {
                // Refusals count against the address, so guessing keys is rate limited too.
                if let Err(limited) = state.limiter.check_addr(client) {
                    return Ok(with_rate_headers(
                        ApiError::RateLimited {
                            retry_after_s: limited.retry_after_s.unwrap_or(1),
                        }
                        .into_response(),
                        &limited,
                    ));
                }
                return Ok(invalid_token(refused.detail()));
            }
        },
    };
    // The limit counts every POST, malformed ones too: they cost as much to refuse.
    let decision = match &key {
        Some(k) => state.limiter.check_key(k),
        None => state.limiter.check_addr(client),
    };
    let rate = match decision {
        Ok(rate) => rate,
        Err(limited) => {
            let resp = match &key {
                Some(k) => problem(
                    StatusCode::TOO_MANY_REQUESTS,
                    "rate-limited",
                    "Too many requests",
                    &format!(
                        "too many submissions with the API key `{}`; retry in {}s",
                        k.name,
                        limited.retry_after_s.unwrap_or(1)
                    ),
                ),
                None => ApiError::RateLimited {
                    retry_after_s: limited.retry_after_s.unwrap_or(1),
                }
                .into_response(),
            };
            return Ok(with_rate_headers(resp, &limited));
        }
    };
    if let Some(k) = &key
        && let Err(e) = state.store.touch_api_key(k.id, crate::now_ms()).await
    {
        tracing::warn!(key = %k.id, error = %e, "recording the use of an API key failed");
    }
    let resp = match accept_submission(&state, key.as_ref(), &headers, body).await {
        Ok(resp) => resp,
        Err(e) => e.into_response(),
    };
    Ok(with_rate_headers(resp, &rate))
}

fn with_rate_headers(mut resp: Response, rate: &RateState) -> Response {
    resp.headers_mut().extend(rate.headers());
    resp
}

/// A problem+json answer built here rather than from [`ApiError`].
fn problem(status: StatusCode, slug: &str, title: &str, detail: &str) -> Response {
    let body = json!({
        "type": format!("/problems/{slug}"),
        "title": title,
        "status": status.as_u16(),
        "detail": detail,
    });
    (
        status,
        [(header::CONTENT_TYPE, "application/problem+json")],
        body.to_string(),
    )
        .into_response()
}

/// 401 for a credential that names no live key (RFC 6750 §3.1).
fn invalid_token(detail: &str) -> Response {
    let mut resp = problem(
        StatusCode::UNAUTHORIZED,
        "invalid-token",
        "Invalid API key",
        detail,
    );
    resp.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(r#"Bearer error="invalid_token""#),
    );
    resp
}

async fn accept_submission(
    state: &AppState,
    key: Option<&ApiKey>,
    headers: &HeaderMap,
    body: Result<ApiJson<SubmitBody>, ApiError>,
) -> ApiResult<Response> {
    let ApiJson(body) = body?;

    let suite_name = body.suite.as_deref().unwrap_or("auto");
    let suite = SuiteChoice::parse(suite_name).ok_or_else(|| ApiError::Invalid {
        field: "suite",
        detail: format!("suite `{suite_name}` is unknown; use `auto`, `mcp` or `rcp`"),
    })?;
    let options: RunOptions = match &body.options {
        None | Some(Value::Null) => RunOptions::default(),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| ApiError::Invalid {
            field: "options",
            detail: format!("options: {e}"),
        })?,
    };
    if options.webhook_url.is_some() && key.is_none() {
        return Err(ApiError::Invalid {
            field: "options.webhook_url",
            detail: queue::WEBHOOK_NEEDS_KEY.into(),
        });
    }
    let idempotency = match headers.get("idempotency-key") {
        None => None,
        Some(v) => {
            let key = v.to_str().map_err(|_| ApiError::Invalid {
                field: "Idempotency-Key",
                detail: "the Idempotency-Key must be visible ASCII".into(),
            })?;
            // The parsed body, re-serialised, so formatting differences are the same request.
            let canonical = serde_json::to_vec(&body).unwrap_or_default();
            Some((key.to_owned(), queue::request_hash(&canonical)))
        }
    };
    let submitted = state
        .queue
        .submit_as(
            Submission {
                url: body.url,
                suite,
                options,
                max_age_s: body.max_age_s.unwrap_or(queue::DEFAULT_MAX_AGE_S),
                force: body.force.unwrap_or(false),
                idempotency,
            },
            key.map(|k| k.id),
        )
        .await?;

    let location = format!("/api/v1/runs/{}", submitted.run.id);
    let status = if submitted.reason == Reason::Queued {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    };
    let owner = state.store.run_api_key(submitted.run.id).await?;
    let mut doc = run_json(&submitted.run, None);
    doc["owner"] = json!(owner.as_ref().map(ApiKey::display_owner));
    doc["reason"] = json!(submitted.reason);
    Ok((status, [(header::LOCATION, location)], Json(doc)).into_response())
}

fn parse_run_id(raw: &str) -> ApiResult<Uuid> {
    Uuid::parse_str(raw)
        .map_err(|_| ApiError::NotFound(format!("no run has the id `{}`", clip(raw))))
}

fn clip(s: &str) -> String {
    s.chars().take(64).collect()
}

/// `GET /api/v1/runs/{id}`: status, verdict, findings and timings.
pub async fn show_run(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    let id = parse_run_id(&id)?;
    let run = state
        .store
        .get_run(id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no run has the id `{id}`")))?;
    let findings = state.store.findings(id, -1).await?;
    let owner = state.store.run_api_key(id).await?;
    let mut doc = run_json(&run, Some(&findings));
    // The key's owner (or name), never anything that would authenticate.
    doc["owner"] = json!(owner.as_ref().map(ApiKey::display_owner));
    if run.options.webhook_url.is_some() {
        doc["webhook"] = webhook_json(&run, state.store.run_webhook(id).await?);
    }
    Ok(Json(doc))
}

/// `GET /api/v1/targets/{id}`.
pub async fn show_target(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    let target = find_target(&state, &id).await?;
    Ok(Json(target_json(&target)))
}

async fn find_target(state: &AppState, id: &str) -> ApiResult<Target> {
    state
        .store
        .get_target(id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no target has the id `{}`", clip(id))))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryQuery {
    pub limit: Option<u32>,
    /// Cursor from the previous page's `next`.
    pub before: Option<String>,
}

/// `GET /api/v1/targets/{id}/runs`: newest first, paginated by cursor.
pub async fn target_history(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiQuery(q): ApiQuery<HistoryQuery>,
) -> ApiResult<Json<Value>> {
    let target = find_target(&state, &id).await?;
    let limit = q.limit.unwrap_or(DEFAULT_PAGE);
    if limit == 0 || limit > MAX_PAGE {
        return Err(ApiError::Invalid {
            field: "limit",
            detail: format!("limit must be between 1 and {MAX_PAGE}"),
        });
    }
    let before = match q.before.as_deref() {
        None => None,
        Some(raw) => {
            let run_id = Uuid::parse_str(raw).map_err(|_| ApiError::Invalid {
                field: "before",
                detail: "before must be a run id from `next`".into(),
            })?;
            let run = state
                .store
                .get_run(run_id)
                .await?
                .filter(|r| r.target_id == target.id)
                .ok_or_else(|| ApiError::Invalid {
                    field: "before",
                    detail: "before names no run of this target".into(),
                })?;
            Some(HistoryCursor {
                created_at_ms: run.created_at_ms,
                id: run.id,
            })
        }
    };
    // One extra row tells whether another page exists.
    let mut runs = state
        .store
        .target_runs(&target.id, before.as_ref(), limit + 1)
        .await?;
    let next = if runs.len() > limit as usize {
        runs.truncate(limit as usize);
        runs.last().map(|r| r.id.to_string())
    } else {
        None
    };
    let next_link = next.as_ref().map(|n| {
        format!(
            "/api/v1/targets/{}/runs?limit={limit}&before={n}",
            target.id
        )
    });
    Ok(Json(json!({
        "target": target_json(&target),
        "runs": runs.iter().map(|r| run_json(r, None)).collect::<Vec<_>>(),
        "next": next,
        "links": {"next": next_link},
    })))
}

/// Any other path.
pub async fn not_found(uri: axum::http::Uri) -> ApiError {
    ApiError::NotFound(format!("nothing is served at `{}`", clip(uri.path())))
}

/// RFC 3339 time with milliseconds, in UTC.
pub fn rfc3339(ms: i64) -> String {
    let t =
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_millis(t).to_string()
}

pub fn target_json(t: &Target) -> Value {
    json!({
        "id": t.id,
        "url": t.canonical_url,
        "protocol": t.protocol,
        "created_at": rfc3339(t.created_at_ms),
        "links": {"self": format!("/api/v1/targets/{}", t.id), "runs": format!("/api/v1/targets/{}/runs", t.id)},
    })
}

pub fn finding_json(f: &StoredFinding) -> Value {
    let mut v = serde_json::to_value(f).unwrap_or(Value::Null);
    v["created_at"] = json!(rfc3339(f.created_at_ms));
    if let Some(obj) = v.as_object_mut() {
        obj.remove("created_at_ms");
    }
    v
}

/// A run's webhook and its delivery attempts. The URL is shown without its path
/// and query, which often carry the receiver's secret.
fn webhook_json(run: &Run, delivery: Option<(WebhookDelivery, Vec<WebhookAttempt>)>) -> Value {
    let url = run.options.webhook_url.as_deref().map(webhook::display_url);
    let (state, deliveries) = match delivery {
        // Created when the run ends.
        None => ("waiting", Vec::new()),
        Some((d, attempts)) => (
            match d.state.as_str() {
                "delivered" => "delivered",
                "failed" => "failed",
                _ => "pending",
            },
            attempts,
        ),
    };
    json!({
        "url": url,
        "state": state,
        "deliveries": deliveries.iter().map(|a| json!({
            "attempt": a.attempt,
            "at": rfc3339(a.at_ms),
            "status_code": a.status_code,
            "error": a.error,
            "next_attempt_at": a.next_attempt_at_ms.map(rfc3339),
        })).collect::<Vec<_>>(),
    })
}

/// Options as shown: a webhook URL without its path and query (see [`webhook_json`]).
fn shown_options(options: &RunOptions) -> Value {
    let mut v = serde_json::to_value(options).unwrap_or(Value::Null);
    if let Some(url) = &options.webhook_url {
        v["webhook_url"] = json!(webhook::display_url(url));
    }
    v
}

/// The API's view of a run; `findings` is included when given.
pub fn run_json(run: &Run, findings: Option<&[StoredFinding]>) -> Value {
    let duration_ms = match (run.started_at_ms, run.finished_at_ms) {
        (Some(s), Some(f)) => Some(f - s),
        _ => None,
    };
    let mut v = json!({
        "id": run.id,
        "url": run.target_url,
        "target_id": run.target_id,
        "suite": run.suite,
        "suite_version": run.suite_version,
        "status": run.status,
        "options": shown_options(&run.options),
        "attempts": run.attempts,
        "max_attempts": run.max_attempts,
        "created_at": rfc3339(run.created_at_ms),
        "started_at": run.started_at_ms.map(rfc3339),
        "finished_at": run.finished_at_ms.map(rfc3339),
        "duration_ms": duration_ms,
        "verdict": run.verdict,
        "error": run.error,
        "links": {
            "self": format!("/api/v1/runs/{}", run.id),
            "events": format!("/api/v1/runs/{}/events", run.id),
            "target": format!("/api/v1/targets/{}", run.target_id),
        },
    });
    if let Some(findings) = findings {
        v["findings"] = Value::Array(findings.iter().map(finding_json).collect());
    }
    v
}
