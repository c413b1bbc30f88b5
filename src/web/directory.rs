//! The public directory of judged MCP servers (#52) as JSON:
//! `GET /api/v1/directory`, and what its page (`/directory`) shares with it:
//! reading the filters, the sort and the cursor, and one page of rows.
//!
//! A page is read from the index of its sort column (see
//! `DirectoryStore::directory_page`) and continues after the last row of the
//! page before: the cursor is opaque to clients, and carries the sort it
//! belongs to, the last row's key in that column and its URL.

use super::AppState;
use super::error::{ApiResult, WebError};
use super::extract::{ApiJson, ApiQuery};
use super::openapi::{BadRequest, InternalError, TimedOut};
use crate::store::{
    DIRECTORY_GRADES, DirectoryEntry, DirectoryKey, DirectoryQuery, DirectorySort, GradeFilter,
    directory_grade_rank,
};
use crate::suite::McpRevision;
use axum::extract::State;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::{IntoParams, ToSchema};

/// Rows per page unless `limit` says otherwise.
pub const DEFAULT_LIMIT: u32 = 50;
/// Most rows a page holds.
pub const MAX_LIMIT: u32 = 200;
/// Longest name search, in characters.
const MAX_SEARCH_CHARS: usize = 100;
/// Longest cursor read, in bytes.
const MAX_CURSOR_BYTES: usize = 4096;

/// The MCP revisions a directory verdict may judge, newest first.
pub const REVISIONS: [McpRevision; 2] = [McpRevision::V2026_07_28, McpRevision::V2025_11_25];

/// The transports the directory lists.
pub const TRANSPORTS: [&str; 2] = ["streamable-http", "sse"];

/// The directory's filters, order and page, as the API and the page's forms
/// send them. An empty value is no filter (what a form's "any" sends).
#[derive(Debug, Default, Clone, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DirectoryParams {
    /// Only servers of this grade: `strict`, `compliant`, `non-compliant`,
    /// `not judged` (no grade could be given, e.g. authorization required),
    /// or `none` (no verdict yet). With `revision`, the grade of that
    /// revision; else the lowest over the revisions judged.
    pub grade: Option<String>,
    /// Only servers whose latest verdict judged this MCP revision
    /// (`2026-07-28`, `2025-11-25`).
    pub revision: Option<String>,
    /// Only servers reached over this transport (`streamable-http`, `sse`).
    pub transport: Option<String>,
    /// Part of the registry name or title, any case (at most 100 characters).
    pub q: Option<String>,
    /// The column to sort by: `name` (default), `url`, `transport`, `status`,
    /// `grade`, `judged`.
    pub sort: Option<String>,
    /// `asc` (default) or `desc`.
    pub order: Option<String>,
    /// Rows per page, 1 to 200 (default 50).
    pub limit: Option<String>,
    /// The `next` of the page before; valid with the same sort and order.
    pub cursor: Option<String>,
}

