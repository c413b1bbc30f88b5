//! `GET /directory`: the public directory of judged MCP servers, with the
//! API's filters, sort and pagination as plain links and a GET form, so it
//! works without JavaScript. Registry names, titles and descriptions are
//! escaped like everything a target or registry writes.

use super::Page;
use crate::web::AppState;
use crate::web::directory::{
    DirectoryParams, DirectoryServer, REVISIONS, TRANSPORTS, query_string, read_page,
};
use crate::web::error::{AsPage, PageResult, WebError};
use askama::Template;
use axum::extract::{Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};

/// A column header: its label and the link that sorts by it.
struct SortLink {
    label: &'static str,
    href: String,
    /// `ascending`, `descending` or `none` (`aria-sort`).
    state: &'static str,
}

/// A listed server as a row.
struct Row {
    name: String,
    title: Option<String>,
    description: Option<String>,
    /// The URL in pieces, each followed by a place it may wrap.
    url_parts: Vec<String>,
    transport: String,
    status: String,
    /// The grade words shown, or the reason there is none.
    grade: String,
    grade_class: &'static str,
    /// Each judged revision's grade, newest first.
    revisions: Vec<(String, String)>,
    /// When it was last judged: RFC 3339, and as people read it.
    judged: Option<(String, String)>,
    trend: Option<String>,
    target: Option<String>,
    report: Option<String>,
    badge: Option<String>,
}

#[derive(Template)]
#[template(path = "directory.html")]
struct DirectoryView {
    rows: Vec<Row>,
    sorts: Vec<SortLink>,
    grade: String,
    revision: String,
    transport: String,
    q: String,
    sort: String,
    order: String,
    limit: String,
    grades: Vec<(&'static str, &'static str)>,
    revisions: Vec<&'static str>,
    transports: Vec<&'static str>,
    next: Option<String>,
    first: Option<String>,
    /// When the registry was last read: RFC 3339, and as people read it.
    last_synced: Option<(String, String)>,
}

/// The pill class of a grade: its badge's colour, as on the run and target
/// pages (not judged and no verdict yet are neutral, never the failure's).
fn grade_class(grade: &str) -> &'static str {
    match grade {
        "strict" => "tone-brightgreen",
        "compliant" => "tone-green",
        "non-compliant" => "tone-red",
        _ => "tone-lightgrey",
    }
}

/// A stored RFC 3339 time as the other pages show one (`2026-12-07 11:12
/// UTC`); the text as it is should it not parse.
fn readable(iso: &str) -> String {
    humantime::parse_rfc3339_weak(iso)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_millis()).ok())
        .map_or_else(|| iso.to_owned(), super::readable_time)
}

fn row(s: DirectoryServer) -> Row {
    let (grade, class) = if s.authorization_required {
        ("authorization required".to_owned(), "tone-lightgrey")
    } else if let Some(g) = &s.grade {
        let words = match (&s.withheld, g.as_str()) {
            (Some(w), crate::suite::NOT_JUDGED) => w.clone(),
            _ => g.clone(),
        };
        (words, grade_class(g))
    } else if let Some(why) = &s.not_probed {
        (format!("not probed: {why}"), "tone-lightgrey")
    } else {
        ("not judged yet".to_owned(), "tone-lightgrey")
    };
    let revisions = if s.authorization_required {
        Vec::new()
    } else {
        s.grades.into_iter().rev().collect()
    };
    Row {
        name: s.name.unwrap_or_else(|| s.url.clone()),
        title: s.title,
        description: s.description.filter(|d| !d.trim().is_empty()),
        url_parts: super::url_parts(&s.url),
        transport: s.transport,
        status: s.status,
        grade,
        grade_class: class,
        revisions,
        judged: s.judged_at.map(|iso| {
            let shown = readable(&iso);
            (iso, shown)
        }),
        trend: s.trend,
        target: s.links.target,
        report: s.links.report,
        badge: s.links.badge,
    }
}

const COLUMNS: [(&str, &str); 6] = [
    ("name", "Server"),
    ("url", "URL"),
    ("transport", "Transport"),
    ("status", "Status"),
    ("grade", "Grade"),
    ("judged", "Last judged"),
];

/// `GET /directory`.
pub async fn directory_page(State(state): State<AppState>, uri: Uri) -> PageResult<Response> {
    let Query(params) = Query::<DirectoryParams>::try_from_uri(&uri)
        .map_err(|e| AsPage(WebError::MalformedQuery(e.body_text())))?;
    let query = params.query().map_err(AsPage)?;
    let (servers, next, last_synced) = read_page(&state, &query).await.map_err(AsPage)?;
    let sort = query.sort.as_str();
    let sorts = COLUMNS
        .iter()
        .map(|(column, label)| {
            let current = *column == sort;
            // A click on the current column turns its order around; on
            // another, sorts by it ascending. Filters are kept, the cursor
            // is not.
            let order = if current && !query.descending {
                "desc"
            } else {
                "asc"
            };
            let link = DirectoryParams {
                sort: Some((*column).to_owned()),
                order: Some(order.to_owned()),
                cursor: None,
                ..params.clone()
            };
            SortLink {
                label,
                href: format!("/directory?{}", query_string(&link, None)),
                state: match (current, query.descending) {
                    (false, _) => "none",
                    (true, false) => "ascending",
                    (true, true) => "descending",
                },
            }
        })
        .collect();
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let view = DirectoryView {
        rows: servers.into_iter().map(row).collect(),
        sorts,
        grade: text(&params.grade),
        revision: text(&params.revision),
        transport: text(&params.transport),
        q: text(&params.q),
        sort: sort.to_owned(),
        order: if query.descending { "desc" } else { "asc" }.to_owned(),
        limit: text(&params.limit),
        grades: vec![
            ("strict", "strict"),
            ("compliant", "compliant"),
            ("non-compliant", "non-compliant"),
            ("not judged", "not judged (e.g. authorization required)"),
            ("none", "no verdict yet"),
        ],
        revisions: REVISIONS.iter().map(|r| r.as_str()).collect(),
        transports: TRANSPORTS.to_vec(),
        next: next.map(|n| format!("/directory?{}", query_string(&params, Some(&n)))),
        first: params
            .cursor
            .as_ref()
            .map(|_| format!("/directory?{}", query_string(&params, None))),
        last_synced: last_synced.map(|iso| {
            let shown = readable(&iso);
            (iso, shown)
        }),
    };
    Ok(Page(StatusCode::OK, view).into_response())
}
