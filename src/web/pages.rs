//! HTML pages: the submit form, the run report with live progress, the target
//! history, and errors in the same style. Every target-controlled string goes
//! through askama's HTML escaping; the live progress script only ever sets
//! `textContent`, and the pages' Content-Security-Policy allows no inline script.

use super::AppState;
use super::api::ClientAddr;
use super::error::{AsPage, PageResult, WebError};
use crate::queue::{self, Submission, SubmitError};
use crate::rfc3339;
use crate::store::{Run, RunStatus, StoredFinding};
use crate::suite::{self, Exchange, Outcome, RunOptions, SuiteChoice, SuiteId, VerdictDetail};
use askama::Template;
use axum::Form;
use axum::extract::rejection::FormRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use uuid::Uuid;

/// Runs listed on the home page.
const RECENT_RUNS: u32 = 20;
/// Runs listed on a target page.
const TARGET_HISTORY: u32 = 50;
/// Name of the cookie carrying the form's anti-forgery token.
const CSRF_COOKIE: &str = "pc_csrf";

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
pub async fn static_file(Path(name): Path<String>) -> Response {
    let (body, ctype) = match name.as_str() {
        "style.css" => (
            include_str!("../../static/style.css"),
            "text/css; charset=utf-8",
        ),
        "run.js" => (
            include_str!("../../static/run.js"),
            "text/javascript; charset=utf-8",
        ),
        _ => return AsPage(WebError::NotFound("No such file.".into())).into_response(),
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

// ---------------------------------------------------------------- home

#[derive(Debug, Default, Deserialize)]
pub struct HomeForm {
    #[serde(default)]
    pub url: String,
    #[serde(default = "default_suite")]
    pub suite: String,
    #[serde(default = "default_profile")]
    pub profile: String,
    #[serde(default)]
    pub allow_tool_calls: Option<String>,
    #[serde(default)]
    pub allow_writes: Option<String>,
    #[serde(default)]
    pub server_json: String,
    #[serde(default)]
    pub force: Option<String>,
    #[serde(default)]
    pub csrf: String,
}

fn default_suite() -> String {
    "auto".into()
}

fn default_profile() -> String {
    "spec".into()
}

/// The form as shown again (with what the user typed).
#[derive(Default)]
struct FormView {
    url: String,
    suite: String,
    profile: String,
    allow_tool_calls: bool,
    allow_writes: bool,
    server_json: String,
    force: bool,
    advanced_open: bool,
}

#[derive(Default)]
struct FormErrors {
    url: Option<String>,
    server_json: Option<String>,
    form: Option<String>,
}

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

#[derive(Template)]
#[template(path = "home.html")]
struct HomePage {
    csrf: String,
    form: FormView,
    errors: FormErrors,
    recent: Vec<RunRow>,
}

fn new_csrf_token() -> String {
    hex::encode(rand::random::<[u8; 16]>())
}

fn csrf_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == CSRF_COOKIE)
        .map(|(_, v)| v.to_owned())
}

fn with_csrf_cookie(mut resp: Response, token: &str) -> Response {
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
    let now = crate::now_ms();
    let recent = recent.iter().map(|r| run_row(r, now)).collect();
    let page = HomePage {
        csrf: csrf.clone(),
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
        ..FormView::default()
    };
    home_page(&state, StatusCode::OK, csrf, form, FormErrors::default()).await
}

