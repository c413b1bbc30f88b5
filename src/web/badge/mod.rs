//! Badges: `GET /badge/{target}/{suite}.svg` and `.json` (the shields.io endpoint
//! schema), the same by URL (`GET /badge.svg?url=…&suite=…`), the link behind a
//! badge (`/targets/{target}/{suite}/latest`) and ready-to-paste snippets.
//!
//! A badge never starts a run and never lies: it shows the newest finished run of
//! its target and suite (`pending` while the only runs are queued or running,
//! `error` when the newest one errored, a grey `unknown` for a target protocheck
//! has never seen), and links to that run's report, which carries the signed
//! attestation.
//!
//! Badges are drawn once and kept in memory, keyed by target and suite, so a badge
//! on a busy README costs a map lookup. A cached badge is dropped when a run in
//! this process changes (the [`RunEvents`] bus), and re-read after
//! [`SHARED_QUEUE_TTL`] at the latest for runs finished by workers elsewhere.

mod render;
mod widths;

pub use render::{Badge, Color};

use super::AppState;
use super::error::{ApiResult, WebError};
use super::extract::{ApiPath, ApiQuery};
use super::openapi::{BadRequest, InternalError, NotFound, ShieldsBadge, TimedOut, Unprocessable};
use crate::events::RunEvents;
use crate::store::{RunStatus, SuiteRuns, Target};
use crate::suite::{SuiteId, Verdict, VerdictDetail};
use crate::target::CanonicalUrl;
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::{Duration, Instant};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// The MCP revision the MCP suite judges against, shown in its badge's label.
pub const MCP_REVISION: &str = "2026-07-28";
/// Workers in other processes (Postgres) finish runs without telling this one:
/// a cached badge is re-read from the store after this long at most.
pub const SHARED_QUEUE_TTL: Duration = Duration::from_secs(5);
/// `max-age` of a `pending` badge, which will change as soon as the run ends.
pub const PENDING_MAX_AGE: Duration = Duration::from_secs(30);
/// Targets whose badges are kept in memory; past this the cache starts afresh
/// rather than grow without bound.
const MAX_CACHED_TARGETS: usize = 10_000;

/// The SVG's own policy: no scripts, no loads, inline styles only. An SVG opened
/// directly in a browser is a document, and this keeps it inert.
const SVG_CSP: &str = "default-src 'none'; style-src 'unsafe-inline'";

/// Where a badge links for a run: its HTML report.
pub fn report_path(run: Uuid) -> String {
    format!("/runs/{run}")
}

/// The stable link behind a badge: redirects to the report of the run it shows.
pub fn latest_path(target_key: &str, suite: SuiteId) -> String {
    format!("/targets/{target_key}/{}/latest", suite.as_str())
}

/// Badge settings of the web layer.
#[derive(Debug, Clone)]
pub struct BadgeSettings {
    /// `Cache-Control: max-age` of a badge.
    pub max_age: Duration,
    /// Base of the absolute URLs in snippets; `None`: the request's `Host`.
    pub public_url: Option<String>,
}

impl Default for BadgeSettings {
    fn default() -> Self {
        Self {
            max_age: Duration::from_secs(300),
            public_url: None,
        }
    }
}

/// What a badge shows for `suite` on `target`, given its runs.
pub fn describe(suite: SuiteId, target: Option<&Target>, runs: &SuiteRuns) -> Badge {
    let verdict = runs.finished.as_ref().and_then(|r| r.verdict.as_ref());
    let label = match suite {
        SuiteId::Rcp => "RCP".to_owned(),
        SuiteId::Mcp => format!(
            "MCP {}",
            verdict.map_or(MCP_REVISION, |v| v.spec_revision.as_str())
        ),
    };
    let Some(target) = target else {
        // Nothing about the target is known, so nothing of it is echoed either.
        return Badge::new(&label, "unknown", Color::LightGrey, None).error();
    };
    let url = Some(target.canonical_url.as_str());
    match (&runs.finished, &runs.active) {
        (None, None) => Badge::new(&label, "unknown", Color::LightGrey, url).error(),
        (None, Some(_)) => Badge::new(&label, "pending", Color::Blue, url),
        (Some(run), _) => match (run.status, verdict) {
            (RunStatus::Passed | RunStatus::Failed, Some(v)) => verdict_badge(&label, v, url),
            _ => Badge::new(&label, "error", Color::LightGrey, url).error(),
        },
    }
}

