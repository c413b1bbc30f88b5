//! Reading an MCP Registry: `GET {base}/v0.1/servers`, page by page, and what
//! each listed server becomes in protocheck's directory.
//!
//! The shapes are the registry's published OpenAPI document (API version
//! 2025-12-01): a `ServerList` is `{servers: [ServerResponse], metadata:
//! {nextCursor?, count?}}`; a `ServerResponse` is `{server: ServerDetail,
//! _meta: {"io.modelcontextprotocol.registry/official": {status, isLatest,
//! updatedAt, …}}}`; a `ServerDetail` carries `name`, `description`,
//! `version`, `title?` and `remotes?`, each remote a `streamable-http` or `sse`
//! transport with a `url` (a template when it names `{variables}`), optional
//! `headers` (inputs, `isRequired` among them) and `variables`. The list takes
//! `cursor`, `limit`, `updated_since` (RFC 3339; deleted entries are then
//! included) and `version=latest`.
//!
//! Everything a registry sends is untrusted: pages are bounded in bytes and
//! in count, every string is cut to a length the directory shows, and a
//! remote's URL becomes a target only through [`CanonicalUrl::parse`] and,
//! when it is judged, the service's address guard like any other target.

use crate::target::CanonicalUrl;
use crate::transport::{HttpClient, HttpRequest};
use serde_json::Value;
use std::time::Duration;
use url::Url;

pub use crate::config::OFFICIAL_REGISTRY;
/// Servers asked for per page (the registry's own maximum is 100).
pub const PAGE_LIMIT: u32 = 100;
/// Largest page read: 100 entries of a few KiB each fit many times over.
pub const MAX_PAGE_BYTES: usize = 8 * 1024 * 1024;
/// Most pages one sync reads (200,000 entries at 100 a page). A registry that
/// pages on past it is read that far, and the sync says it stopped there.
pub const MAX_PAGES: usize = 2_000;
/// Longest a page may take.
pub const PAGE_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest `Retry-After` a sync waits out on a 429 or 503. A registry that
/// asks for longer is not read now: the sync stops as failed, saying so,
/// and the next one reads the same changes again.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// Most times one page is asked for again after a `Retry-After`.
pub const PAGE_RETRIES: usize = 3;
use crate::reference::registry::OFFICIAL_META;
/// Longest registry name, title, description and version kept (the
/// registry's schema allows 200, 100, 100 and 255 characters).
const MAX_NAME_CHARS: usize = 200;
const MAX_TEXT_CHARS: usize = 300;
const MAX_VERSION_CHARS: usize = 255;

/// A registry entry's lifecycle status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Active,
    Deprecated,
    Deleted,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Deprecated => "deprecated",
            Self::Deleted => "deleted",
        }
    }

    /// The registry's word; anything else is read as `active` (the
    /// schema's default when the field is absent).
    fn parse(word: Option<&str>) -> Self {
        match word {
            Some("deprecated") => Self::Deprecated,
            Some("deleted") => Self::Deleted,
            _ => Self::Active,
        }
    }
}

/// Why a listed remote is shown but not judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotProbed {
    /// Its URL names `{variables}` a user fills in.
    TemplatedUrl,
    /// It needs a header (a token, an account id, a fixed client name):
    /// directory runs send no header of the registry's, and never a credential.
    NeedsHeader(String),
    /// Its URL is not one protocheck can check (the reason).
    BadUrl(String),
}

impl std::fmt::Display for NotProbed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TemplatedUrl => f.write_str("templated URL"),
            Self::NeedsHeader(name) => write!(f, "needs a header ({name})"),
            Self::BadUrl(why) => write!(f, "unusable URL: {why}"),
        }
    }
}

/// One remote of one registry entry: what the directory lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    /// `streamable-http` or `sse`.
    pub transport: String,
    /// The URL as the registry gave it (cut to the URL limit).
    pub url: String,
    /// The canonical target, or why it is listed without a verdict.
    pub target: Result<String, NotProbed>,
}

/// One server of the registry, at its latest version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The registry name (`io.github.user/weather`).
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub version: String,
    pub status: Status,
    /// `_meta…official.isLatest`; entries without it count as latest.
    pub is_latest: bool,
    /// `_meta…official.updatedAt`, as the registry wrote it.
    pub updated_at: Option<String>,
    pub remotes: Vec<Remote>,
}