/// Refuses a form post that another site made the browser send.
fn same_origin(headers: &HeaderMap) -> bool {
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
    if !same_origin(&headers) {
        return Err(WebError::Forbidden(
            "This form can only be submitted from protocheck's own page.".into(),
        )
        .into());
    }
    state
        .limiter
        .check_addr(client)
        .map_err(|rate| WebError::RateLimited { key: None, rate })?;
    let Form(form) = form.map_err(|e| WebError::MalformedBody(e.body_text()))?;
    let cookie = csrf_cookie(&headers);
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
        allow_tool_calls: form.allow_tool_calls.is_some(),
        allow_writes: form.allow_writes.is_some(),
        server_json: form.server_json.clone(),
        force: form.force.is_some(),
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
    let (Some(suite), None, None) = (suite, &errors.server_json, &errors.form) else {
        return home_page(&state, StatusCode::UNPROCESSABLE_ENTITY, csrf, view, errors).await;
    };
    let options = RunOptions {
        profile,
        allow_writes: form.allow_writes.is_some().then_some(true),
        allow_tool_calls: form.allow_tool_calls.is_some().then_some(true),
        server_json,
        ..RunOptions::default()
    };
    let submission = Submission {
        url: form.url,
        suite,
        options,
        max_age_s: queue::DEFAULT_MAX_AGE_S,
        force: form.force.is_some(),
        idempotency: None,
    };
    match state.queue.submit(submission).await {
        Ok(s) => Ok(Redirect::to(&format!("/runs/{}", s.run.id)).into_response()),
        Err(SubmitError::Url(e)) => {
            errors.url = Some(e.to_string());
            home_page(&state, StatusCode::UNPROCESSABLE_ENTITY, csrf, view, errors).await
        }
        Err(SubmitError::Options(e)) => {
            errors.form = Some(e);
            home_page(&state, StatusCode::UNPROCESSABLE_ENTITY, csrf, view, errors).await
        }
        Err(SubmitError::Store(e)) => Err(e.into()),
        Err(e) => Err(WebError::MalformedBody(e.to_string()).into()),
    }
}

// ---------------------------------------------------------------- run page

struct Counts {
    pass: u32,
    fail: u32,
    warn: u32,
    info: u32,
    skip: u32,
}

struct RunView {
    id: Uuid,
    url: String,
    target_id: String,
    suite_label: String,
    status: &'static str,
    status_class: &'static str,
    finished: bool,
    attempts: i32,
    headline: String,
    declared: Option<String>,
    overclaimed: bool,
    error: Option<String>,
    counts: Counts,
    done: usize,
    total: usize,
    total_or_one: usize,
    total_label: String,
    percent: usize,
    created_iso: String,
    created_relative: String,
    duration: Option<String>,
    suite_version: Option<String>,
}

struct ExchangeView {
    request: String,
    response: String,
}

struct FindingView {
    rule_id: String,
    title: String,
    outcome: &'static str,
    message: String,
    level: String,
    spec_ref: String,
    spec_href: Option<String>,
    duration_ms: u64,
    evidence: Vec<ExchangeView>,
}

struct GroupView {
    name: String,
    failing: usize,
    findings: Vec<FindingView>,
}

/// The badge of the run's target and suite, with its snippets.
struct BadgeView {
    svg: String,
    link: String,
    markdown: String,
    html: String,
    rst: String,
}

#[derive(Template)]
#[template(path = "run.html")]
struct RunPage {
    run: RunView,
    groups: Vec<GroupView>,
    badge: Option<BadgeView>,
    /// Whether the run's attestation verifies against the published keys.
    signature: Option<SignatureView>,
    webhook: Option<WebhookView>,
    /// Who submitted the run: the API key's owner (or name); `None` when anonymous.
    owner: Option<String>,
}

/// A run's webhook: where (without path or query) and each attempt's outcome.
struct WebhookView {
    url: String,
    state: String,
    attempts: Vec<WebhookAttemptView>,
}

struct WebhookAttemptView {
    attempt: i32,
    at: String,
    outcome: String,
    next: Option<String>,
}

