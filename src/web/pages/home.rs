//! `GET /` and `POST /`: the submit form, with the recent runs below it.

use super::{Page, RunRow, clip, run_row};
use crate::submit::{self, Submission, SubmitError};
use crate::suite::{McpRevision, RunOptions, SuiteChoice};
use crate::web::AppState;
use crate::web::api::ClientAddr;
use crate::web::error::{PageResult, WebError};
use askama::Template;
use axum::Form;
use axum::extract::State;
use axum::extract::rejection::FormRejection;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

/// Runs listed on the home page.
const RECENT_RUNS: u32 = 20;
/// Name of the cookie carrying the form's anti-forgery token.
const CSRF_COOKIE: &str = "pc_csrf";

#[derive(Debug, Default, Deserialize)]
pub struct HomeForm {
    #[serde(default)]
    pub url: String,
    #[serde(default = "default_suite")]
    pub suite: String,
    #[serde(default = "default_profile")]
    pub profile: String,
    /// `newest`, `2026-07-28`, `2025-11-25` or `all` (see `McpRevision`).
    #[serde(default = "default_mcp_revision")]
    pub mcp_revision: String,
    #[serde(default)]
    pub allow_tool_calls: Option<String>,
    #[serde(default)]
    pub allow_writes: Option<String>,
    #[serde(default)]
    pub server_json: String,
    #[serde(default)]
    pub force: Option<String>,
    /// "List this server in the public directory" (off by default).
    #[serde(default)]
    pub list_in_directory: Option<String>,
    #[serde(default)]
    pub csrf: String,
}

fn default_suite() -> String {
    "auto".into()
}

fn default_profile() -> String {
    "spec".into()
}

fn default_mcp_revision() -> String {
    McpRevision::Newest.as_str().into()
}

/// The form as shown again (with what the user typed).
#[derive(Default)]
struct FormView {
    url: String,
    suite: String,
    profile: String,
    mcp_revision: String,
    allow_tool_calls: bool,
    allow_writes: bool,
    server_json: String,
    force: bool,
    advanced_open: bool,
    list_in_directory: bool,
}

#[derive(Default)]
struct FormErrors {
    url: Option<String>,
    server_json: Option<String>,
    form: Option<String>,
}

#[derive(Template)]
#[template(path = "home.html")]
struct HomePage {
    csrf: String,
    /// Whether the service keeps a directory (the form then offers to list).
    directory: bool,
    form: FormView,
    errors: FormErrors,
    recent: Vec<RunRow>,
}

pub(crate) fn new_csrf_token() -> String {
    hex::encode(rand::random::<[u8; 16]>())
}

pub(crate) fn csrf_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == CSRF_COOKIE)
        .map(|(_, v)| v.to_owned())
}

pub(crate) fn with_csrf_cookie(mut resp: Response, token: &str) -> Response {
    // SameSite=Strict: a cross-site form post arrives without it and is refused.
    let cookie = format!("{CSRF_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict");
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        resp.headers_mut().append(header::SET_COOKIE, v);
    }
    resp
}

async fn home_page(
    state: &AppState,
    status: StatusCode,
    csrf: String,
    form: FormView,
    errors: FormErrors,
) -> PageResult<Response> {
    let recent = state.store.recent_runs(RECENT_RUNS).await?;
    let recent = recent.iter().map(run_row).collect();
    let page = HomePage {
        csrf: csrf.clone(),
        directory: state.directory.is_some(),
        form,
        errors,
        recent,
    };
    Ok(with_csrf_cookie(Page(status, page).into_response(), &csrf))
}

/// `GET /`.
pub async fn home(State(state): State<AppState>, headers: HeaderMap) -> PageResult<Response> {
    let csrf = csrf_cookie(&headers)
        .filter(|t| t.len() == 32)
        .unwrap_or_else(new_csrf_token);
    let form = FormView {
        suite: "auto".into(),
        profile: "spec".into(),
        mcp_revision: default_mcp_revision(),
        ..FormView::default()
    };
    home_page(&state, StatusCode::OK, csrf, form, FormErrors::default()).await
}

/// Refuses a form post that another site made the browser send.
pub(crate) fn same_origin(headers: &HeaderMap) -> bool {
    if headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == "cross-site" || v == "same-site")
    {
        return false;
    }
    match (
        headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()),
        headers.get(header::HOST).and_then(|v| v.to_str().ok()),
    ) {
        (Some(origin), Some(host)) => url::Url::parse(origin).ok().is_some_and(|o| {
            let authority = match o.port() {
                Some(p) => format!("{}:{p}", o.host_str().unwrap_or_default()),
                None => o.host_str().unwrap_or_default().to_owned(),
            };
            authority.eq_ignore_ascii_case(host)
        }),
        _ => true,
    }
}

/// `POST /`: the same path as the API (validation, dedup, freshness, rate limit).
pub async fn submit_form(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    form: Result<Form<HomeForm>, FormRejection>,
) -> PageResult<Response> {
    crate::web::store_deadline(state.store.as_ref(), submit(&state, client, &headers, form)).await
}