fn given(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

fn bad(field: &'static str, detail: impl Into<String>) -> WebError {
    WebError::BadParameter {
        field,
        detail: detail.into(),
    }
}

fn clip(s: &str) -> String {
    s.chars().take(40).collect()
}

impl DirectoryParams {
    /// The store query these ask for, or the parameter that cannot be read.
    pub fn query(&self) -> Result<DirectoryQuery, WebError> {
        let grade = match given(&self.grade) {
            None => None,
            Some("none") => Some(GradeFilter::None),
            Some(g) => {
                let word = if g == "not-judged" { "not judged" } else { g };
                let known = DIRECTORY_GRADES
                    .iter()
                    .find(|k| **k == word)
                    .ok_or_else(|| {
                        bad(
                            "grade",
                            format!(
                                "`{}` is no grade; use strict, compliant, non-compliant, not judged or none",
                                clip(g)
                            ),
                        )
                    })?;
                Some(GradeFilter::Grade(known))
            }
        };
        let revision = match given(&self.revision) {
            None => None,
            Some(r) => Some(
                REVISIONS
                    .iter()
                    .find(|k| k.as_str() == r)
                    .map(|k| k.as_str().to_owned())
                    .ok_or_else(|| {
                        bad(
                            "revision",
                            format!(
                                "`{}` is no MCP revision the directory judges; use 2026-07-28 or 2025-11-25",
                                clip(r)
                            ),
                        )
                    })?,
            ),
        };
        let transport = match given(&self.transport) {
            None => None,
            Some(t) => Some(
                TRANSPORTS
                    .iter()
                    .find(|k| **k == t)
                    .map(|k| (*k).to_owned())
                    .ok_or_else(|| {
                        bad(
                            "transport",
                            format!("`{}` is no transport; use streamable-http or sse", clip(t)),
                        )
                    })?,
            ),
        };
        let search = match given(&self.q) {
            None => None,
            Some(q) if q.chars().count() > MAX_SEARCH_CHARS => {
                return Err(bad(
                    "q",
                    format!("a search is at most {MAX_SEARCH_CHARS} characters"),
                ));
            }
            Some(q) if q.chars().any(char::is_control) => {
                return Err(bad("q", "a search holds no control characters"));
            }
            Some(q) => Some(q.to_owned()),
        };
        let sort = match given(&self.sort) {
            None => DirectorySort::default(),
            Some(s) => DirectorySort::parse(s).ok_or_else(|| {
                bad(
                    "sort",
                    format!(
                        "`{}` is no column; sort by name, url, transport, status, grade or judged",
                        clip(s)
                    ),
                )
            })?,
        };
        let descending = match given(&self.order) {
            None | Some("asc") => false,
            Some("desc") => true,
            Some(o) => return Err(bad("order", format!("`{}`: use asc or desc", clip(o)))),
        };
        let limit = match given(&self.limit) {
            None => DEFAULT_LIMIT,
            Some(l) => l
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=MAX_LIMIT).contains(n))
                .ok_or_else(|| bad("limit", format!("limit is a number from 1 to {MAX_LIMIT}")))?,
        };
        let after = match given(&self.cursor) {
            None => None,
            Some(c) => Some(decode_cursor(c, sort, descending)?),
        };
        Ok(DirectoryQuery {
            grade,
            revision,
            transport,
            search,
            sort,
            descending,
            after,
            limit,
        })
    }
}

/// The cursor that continues after `last` in `sort` and direction.
pub fn encode_cursor(sort: DirectorySort, descending: bool, last: &DirectoryEntry) -> String {
    let key = match sort.key_of(last) {
        DirectoryKey::Text(s) => serde_json::Value::from(s),
        DirectoryKey::Int(n) => serde_json::Value::from(n),
    };
    let doc = serde_json::json!([
        sort.as_str(),
        if descending { "desc" } else { "asc" },
        key,
        last.url
    ]);
    URL_SAFE_NO_PAD.encode(doc.to_string())
}

fn decode_cursor(
    raw: &str,
    sort: DirectorySort,
    descending: bool,
) -> Result<(DirectoryKey, String), WebError> {
    let not_one = || {
        bad(
            "cursor",
            "not a cursor of the directory: use a page's `next`",
        )
    };
    if raw.len() > MAX_CURSOR_BYTES {
        return Err(not_one());
    }
    let bytes = URL_SAFE_NO_PAD.decode(raw).map_err(|_| not_one())?;
    let doc: serde_json::Value = serde_json::from_slice(&bytes).map_err(|_| not_one())?;
    let [s, o, key, url] = doc.as_array().map(Vec::as_slice).unwrap_or_default() else {
        return Err(not_one());
    };
    let (Some(s), Some(o), Some(url)) = (s.as_str(), o.as_str(), url.as_str()) else {
        return Err(not_one());
    };
    if s != sort.as_str() || o != if descending { "desc" } else { "asc" } {
        return Err(bad(
            "cursor",
            format!(
                "this cursor continues the sort `{}` {}; ask with the same sort and order, or without a cursor",
                clip(s),
                clip(o)
            ),
        ));
    }
    let key = if sort.numeric() {
        DirectoryKey::Int(key.as_i64().ok_or_else(not_one)?)
    } else {
        DirectoryKey::Text(key.as_str().ok_or_else(not_one)?.to_owned())
    };
    Ok((key, url.to_owned()))
}

