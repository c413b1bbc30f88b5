//! `GET /targets/{id}`: a target's history, and what changed between the
//! last two judged runs of each suite.

use super::{Page, RunRow, clip, run_row};
use crate::store::Run;
use crate::suite::{Finding, Outcome, SuiteId};
use crate::web::AppState;
use crate::web::error::{PageResult, WebError};
use crate::web::extract::PagePath;
use askama::Template;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::sync::Arc;
use uuid::Uuid;

/// Runs listed on a target page.
const TARGET_HISTORY: u32 = 50;

struct ChangeView {
    suite: String,
    newly_failing: Vec<String>,
    newly_passing: Vec<String>,
}

/// A horizontal line of the chart: one grade or level.
struct LevelLine {
    y: u32,
    label: &'static str,
}

/// A judged run on the chart.
struct ChartPoint {
    x: u32,
    y: u32,
    /// When it ended and where it stood, for the point's tooltip.
    title: String,
    /// `regressed`, `recovered` or `steady`: the point's shape (a triangle
    /// pointing down, one pointing up, a circle) and its ring.
    class: &'static str,
    /// The point's outline as an SVG path, in its shape.
    d: String,
    /// The colour of the run's badge, in the shade the pages' pills use
    /// (3:1 or more against the white page).
    fill: &'static str,
}

/// A point's outline: a circle for a steady run, a triangle pointing down
/// for a regression and up for a recovery, so that the shape tells them apart
/// as well as the ring's colour.
fn point_path(class: &str, x: u32, y: u32) -> String {
    let (x, y) = (i64::from(x), i64::from(y));
    match class {
        "regressed" => format!("M{} {}H{}L{x} {}Z", x - 8, y - 6, x + 8, y + 8),
        "recovered" => format!("M{} {}H{}L{x} {}Z", x - 8, y + 6, x + 8, y - 8),
        _ => format!("M{} {y}a6 6 0 1 0 12 0a6 6 0 1 0 -12 0Z", x - 6),
    }
}

/// A suite's grade or level over time, drawn server-side as inline SVG.
struct ChartView {
    suite: String,
    width: u32,
    height: u32,
    /// Where the plot starts and ends, and where the level labels end.
    plot_left: u32,
    grid_end: u32,
    label_end: u32,
    levels: Vec<LevelLine>,
    points: Vec<ChartPoint>,
    /// The polyline's `points`.
    line: String,
    first: String,
    last: String,
}

/// A run worse or better than the one before it, with the rules it changed.
struct EventView {
    suite: String,
    run: uuid::Uuid,
    when: String,
    /// `regressed` or `recovered`.
    kind: &'static str,
    before: String,
    after: String,
    changes: Vec<String>,
}

#[derive(Template)]
#[template(path = "target.html")]
struct TargetPage {
    id: String,
    url: String,
    url_parts: Vec<String>,
    protocol: Option<String>,
    runs: Vec<RunRow>,
    changes: Vec<ChangeView>,
    charts: Vec<ChartView>,
    events: Vec<EventView>,
    watched: Vec<String>,
    /// The badge of each suite judged, with its snippets.
    badges: Vec<super::run::BadgeView>,
    /// What "Check again" submits: the suite, and the form's anti-forgery token.
    check_suite: String,
    csrf: String,
}

/// Pairs of consecutive judged runs compared per suite for the page's list
/// of regressions and recoveries: each costs a read of a run's findings.
const COMPARED_PAIRS: usize = 20;

/// The chart's geometry: where the plot starts (after the labels), its width,
/// the room of one level and the margins.
const PLOT_LEFT: u32 = 130;
const PLOT_WIDTH: u32 = 260;
const LEVEL_STEP: u32 = 28;
const MARGIN: u32 = 16;

/// When a run ended (or was made), to the minute, UTC.
fn day_and_time(r: &Run) -> String {
    day_and_time_ms(r.finished_at_ms.unwrap_or(r.created_at_ms))
}

