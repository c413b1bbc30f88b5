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

/// The files under `/static/`, compiled in: name, body, content type.
const STATIC_FILES: [(&str, &str, &str); 4] = [
    (
        "style.css",
        include_str!("../../../static/style.css"),
        "text/css; charset=utf-8",
    ),
    (
        "run.js",
        include_str!("../../../static/run.js"),
        "text/javascript; charset=utf-8",
    ),
    (
        "page.js",
        include_str!("../../../static/page.js"),
        "text/javascript; charset=utf-8",
    ),
    (
        "favicon.svg",
        include_str!("../../../static/favicon.svg"),
        "image/svg+xml",
    ),
];

/// How long a browser keeps a static file named by its content (a year:
/// the name changes whenever the content does).
const VERSIONED_MAX_AGE: &str = "public, max-age=31536000, immutable";
/// How long it keeps one named without its version (a page from before a
/// release may still ask for it).
const PLAIN_MAX_AGE: &str = "public, max-age=300";

/// A static file's name with its content's version in it:
/// `style.css` → `style.3f2a9c01d4e5.css`.
fn versioned_name(name: &str, body: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = hex::encode(&Sha256::digest(body.as_bytes())[..6]);
    match name.rsplit_once('.') {
        Some((stem, ext)) => format!("{stem}.{digest}.{ext}"),
        None => format!("{name}.{digest}"),
    }
}

/// The versioned path of each static file, computed once.
static VERSIONED: std::sync::LazyLock<Vec<(String, usize)>> = std::sync::LazyLock::new(|| {
    STATIC_FILES
        .iter()
        .enumerate()
        .map(|(i, (name, body, _))| (versioned_name(name, body), i))
        .collect()
});

/// The path pages link a static file by: its versioned name, cached for a
/// year. Templates call it (`crate::web::pages::asset("style.css")`).
pub fn asset(name: &str) -> String {
    STATIC_FILES
        .iter()
        .position(|(n, _, _)| *n == name)
        .and_then(|i| VERSIONED.iter().find(|(_, at)| *at == i))
        .map_or_else(
            || format!("/static/{name}"),
            |(v, _)| format!("/static/{v}"),
        )
}

/// `/static/…`: the stylesheet, the scripts and the icon, compiled in; by
/// their versioned names (cached for a year) or their plain ones.
pub async fn static_file(
    PagePath(name): PagePath<String>,
    headers: axum::http::HeaderMap,
    uri: axum::http::Uri,
) -> Response {
    let found = match VERSIONED.iter().find(|(v, _)| *v == name) {
        Some((_, i)) => Some((STATIC_FILES[*i], VERSIONED_MAX_AGE)),
        None => STATIC_FILES
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|f| (*f, PLAIN_MAX_AGE)),
    };
    // A page for a browser, problem+json for a program, as any unknown path.
    let Some(((_, body, ctype), cache)) = found else {
        return crate::web::not_found(headers, uri).await;
    };
    (
        [
            (header::CONTENT_TYPE, ctype),
            (header::CACHE_CONTROL, cache),
        ],
        body,
    )
        .into_response()
}

/// `/favicon.ico`, which browsers ask for unbidden: the icon (an SVG, which
/// browsers take whatever the name says).
pub async fn favicon() -> Response {
    let (_, body, ctype) = STATIC_FILES[3];
    (
        [
            (header::CONTENT_TYPE, ctype),
            (header::CACHE_CONTROL, "public, max-age=86400"),
        ],
        body,
    )
        .into_response()
}

/// A run as a row of the home page's and the target page's lists.
struct RunRow {
    id: Uuid,
    /// The server's URL in pieces, each ending at a `/` or `.`, where a
    /// narrow column may break it (a `<wbr>` after each).
    url_parts: Vec<String>,
    suite: String,
    verdict: VerdictPill,
    when_iso: String,
    /// When it was made, for people: `2026-12-07 11:12 UTC`.
    when_readable: String,
    duration: String,
}

/// A verdict as every page shows it: the short verdict in a pill coloured as
/// the run's badge is (`not judged` is neutral grey, never the failure
/// colour), and the rest of the verdict as a sentence beside it.
pub(crate) struct VerdictPill {
    /// `strict`, `not judged`, `non-compliant: 2 failing`, `L2`, `queued`…
    pub short: String,
    /// The badge colour's name (`brightgreen`, `red`, `lightgrey`, `blue`…),
    /// the pill's class `tone-…`.
    pub tone: &'static str,
    /// The rest of the summary as a sentence; empty when there is none.
    pub sentence: String,
    /// The sentence cut at its backticks, which the pages show as code.
    pub sentence_spans: Vec<crate::web::rules::Span>,
}

impl VerdictPill {
    /// Replaces the sentence (and its spans).
    pub(crate) fn say(&mut self, sentence: &str) {
        self.sentence = sentence.to_owned();
        self.sentence_spans = crate::web::rules::spans(sentence);
    }
}