/// One listed server, as the API and the page show it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DirectoryServer {
    /// The registry name (`io.github.user/weather`); null for a server
    /// listed by a person who checked it.
    #[schema(required = true)]
    pub name: Option<String>,
    #[schema(required = true)]
    pub title: Option<String>,
    #[schema(required = true)]
    pub description: Option<String>,
    /// The URL as listed.
    pub url: String,
    /// `streamable-http` or `sse`.
    pub transport: String,
    /// `active` or `deprecated` (in the registry).
    pub status: String,
    /// `registry` or `submission`.
    pub source: String,
    /// The registry version.
    #[schema(required = true)]
    pub version: Option<String>,
    /// The lowest grade over the revisions the latest run judged
    /// (`strict`, `compliant`, `non-compliant`, `not judged`); null before
    /// the first verdict.
    #[schema(required = true)]
    pub grade: Option<String>,
    /// Why the latest verdict gave no grade (`authorization required`),
    /// when it gave none.
    #[schema(required = true)]
    pub withheld: Option<String>,
    /// Whether the server asks for authorization: shown as such, never
    /// with a grade.
    pub authorization_required: bool,
    /// Each revision's grade, revision first (`{"2025-11-25": "strict"}`).
    pub grades: BTreeMap<String, String>,
    /// When the latest verdict was recorded.
    #[schema(required = true, format = DateTime)]
    pub judged_at: Option<String>,
    /// The grade before the latest one.
    #[schema(required = true)]
    pub previous_grade: Option<String>,
    /// `up`, `down` or `same` against the grade before; null without one.
    #[schema(required = true)]
    pub trend: Option<String>,
    /// Why it is listed without a verdict (`templated URL`, `needs a header
    /// (NAME)`), when it is.
    #[schema(required = true)]
    pub not_probed: Option<String>,
    pub links: DirectoryLinks,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DirectoryLinks {
    /// The target's page with its history; null when it is not judged.
    #[schema(required = true)]
    pub target: Option<String>,
    /// The target in the API.
    #[schema(required = true)]
    pub target_api: Option<String>,
    /// The report of the latest run.
    #[schema(required = true)]
    pub report: Option<String>,
    /// The MCP badge (SVG).
    #[schema(required = true)]
    pub badge: Option<String>,
}