async fn webhook_view(state: &AppState, run: &Run) -> PageResult<Option<WebhookView>> {
    let Some(url) = run.options.webhook_url.as_deref() else {
        return Ok(None);
    };
    let delivery = state.store.run_webhook(run.id).await?;
    let (status, attempts) = match delivery {
        None => ("sent when the run ends".to_owned(), Vec::new()),
        Some((d, attempts)) => (
            match d.state.as_str() {
                "delivered" => "delivered".to_owned(),
                "failed" => "given up".to_owned(),
                _ => "retrying".to_owned(),
            },
            attempts,
        ),
    };
    Ok(Some(WebhookView {
        url: crate::webhook::display_url(url),
        state: status,
        attempts: attempts
            .into_iter()
            .map(|a| WebhookAttemptView {
                attempt: a.attempt,
                at: crate::rfc3339(a.at_ms),
                outcome: match (a.status_code, a.error) {
                    (_, Some(e)) => e,
                    (Some(code), None) => format!("HTTP {code}"),
                    (None, None) => "no answer".to_owned(),
                },
                next: a.next_attempt_at_ms.map(crate::rfc3339),
            })
            .collect(),
    }))
}

struct SignatureView {
    verifies: bool,
    text: String,
}

fn parse_id(raw: &str) -> PageResult<Uuid> {
    Uuid::parse_str(raw).map_err(|_| {
        AsPage(WebError::NotFound(format!(
            "No run has the id `{}`.",
            clip(raw)
        )))
    })
}

fn clip(s: &str) -> String {
    s.chars().take(64).collect()
}

/// `GET /runs/{id}`.
pub async fn show_run_page(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> PageResult<Response> {
    let id = parse_id(&id)?;
    let run = state
        .store
        .get_run(id)
        .await?
        .ok_or_else(|| WebError::NotFound(format!("No run has the id `{id}`.")))?;
    let findings = state.store.findings(id, -1).await?;
    let badge = run.verdict.as_ref().map(|v| {
        let base = super::badge::public_base(&state, &headers);
        let snip = super::badge::snippets(&base, &run.target_id, v.suite);
        let text = |k: &str| snip[k].as_str().unwrap_or_default().to_owned();
        BadgeView {
            svg: format!("/badge/{}/{}.svg", run.target_id, v.suite.as_str()),
            link: text("link"),
            markdown: text("markdown"),
            html: text("html"),
            rst: text("rst"),
        }
    });
    let signature = match state.store.get_attestation(id).await? {
        None => None,
        Some(stored) => {
            let keys = crate::attest::KeySet::from_records(&state.store.public_keys().await?);
            let checked = crate::attest::verify::verify_json(stored.envelope.as_bytes(), &keys);
            Some(match checked {
                Ok(v) if v.statement.predicate.run_id == run.id.to_string() => SignatureView {
                    verifies: true,
                    text: format!(
                        "the signature verifies with published key {}",
                        stored.key_id
                    ),
                },
                Ok(_) => SignatureView {
                    verifies: false,
                    text: "the attestation names another run".into(),
                },
                Err(e) => SignatureView {
                    verifies: false,
                    text: format!("the signature does not verify: {e}"),
                },
            })
        }
    };
    let page = RunPage {
        run: run_view(&run, findings.len()),
        groups: group_findings(&findings),
        badge,
        signature,
        webhook: webhook_view(&state, &run).await?,
        owner: state
            .store
            .run_api_key(run.id)
            .await?
            .map(|k| k.display_owner().to_owned()),
    };
    Ok(Page(StatusCode::OK, page).into_response())
}

fn suite_of(run: &Run) -> Option<SuiteId> {
    match run.verdict.as_ref().map(|v| v.suite) {
        Some(s) => Some(s),
        None => match SuiteChoice::parse(&run.suite) {
            Some(SuiteChoice::Mcp) => Some(SuiteId::Mcp),
            Some(SuiteChoice::Rcp) => Some(SuiteId::Rcp),
            _ => None,
        },
    }
}

fn run_view(run: &Run, done: usize) -> RunView {
    let suite = suite_of(run);
    let total = suite.map_or(0, |s| suite::rule_count(s, &run.options));
    let now = crate::now_ms();
    let (headline, declared, overclaimed) = match &run.verdict {
        Some(v) => match &v.detail {
            VerdictDetail::Rcp {
                declared_level,
                honest,
                ..
            } => (v.summary.clone(), declared_level.clone(), !honest),
            VerdictDetail::Mcp { .. } => (v.summary.clone(), None, false),
        },
        None if run.status == RunStatus::Error => {
            ("Error: the run could not complete".to_owned(), None, false)
        }
        None => (run.status.as_str().to_owned(), None, false),
    };
    let counts = run.verdict.as_ref().map(|v| v.counts).unwrap_or_default();
    RunView {
        id: run.id,
        url: run.target_url.clone(),
        target_id: run.target_id.clone(),
        suite_label: match suite {
            Some(SuiteId::Mcp) => "MCP 2026-07-28".into(),
            Some(SuiteId::Rcp) => "RCP/1".into(),
            None => "Conformance".into(),
        },
        status: run.status.as_str(),
        status_class: status_class(run.status),
        finished: run.status.is_finished(),
        attempts: run.attempts,
        headline,
        declared,
        overclaimed,
        error: run.error.clone().filter(|_| run.status == RunStatus::Error),
        counts: Counts {
            pass: counts.pass,
            fail: counts.fail,
            warn: counts.warn,
            info: counts.info,
            skip: counts.skip,
        },
        done,
        total,
        total_or_one: total.max(1),
        total_label: if total > 0 {
            total.to_string()
        } else {
            "?".into()
        },
        percent: (done * 100).checked_div(total).map_or(0, |p| p.min(100)),
        created_iso: rfc3339(run.created_at_ms),
        created_relative: relative(now, run.created_at_ms),
        duration: match (run.started_at_ms, run.finished_at_ms) {
            (Some(s), Some(f)) => Some(duration(f - s)),
            _ => None,
        },
        suite_version: run.suite_version.clone(),
    }
}

fn status_class(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Passed => "passed",
        RunStatus::Failed => "failed",
        RunStatus::Error => "error",
        _ => "pending",
    }
}