/// One page of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub entries: Vec<Entry>,
    /// Entries of the page that could not be read at all, with the reason
    /// (a sync reports how many it skipped).
    pub skipped: Vec<String>,
    pub next_cursor: Option<String>,
}

/// Why a page could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    #[error("the registry could not be reached: {0}")]
    Unreachable(String),
    #[error("the registry answered HTTP {0}")]
    Status(u16),
    #[error("the registry answered HTTP {status} asking to wait {retry_after}, more than the {max} s a sync waits", max = MAX_RETRY_AFTER.as_secs())]
    WaitTooLong { status: u16, retry_after: String },
    #[error("the registry answered HTTP {status} again after {waits} wait(s) it asked for")]
    StillBusy { status: u16, waits: usize },
    #[error("the registry's answer is not a server list: {0}")]
    Shape(String),
}

/// `s` cut to at most `max` characters, control characters dropped: what a
/// registry writes is shown on pages and in logs.
fn clean(s: &str, max: usize) -> String {
    s.chars().filter(|c| !c.is_control()).take(max).collect()
}

fn text(v: &Value, key: &str, max: usize) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(|s| clean(s, max))
}

/// Reads one `ServerResponse`. `Err` when it has no `server` object with a
/// `name`.
pub fn parse_entry(item: &Value) -> Result<Entry, String> {
    let server = item
        .get("server")
        .filter(|s| s.is_object())
        .ok_or("an item has no `server` object")?;
    let name = text(server, "name", MAX_NAME_CHARS)
        .filter(|n| !n.trim().is_empty())
        .ok_or("a server has no `name`")?;
    let official = item.get("_meta").and_then(|m| m.get(OFFICIAL_META));
    let status = Status::parse(
        official
            .and_then(|o| o.get("status"))
            .and_then(Value::as_str),
    );
    let is_latest = official
        .and_then(|o| o.get("isLatest"))
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let updated_at = official.and_then(|o| text(o, "updatedAt", 64));
    let remotes = server
        .get("remotes")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(parse_remote).collect())
        .unwrap_or_default();
    Ok(Entry {
        title: text(server, "title", MAX_TEXT_CHARS).filter(|t| !t.trim().is_empty()),
        description: text(server, "description", MAX_TEXT_CHARS).unwrap_or_default(),
        version: text(server, "version", MAX_VERSION_CHARS).unwrap_or_default(),
        name,
        status,
        is_latest,
        updated_at,
        remotes,
    })
}

/// A remote of type `streamable-http` or `sse`; other types are not remotes
/// protocheck can reach and are left out.
fn parse_remote(remote: &Value) -> Option<Remote> {
    let transport = remote.get("type").and_then(Value::as_str)?;
    if transport != "streamable-http" && transport != "sse" {
        return None;
    }
    let raw = remote.get("url").and_then(Value::as_str).unwrap_or("");
    let url = clean(raw, crate::target::MAX_URL_BYTES);
    let has_variables = remote
        .get("variables")
        .and_then(Value::as_object)
        .is_some_and(|v| !v.is_empty());
    let needed_header = remote
        .get("headers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|h| {
            // A run sends no header of the registry's: a required one (even
            // with a fixed value) or a secret means the run would not be
            // the server's usual traffic.
            ["isRequired", "isSecret"]
                .iter()
                .any(|k| h.get(*k).and_then(Value::as_bool) == Some(true))
        })
        .map(|h| text(h, "name", 100).unwrap_or_else(|| "unnamed".to_owned()));
    let target = if has_variables || url.contains('{') {
        Err(NotProbed::TemplatedUrl)
    } else if let Some(name) = needed_header {
        Err(NotProbed::NeedsHeader(name))
    } else {
        CanonicalUrl::parse(&url)
            .map(|c| c.as_str().to_owned())
            .map_err(|e| NotProbed::BadUrl(e.to_string()))
    };
    Some(Remote {
        transport: transport.to_owned(),
        url,
        target,
    })
}

