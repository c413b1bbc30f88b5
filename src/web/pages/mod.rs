//! HTML pages: the submit form (`home`), the run report with live progress
//! (`run`), the target history (`target`), and errors in the same style
//! (rendered by [`super::error`]). Every target-controlled string goes through
//! askama's HTML escaping; the live progress script only ever sets
//! `textContent`, and the pages' Content-Security-Policy allows no inline script.
//!
//! This module holds what the three pages share: the response wrapper, the
//! security headers, the static files, and the run rows of the home and target
//! pages.

mod directory;
mod home;
mod run;
mod target;

pub use directory::directory_page;
pub use home::{HomeForm, home, submit_form};
pub(crate) use home::{csrf_cookie, new_csrf_token, same_origin, with_csrf_cookie};
pub use run::show_run_page;
pub use target::show_target_page;

use super::error::AsPage;
use super::extract::PagePath;
use crate::rfc3339;
use crate::store::{Run, RunStatus};
use askama::Template;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use uuid::Uuid;

/// The pages' policy: scripts and styles only from this origin, nothing framed.
pub const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Renders a template with a status code; a rendering failure becomes a plain 500.
pub struct Page<T>(pub StatusCode, pub T);

impl<T: Template> IntoResponse for Page<T> {
    fn into_response(self) -> Response {
        match self.1.render() {
            Ok(html) => (
                self.0,
                [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
                html,
            )
                .into_response(),
            Err(e) => {
                tracing::error!(error = %e, "rendering a page failed");
                (StatusCode::INTERNAL_SERVER_ERROR, "internal error").into_response()
            }
        }
    }
}

/// Bounds a page read by [`crate::web::STORE_WITHIN`]: a page reads the store,
/// and a database gone silent would otherwise hold it for ever. It answers the
/// 503 page instead. Posts are left to the form's own bound, which comes after
/// the body is read (a stalled body is a 408, not a 503).
pub async fn page_deadline(
    axum::extract::State(state): axum::extract::State<crate::web::AppState>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if !matches!(
        *req.method(),
        axum::http::Method::GET | axum::http::Method::HEAD
    ) {
        return next.run(req).await;
    }
    crate::web::store_deadline(state.store.as_ref(), async {
        Ok::<_, AsPage>(next.run(req).await)
    })
    .await
    .unwrap_or_else(IntoResponse::into_response)
}

/// Adds the page security headers to every HTML response.
pub async fn page_headers(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(PAGE_CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    resp
}

/// `/static/…`: the stylesheet and the progress script, compiled in.
pub async fn static_file(
    PagePath(name): PagePath<String>,
    headers: axum::http::HeaderMap,
    uri: axum::http::Uri,
) -> Response {
    let (body, ctype) = match name.as_str() {
        "style.css" => (
            include_str!("../../../static/style.css"),
            "text/css; charset=utf-8",
        ),
        "run.js" => (
            include_str!("../../../static/run.js"),
            "text/javascript; charset=utf-8",
        ),
        // A page for a browser, problem+json for a program, as any unknown path.
        _ => return crate::web::not_found(headers, uri).await,
    };
    (
        [
            (header::CONTENT_TYPE, ctype),
            (header::CACHE_CONTROL, "public, max-age=300"),
        ],
        body,
    )
        .into_response()
}

/// A run as a row of the home page's and the target page's lists.
struct RunRow {
    id: Uuid,
    url: String,
    suite: String,
    result: String,
    status_class: &'static str,
    when_iso: String,
    when_relative: String,
    duration: String,
}

fn clip(s: &str) -> String {
    s.chars().take(64).collect()
}

fn status_class(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Passed => "passed",
        RunStatus::Failed => "failed",
        RunStatus::Error => "error",
        _ => "pending",
    }
}

fn run_row(r: &Run, now: i64) -> RunRow {
    let result = match (&r.verdict, r.status) {
        (Some(v), _) => v.summary.clone(),
        (None, status) => status.as_str().to_owned(),
    };
    RunRow {
        id: r.id,
        url: r.target_url.clone(),
        suite: r
            .verdict
            .as_ref()
            .map_or(r.suite.as_str(), |v| v.suite.as_str())
            .to_owned(),
        result,
        status_class: status_class(r.status),
        when_iso: rfc3339(r.created_at_ms),
        when_relative: relative(now, r.created_at_ms),
        duration: match (r.started_at_ms, r.finished_at_ms) {
            (Some(s), Some(f)) => duration(f - s),
            _ => "—".to_owned(),
        },
    }
}

/// "3 min ago", for people; the absolute time sits beside it.
fn relative(now_ms: i64, then_ms: i64) -> String {
    let s = (now_ms - then_ms).max(0) / 1000;
    match s {
        0..=9 => "just now".to_owned(),
        10..=59 => format!("{s} s ago"),
        60..=3599 => format!("{} min ago", s / 60),
        3600..=86_399 => format!("{} h ago", s / 3600),
        _ => format!("{} days ago", s / 86_400),
    }
}

/// Milliseconds below a second, seconds with one decimal above.
fn duration(ms: i64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_durations_read_well() {
        assert_eq!(relative(100_000, 95_000), "just now");
        assert_eq!(relative(100_000, 40_000), "1 min ago");
        assert_eq!(relative(10_000_000, 0), "2 h ago");
        assert_eq!(duration(850), "850 ms");
        assert_eq!(duration(1260), "1.3 s");
    }
}