async fn submit(
    state: &AppState,
    client: std::net::IpAddr,
    headers: &HeaderMap,
    form: Result<Form<HomeForm>, FormRejection>,
) -> PageResult<Response> {
    if !same_origin(headers) {
        return Err(WebError::Forbidden(
            "This form can only be submitted from protocheck's own page.".into(),
        )
        .into());
    }
    state
        .limiter
        .check_addr(client)
        .map_err(|rate| WebError::RateLimited { key: None, rate })?;
    let Form(form) = form.map_err(WebError::from)?;
    let cookie = csrf_cookie(headers);
    let csrf = cookie
        .clone()
        .filter(|t| t.len() == 32)
        .unwrap_or_else(new_csrf_token);
    if cookie.as_deref() != Some(form.csrf.as_str()) || form.csrf.is_empty() {
        return Err(WebError::Forbidden(
            "The form has expired. Reload the start page and submit again.".into(),
        )
        .into());
    }

    let view = FormView {
        url: form.url.clone(),
        suite: form.suite.clone(),
        profile: form.profile.clone(),
        mcp_revision: form.mcp_revision.clone(),
        allow_tool_calls: form.allow_tool_calls.is_some(),
        allow_writes: form.allow_writes.is_some(),
        server_json: form.server_json.clone(),
        force: form.force.is_some(),
        list_in_directory: form.list_in_directory.is_some(),
        advanced_open: form.allow_tool_calls.is_some()
            || form.allow_writes.is_some()
            || !form.server_json.trim().is_empty()
            || form.force.is_some(),
    };
    let mut errors = FormErrors::default();
    let suite = SuiteChoice::parse(&form.suite);
    if suite.is_none() {
        errors.form = Some(format!("The suite `{}` is unknown.", clip(&form.suite)));
    }
    let profile = match form.profile.as_str() {
        "spec" => None,
        "reference" => Some("reference".to_owned()),
        other => {
            errors.form = Some(format!("The profile `{}` is unknown.", clip(other)));
            None
        }
    };
    // `newest` is the default and is stored as no choice at all, as the API
    // stores a submission that leaves it out.
    let mcp_revision = match McpRevision::parse(&form.mcp_revision) {
        Some(McpRevision::Newest) => None,
        Some(revision) => Some(revision),
        None => {
            errors.form = Some(format!(
                "The MCP revision `{}` is unknown.",
                clip(&form.mcp_revision)
            ));
            None
        }
    };
    let server_json = form.server_json.trim();
    let server_json = if server_json.is_empty() {
        None
    } else {
        match crate::target::CanonicalUrl::parse(server_json) {
            Ok(u) => Some(serde_json::Value::String(u.to_string())),
            Err(e) => {
                errors.server_json = Some(format!("server.json URL: {e}"));
                None
            }
        }
    };
    let list = form.list_in_directory.is_some();
    if list
        && let Some(suite) = suite
        && let Err(e) = crate::web::api::listing_allowed(state, suite)
    {
        errors.form = Some(format!("{e}."));
    }
    let (Some(suite), None, None) = (suite, &errors.server_json, &errors.form) else {
        return home_page(state, StatusCode::UNPROCESSABLE_ENTITY, csrf, view, errors).await;
    };
    let options = RunOptions {
        profile,
        allow_writes: form.allow_writes.is_some().then_some(true),
        allow_tool_calls: form.allow_tool_calls.is_some().then_some(true),
        server_json,
        mcp_revision,
        ..RunOptions::default()
    };
    // The form shows the fields of both suites at once: what was left in the
    // other suite's fields is not part of this run (the API refuses such
    // options with 422, since a program that sends them expects them read).
    let options = match suite {
        SuiteChoice::Mcp => RunOptions {
            profile: None,
            allow_writes: None,
            ..options
        },
        SuiteChoice::Rcp => RunOptions {
            server_json: None,
            allow_tool_calls: None,
            mcp_revision: None,
            ..options
        },
        SuiteChoice::Auto => options,
    };
    let submission = Submission {
        url: form.url,
        suite,
        options,
        webhook_url: None,
        // The form takes no raw token: a browser form is no place to paste one.
        credentials: None,
        max_age_s: submit::DEFAULT_MAX_AGE_S,
        force: form.force.is_some(),
        idempotency: None,
        submitter: Some(crate::web::ratelimit::submitter_of(None, client)),
    };
    match state.queue.submit(submission).await {
        Ok(s) => {
            if let Some(listing) = state.directory.as_ref().filter(|_| list) {
                let listed = crate::directory::list_submission(
                    state.store.as_ref(),
                    listing,
                    &s.run.target_id,
                    &s.run.target_url,
                )
                .await
                .map_err(WebError::from)?;
                tracing::info!(url = %s.run.target_url, outcome = listed.as_str(), "listing asked from the form");
            }
            Ok(Redirect::to(&format!("/runs/{}", s.run.id)).into_response())
        }
        Err(SubmitError::Url(e)) => {
            errors.url = Some(e.to_string());
            home_page(state, StatusCode::UNPROCESSABLE_ENTITY, csrf, view, errors).await
        }
        Err(SubmitError::Options(e)) => {
            errors.form = Some(e);
            home_page(state, StatusCode::UNPROCESSABLE_ENTITY, csrf, view, errors).await
        }
        // Shown on the form, with what the user typed, like any other refusal.
        Err(SubmitError::TargetLimited {
            detail,
            retry_after_s,
        }) => {
            errors.form = Some(detail);
            let mut resp =
                home_page(state, StatusCode::TOO_MANY_REQUESTS, csrf, view, errors).await?;
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_s));
            Ok(resp)
        }
        Err(SubmitError::Store(e)) => Err(e.into()),
        Err(e) => Err(WebError::MalformedBody(e.to_string()).into()),
    }
}