/// The chart and the regressions and recoveries of `suite` among `runs`
/// (newest first): the judged runs oldest first, each compared with the one
/// before it (the last [`COMPARED_PAIRS`] pairs).
async fn suite_history(
    read: &mut FindingsRead<'_>,
    suite: SuiteId,
    runs: &[Run],
) -> crate::store::StoreResult<(Option<ChartView>, Vec<EventView>)> {
    let judged: Vec<(&Run, (u8, String))> = runs
        .iter()
        .rev()
        .filter_map(|r| {
            let v = r.verdict.as_ref().filter(|v| v.suite == suite)?;
            Some((r, crate::webhook::standing(v)?))
        })
        .collect();
    if judged.is_empty() {
        return Ok((None, Vec::new()));
    }
    let mut kinds = vec!["steady"; judged.len()];
    let mut events = Vec::new();
    let first_compared = judged.len().saturating_sub(COMPARED_PAIRS + 1);
    let mut before: Option<Arc<Vec<Finding>>> = None;
    for i in first_compared..judged.len() {
        let run = judged[i].0;
        let findings = read.of(run.id).await?;
        if let (Some(prev_findings), Some(verdict), true) =
            (&before, run.verdict.as_ref(), i > first_compared)
        {
            let prev = judged[i - 1].0;
            if let Some(c) =
                crate::webhook::compare(prev.verdict.as_ref(), prev_findings, verdict, &findings)
            {
                let kind = if c.event == crate::events::RUN_REGRESSED {
                    "regressed"
                } else {
                    "recovered"
                };
                kinds[i] = kind;
                events.push(EventView {
                    suite: suite.as_str().to_uppercase(),
                    run: run.id,
                    when: day_and_time(run),
                    kind,
                    before: c.before.unwrap_or_else(|| "—".into()),
                    after: c.after.unwrap_or_else(|| "—".into()),
                    changes: c
                        .changes
                        .iter()
                        .map(|r| {
                            format!(
                                "{}: {} → {}",
                                r.rule_id,
                                r.before.as_str(),
                                r.after.as_str()
                            )
                        })
                        .collect(),
                });
            }
        }
        before = Some(findings);
    }
    events.reverse();
    let levels: &[&str] = match suite {
        SuiteId::Mcp => crate::webhook::MCP_STANDINGS,
        SuiteId::Rcp => crate::webhook::RCP_STANDINGS,
    };
    let top = u32::try_from(levels.len().saturating_sub(1)).unwrap_or(0);
    let y_of = |rank: u32| MARGIN + (top.saturating_sub(rank)) * LEVEL_STEP;
    let n = u32::try_from(judged.len()).unwrap_or(u32::MAX);
    let x_of = |i: u32| match n {
        1 => PLOT_LEFT + PLOT_WIDTH / 2,
        _ => PLOT_LEFT + i * PLOT_WIDTH / (n - 1),
    };
    let points: Vec<ChartPoint> = judged
        .iter()
        .zip(kinds)
        .enumerate()
        .map(|(i, ((run, (rank, label)), class))| {
            let (x, y) = (x_of(u32::try_from(i).unwrap_or(0)), y_of(u32::from(*rank)));
            ChartPoint {
                x,
                y,
                title: format!("{} · {label}", day_and_time(run)),
                class,
                d: point_path(class, x, y),
                fill: super::tone_hex(super::verdict_pill(run).tone),
            }
        })
        .collect();
    let line = points
        .iter()
        .map(|p| format!("{},{}", p.x, p.y))
        .collect::<Vec<_>>()
        .join(" ");
    let chart = ChartView {
        suite: suite.as_str().to_uppercase(),
        width: PLOT_LEFT + PLOT_WIDTH + MARGIN,
        height: 2 * MARGIN + top * LEVEL_STEP,
        plot_left: PLOT_LEFT,
        grid_end: PLOT_LEFT + PLOT_WIDTH,
        label_end: PLOT_LEFT - 12,
        levels: levels
            .iter()
            .enumerate()
            .map(|(rank, label)| LevelLine {
                y: y_of(u32::try_from(rank).unwrap_or(0)),
                label,
            })
            .collect(),
        first: judged
            .first()
            .map(|(r, _)| day_and_time(r))
            .unwrap_or_default(),
        last: judged
            .last()
            .map(|(r, _)| day_and_time(r))
            .unwrap_or_default(),
        points,
        line,
    };
    Ok((Some(chart), events))
}