/// One page of the directory.
#[derive(Debug, Serialize, ToSchema)]
pub struct DirectoryPage {
    pub servers: Vec<DirectoryServer>,
    /// The cursor of the next page, or null on the last.
    #[schema(required = true)]
    pub next: Option<String>,
    /// When a registry was last synced in full, or null when none was.
    #[schema(required = true, format = DateTime)]
    pub last_synced: Option<String>,
    pub links: DirectoryPageLinks,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DirectoryPageLinks {
    /// The next page, same filters and sort; null on the last.
    #[schema(required = true)]
    pub next: Option<String>,
}

/// Whether `e`'s latest verdict withheld its grade for authorization.
pub fn needs_authorization(e: &DirectoryEntry) -> bool {
    e.grade.as_deref() == Some(crate::suite::NOT_JUDGED)
        && e.withheld
            .as_deref()
            .is_some_and(|w| w.contains("authorization"))
}

fn trend(e: &DirectoryEntry) -> Option<String> {
    let before = directory_grade_rank(e.previous_grade.as_deref());
    let now = directory_grade_rank(e.grade.as_deref());
    if e.previous_grade.is_none() || e.grade.is_none() {
        return None;
    }
    Some(
        match now.cmp(&before) {
            std::cmp::Ordering::Greater => "up",
            std::cmp::Ordering::Less => "down",
            std::cmp::Ordering::Equal => "same",
        }
        .to_owned(),
    )
}

fn server(e: DirectoryEntry, grades: BTreeMap<String, String>) -> DirectoryServer {
    let authorization_required = needs_authorization(&e);
    DirectoryServer {
        trend: trend(&e),
        authorization_required,
        links: DirectoryLinks {
            target: e.target_id.as_ref().map(|t| format!("/targets/{t}")),
            target_api: e.target_id.as_ref().map(|t| format!("/api/v1/targets/{t}")),
            report: e.last_run_id.as_ref().map(|r| format!("/runs/{r}")),
            badge: e.target_id.as_ref().map(|t| format!("/badge/{t}/mcp.svg")),
        },
        name: e.registry_name,
        title: e.title,
        description: e.description,
        url: e.url,
        transport: e.transport,
        status: e.status,
        source: e.source,
        version: e.version,
        grade: e.grade,
        withheld: e.withheld,
        grades,
        judged_at: e.judged_at_ms.map(crate::rfc3339),
        previous_grade: e.previous_grade,
        not_probed: e.not_probed,
    }
}

/// One page of the directory for `query`, and the cursor after it.
pub async fn read_page(
    state: &AppState,
    query: &DirectoryQuery,
) -> ApiResult<(Vec<DirectoryServer>, Option<String>, Option<String>)> {
    let mut ask = query.clone();
    // One row more than asked tells whether another page follows.
    ask.limit = query.limit.saturating_add(1);
    let mut rows = state.store.directory_page(&ask).await?;
    let next = if rows.len() > query.limit as usize {
        rows.truncate(query.limit as usize);
        rows.last()
            .map(|last| encode_cursor(query.sort, query.descending, last))
    } else {
        None
    };
    let urls: Vec<String> = rows.iter().map(|e| e.url.clone()).collect();
    let mut grades: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (url, revision, grade) in state.store.directory_revision_grades(&urls).await? {
        grades.entry(url).or_default().insert(revision, grade);
    }
    let synced = state
        .store
        .directory_syncs()
        .await?
        .iter()
        .filter_map(|s| s.last_success_ms)
        .max()
        .map(crate::rfc3339);
    let servers = rows
        .into_iter()
        .map(|e| {
            let g = grades.remove(&e.url).unwrap_or_default();
            server(e, g)
        })
        .collect();
    Ok((servers, next, synced))
}

/// The query string of `params` with `cursor` in place of theirs (the
/// filters, sort, order and limit kept), for links to other pages.
pub fn query_string(params: &DirectoryParams, cursor: Option<&str>) -> String {
    let mut out = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in [
        ("grade", &params.grade),
        ("revision", &params.revision),
        ("transport", &params.transport),
        ("q", &params.q),
        ("sort", &params.sort),
        ("order", &params.order),
        ("limit", &params.limit),
    ] {
        if let Some(v) = given(value) {
            out.append_pair(name, v);
        }
    }
    if let Some(c) = cursor {
        out.append_pair("cursor", c);
    }
    out.finish()
}

/// `GET /api/v1/directory`.
#[utoipa::path(
    get,
    path = "/api/v1/directory",
    tag = "directory",
    summary = "The public directory of judged MCP servers",
    description = "Every listed server with its grade per MCP revision, when it was last judged, \
        the trend since the judgement before, its badge and its report; filtered, sorted by any \
        column and paginated by an opaque cursor (`next`). A parameter that cannot be read is \
        answered 400 `/problems/invalid-parameter` naming it in `field`.",
    params(DirectoryParams),
    responses(
        (status = 200, description = "A page of listed servers", body = DirectoryPage),
        (status = 400, response = BadRequest),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn list_directory(
    State(state): State<AppState>,
    ApiQuery(params): ApiQuery<DirectoryParams>,
) -> ApiResult<ApiJson<DirectoryPage>> {
    let query = params.query()?;
    let (servers, next, last_synced) =
        super::store_deadline(state.store.as_ref(), read_page(&state, &query)).await?;
    let link = next
        .as_deref()
        .map(|n| format!("/api/v1/directory?{}", query_string(&params, Some(n))));
    Ok(ApiJson(DirectoryPage {
        servers,
        next,
        last_synced,
        links: DirectoryPageLinks { next: link },
    }))
}

/// Entries read from the store at a time by the export.
const EXPORT_BATCH: u32 = 500;

/// The SHA-256 of the statement a DSSE envelope signs (its decoded
/// payload), as `sha256:<hex>`.
pub fn statement_digest(envelope: &str) -> Option<String> {
    use base64::engine::general_purpose::STANDARD;
    use sha2::Digest;
    let doc: serde_json::Value = serde_json::from_str(envelope).ok()?;
    let payload = STANDARD.decode(doc.get("payload")?.as_str()?).ok()?;
    Some(format!(
        "sha256:{}",
        hex::encode(sha2::Sha256::digest(&payload))
    ))
}

/// One line of the export.
fn export_line(
    e: DirectoryEntry,
    envelope: Option<&str>,
    grades: BTreeMap<String, String>,
) -> String {
    let digest = envelope.and_then(statement_digest);
    let attestation = match (&digest, &e.last_run_id) {
        (Some(_), Some(run)) => Some(format!("/api/v1/runs/{run}/attestation")),
        _ => None,
    };
    let s = server(e, grades);
    let mut line = serde_json::json!({
        "name": s.name,
        "title": s.title,
        "url": s.url,
        "transport": s.transport,
        "status": s.status,
        "source": s.source,
        "version": s.version,
        "grade": if s.authorization_required { None } else { s.grade },
        "authorization_required": s.authorization_required,
        "grades": s.grades,
        "judged_at": s.judged_at,
        "previous_grade": s.previous_grade,
        "not_probed": s.not_probed,
        "report": s.links.report,
        "statement_digest": digest,
        "attestation": attestation,
    })
    .to_string();
    line.push('\n');
    line
}

/// `GET /api/v1/directory/export.jsonl`.
#[utoipa::path(
    get,
    path = "/api/v1/directory/export.jsonl",
    tag = "directory",
    summary = "The directory as a dataset (JSON Lines)",
    description = "One JSON object a line for every listed server, by URL: what         `GET /api/v1/directory` shows, and the SHA-256 digest of the signed in-toto statement         of its latest verdict (`statement_digest`, `sha256:<hex>`) with the attestation that         carries it, so each grade can be verified. Read as it is written: a snapshot of the         moment, meant to be fetched daily.",
    responses(
        (status = 200, description = "One server a line", content_type = "application/jsonl",
            body = String),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn export_directory(State(state): State<AppState>) -> axum::response::Response {
    use axum::http::{HeaderValue, header};
    use axum::response::IntoResponse;
    use futures::StreamExt;
    // Each batch is read when the one before has been sent; a store error
    // ends the body early (the client sees a truncated transfer).
    let lines = futures::stream::unfold(Some(String::new()), move |after| {
        let state = state.clone();
        async move {
            let after = after?;
            let from = (!after.is_empty()).then_some(after.as_str());
            let batch = match state.store.directory_export(from, EXPORT_BATCH).await {
                Ok(b) => b,
                Err(e) => {
                    tracing::error!(error = %e, "the directory export stopped");
                    return Some((Err(std::io::Error::other(e.to_string())), None));
                }
            };
            if batch.is_empty() {
                return None;
            }
            let urls: Vec<String> = batch.iter().map(|(e, _)| e.url.clone()).collect();
            let mut grades: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
            match state.store.directory_revision_grades(&urls).await {
                Ok(rows) => {
                    for (url, revision, grade) in rows {
                        grades.entry(url).or_default().insert(revision, grade);
                    }
                }
                Err(e) => return Some((Err(std::io::Error::other(e.to_string())), None)),
            }
            let next = (batch.len() == EXPORT_BATCH as usize)
                .then(|| urls.last().cloned())
                .flatten();
            let mut chunk = String::new();
            for (e, envelope) in batch {
                let g = grades.remove(&e.url).unwrap_or_default();
                chunk.push_str(&export_line(e, envelope.as_deref(), g));
            }
            Some((Ok::<_, std::io::Error>(chunk), next))
        }
    })
    .boxed();
    let mut resp = axum::body::Body::from_stream(lines).into_response();
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/jsonl; charset=utf-8"),
    );
    h.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("inline; filename=\"protocheck-directory.jsonl\""),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(url: &str) -> DirectoryEntry {
        DirectoryEntry {
            url: url.to_owned(),
            source: "registry".into(),
            registry_name: Some("io.example/Weather".into()),
            title: None,
            description: None,
            version: None,
            status: "active".into(),
            transport: "sse".into(),
            not_probed: None,
            target_id: None,
            registry_updated_at: None,
            listed_at_ms: 1,
            updated_at_ms: 1,
            grade: Some("compliant".into()),
            previous_grade: Some("strict".into()),
            last_run_id: None,
            judged_at_ms: Some(5),
            withheld: None,
        }
    }

    #[test]
    fn a_cursor_continues_its_own_sort_only() {
        let e = entry("https://a.example/mcp");
        let c = encode_cursor(DirectorySort::Name, false, &e);
        let params = DirectoryParams {
            cursor: Some(c.clone()),
            ..DirectoryParams::default()
        };
        let q = params.query().expect("reads");
        assert_eq!(
            q.after,
            Some((
                DirectoryKey::Text("io.example/weather".into()),
                "https://a.example/mcp".into()
            ))
        );
        let other = DirectoryParams {
            cursor: Some(c),
            sort: Some("grade".into()),
            ..DirectoryParams::default()
        };
        assert!(matches!(
            other.query(),
            Err(WebError::BadParameter {
                field: "cursor",
                ..
            })
        ));
        let g = encode_cursor(DirectorySort::Judged, true, &e);
        let q = DirectoryParams {
            cursor: Some(g),
            sort: Some("judged".into()),
            order: Some("desc".into()),
            ..DirectoryParams::default()
        }
        .query()
        .expect("reads");
        assert_eq!(q.after.map(|a| a.0), Some(DirectoryKey::Int(5)));
    }

    #[test]
    fn each_unreadable_parameter_is_named() {
        for (params, field) in [
            (
                DirectoryParams {
                    grade: Some("excellent".into()),
                    ..Default::default()
                },
                "grade",
            ),
            (
                DirectoryParams {
                    revision: Some("2024-01-01".into()),
                    ..Default::default()
                },
                "revision",
            ),
            (
                DirectoryParams {
                    transport: Some("stdio".into()),
                    ..Default::default()
                },
                "transport",
            ),
            (
                DirectoryParams {
                    sort: Some("popularity".into()),
                    ..Default::default()
                },
                "sort",
            ),
            (
                DirectoryParams {
                    order: Some("up".into()),
                    ..Default::default()
                },
                "order",
            ),
            (
                DirectoryParams {
                    limit: Some("0".into()),
                    ..Default::default()
                },
                "limit",
            ),
            (
                DirectoryParams {
                    limit: Some("201".into()),
                    ..Default::default()
                },
                "limit",
            ),
            (
                DirectoryParams {
                    cursor: Some("!!".into()),
                    ..Default::default()
                },
                "cursor",
            ),
            (
                DirectoryParams {
                    q: Some("x".repeat(101)),
                    ..Default::default()
                },
                "q",
            ),
        ] {
            match params.query() {
                Err(WebError::BadParameter { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
    }

    #[test]
    fn trend_and_authorization_read_the_entry() {
        let mut e = entry("https://a.example/mcp");
        assert_eq!(trend(&e).as_deref(), Some("down"));
        e.previous_grade = None;
        assert_eq!(trend(&e), None);
        e.grade = Some("not judged".into());
        e.withheld = Some("authorization required".into());
        assert!(needs_authorization(&e));
    }
}