/// The pill of `run`: its verdict when it has one, else its status.
pub(crate) fn verdict_pill(run: &Run) -> VerdictPill {
    use crate::suite::VerdictDetail;
    let Some(v) = run.verdict.as_ref() else {
        return VerdictPill {
            short: run.status.as_str().to_owned(),
            tone: match run.status {
                RunStatus::Queued | RunStatus::Running => "blue",
                _ => "lightgrey",
            },
            sentence: String::new(),
            sentence_spans: Vec::new(),
        };
    };
    let short = match &v.detail {
        VerdictDetail::Mcp { grade, .. } if grade == "non-compliant" && v.counts.fail > 0 => {
            format!("non-compliant: {} failing", v.counts.fail)
        }
        VerdictDetail::Mcp { grade, .. } => grade.clone(),
        // `L1 · OVERCLAIMED (declared L2)`: the pill stops before the detail.
        VerdictDetail::Rcp { .. } => v
            .summary
            .split_once(" (")
            .map_or(v.summary.as_str(), |(head, _)| head)
            .to_owned(),
    };
    let rest = v
        .summary
        .strip_prefix(short.as_str())
        .or_else(|| match &v.detail {
            VerdictDetail::Mcp { grade, .. } => v.summary.strip_prefix(grade.as_str()),
            VerdictDetail::Rcp { .. } => None,
        })
        .unwrap_or_default();
    let sentence = as_sentence(rest);
    VerdictPill {
        short: clip_words(&short, 60),
        tone: crate::web::badge::verdict_color(v).name(),
        sentence_spans: crate::web::rules::spans(&sentence),
        sentence,
    }
}

/// The fill of a pill or a chart point of `tone`: the badge colour darkened
/// until white text on it reads at 4.5:1 or more (and it stands at 3:1 or
/// more against the white page). The stylesheet's `.tone-…` match.
pub(crate) fn tone_hex(tone: &str) -> &'static str {
    match tone {
        "brightgreen" => "#1a7f37",
        "green" => "#3f7a00",
        "yellowgreen" => "#5c6b00",
        "red" => "#b42318",
        "blue" => "#0a58ca",
        _ => "#57606a",
    }
}

/// The tail of a summary (`: authorization required (3 of 40 rules
/// judged…)`, ` (1 warning)`) as a sentence: `Authorization required (3 of
/// 40 rules judged…).`, `1 warning.`
fn as_sentence(rest: &str) -> String {
    let mut s = rest
        .trim_start_matches([':', ' ', '—', '·', ';'])
        .trim_end();
    if let Some(inner) = s.strip_prefix('(').and_then(|t| t.strip_suffix(')'))
        && !inner.contains(['(', ')'])
    {
        s = inner;
    }
    if s.is_empty() {
        return String::new();
    }
    let mut chars = s.chars();
    let mut out: String = chars
        .next()
        .map(|c| c.to_uppercase().collect())
        .unwrap_or_default();
    out.push_str(chars.as_str());
    if !out.ends_with(['.', '!', '?', '…']) {
        out.push('.');
    }
    out
}

/// At most `max` characters, with an ellipsis when cut.
fn clip_words(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}

/// A URL in pieces that each end at a `/` or a `.` (`https://`, `example.`,
/// `com/`, `mcp`): the page puts a `<wbr>` after each, so that a narrow
/// column breaks a URL where it reads best and never inside a word.
pub(crate) fn url_parts(url: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut part = String::new();
    for c in url.chars() {
        part.push(c);
        if matches!(c, '/' | '.' | '?' | '&' | '=') {
            parts.push(std::mem::take(&mut part));
        }
    }
    if !part.is_empty() {
        parts.push(part);
    }
    parts
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

fn run_row(r: &Run) -> RunRow {
    RunRow {
        id: r.id,
        url_parts: url_parts(&r.target_url),
        suite: r
            .verdict
            .as_ref()
            .map_or(r.suite.as_str(), |v| v.suite.as_str())
            .to_uppercase(),
        verdict: verdict_pill(r),
        when_iso: rfc3339(r.created_at_ms),
        when_readable: readable_time(r.created_at_ms),
        duration: match (r.started_at_ms, r.finished_at_ms) {
            (Some(s), Some(f)) => duration(f - s),
            _ => "—".to_owned(),
        },
    }
}

/// A time for people, to the minute, UTC: `2026-12-07 11:12 UTC`. It does
/// not go stale as "3 min ago" would on a page left open.
pub(crate) fn readable_time(ms: i64) -> String {
    let iso = rfc3339(ms);
    format!("{} UTC", iso.get(..16).unwrap_or(&iso).replace('T', " "))
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
    fn static_files_have_versioned_names() {
        let style = asset("style.css");
        assert!(
            style.starts_with("/static/style.") && style.ends_with(".css") && style.len() > 24,
            "{style}"
        );
        assert_eq!(asset("nothing.css"), "/static/nothing.css");
        assert_eq!(STATIC_FILES[3].0, "favicon.svg");
    }

    #[test]
    fn urls_break_after_slashes_and_dots() {
        assert_eq!(
            url_parts("https://example.com/mcp"),
            ["https:/", "/", "example.", "com/", "mcp"]
        );
        assert_eq!(url_parts("").len(), 0);
    }

    #[test]
    fn the_rest_of_a_summary_reads_as_a_sentence() {
        assert_eq!(as_sentence(" (1 warning)"), "1 warning.");
        assert_eq!(
            as_sentence(": authorization required (3 of 40 rules judged)"),
            "Authorization required (3 of 40 rules judged)."
        );
        assert_eq!(as_sentence(""), "");
        assert_eq!(readable_time(0), "1970-01-01 00:00 UTC");
    }

    #[test]
    fn times_and_durations_read_well() {
        assert_eq!(duration(850), "850 ms");
        assert_eq!(duration(1260), "1.3 s");
    }
}
