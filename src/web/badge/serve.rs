//! The badge routes: a badge by target key or by server URL, as SVG or
//! shields.io JSON with validators, and the link to the report behind it.

use super::{Drawn, draw, is_target_key, report_path};
use crate::suite::SuiteId;
use crate::target::CanonicalUrl;
use crate::web::AppState;
use crate::web::error::{ApiResult, WebError};
use crate::web::extract::{ApiPath, ApiQuery};
use crate::web::openapi::{
    BadRequest, InternalError, NotFound, ShieldsBadge, TimedOut, Unprocessable,
};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use utoipa::IntoParams;

/// The SVG's own policy: no scripts, no loads, inline styles only. An SVG opened
/// directly in a browser is a document, and this keeps it inert.
const SVG_CSP: &str = "default-src 'none'; style-src 'unsafe-inline'";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Svg,
    Json,
}

fn unknown_suite(s: &str) -> WebError {
    WebError::NotFound(format!(
        "no badge for the suite `{}`; use `mcp` or `rcp`",
        s.chars().take(32).collect::<String>()
    ))
}

/// `GET /badge/{target}/{suite}.svg` and `.json`.
#[utoipa::path(
    get,
    path = "/badge/{target}/{file}",
    tag = "badges",
    summary = "A target's badge",
    description = "The badge of the newest finished run of the target and suite (`pending`, \
        `error` or `unknown` otherwise), as SVG or in the shields.io endpoint schema.",
    params(
        ("target" = String, Path, description = "The target's key: 24 lower-case hex digits"),
        ("file" = String, Path, pattern = "^(mcp|rcp)\\.(svg|json)$",
            description = "`{suite}.svg` or `{suite}.json`, the suite `mcp` or `rcp`"),
        IfNoneMatch,
    ),
    responses(
        (status = 200, description = "The badge",
            content(
                (String = "image/svg+xml"),
                (ShieldsBadge = "application/json"),
            ),
            headers(
                ("ETag" = String, description = "Strong validator of the body"),
                ("Cache-Control" = String, description = "`max-age=…`"),
            )),
        (status = 304, description = "`If-None-Match` names the current badge",
            headers(("ETag" = String, description = "Strong validator of the body"))),
        (status = 404, response = NotFound),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn badge_by_key(
    State(state): State<AppState>,
    ApiPath((target, file)): ApiPath<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let (suite, format) = match file.rsplit_once('.') {
        Some((suite, "svg")) => (suite, Format::Svg),
        Some((suite, "json")) => (suite, Format::Json),
        _ => {
            return Err(WebError::NotFound(
                "a badge is `{suite}.svg` or `{suite}.json`".into(),
            ));
        }
    };
    let suite = SuiteId::parse(suite).ok_or_else(|| unknown_suite(suite))?;
    let drawn = draw(&state, &target, suite).await?;
    if drawn.of_target {
        crate::web::watch::badge_served(&state, &target, suite);
    }
    Ok(respond(&drawn, format, &headers))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct BadgeQuery {
    /// The server's URL, as it was submitted (it is canonicalised).
    pub url: String,
    #[param(value_type = SuiteId)]
    pub suite: String,
}

/// The conditional request header of badges (documentation only: the
/// handlers read it themselves).
#[derive(IntoParams)]
#[into_params(parameter_in = Header)]
pub struct IfNoneMatch {
    /// ETags of badges the client holds; a match answers 304.
    #[param(rename = "If-None-Match", value_type = String, required = false)]
    pub if_none_match: Option<String>,
}

async fn badge_by_url(
    state: &AppState,
    q: &BadgeQuery,
    format: Format,
    headers: &HeaderMap,
) -> ApiResult<Response> {
    let url = CanonicalUrl::parse(&q.url).map_err(|e| WebError::Invalid {
        field: "url",
        detail: e.to_string(),
    })?;
    let suite = SuiteId::parse(&q.suite).ok_or_else(|| WebError::Invalid {
        field: "suite",
        detail: "suite must be `mcp` or `rcp`".into(),
    })?;
    let key = url.key();
    let drawn = draw(state, &key, suite).await?;
    if drawn.of_target {
        crate::web::watch::badge_served(state, &key, suite);
    }
    Ok(respond(&drawn, format, headers))
}

/// `GET /badge.svg?url=…&suite=…`.
#[utoipa::path(
    get,
    path = "/badge.svg",
    tag = "badges",
    summary = "A badge by server URL, as SVG",
    params(BadgeQuery, IfNoneMatch),
    responses(
        (status = 200, description = "The badge", content_type = "image/svg+xml", body = String,
            headers(
                ("ETag" = String, description = "Strong validator of the body"),
                ("Cache-Control" = String, description = "`max-age=…`"),
            )),
        (status = 304, description = "`If-None-Match` names the current badge",
            headers(("ETag" = String, description = "Strong validator of the body"))),
        (status = 400, response = BadRequest),
        (status = 422, response = Unprocessable),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn svg_by_url(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<BadgeQuery>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    badge_by_url(&state, &q, Format::Svg, &headers).await
}

/// `GET /badge.json?url=…&suite=…`.
#[utoipa::path(
    get,
    path = "/badge.json",
    tag = "badges",
    summary = "A badge by server URL, in the shields.io endpoint schema",
    params(BadgeQuery, IfNoneMatch),
    responses(
        (status = 200, description = "The badge", body = ShieldsBadge,
            headers(
                ("ETag" = String, description = "Strong validator of the body"),
                ("Cache-Control" = String, description = "`max-age=…`"),
            )),
        (status = 304, description = "`If-None-Match` names the current badge",
            headers(("ETag" = String, description = "Strong validator of the body"))),
        (status = 400, response = BadRequest),
        (status = 422, response = Unprocessable),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn json_by_url(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<BadgeQuery>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    badge_by_url(&state, &q, Format::Json, &headers).await
}

/// True when `If-None-Match` names `etag` (weak comparison, as RFC 9110 §13.1.2
/// prescribes for it) or is `*`.
fn not_modified(headers: &HeaderMap, etag: &HeaderValue) -> bool {
    let Ok(etag) = etag.to_str() else {
        return false;
    };
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}

fn respond(drawn: &Drawn, format: Format, headers: &HeaderMap) -> Response {
    let (body, etag, content_type) = match format {
        Format::Svg => (&drawn.svg, &drawn.svg_etag, "image/svg+xml"),
        Format::Json => (&drawn.json, &drawn.json_etag, "application/json"),
    };
    let mut resp = if not_modified(headers, etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut resp = body.clone().into_response();
        resp.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        resp
    };
    let h = resp.headers_mut();
    h.insert(header::ETAG, etag.clone());
    h.insert(header::CACHE_CONTROL, drawn.cache_control.clone());
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // Badges are public; pages elsewhere may fetch the JSON.
    h.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    if format == Format::Svg {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(SVG_CSP),
        );
    }
    resp
}

/// `GET /targets/{target}/{suite}/latest`: redirects to the report of the run
/// the badge shows (the newest finished, else the newest active).
#[utoipa::path(
    get,
    path = "/targets/{target}/{suite}/latest",
    tag = "badges",
    summary = "The report behind a badge",
    params(
        ("target" = String, Path, description = "The target's key: 24 lower-case hex digits"),
        ("suite" = SuiteId, Path),
    ),
    responses(
        (status = 302, description = "To the HTML report of the run the badge shows",
            headers(
                ("Location" = String, description = "`/runs/{id}`"),
                ("Cache-Control" = String, description = "`no-cache`"),
            )),
        (status = 404, response = NotFound),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn latest_report(
    State(state): State<AppState>,
    ApiPath((target, suite)): ApiPath<(String, String)>,
) -> ApiResult<Response> {
    let suite_id = SuiteId::parse(&suite).ok_or_else(|| unknown_suite(&suite))?;
    let known = if is_target_key(&target) {
        state.store.get_target(&target).await?
    } else {
        None
    };
    let target = known.ok_or_else(|| {
        WebError::NotFound(format!(
            "no target has the id `{}`",
            target.chars().take(64).collect::<String>()
        ))
    })?;
    let runs = state
        .store
        .latest_runs_for_suite(&target.id, suite_id.as_str())
        .await?;
    // The run the badge shows, which is not always the newest (see `shown`).
    let run = super::shown(&runs, state.badges.age_now())
        .run()
        .cloned()
        .ok_or_else(|| {
            WebError::NotFound(format!(
                "target `{}` has no {} run yet",
                target.id,
                suite_id.as_str()
            ))
        })?;
    Ok((
        StatusCode::FOUND,
        [
            (header::LOCATION, report_path(run.id)),
            // Always asked again: the latest run changes.
            (header::CACHE_CONTROL, "no-cache".to_owned()),
        ],
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_none_match_uses_weak_comparison_and_lists() {
        let tag = HeaderValue::from_static("\"abc\"");
        let with = |v: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(header::IF_NONE_MATCH, HeaderValue::from_static(v));
            h
        };
        assert!(not_modified(&with("\"abc\""), &tag));
        assert!(not_modified(&with("W/\"abc\""), &tag));
        assert!(not_modified(&with("\"x\", \"abc\""), &tag));
        assert!(not_modified(&with("*"), &tag));
        assert!(!not_modified(&with("\"abd\""), &tag));
        assert!(!not_modified(&HeaderMap::new(), &tag));
    }
}
