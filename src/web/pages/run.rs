//! `GET /runs/{id}`: a run's report, grouped findings with their evidence,
//! its badge, signature and webhook, and live progress while it runs.

use super::{Page, VerdictPill, clip, duration, readable_time, status_class, verdict_pill};
use crate::rfc3339;
use crate::store::{DeliveryState, Run, RunStatus, StoredFinding};
use crate::suite::{self, Exchange, Outcome, SuiteId, VerdictDetail};
use crate::web::AppState;
use crate::web::error::{AsPage, PageResult, WebError};
use crate::web::extract::PagePath;
use crate::web::rules::{Span, spans};
use askama::Template;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use uuid::Uuid;

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
    /// The URL cut where it may break (see [`super::url_parts`]).
    url_parts: Vec<String>,
    target_id: String,
    suite_label: String,
    status: &'static str,
    status_class: &'static str,
    finished: bool,
    attempts: i32,
    /// The verdict's pill and sentence (or the run's status before one).
    verdict: VerdictPill,
    /// Whether the verdict withheld a grade: nothing judged, nothing to fix.
    withheld: bool,
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
    created_readable: String,
    duration: Option<String>,
    suite_version: Option<String>,
    /// A run that judged several MCP revisions: each one's verdict.
    revisions: Vec<RevisionView>,
    /// And the revisions it did not judge, with why.
    not_judged: Vec<String>,
}

struct RevisionView {
    spec_revision: String,
    summary: String,
    passed: bool,
    counts: Counts,
}

struct ExchangeView {
    request: String,
    response: String,
}

struct FindingView {
    rule_id: String,
    /// The rule's page (`/rules/{id}`): the requirement, the probe, the fix.
    rule_href: String,
    title: String,
    outcome: &'static str,
    /// The message cut at its backticks (shown as `<code>`), each part escaped.
    message: Vec<Span>,
    level: String,
    spec_ref: String,
    spec_href: Option<String>,
    duration_ms: u64,
    evidence: Vec<ExchangeView>,
    /// How many of the run's skipped rules name this one's failure as why
    /// they were not verified.
    unverified: usize,
}

/// A failure or warning as its group lists it: a link to its entry in "Fix first".
struct ProblemLink {
    rule_id: String,
    title: String,
    outcome: &'static str,
}

/// Skipped rules that share a cause ("not verified: authorization required").
struct CauseView {
    cause: String,
    findings: Vec<FindingView>,
}

struct GroupView {
    name: String,
    /// Failed and warned rules, listed in full under "Fix first".
    problems: Vec<ProblemLink>,
    /// Facts about the server (info findings), shown in full.
    notes: Vec<FindingView>,
    /// Folded, with their count.
    passed: Vec<FindingView>,
    /// Folded, grouped by cause.
    skipped: Vec<CauseView>,
    skipped_count: usize,
}

/// What to fix, in the order it costs: failures (those that left other rules
/// unverified first, then MUST before SHOULD before MAY), then warnings.
struct Triage {
    failures: Vec<FindingView>,
    warnings: Vec<FindingView>,
    /// Every skipped rule of the run, counted by cause, most common first.
    not_judged: Vec<(usize, String)>,
}

/// The badge of the run's target and suite, with its snippets.
pub(super) struct BadgeView {
    pub(super) svg: String,
    /// What the badge says, for its `alt` (`MCP 2026-07-28 badge: strict`).
    pub(super) alt: String,
    pub(super) width: u32,
    pub(super) link: String,
    pub(super) markdown: String,
    pub(super) html: String,
    pub(super) rst: String,
    /// Appended to the snippets' ids: empty on a run page, `-mcp` or
    /// `-rcp` on a target page, which may show a badge per suite.
    pub(super) id_suffix: String,
    pub(super) heading: String,
}

