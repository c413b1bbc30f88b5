//! Health, readiness and metrics.

use super::AppState;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;

/// Liveness: the process answers.
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operations",
    summary = "Liveness",
    responses((status = 200, description = "The process answers", content_type = "text/plain",
        body = String, example = "ok\n")),
)]
pub async fn healthz() -> impl IntoResponse {
    (StatusCode::OK, "ok\n")
}

/// Readiness: the database answers.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "operations",
    summary = "Readiness",
    responses(
        (status = 200, description = "The database answers", content_type = "text/plain",
            body = String, example = "ready\n"),
        (status = 503, description = "The database does not answer", content_type = "text/plain",
            body = String, example = "database unreachable\n"),
    ),
)]
pub async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    let failure = match tokio::time::timeout(READY_WITHIN, state.store.ping()).await {
        Ok(Ok(())) => return (StatusCode::OK, "ready\n"),
        Ok(Err(e)) => e.to_string(),
        Err(_) => format!("the database did not answer within {READY_WITHIN:?}"),
    };
    tracing::warn!(error = %failure, "readiness check failed");
    (StatusCode::SERVICE_UNAVAILABLE, "database unreachable\n")
}

/// How long `/readyz` waits for `SELECT 1`. A database that answers at all
/// answers in milliseconds; one that has gone silent (a host that is down, a
/// network partition) would otherwise hold the probe until the pool's own
/// timeout, and the load balancer asking would see a hang, not a 503.
pub const READY_WITHIN: std::time::Duration = std::time::Duration::from_secs(1);

/// How long a scrape waits for the run counts: a healthy database gives them
/// in milliseconds, and the scrape (#31: within 1 s) must not wait longer.
pub const METRICS_STORE_WITHIN: std::time::Duration = std::time::Duration::from_millis(500);

/// Prometheus text exposition.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    summary = "Prometheus metrics",
    responses((status = 200, description = "Prometheus text exposition format 0.0.4",
        content_type = "text/plain", body = String)),
)]
pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    // A scrape must not wait for a database in trouble: the process metrics
    // are answered at once, the run counts only if they come within
    // `METRICS_STORE_WITHIN`.
    let by_status =
        match tokio::time::timeout(METRICS_STORE_WITHIN, state.store.count_by_status()).await {
            Ok(Ok(counts)) => Some(counts),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "reading queue counts for metrics failed");
                None
            }
            Err(_) => {
                tracing::warn!(
                    "the database did not give the queue counts within {METRICS_STORE_WITHIN:?}"
                );
                None
            }
        };
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics.render(by_status.as_deref()),
    )
}