/// Reads a `ServerList` body: its entries (those that cannot be read are
/// counted in `skipped`) and the next cursor (absent or empty: the end).
pub fn parse_page(body: &Value) -> Result<Page, PageError> {
    let servers = body
        .get("servers")
        .and_then(Value::as_array)
        .ok_or_else(|| PageError::Shape("no `servers` array".to_owned()))?;
    let mut entries = Vec::with_capacity(servers.len());
    let mut skipped = Vec::new();
    for item in servers {
        match parse_entry(item) {
            Ok(e) => entries.push(e),
            Err(why) => skipped.push(why),
        }
    }
    let next_cursor = body
        .get("metadata")
        .and_then(|m| m.get("nextCursor"))
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(|c| clean(c, 1024));
    Ok(Page {
        entries,
        skipped,
        next_cursor,
    })
}

/// The URL of one page: `base/v0.1/servers?limit=…&version=latest` with the
/// cursor and `updated_since` when given.
pub fn page_url(base: &Url, cursor: Option<&str>, updated_since: Option<&str>) -> Url {
    let mut url = base.clone();
    let path = format!("{}/v0.1/servers", base.path().trim_end_matches('/'));
    url.set_path(&path);
    url.set_query(None);
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("limit", &PAGE_LIMIT.to_string());
        q.append_pair("version", "latest");
        if let Some(c) = cursor {
            q.append_pair("cursor", c);
        }
        if let Some(since) = updated_since {
            q.append_pair("updated_since", since);
        }
    }
    url
}

/// How long a 429 or 503 asks to wait before the page is asked for again
/// (RFC 9110 §10.2.3), `Ok(None)` when it does not say (the answer is a
/// failure like any other status), or the error when it asks for more than
/// [`MAX_RETRY_AFTER`].
fn wait_asked(status: u16, retry_after: Option<&str>) -> Result<Option<Duration>, PageError> {
    if !matches!(status, 429 | 503) {
        return Ok(None);
    }
    let Some(value) = retry_after else {
        return Ok(None);
    };
    match crate::transport::throttle::retry_after(value, std::time::SystemTime::now()) {
        Some(wait) if wait <= MAX_RETRY_AFTER => Ok(Some(wait)),
        Some(_) => Err(PageError::WaitTooLong {
            status,
            retry_after: clean(value, 64),
        }),
        None => Ok(None),
    }
}