#[derive(Template)]
#[template(path = "run.html")]
struct RunPage {
    run: RunView,
    triage: Triage,
    groups: Vec<GroupView>,
    badge: Option<BadgeView>,
    /// Whether the run's attestation verifies against the published keys.
    signature: Option<SignatureView>,
    webhook: Option<WebhookView>,
    /// Who submitted the run: the API key's owner (or name); `None` when anonymous.
    owner: Option<String>,
    /// "judged with a token supplied by the submitter", when it was.
    credentials: Option<String>,
    /// The anti-forgery token of "Sign in to check this server", when the
    /// run's server asked for authorization and the service can sign in.
    sign_in_offer: Option<String>,
    /// What the sign-in that started this run saw, step by step.
    sign_in: Option<SignInView>,
    /// While it is queued: its place and what it waits for.
    queue: Option<crate::web::api::QueueView>,
    /// Whether this service can hold a token for a run (it has a
    /// credentials key): what a not-judged run page advises depends on it.
    holds_credentials: bool,
}

struct SignInView {
    issuer: String,
    registration: String,
    steps: Vec<SignInStepView>,
}

struct SignInStepView {
    step: String,
    outcome: &'static str,
    message: String,
    rules: String,
}

/// A run's webhook: where (without path or query) and each attempt's outcome.
struct WebhookView {
    url: String,
    state: String,
    attempts: Vec<WebhookAttemptView>,
}

struct WebhookAttemptView {
    attempt: i32,
    /// When, as RFC 3339 (for `datetime`) and for people.
    at: (String, String),
    outcome: String,
    next: Option<(String, String)>,
}

/// A time as RFC 3339 and as people read it.
fn both_times(ms: i64) -> (String, String) {
    (crate::rfc3339(ms), readable_time(ms))
}

