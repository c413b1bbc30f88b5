//! `GET /targets/{id}`: a target's history, and what changed between the
//! last two judged runs of each suite.

use super::{Page, RunRow, clip, run_row};
use crate::store::{Run, StoredFinding};
use crate::suite::{Outcome, SuiteId};
use crate::web::AppState;
use crate::web::error::{PageResult, WebError};
use crate::web::extract::PagePath;
use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// Runs listed on a target page.
const TARGET_HISTORY: u32 = 50;

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
    PagePath(id): PagePath<String>,
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