fn verdict_badge(label: &str, v: &Verdict, url: Option<&str>) -> Badge {
    match &v.detail {
        VerdictDetail::Rcp {
            certified_level,
            declared_level,
            honest,
            ..
        } => {
            if !honest {
                // The declared level is the target's own text: cut it short so the
                // word that matters always fits.
                let claimed = declared_level.as_deref().unwrap_or(certified_level);
                let message = format!("{} OVERCLAIMED", render::clean(claimed, 12));
                return Badge::new(label, &message, Color::Red, url);
            }
            let color = match certified_level.as_str() {
                "L2" => Color::BrightGreen,
                "L1" => Color::Green,
                "L0" => Color::YellowGreen,
                "none" => Color::Red,
                _ => Color::LightGrey,
            };
            Badge::new(label, certified_level, color, url)
        }
        VerdictDetail::Mcp { grade } => match grade.as_str() {
            "strict" => Badge::new(label, "strict", Color::BrightGreen, url),
            "compliant" => Badge::new(label, "compliant", Color::Green, url),
            _ if v.counts.fail > 0 => Badge::new(
                label,
                &format!("{} failing", v.counts.fail),
                Color::Red,
                url,
            ),
            other => Badge::new(label, other, Color::Red, url),
        },
    }
}

/// A badge drawn in both formats, with its validators.
pub struct Drawn {
    pub badge: Badge,
    svg: Bytes,
    json: Bytes,
    svg_etag: HeaderValue,
    json_etag: HeaderValue,
    cache_control: HeaderValue,
    generation: u64,
    drawn_at: Instant,
}

impl Drawn {
    /// The SVG as served.
    pub fn svg(&self) -> &[u8] {
        &self.svg
    }

    fn new(badge: Badge, max_age: Duration, generation: u64) -> Self {
        let svg = Bytes::from(render::svg(&badge));
        let json = Bytes::from(render::shields_json(&badge, max_age.as_secs()));
        Self {
            svg_etag: etag(&svg),
            json_etag: etag(&json),
            cache_control: HeaderValue::from_str(&format!("max-age={}", max_age.as_secs()))
                .unwrap_or(HeaderValue::from_static("no-cache")),
            badge,
            svg,
            json,
            generation,
            drawn_at: Instant::now(),
        }
    }
}

/// A strong validator: the body's digest, so equal bodies share it and any
/// change, however small, changes it.
fn etag(body: &[u8]) -> HeaderValue {
    let digest = Sha256::digest(body);
    HeaderValue::from_str(&format!("\"{}\"", hex::encode(&digest[..16])))
        .unwrap_or(HeaderValue::from_static("\"\""))
}

/// Drawn badges by target key, one slot per suite.
#[derive(Default)]
pub struct BadgeCache {
    entries: RwLock<HashMap<String, [Option<Arc<Drawn>>; 2]>>,
    /// Bumped by every run event of this process; older entries are stale.
    generation: Arc<AtomicU64>,
    watching: OnceLock<()>,
}

fn slot(suite: SuiteId) -> usize {
    match suite {
        SuiteId::Mcp => 0,
        SuiteId::Rcp => 1,
    }
}

impl BadgeCache {
    /// Starts following `events` (once, from the first badge request, which runs
    /// inside the runtime). Any event may change what a badge shows.
    fn watch(&self, events: &RunEvents) {
        self.watching.get_or_init(|| {
            let mut rx = events.subscribe();
            let generation = self.generation.clone();
            tokio::spawn(async move {
                use tokio::sync::broadcast::error::RecvError;
                loop {
                    match rx.recv().await {
                        // A lagging receiver missed events: stale, to be safe.
                        Ok(_) | Err(RecvError::Lagged(_)) => {
                            generation.fetch_add(1, Ordering::Release);
                        }
                        Err(RecvError::Closed) => return,
                    }
                }
            });
        });
    }

    fn get(&self, key: &str, suite: SuiteId, generation: u64) -> Option<Arc<Drawn>> {
        let entries = self.entries.read().ok()?;
        let drawn = entries.get(key)?[slot(suite)].as_ref()?;
        (drawn.generation == generation && drawn.drawn_at.elapsed() < SHARED_QUEUE_TTL)
            .then(|| drawn.clone())
    }

