//! Badge URLs and ready-to-paste snippets, for the run page and the API.

use super::render;
use super::{draw, is_target_key, latest_path};
use crate::suite::SuiteId;
use crate::web::AppState;
use crate::web::error::{ApiResult, WebError};
use crate::web::extract::{ApiJson, ApiPath};
use crate::web::openapi::{InternalError, NotFound, TimedOut};
use axum::extract::State;
use axum::http::{HeaderMap, header};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

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
    pub target: crate::web::api::TargetView,
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
) -> ApiResult<ApiJson<TargetBadges>> {
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
    Ok(ApiJson(TargetBadges {
        target: crate::web::api::TargetView::new(&target),
        badges,
    }))
}