/// `GET /targets/{id}`: history and what changed between the last two runs of each suite.
pub async fn show_target_page(
    State(state): State<AppState>,
    PagePath(id): PagePath<String>,
    headers: HeaderMap,
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
    // The history and the last change read the same runs' findings: each once.
    let mut read = FindingsRead::new(&state);
    let mut charts = Vec::new();
    let mut events = Vec::new();
    let mut watched = Vec::new();
    let watches = state.store.list_watches(Some(&target.id)).await?;
    let mut changes = Vec::new();
    for suite in [SuiteId::Mcp, SuiteId::Rcp] {
        let judged: Vec<&Run> = runs
            .iter()
            .filter(|r| r.verdict.as_ref().is_some_and(|v| v.suite == suite))
            .take(2)
            .collect();
        if let [latest, previous] = judged[..] {
            let now_failing = failing_rules(&read.of(latest.id).await?);
            let before = failing_rules(&read.of(previous.id).await?);
            changes.push(ChangeView {
                suite: suite.as_str().to_uppercase(),
                newly_failing: now_failing.difference(&before).cloned().collect(),
                newly_passing: before.difference(&now_failing).cloned().collect(),
            });
        }
        let (chart, found) = suite_history(&mut read, suite, &runs).await?;
        charts.extend(chart);
        events.extend(found);
        // Each watcher's beat (several API keys may watch one target), up
        // to a page's worth.
        for w in watches
            .iter()
            .filter(|w| w.suite == suite.as_str())
            .take(MAX_WATCHES_SHOWN)
        {
            watched.push(format!(
                "{} re-checked every {}, next at {}{}",
                suite.as_str().to_uppercase(),
                every(w.interval_ms),
                day_and_time_ms(w.next_due_at_ms),
                match (w.api_key, w.expires_at_ms) {
                    (Some(_), _) => " (asked for with an API key)",
                    (None, Some(_)) => " (its badge was served in the last 30 days)",
                    (None, None) => "",
                }
            ));
        }
    }
    let mut badges = Vec::new();
    for c in &charts {
        let suite = if c.suite == "RCP" {
            SuiteId::Rcp
        } else {
            SuiteId::Mcp
        };
        let mut b = super::run::badge_view(&state, &headers, &target.id, suite).await;
        b.id_suffix = format!("-{}", suite.as_str());
        b.heading = format!("{} badge", c.suite);
        badges.push(b);
    }
    let csrf = super::csrf_cookie(&headers)
        .filter(|t| t.len() == 32)
        .unwrap_or_else(super::new_csrf_token);
    let page = TargetPage {
        badges,
        check_suite: match target.protocol.as_deref() {
            Some("mcp") => "mcp",
            Some("rcp") => "rcp",
            _ => "auto",
        }
        .to_owned(),
        csrf: csrf.clone(),
        id: target.id.clone(),
        url: target.canonical_url.clone(),
        url_parts: super::url_parts(&target.canonical_url),
        protocol: target.protocol.clone(),
        runs: runs.iter().map(run_row).collect(),
        changes,
        charts,
        events,
        watched,
    };
    Ok(super::with_csrf_cookie(
        Page(StatusCode::OK, page).into_response(),
        &csrf,
    ))
}

/// The watches of one suite a target's page lists.
const MAX_WATCHES_SHOWN: usize = 10;

/// An interval for people: `24 h`, `90 min`, `45 s`.
fn every(ms: i64) -> String {
    let s = ms / 1000;
    if s >= 3600 && s % 3600 == 0 {
        format!("{} h", s / 3600)
    } else if s >= 60 && s % 60 == 0 {
        format!("{} min", s / 60)
    } else {
        format!("{s} s")
    }
}

fn day_and_time_ms(ms: i64) -> String {
    super::readable_time(ms)
}

fn failing_rules(findings: &[Finding]) -> std::collections::BTreeSet<String> {
    findings
        .iter()
        .filter(|f| matches!(f.outcome, Outcome::Fail | Outcome::Warn))
        .map(|f| f.rule_id.clone())
        .collect()
}

/// The findings of runs, each read from the store once per page.
struct FindingsRead<'a> {
    state: &'a AppState,
    read: HashMap<Uuid, Arc<Vec<Finding>>>,
}

impl<'a> FindingsRead<'a> {
    fn new(state: &'a AppState) -> Self {
        Self {
            state,
            read: HashMap::new(),
        }
    }

    async fn of(&mut self, run: Uuid) -> crate::store::StoreResult<Arc<Vec<Finding>>> {
        if let Some(found) = self.read.get(&run) {
            return Ok(found.clone());
        }
        let found: Arc<Vec<Finding>> = Arc::new(
            self.state
                .store
                .findings(run, -1)
                .await?
                .into_iter()
                .map(|f| f.finding)
                .collect(),
        );
        self.read.insert(run, found.clone());
        Ok(found)
    }
}