fn outcome_rank(o: Outcome) -> u8 {
    match o {
        Outcome::Fail => 0,
        Outcome::Warn => 1,
        Outcome::Info => 2,
        Outcome::Skip => 3,
        Outcome::Pass => 4,
    }
}

/// Findings by category (MCP) or level (RCP), groups with failures first, and
/// failures first within each group.
fn group_findings(findings: &[StoredFinding]) -> Vec<GroupView> {
    let mut groups: Vec<GroupView> = Vec::new();
    let mut sorted: Vec<&StoredFinding> = findings.iter().collect();
    sorted.sort_by_key(|f| (outcome_rank(f.finding.outcome), f.finding.rule_id.clone()));
    for f in sorted {
        let rule = suite::rule(&f.finding.rule_id);
        let name = rule.map_or("Other", |r| r.group).to_owned();
        let view = finding_view(f, rule);
        let failing = matches!(f.finding.outcome, Outcome::Fail | Outcome::Warn);
        match groups.iter_mut().find(|g| g.name == name) {
            Some(g) => {
                g.failing += usize::from(failing);
                g.findings.push(view);
            }
            None => groups.push(GroupView {
                name,
                failing: usize::from(failing),
                findings: vec![view],
            }),
        }
    }
    groups.sort_by(|a, b| {
        (b.failing > 0)
            .cmp(&(a.failing > 0))
            .then_with(|| a.name.cmp(&b.name))
    });
    groups
}