/// Fetches and reads one page through `http` (the service's guarded client,
/// its body limit [`MAX_PAGE_BYTES`]). A 429 or 503 with a `Retry-After` of
/// at most [`MAX_RETRY_AFTER`] is waited out and the page asked for again,
/// up to [`PAGE_RETRIES`] times.
pub async fn fetch_page(
    http: &HttpClient,
    base: &Url,
    cursor: Option<&str>,
    updated_since: Option<&str>,
    user_agent: &str,
) -> Result<Page, PageError> {
    let url = page_url(base, cursor, updated_since);
    let req = HttpRequest::get(url)
        .header("accept", "application/json")
        .header("user-agent", user_agent)
        .timeout(PAGE_TIMEOUT);
    let mut waits = 0;
    let resp = loop {
        let resp = http
            .send(&req)
            .await
            .map_err(|e| PageError::Unreachable(e.to_string()))?;
        if resp.status == 200 {
            break resp;
        }
        match wait_asked(resp.status, resp.header("retry-after"))? {
            Some(wait) if waits < PAGE_RETRIES => {
                waits += 1;
                tracing::info!(
                    status = resp.status,
                    wait_s = wait.as_secs_f64(),
                    "the registry asked to wait; asking again after"
                );
                tokio::time::sleep(wait).await;
            }
            Some(_) => {
                return Err(PageError::StillBusy {
                    status: resp.status,
                    waits,
                });
            }
            None => return Err(PageError::Status(resp.status)),
        }
    };
    let body: Value = serde_json::from_slice(&resp.body)
        .map_err(|e| PageError::Shape(format!("not JSON ({e})")))?;
    parse_page(&body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item(server: Value, status: &str) -> Value {
        json!({
            "server": server,
            "_meta": {OFFICIAL_META: {"status": status, "isLatest": true, "updatedAt": "2026-11-01T10:00:00Z"}}
        })
    }

    #[test]
    fn each_remote_becomes_a_target_or_says_why_it_is_not_judged() {
        let page = json!({
            "servers": [item(json!({
                "name": "io.github.example/weather",
                "description": "Weather",
                "version": "1.2.0",
                "remotes": [
                    {"type": "streamable-http", "url": "https://mcp.example.com/mcp/"},
                    {"type": "sse", "url": "https://mcp.example.com/sse"},
                    {"type": "streamable-http", "url": "https://{tenant}.example.com/mcp",
                     "variables": {"tenant": {"isRequired": true}}},
                    {"type": "streamable-http", "url": "https://mcp.example.com/auth",
                     "headers": [{"name": "X-API-Key", "isRequired": true, "isSecret": true}]},
                    {"type": "streamable-http", "url": "https://mcp.example.com/fixed",
                     "headers": [{"name": "X-Client", "isRequired": true, "value": "directory"}]},
                    {"type": "stdio"},
                    {"type": "streamable-http", "url": "ftp://mcp.example.com/x"}
                ]
            }), "active")],
            "metadata": {"nextCursor": "io.github.example/weather:1.2.0", "count": 1}
        });
        let page = parse_page(&page).expect("page");
        assert_eq!(
            page.next_cursor.as_deref(),
            Some("io.github.example/weather:1.2.0")
        );
        let e = &page.entries[0];
        assert_eq!(e.status, Status::Active);
        let targets: Vec<_> = e.remotes.iter().map(|r| r.target.clone()).collect();
        assert_eq!(
            targets[..5],
            [
                Ok("https://mcp.example.com/mcp/".to_owned()),
                Ok("https://mcp.example.com/sse".to_owned()),
                Err(NotProbed::TemplatedUrl),
                Err(NotProbed::NeedsHeader("X-API-Key".to_owned())),
                Err(NotProbed::NeedsHeader("X-Client".to_owned())),
            ]
        );
        assert_eq!(e.remotes.len(), 6, "the stdio entry is no remote");
        assert!(matches!(targets[5], Err(NotProbed::BadUrl(_))));
    }

    #[test]
    fn hostile_text_is_cut_and_stripped_of_controls_and_bad_items_are_counted() {
        let long = "x".repeat(5000);
        let page = json!({"servers": [
            item(json!({"name": format!("a/\u{1b}[31m{long}"), "description": "<script>\n", "version": "1"}), "deleted"),
            {"server": {"description": "no name"}},
            "not an object"
        ]});
        let page = parse_page(&page).expect("page");
        assert_eq!(page.entries.len(), 1);
        assert_eq!(page.skipped.len(), 2);
        let e = &page.entries[0];
        assert_eq!(e.status, Status::Deleted);
        assert_eq!(e.name.chars().count(), MAX_NAME_CHARS);
        assert!(!e.name.contains('\u{1b}'));
        assert_eq!(
            e.description, "<script>",
            "escaping is the page's job; controls go"
        );
        assert!(page.next_cursor.is_none());
    }

    #[test]
    fn a_body_without_a_server_list_is_a_shape_error() {
        assert!(matches!(
            parse_page(&json!({"items": []})),
            Err(PageError::Shape(_))
        ));
    }

    #[test]
    fn only_a_429_or_503_with_a_bounded_retry_after_is_waited_out() {
        assert_eq!(wait_asked(429, Some("1")), Ok(Some(Duration::from_secs(1))));
        assert_eq!(
            wait_asked(503, Some("60")),
            Ok(Some(Duration::from_secs(60)))
        );
        assert_eq!(wait_asked(429, None), Ok(None));
        assert_eq!(wait_asked(429, Some("soon")), Ok(None));
        assert_eq!(wait_asked(500, Some("1")), Ok(None));
        let err = wait_asked(429, Some("61")).expect_err("too long");
        assert_eq!(
            err.to_string(),
            "the registry answered HTTP 429 asking to wait 61, more than the 60 s a sync waits"
        );
    }

    #[test]
    fn page_urls_carry_the_cursor_and_the_incremental_bound() {
        let base = Url::parse("https://registry.example/").expect("url");
        let u = page_url(&base, Some("a/b:1.0"), Some("2026-11-01T10:00:00Z"));
        assert_eq!(
            u.as_str(),
            "https://registry.example/v0.1/servers?limit=100&version=latest&cursor=a%2Fb%3A1.0&updated_since=2026-11-01T10%3A00%3A00Z"
        );
        let base = Url::parse("https://example.org/mirror").expect("url");
        assert_eq!(
            page_url(&base, None, None).as_str(),
            "https://example.org/mirror/v0.1/servers?limit=100&version=latest"
        );
    }
}