    fn put(&self, key: &str, suite: SuiteId, drawn: Arc<Drawn>) {
        let Ok(mut entries) = self.entries.write() else {
            return;
        };
        if entries.len() >= MAX_CACHED_TARGETS && !entries.contains_key(key) {
            entries.clear();
        }
        entries.entry(key.to_owned()).or_default()[slot(suite)] = Some(drawn);
    }
}

/// A target key is 24 lower-case hex digits; anything else names no target.
fn is_target_key(s: &str) -> bool {
    s.len() == 24 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The badge of `target_key` and `suite`, from the cache or drawn now.
pub async fn draw(state: &AppState, target_key: &str, suite: SuiteId) -> ApiResult<Arc<Drawn>> {
    let cache = &state.badge_cache;
    cache.watch(&state.events);
    // Read before the store: an event during the reads below makes this entry stale.
    let generation = cache.generation.load(Ordering::Acquire);
    if let Some(hit) = cache.get(target_key, suite, generation) {
        return Ok(hit);
    }
    let target = if is_target_key(target_key) {
        state.store.get_target(target_key).await?
    } else {
        None
    };
    let runs = match &target {
        Some(t) => {
            state
                .store
                .latest_runs_for_suite(&t.id, suite.as_str())
                .await?
        }
        None => SuiteRuns::default(),
    };
    let max_age = if runs.finished.is_none() && runs.active.is_some() {
        state.badges.max_age.min(PENDING_MAX_AGE)
    } else {
        state.badges.max_age
    };
    let drawn = Arc::new(Drawn::new(
        describe(suite, target.as_ref(), &runs),
        max_age,
        generation,
    ));
    // Kept only when nothing is about to change it: while a run is active its end
    // must show at once, and the event that announces it may lag the store. An
    // unknown key is not kept either, so made-up keys cannot fill the cache.
    if target.is_some() && runs.active.is_none() {
        cache.put(target_key, suite, drawn.clone());
    }
    Ok(drawn)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Svg,
    Json,
}

fn parse_suite(s: &str) -> Option<SuiteId> {
    match s {
        "mcp" => Some(SuiteId::Mcp),
        "rcp" => Some(SuiteId::Rcp),
        _ => None,
    }
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
    let suite = parse_suite(suite).ok_or_else(|| unknown_suite(suite))?;
    let drawn = draw(&state, &target, suite).await?;
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
    let suite = parse_suite(&q.suite).ok_or_else(|| WebError::Invalid {
        field: "suite",
        detail: "suite must be `mcp` or `rcp`".into(),
    })?;
    let drawn = draw(state, &url.key(), suite).await?;
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
    let suite_id = parse_suite(&suite).ok_or_else(|| unknown_suite(&suite))?;
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
    let run = runs.finished.or(runs.active).ok_or_else(|| {
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

/// The base of absolute URLs: the configured public URL, else the `Host` the
/// client used (only when it looks like a host, so nothing odd is echoed).
pub(crate) fn public_base(state: &AppState, headers: &HeaderMap) -> String {
    if let Some(url) = &state.badges.public_url {
        return url.trim_end_matches('/').to_owned();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            !h.is_empty()
                && h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
        })
        .unwrap_or("localhost");
    format!("http://{host}")
}

/// A badge's URLs and ready-to-paste snippets.
#[derive(Debug, Serialize, ToSchema)]
pub struct BadgeSnippets {
    pub suite: SuiteId,
    /// The SVG badge.
    pub svg: String,
    /// The badge in the shields.io endpoint schema.
    pub json: String,
    /// The same badge drawn by shields.io.
    pub shields: String,
    /// The report behind the badge.
    pub link: String,
    pub markdown: String,
    pub html: String,
    pub rst: String,
    /// What the badge says now.
    pub label: String,
    pub message: String,
}

/// The badges of a target.
#[derive(Debug, Serialize, ToSchema)]
pub struct TargetBadges {
    pub target: super::api::TargetView,
    pub badges: Vec<BadgeSnippets>,
}

/// The badge URLs of a target and suite, and ready-to-paste Markdown, HTML and
/// reStructuredText that show the badge and link to the latest report.
pub fn snippets(base: &str, target_key: &str, suite: SuiteId) -> Value {
    serde_json::to_value(BadgeSnippets::new(base, target_key, suite)).unwrap_or(Value::Null)
}

impl BadgeSnippets {
    /// The snippets of `target_key` and `suite`; `label` and `message` are left empty.
    pub fn new(base: &str, target_key: &str, suite: SuiteId) -> Self {
        let s = suite.as_str();
        let svg = format!("{base}/badge/{target_key}/{s}.svg");
        let json_url = format!("{base}/badge/{target_key}/{s}.json");
        let link = format!("{base}{}", latest_path(target_key, suite));
        let shields = format!(
            "https://img.shields.io/endpoint?url={}",
            url::form_urlencoded::byte_serialize(json_url.as_bytes()).collect::<String>()
        );
        let alt = format!("{} conformance", s.to_uppercase());
        let html_alt = render::escape_xml(&alt);
        BadgeSnippets {
            suite,
            markdown: format!("[![{alt}]({svg})]({link})"),
            html: format!(
                r#"<a href="{}"><img src="{}" alt="{html_alt}"></a>"#,
                render::escape_xml(&link),
                render::escape_xml(&svg)
            ),
            rst: format!(".. image:: {svg}\n   :alt: {alt}\n   :target: {link}"),
            svg,
            json: json_url,
            shields,
            link,
            label: String::new(),
            message: String::new(),
        }
    }
}

/// `GET /api/v1/targets/{id}/badges`: badge URLs and snippets to paste, for the
/// target's protocol (both suites while it has none).
#[utoipa::path(
    get,
    path = "/api/v1/targets/{id}/badges",
    tag = "badges",
    summary = "A target's badges and snippets",
    params(("id" = String, Path, description = "The target's key: 24 lower-case hex digits")),
    responses(
        (status = 200, description = "One entry per suite of the target's protocol (both while \
            none was detected)", body = TargetBadges),
        (status = 404, response = NotFound),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn badge_snippets(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    headers: HeaderMap,
) -> ApiResult<Json<TargetBadges>> {
    let target = if is_target_key(&id) {
        state.store.get_target(&id).await?
    } else {
        None
    };
    let target = target.ok_or_else(|| {
        WebError::NotFound(format!(
            "no target has the id `{}`",
            id.chars().take(64).collect::<String>()
        ))
    })?;
    let suites = match target.protocol.as_deref() {
        Some("mcp") => vec![SuiteId::Mcp],
        Some("rcp") => vec![SuiteId::Rcp],
        _ => vec![SuiteId::Rcp, SuiteId::Mcp],
    };
    let base = public_base(&state, &headers);
    let mut badges = Vec::new();
    for suite in suites {
        let drawn = draw(&state, &target.id, suite).await?;
        let mut badge = BadgeSnippets::new(&base, &target.id, suite);
        badge.label = drawn.badge.label.clone();
        badge.message = drawn.badge.message.clone();
        badges.push(badge);
    }
    Ok(Json(TargetBadges {
        target: super::api::TargetView::new(&target),
        badges,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Run;
    use crate::suite::{Counts, RunOptions};

    fn target() -> Target {
        Target {
            id: "00112233445566778899aabb".into(),
            canonical_url: "http://example.com/rcp".into(),
            protocol: Some("rcp".into()),
            created_at_ms: 1,
        }
    }

    fn run(status: RunStatus, verdict: Option<Verdict>) -> Run {
        Run {
            id: Uuid::nil(),
            target_id: target().id,
            target_url: target().canonical_url,
            suite: "rcp".into(),
            suite_version: None,
            options: RunOptions::default(),
            dedup_key: "k".into(),
            status,
            attempts: 1,
            max_attempts: 3,
            locked_by: None,
            lease_expires_at_ms: None,
            available_at_ms: 0,
            created_at_ms: 0,
            started_at_ms: Some(0),
            finished_at_ms: status.is_finished().then_some(10),
            verdict,
            error: None,
        }
    }

    fn rcp(level: &str, declared: Option<&str>, honest: bool) -> Verdict {
        Verdict {
            suite: SuiteId::Rcp,
            suite_version: "0.1.0".into(),
            spec_revision: "RCP/1 1.0".into(),
            passed: level != "none" && honest,
            summary: level.into(),
            counts: Counts::default(),
            detail: VerdictDetail::Rcp {
                profile: "spec".into(),
                certified_level: level.into(),
                declared_level: declared.map(str::to_owned),
                honest,
                report: Default::default(),
            },
        }
    }

    fn mcp(grade: &str, fail: u32) -> Verdict {
        Verdict {
            suite: SuiteId::Mcp,
            suite_version: "0.1.0".into(),
            spec_revision: MCP_REVISION.into(),
            passed: grade != "non-compliant",
            summary: grade.into(),
            counts: Counts {
                fail,
                ..Counts::default()
            },
            detail: VerdictDetail::Mcp {
                grade: grade.into(),
            },
        }
    }

    fn said(suite: SuiteId, runs: SuiteRuns) -> (String, String, Color) {
        let b = describe(suite, Some(&target()), &runs);
        (b.label, b.message, b.color)
    }

    fn finished(v: Verdict) -> SuiteRuns {
        let status = if v.passed {
            RunStatus::Passed
        } else {
            RunStatus::Failed
        };
        SuiteRuns {
            finished: Some(run(status, Some(v))),
            active: None,
        }
    }

    #[test]
    fn every_state_has_its_words_and_colour() {
        let s = |l: &str, m: &str, c| (l.to_owned(), m.to_owned(), c);
        assert_eq!(
            said(SuiteId::Rcp, finished(rcp("L2", Some("L2"), true))),
            s("RCP", "L2", Color::BrightGreen)
        );
        assert_eq!(
            said(SuiteId::Rcp, finished(rcp("L1", None, true))),
            s("RCP", "L1", Color::Green)
        );
        assert_eq!(
            said(SuiteId::Rcp, finished(rcp("L0", None, true))),
            s("RCP", "L0", Color::YellowGreen)
        );
        assert_eq!(
            said(SuiteId::Rcp, finished(rcp("none", None, true))),
            s("RCP", "none", Color::Red)
        );
        assert_eq!(
            said(SuiteId::Rcp, finished(rcp("none", Some("L2"), false))),
            s("RCP", "L2 OVERCLAIMED", Color::Red)
        );
        assert_eq!(
            said(SuiteId::Mcp, finished(mcp("strict", 0))),
            s("MCP 2026-07-28", "strict", Color::BrightGreen)
        );
        assert_eq!(
            said(SuiteId::Mcp, finished(mcp("compliant", 0))),
            s("MCP 2026-07-28", "compliant", Color::Green)
        );
        assert_eq!(
            said(SuiteId::Mcp, finished(mcp("non-compliant", 3))),
            s("MCP 2026-07-28", "3 failing", Color::Red)
        );
        let pending = SuiteRuns {
            finished: None,
            active: Some(run(RunStatus::Queued, None)),
        };
        assert_eq!(
            said(SuiteId::Rcp, pending),
            s("RCP", "pending", Color::Blue)
        );
        let errored = SuiteRuns {
            finished: Some(run(RunStatus::Error, None)),
            active: Some(run(RunStatus::Running, None)),
        };
        assert_eq!(
            said(SuiteId::Rcp, errored),
            s("RCP", "error", Color::LightGrey)
        );
        assert_eq!(
            said(SuiteId::Rcp, SuiteRuns::default()),
            s("RCP", "unknown", Color::LightGrey)
        );
        let unknown = describe(SuiteId::Mcp, None, &SuiteRuns::default());
        assert_eq!(unknown.message, "unknown");
        assert!(unknown.is_error);
        assert_eq!(unknown.title, "MCP 2026-07-28: unknown");
    }

    #[test]
    fn a_long_declared_level_leaves_room_for_overclaimed() {
        let v = rcp("none", Some(&"<L9>".repeat(20)), false);
        let (_, message, _) = said(SuiteId::Rcp, finished(v));
        assert!(message.ends_with("… OVERCLAIMED"), "{message}");
        assert!(message.chars().count() <= render::MAX_TEXT_CHARS);
    }

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

    #[test]
    fn target_keys_are_24_hex_digits() {
        assert!(is_target_key("00112233445566778899aabb"));
        assert!(!is_target_key("00112233445566778899AABB"));
        assert!(!is_target_key("<script>"));
        assert!(!is_target_key(""));
    }
}