fn finding_view(f: &StoredFinding, rule: Option<&suite::Rule>) -> FindingView {
    let spec_ref = rule.map_or_else(String::new, |r| r.spec_ref.to_owned());
    let spec_href = rule
        .and_then(|r| {
            r.spec_ref
                .split_whitespace()
                .find(|w| w.starts_with("https://"))
        })
        .map(str::to_owned);
    FindingView {
        rule_id: f.finding.rule_id.clone(),
        title: rule.map_or_else(String::new, |r| r.title.to_owned()),
        outcome: f.finding.outcome.as_str(),
        message: f.finding.message.clone(),
        level: rule.map_or_else(String::new, |r| format!("{:?}", r.level).to_uppercase()),
        spec_ref,
        spec_href,
        duration_ms: f.finding.duration_ms,
        evidence: f.finding.evidence.iter().map(exchange_view).collect(),
    }
}

fn exchange_view(x: &Exchange) -> ExchangeView {
    let mut request = x.request.line.clone();
    for (k, v) in &x.request.headers {
        request.push_str(&format!("\n{k}: {v}"));
    }
    if !x.request.body.is_empty() {
        request.push_str("\n\n");
        request.push_str(&x.request.body);
    }
    let response = match (&x.response, &x.error) {
        (Some(r), _) => {
            let mut s = r
                .status
                .map_or_else(|| "reply".to_owned(), |s| format!("HTTP {s}"));
            s.push_str(&format!("  ({} ms)", r.elapsed_ms));
            for (k, v) in &r.headers {
                s.push_str(&format!("\n{k}: {v}"));
            }
            if !r.body.is_empty() {
                s.push_str("\n\n");
                s.push_str(&r.body);
            }
            if r.truncated {
                s.push_str("\n[… truncated]");
            }
            s
        }
        (None, Some(e)) => format!("no response: {e}"),
        (None, None) => "no response".to_owned(),
    };
    ExchangeView { request, response }
}

// ---------------------------------------------------------------- target page

struct ChangeView {
    suite: String,
    newly_failing: Vec<String>,
    newly_passing: Vec<String>,
}

#[derive(Template)]
#[template(path = "target.html")]
struct TargetPage {
    id: String,
    url: String,
    protocol: Option<String>,
    runs: Vec<RunRow>,
    changes: Vec<ChangeView>,
}

/// `GET /targets/{id}`: history and what changed between the last two runs of each suite.
pub async fn show_target_page(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> PageResult<Response> {
    let target = state
        .store
        .get_target(&id)
        .await?
        .ok_or_else(|| WebError::NotFound(format!("No target has the key `{}`.", clip(&id))))?;
    let runs = state
        .store
        .target_runs(&target.id, None, TARGET_HISTORY)
        .await?;
    let now = crate::now_ms();
    let mut changes = Vec::new();
    for suite in [SuiteId::Mcp, SuiteId::Rcp] {
        let judged: Vec<&Run> = runs
            .iter()
            .filter(|r| r.verdict.as_ref().is_some_and(|v| v.suite == suite))
            .take(2)
            .collect();
        if let [latest, previous] = judged[..] {
            let now_failing = failing_rules(&state.store.findings(latest.id, -1).await?);
            let before = failing_rules(&state.store.findings(previous.id, -1).await?);
            changes.push(ChangeView {
                suite: suite.as_str().to_uppercase(),
                newly_failing: now_failing.difference(&before).cloned().collect(),
                newly_passing: before.difference(&now_failing).cloned().collect(),
            });
        }
    }
    let page = TargetPage {
        id: target.id.clone(),
        url: target.canonical_url.clone(),
        protocol: target.protocol.clone(),
        runs: runs.iter().map(|r| run_row(r, now)).collect(),
        changes,
    };
    Ok(Page(StatusCode::OK, page).into_response())
}

fn failing_rules(findings: &[StoredFinding]) -> std::collections::BTreeSet<String> {
    findings
        .iter()
        .filter(|f| matches!(f.finding.outcome, Outcome::Fail | Outcome::Warn))
        .map(|f| f.finding.rule_id.clone())
        .collect()
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
            .map_or_else(|| r.suite.clone(), |v| v.suite.as_str().to_owned()),
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
