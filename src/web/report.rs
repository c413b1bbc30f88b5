//! Report downloads of a run (`report.json`, `report.junit.xml`,
//! `report.sarif`) and the report's published JSON Schema.
//!
//! A run still queued or running answers 409 with its status rather than a
//! partial report: a CI job that reads a report to decide a build must not
//! mistake half a run for the verdict, and it can wait on `/events` or poll.

use super::AppState;
use super::error::{ApiResult, WebError};
use super::extract::ApiPath;
use super::openapi::{InternalError, NotFound, RunNotFinished, TimedOut};
use crate::report::{self, Format, Report};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use uuid::Uuid;

/// JUnit XML has no registered media type; `application/xml` is what CI
/// servers and browsers handle (a made-up `application/junit+xml` is not).
const JUNIT_TYPE: &str = "application/xml";
/// SARIF's registered media type (SARIF 2.1.0 Appendix, IANA).
const SARIF_TYPE: &str = "application/sarif+json";

/// The finished run's report, or why there is none.
async fn finished_report(
    state: &AppState,
    raw_id: &str,
    headers: &axum::http::HeaderMap,
) -> ApiResult<Report> {
    // Malformed ids are unknown ids, as on `GET /api/v1/runs/{id}`.
    let id = Uuid::parse_str(raw_id).map_err(|_| {
        WebError::NotFound(format!(
            "no run has the id `{}`",
            raw_id.chars().take(64).collect::<String>()
        ))
    })?;
    let run = state
        .store
        .get_run(id)
        .await?
        .ok_or_else(|| WebError::NotFound(format!("no run has the id `{id}`")))?;
    if !run.status.is_finished() {
        return Err(WebError::NotFinished {
            id,
            status: run.status,
        });
    }
    let findings = state.store.findings(id, -1).await?;
    let mut report = Report::from_run(&run, &findings);
    report.link_rules(&crate::web::badge::public_base(state, headers));
    Ok(report)
}

fn with_type(body: String, content_type: &'static str) -> Response {
    let mut resp = body.into_response();
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}

/// `GET /api/v1/runs/{id}/report.json`.
#[utoipa::path(
    get,
    path = "/api/v1/runs/{id}/report.json",
    tag = "reports",
    summary = "A finished run's report as JSON",
    params(("id" = String, Path, description = "The run's id (a UUID)")),
    responses(
        (status = 200, description = "The report, valid against `/api/v1/schema/report.json`",
            content_type = "application/json", body = Object),
        (status = 404, response = NotFound),
        (status = 409, response = RunNotFinished),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn report_json(
    axum::extract::State(state): axum::extract::State<AppState>,
    ApiPath(id): ApiPath<String>,
    headers: axum::http::HeaderMap,
) -> ApiResult<Response> {
    let report = finished_report(&state, &id, &headers).await?;
    Ok(with_type(report.render(Format::Json), "application/json"))
}

/// `GET /api/v1/runs/{id}/report.junit.xml`.
#[utoipa::path(
    get,
    path = "/api/v1/runs/{id}/report.junit.xml",
    tag = "reports",
    summary = "A finished run's report as JUnit XML",
    params(("id" = String, Path, description = "The run's id (a UUID)")),
    responses(
        (status = 200, description = "One test case per rule", content_type = "application/xml",
            body = String),
        (status = 404, response = NotFound),
        (status = 409, response = RunNotFinished),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn report_junit(
    axum::extract::State(state): axum::extract::State<AppState>,
    ApiPath(id): ApiPath<String>,
    headers: axum::http::HeaderMap,
) -> ApiResult<Response> {
    let report = finished_report(&state, &id, &headers).await?;
    Ok(with_type(report.render(Format::Junit), JUNIT_TYPE))
}

/// `GET /api/v1/runs/{id}/report.sarif`.
#[utoipa::path(
    get,
    path = "/api/v1/runs/{id}/report.sarif",
    tag = "reports",
    summary = "A finished run's report as SARIF 2.1.0",
    params(("id" = String, Path, description = "The run's id (a UUID)")),
    responses(
        (status = 200, description = "One result per failing or warning rule",
            content_type = "application/sarif+json", body = Object),
        (status = 404, response = NotFound),
        (status = 409, response = RunNotFinished),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn report_sarif(
    axum::extract::State(state): axum::extract::State<AppState>,
    ApiPath(id): ApiPath<String>,
    headers: axum::http::HeaderMap,
) -> ApiResult<Response> {
    let report = finished_report(&state, &id, &headers).await?;
    Ok(with_type(report.render(Format::Sarif), SARIF_TYPE))
}

/// `GET /api/v1/schema/report.json`: the report's JSON Schema.
#[utoipa::path(
    get,
    path = "/api/v1/schema/report.json",
    tag = "reports",
    summary = "The JSON report's JSON Schema",
    responses(
        (status = 200, description = "The versioned JSON Schema of `report.json`",
            content_type = "application/schema+json", body = Object),
        (status = 503, response = TimedOut),
    )
)]
pub async fn report_schema() -> Response {
    let mut resp = with_type(report::SCHEMA.to_owned(), "application/schema+json");
    resp.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    resp
}