async fn webhook_view(state: &AppState, run: &Run) -> PageResult<Option<WebhookView>> {
    let Some(url) = run.webhook_url.as_deref() else {
        return Ok(None);
    };
    let delivery = state.store.run_webhook(run.id).await?;
    let (status, attempts) = match delivery {
        None => ("sent when the run ends".to_owned(), Vec::new()),
        Some((d, attempts)) => (
            match d.state {
                DeliveryState::Delivered => "delivered".to_owned(),
                DeliveryState::Failed => "given up".to_owned(),
                DeliveryState::Pending => "retrying".to_owned(),
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
                at: both_times(a.at_ms),
                outcome: match (a.status_code, a.error) {
                    (_, Some(e)) => e,
                    (Some(code), None) => format!("HTTP {code}"),
                    (None, None) => "no answer".to_owned(),
                },
                next: a.next_attempt_at_ms.map(both_times),
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

/// `GET /runs/{id}`.
pub async fn show_run_page(
    State(state): State<AppState>,
    PagePath(id): PagePath<String>,
    headers: HeaderMap,
) -> PageResult<Response> {
    let id = parse_id(&id)?;
    let run = state
        .store
        .get_run(id)
        .await?
        .ok_or_else(|| WebError::NotFound(format!("No run has the id `{id}`.")))?;
    let findings = state.store.findings(id, -1).await?;
    let badge = match run.verdict.as_ref() {
        Some(v) => Some(badge_view(&state, &headers, &run.target_id, v.suite).await),
        None => None,
    };
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
    let queue = crate::web::api::queue_view(&state, &run).await?;
    let page = RunPage {
        holds_credentials: state.queue.accepts_credentials(),
        queue,
        run: run_view(&run, findings.len()),
        triage: triage(&findings),
        groups: group_findings(
            &findings,
            run.verdict
                .as_ref()
                .is_some_and(|v| !v.revisions().is_empty()),
        ),
        badge,
        signature,
        webhook: webhook_view(&state, &run).await?,
        owner: state
            .store
            .run_api_key(run.id)
            .await?
            .map(|k| k.display_owner().to_owned()),
        credentials: crate::credentials::judged_with(run.credentials_used(), &run.options),
        sign_in_offer: None,
        sign_in: run.options.sign_in.as_ref().map(|s| SignInView {
            issuer: s.issuer.clone(),
            registration: s.registration.replace('-', " "),
            steps: s
                .steps
                .iter()
                .map(|step| SignInStepView {
                    step: step.step.clone(),
                    outcome: step.outcome.as_str(),
                    message: step.message.clone(),
                    rules: step.rules.join(", "),
                })
                .collect(),
        }),
    };
    if crate::web::sign_in::offered(&state, &run, &findings) {
        let csrf = crate::web::pages::csrf_cookie(&headers)
            .filter(|t| t.len() == 32)
            .unwrap_or_else(crate::web::pages::new_csrf_token);
        let page = RunPage {
            sign_in_offer: Some(csrf.clone()),
            ..page
        };
        let resp = Page(StatusCode::OK, page).into_response();
        return Ok(crate::web::pages::with_csrf_cookie(resp, &csrf));
    }
    Ok(Page(StatusCode::OK, page).into_response())
}

/// The badge of `target_key` and `suite` as a page shows it: the image with
/// what it says as its `alt` and its size, and the snippets to paste.
pub(super) async fn badge_view(
    state: &AppState,
    headers: &HeaderMap,
    target_key: &str,
    suite: SuiteId,
) -> BadgeView {
    let base = crate::web::badge::public_base(state, headers);
    let snip = crate::web::badge::snippets(&base, target_key, suite);
    let text = |k: &str| snip[k].as_str().unwrap_or_default().to_owned();
    // What the badge says; a store that fails here leaves a plainer alt.
    let drawn = crate::web::badge::draw(state, target_key, suite).await.ok();
    let (alt, width) = match drawn {
        Some(d) => (
            format!("{} badge: {}", d.badge.label, d.badge.message),
            crate::web::badge::svg_width(&d.badge),
        ),
        None => (
            format!(
                "{} conformance badge of this server",
                suite.as_str().to_uppercase()
            ),
            0,
        ),
    };
    BadgeView {
        svg: format!("/badge/{target_key}/{}.svg", suite.as_str()),
        alt,
        width,
        link: text("link"),
        markdown: text("markdown"),
        html: text("html"),
        rst: text("rst"),
        id_suffix: String::new(),
        heading: "Badge".to_owned(),
    }
}

/// The suite that judged the run, or before a verdict the one it asked for.
fn suite_of(run: &Run) -> Option<SuiteId> {
    match run.verdict.as_ref() {
        Some(v) => Some(v.suite),
        None => run.suite.protocol(),
    }
}

fn run_view(run: &Run, done: usize) -> RunView {
    let suite = suite_of(run);
    let total = suite.map_or(0, |s| suite::index::rule_count(s, &run.options));
    let (declared, overclaimed) = match run.verdict.as_ref().map(|v| &v.detail) {
        Some(VerdictDetail::Rcp {
            declared_level,
            honest,
            ..
        }) => (declared_level.clone(), *honest == Some(false)),
        _ => (None, false),
    };
    let mut verdict = verdict_pill(run);
    if run.verdict.is_none() && run.status == RunStatus::Error {
        verdict.say("The run could not complete.");
    }
    let withheld = matches!(
        run.verdict.as_ref().map(|v| &v.detail),
        Some(VerdictDetail::Mcp { grade, .. }) if grade == suite::grade::NOT_JUDGED
    );
    let counts = run.verdict.as_ref().map(|v| v.counts).unwrap_or_default();
    RunView {
        id: run.id,
        url: run.target_url.clone(),
        url_parts: super::url_parts(&run.target_url),
        target_id: run.target_id.clone(),
        suite_label: match suite {
            Some(SuiteId::Mcp) => format!(
                "MCP {}",
                run.verdict
                    .as_ref()
                    .map_or_else(|| asked_revision(run), |v| v.spec_revision.as_str())
            ),
            Some(SuiteId::Rcp) => "RCP/1".into(),
            None => "Conformance".into(),
        },
        status: run.status.as_str(),
        status_class: status_class(run.status),
        finished: run.status.is_finished(),
        attempts: run.attempts,
        verdict,
        withheld,
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
        created_readable: readable_time(run.created_at_ms),
        duration: match (run.started_at_ms, run.finished_at_ms) {
            (Some(s), Some(f)) => Some(duration(f - s)),
            _ => None,
        },
        suite_version: run.suite_version.clone(),
        revisions: run
            .verdict
            .iter()
            .flat_map(|v| v.revisions())
            .map(|r| RevisionView {
                spec_revision: r.spec_revision.clone(),
                summary: r.summary.clone(),
                passed: r.passed,
                counts: Counts {
                    pass: r.counts.pass,
                    fail: r.counts.fail,
                    warn: r.counts.warn,
                    info: r.counts.info,
                    skip: r.counts.skip,
                },
            })
            .collect(),
        not_judged: match run.verdict.as_ref().map(|v| &v.detail) {
            Some(VerdictDetail::Mcp { not_judged, .. }) => not_judged.clone(),
            _ => Vec::new(),
        },
    }
}

/// Before its verdict, the MCP revision a run judges as far as it is known:
/// the one it asked for, else the newest (what `newest` judges most servers
/// on), or every one for `all`.
fn asked_revision(run: &Run) -> &'static str {
    match run.options.mcp_revision.unwrap_or_default() {
        suite::McpRevision::V2025_11_25 => suite::mcp2025::SPEC_REVISION,
        suite::McpRevision::All => "(every revision it speaks)",
        suite::McpRevision::Newest | suite::McpRevision::V2026_07_28 => suite::mcp::SPEC_REVISION,
    }
}

/// Why a skipped rule was not judged, in a form its peers share: the engines
/// write `not verified: CAUSE: detail` (or `not verified: MCP-DSC-001
/// failed`), and other skips lead with their reason before a `:` or `;`.
fn skip_cause(message: &str) -> String {
    let (prefix, rest) = match message.strip_prefix("not verified: ") {
        Some(rest) => ("not verified: ", rest),
        None => ("", message),
    };
    let end = rest
        .find([':', ';', '('])
        .filter(|&at| at > 0)
        .unwrap_or(rest.len());
    let head = rest[..end].trim_end_matches(['.', ' ', ',']);
    const MOST: usize = 90;
    let head = match head.char_indices().nth(MOST) {
        Some((at, _)) => format!("{}…", &head[..at]),
        None => head.to_owned(),
    };
    format!("{prefix}{head}")
}

/// Whether a skip message names `rule_id`'s failure (or skip) as its cause.
fn blames(message: &str, rule_id: &str) -> bool {
    message.strip_prefix("not verified: ").is_some_and(|rest| {
        rest.strip_prefix(rule_id)
            .is_some_and(|after| after.starts_with(" failed") || after.starts_with(" was skipped"))
    })
}

/// Where a rule sits in the catalogues (unknown rules last).
fn catalogue_place(id: &str) -> usize {
    suite::index::entries()
        .iter()
        .position(|e| e.rule.id == id)
        .unwrap_or(usize::MAX)
}

fn level_rank(rule: Option<&suite::Rule>) -> u8 {
    match rule.map(|r| r.level) {
        Some(suite::SpecLevel::Must) => 0,
        Some(suite::SpecLevel::Should) => 1,
        Some(suite::SpecLevel::May) => 2,
        None => 3,
    }
}

/// "Fix first": failures, then warnings, each ordered by what it costs.
fn triage(findings: &[StoredFinding]) -> Triage {
    let skipped: Vec<&str> = findings
        .iter()
        .filter(|f| f.finding.outcome == Outcome::Skip)
        .map(|f| f.finding.message.as_str())
        .collect();
    let ranked = |outcome: Outcome| {
        let mut list: Vec<(usize, u8, usize, FindingView)> = findings
            .iter()
            .filter(|f| f.finding.outcome == outcome)
            .map(|f| {
                let rule = suite::index::rule(&f.finding.rule_id);
                let mut view = finding_view(f, rule);
                view.unverified = skipped
                    .iter()
                    .filter(|m| blames(m, &f.finding.rule_id))
                    .count();
                (
                    view.unverified,
                    level_rank(rule),
                    catalogue_place(&view.rule_id),
                    view,
                )
            })
            .collect();
        // Catalogue order last: a lower RCP level, whose failure also costs
        // the levels above it, before a higher one; MCP discovery first.
        list.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        list.into_iter().map(|(_, _, _, v)| v).collect::<Vec<_>>()
    };
    let mut causes: Vec<(usize, String)> = Vec::new();
    for message in &skipped {
        let cause = skip_cause(message);
        match causes.iter_mut().find(|(_, c)| *c == cause) {
            Some((n, _)) => *n += 1,
            None => causes.push((1, cause)),
        }
    }
    causes.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    Triage {
        failures: ranked(Outcome::Fail),
        warnings: ranked(Outcome::Warn),
        not_judged: causes,
    }
}

/// The findings by rule group (MCP category or RCP level); for a run that
/// judged several MCP revisions, by revision and group, so the same group of
/// two suites stays apart. Groups with failures or warnings come first.
fn group_findings(findings: &[StoredFinding], by_revision: bool) -> Vec<GroupView> {
    let mut groups: Vec<GroupView> = Vec::new();
    let mut sorted: Vec<&StoredFinding> = findings.iter().collect();
    sorted.sort_by(|a, b| a.finding.rule_id.cmp(&b.finding.rule_id));
    for f in sorted {
        let rule = suite::index::rule(&f.finding.rule_id);
        let mut name = rule.map_or("Other", |r| r.group).to_owned();
        if by_revision {
            let revision = if f.finding.rule_id.starts_with("MCP25-") {
                suite::mcp2025::SPEC_REVISION
            } else {
                suite::mcp::SPEC_REVISION
            };
            name = format!("MCP {revision} · {name}");
        }
        let at = match groups.iter().position(|g| g.name == name) {
            Some(at) => at,
            None => {
                groups.push(GroupView {
                    name,
                    problems: Vec::new(),
                    notes: Vec::new(),
                    passed: Vec::new(),
                    skipped: Vec::new(),
                    skipped_count: 0,
                });
                groups.len() - 1
            }
        };
        let group = &mut groups[at];
        match f.finding.outcome {
            Outcome::Fail | Outcome::Warn => group.problems.push(ProblemLink {
                rule_id: f.finding.rule_id.clone(),
                title: rule.map_or_else(String::new, |r| r.title.to_owned()),
                outcome: f.finding.outcome.as_str(),
            }),
            Outcome::Info => group.notes.push(finding_view(f, rule)),
            Outcome::Pass => group.passed.push(finding_view(f, rule)),
            Outcome::Skip => {
                let cause = skip_cause(&f.finding.message);
                group.skipped_count += 1;
                let view = finding_view(f, rule);
                match group.skipped.iter_mut().find(|c| c.cause == cause) {
                    Some(c) => c.findings.push(view),
                    None => group.skipped.push(CauseView {
                        cause,
                        findings: vec![view],
                    }),
                }
            }
        }
    }
    for g in &mut groups {
        g.problems
            .sort_by_key(|p| (p.outcome != Outcome::Fail.as_str(), p.rule_id.clone()));
        g.skipped.sort_by(|a, b| {
            b.findings
                .len()
                .cmp(&a.findings.len())
                .then_with(|| a.cause.cmp(&b.cause))
        });
    }
    groups.sort_by(|a, b| (a.problems.is_empty(), &a.name).cmp(&(b.problems.is_empty(), &b.name)));
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
        rule_href: crate::web::rules::page_path(&f.finding.rule_id),
        rule_id: f.finding.rule_id.clone(),
        title: rule.map_or_else(String::new, |r| r.title.to_owned()),
        outcome: f.finding.outcome.as_str(),
        message: spans(&f.finding.message),
        level: rule.map_or_else(String::new, |r| format!("{:?}", r.level).to_uppercase()),
        spec_ref,
        spec_href,
        duration_ms: f.finding.duration_ms,
        evidence: f.finding.evidence.iter().map(exchange_view).collect(),
        unverified: 0,
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
