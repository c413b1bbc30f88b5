//! `POST` and `DELETE /api/v1/targets/{id}/watch` (#28): an API-key holder
//! asks protocheck to re-check a target on a schedule, and to announce its
//! regressions and recoveries at a webhook. The scheduler ([`crate::scheduler`])
//! starts the runs; this module only writes the watch.

use super::AppState;
use super::api::{ClientAddr, caller, clip, find_target, with_rate_headers};
use super::error::{ApiResult, WebError};
use super::extract::{ApiJson, ApiPath};
use super::openapi::{
    BadRequest, BodyTimedOut, InternalError, InvalidApiKey, NotFound, PayloadTooLarge, TimedOut,
    TooManyRequests, Unprocessable, UnsupportedMediaType,
};
use crate::events::{RUN_RECOVERED, RUN_REGRESSED, WEBHOOK_EVENTS};
use crate::store::{ApiKey, KeyWatch, NewWatch, Watch};
use crate::suite::{RunOptions, SuiteId};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;
use std::time::Instant;
use utoipa::ToSchema;

/// The longest interval a watch may ask for: a re-check less often than
/// monthly would leave a badge stale most of the time.
pub const MAX_INTERVAL: Duration = Duration::from_secs(30 * 24 * 3600);

/// What bounds the watches the API accepts, and the watches badges keep.
#[derive(Debug, Clone)]
pub struct WatchSettings {
    /// The shortest interval (`PROTOCHECK_WATCH_MIN_INTERVAL_SECS`, an hour).
    pub min_interval: Duration,
    /// How often a target whose badge is served is re-checked
    /// (`PROTOCHECK_BADGE_WATCH_INTERVAL_SECS`, a day).
    pub badge_interval: Duration,
    /// How long after its badge was last served a target stays watched.
    pub badge_for: Duration,
}

impl Default for WatchSettings {
    fn default() -> Self {
        Self {
            min_interval: Duration::from_secs(3600),
            badge_interval: Duration::from_secs(24 * 3600),
            badge_for: BADGE_WATCH_FOR,
        }
    }
}

/// A badge served keeps its target watched this long (#28).
pub const BADGE_WATCH_FOR: Duration = Duration::from_secs(30 * 24 * 3600);

/// A badge served renews its target's watch at most this often per process:
/// the watch's end is a month away, so an hour late is nothing, and a badge
/// fetched on every page view costs the database one write an hour.
const BADGE_RENEW_EVERY: Duration = Duration::from_secs(3600);

/// Badges whose watch this process renewed lately; past this many it starts
/// afresh rather than grow without bound (a renewal too many costs a write).
const MAX_RENEWED: usize = 10_000;

/// When this process last renewed the watch of each badge it served.
#[derive(Default)]
pub struct BadgeRenewals(std::sync::Mutex<HashMap<(String, SuiteId), Instant>>);

impl BadgeRenewals {
    /// True when the badge of `target` and `suite` was not renewed lately
    /// (and marks it renewed now).
    fn due(&self, target: &str, suite: SuiteId) -> bool {
        let Ok(mut renewed) = self.0.lock() else {
            return false;
        };
        let key = (target.to_owned(), suite);
        if renewed
            .get(&key)
            .is_some_and(|at| at.elapsed() < BADGE_RENEW_EVERY)
        {
            return false;
        }
        if renewed.len() >= MAX_RENEWED {
            renewed.clear();
        }
        renewed.insert(key, Instant::now());
        true
    }
}

/// A badge of `target` and `suite` was served: keeps the target watched
/// ([`crate::store::WatchStore::keep_badge_watch`]) for
/// [`WatchSettings::badge_for`], re-checked every
/// [`WatchSettings::badge_interval`] with the options of its latest run. Done
/// in the background, at most once an hour per badge and process, so that a
/// badge answers as fast as before; a target with no run yet is not watched
/// (there is nothing to repeat).
pub fn badge_served(state: &AppState, target: &str, suite: SuiteId) {
    if !state.badge_renewals.due(target, suite) {
        return;
    }
    let (state, target) = (state.clone(), target.to_owned());
    tokio::spawn(async move {
        if let Err(e) = renew_badge_watch(&state, &target, suite).await {
            tracing::warn!(target = %target, error = %e, "keeping a badge's target watched failed");
        }
    });
}

async fn renew_badge_watch(
    state: &AppState,
    target: &str,
    suite: SuiteId,
) -> crate::store::StoreResult<()> {
    let runs = state
        .store
        .latest_runs_for_suite(target, suite.as_str())
        .await?;
    let Some(latest) = runs.verdict.or(runs.finished).or(runs.active) else {
        return Ok(());
    };
    let settings = &state.watch;
    let now = crate::now_ms();
    let interval_ms = crate::duration_ms(settings.badge_interval);
    state
        .store
        .keep_badge_watch(&NewWatch {
            target_id: target.to_owned(),
            suite: suite.as_str().to_owned(),
            options: latest.options,
            interval_ms,
            first_due_at_ms: crate::scheduler::first_slot(now, interval_ms),
            api_key: None,
            created_at_ms: now,
            expires_at_ms: Some(now.saturating_add(crate::duration_ms(settings.badge_for))),
            webhook_url: None,
            events: Vec::new(),
        })
        .await
}

/// The body of `POST /api/v1/targets/{id}/watch`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WatchBody {
    /// The suite to re-run: `mcp` or `rcp`.
    #[schema(examples("rcp"))]
    pub suite: String,
    /// Seconds between two runs: at least the service's minimum (an hour by
    /// default), at most 30 days. Default 86400 (int64).
    #[serde(default)]
    #[schema(minimum = 1)]
    pub interval_s: Option<u64>,
    /// Where the runs it starts are announced, signed with the key's webhook
    /// secret like a run's webhook.
    #[serde(default)]
    pub webhook_url: Option<String>,
    /// The events sent there: `run.finished`, `run.regressed`,
    /// `run.recovered`. Default: `run.regressed` and `run.recovered`.
    #[serde(default)]
    pub events: Option<Vec<String>>,
}

/// A watch, as the API shows it: never the webhook's path or query (its
/// secret), only its origin.
#[derive(Debug, Serialize, ToSchema)]
pub struct WatchView {
    pub target_id: String,
    pub suite: String,
    /// Seconds between two runs (int64).
    pub interval_s: i64,
    /// When its next run starts (RFC 3339).
    pub next_run_at: String,
    /// The receiver of its events: origin and `/…`.
    pub webhook: Option<String>,
    pub events: Vec<String>,
    pub created_at: String,
}

impl WatchView {
    pub fn new(w: &Watch) -> Self {
        Self {
            target_id: w.target_id.clone(),
            suite: w.suite.clone(),
            interval_s: w.interval_ms / 1000,
            next_run_at: crate::rfc3339(w.next_due_at_ms),
            webhook: w.webhook_url.as_deref().map(crate::webhook::display_url),
            events: w.events.clone(),
            created_at: crate::rfc3339(w.created_at_ms),
        }
    }
}

/// `POST /api/v1/targets/{id}/watch`.
#[utoipa::path(
    post,
    path = "/api/v1/targets/{id}/watch",
    tag = "targets",
    summary = "Re-check a target on a schedule",
    description = "Needs an API key. Re-runs the target's latest run of `suite` (its options) \
        every `interval_s`, spread with jitter and within the per-host limits (scheduled runs \
        wait behind every submitted run), and sends `run.regressed` and `run.recovered` (and \
        `run.finished` when asked) to `webhook_url`. Each API key keeps its own watch of a \
        target and suite (other keys' watches are theirs): asking again replaces the key's. \
        Its first run comes at a random moment of its first interval; the same interval \
        asked again keeps its beat. A new watch beyond the key's watch quota is refused \
        with 429 (`watch-quota`).",
    params(("id" = String, Path, description = "The target's key: 24 lower-case hex digits")),
    security(("api_key" = [])),
    request_body(content = WatchBody, content_type = "application/json"),
    responses(
        (status = 201, description = "The target is watched", body = WatchView),
        (status = 200, description = "The key's watch of this target and suite was replaced",
            body = WatchView),
        (status = 400, response = BadRequest),
        (status = 401, response = InvalidApiKey),
        (status = 404, response = NotFound),
        (status = 408, response = BodyTimedOut),
        (status = 413, response = PayloadTooLarge),
        (status = 415, response = UnsupportedMediaType),
        (status = 422, response = Unprocessable),
        (status = 429, response = TooManyRequests),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn watch_target(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    ApiPath(id): ApiPath<String>,
    body: Result<ApiJson<WatchBody>, WebError>,
) -> ApiResult<Response> {
    super::store_deadline(state.store.as_ref(), async {
        let (key, rate) = keyed_caller(&state, client, &headers).await?;
        let resp = match put(&state, &key, &id, body).await {
            Ok(resp) => resp,
            Err(e) => e.into_response(),
        };
        Ok(with_rate_headers(resp, &rate))
    })
    .await
}

/// The body of `DELETE /api/v1/targets/{id}/watch`'s query.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct UnwatchQuery {
    /// The suite whose watch ends: `mcp` or `rcp`.
    pub suite: String,
}

/// `DELETE /api/v1/targets/{id}/watch?suite=…`.
#[utoipa::path(
    delete,
    path = "/api/v1/targets/{id}/watch",
    tag = "targets",
    summary = "Stop re-checking a target",
    description = "Ends the calling API key's watch of the target and suite; other keys' \
        watches, and the one a served badge keeps, go on (an operator ends any watch with \
        `protocheck watches remove`). A revoked key's watches end with it.",
    params(
        ("id" = String, Path, description = "The target's key: 24 lower-case hex digits"),
        UnwatchQuery,
    ),
    security(("api_key" = [])),
    responses(
        (status = 204, description = "The watch is gone"),
        (status = 400, response = BadRequest),
        (status = 401, response = InvalidApiKey),
        (status = 404, response = NotFound),
        (status = 422, response = Unprocessable),
        (status = 429, response = TooManyRequests),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn unwatch_target(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    ApiPath(id): ApiPath<String>,
    query: Result<super::extract::ApiQuery<UnwatchQuery>, WebError>,
) -> ApiResult<Response> {
    super::store_deadline(state.store.as_ref(), async {
        let (key, rate) = keyed_caller(&state, client, &headers).await?;
        let resp = match delete(&state, &key, &id, query).await {
            Ok(()) => StatusCode::NO_CONTENT.into_response(),
            Err(e) => e.into_response(),
        };
        Ok(with_rate_headers(resp, &rate))
    })
    .await
}

/// [`caller`], where an API key is required.
async fn keyed_caller(
    state: &AppState,
    client: IpAddr,
    headers: &HeaderMap,
) -> ApiResult<(ApiKey, super::ratelimit::RateState)> {
    match caller(state, client, headers).await? {
        (Some(key), rate) => Ok((key, rate)),
        (None, _) => Err(WebError::Unauthorized(
            "watching a target needs an API key (Authorization: Bearer …): its runs and \
             webhooks are the key's"
                .into(),
        )),
    }
}

fn suite_of(raw: &str) -> ApiResult<&'static str> {
    SuiteId::parse(raw)
        .map(SuiteId::as_str)
        .ok_or_else(|| WebError::Invalid {
            field: "suite",
            detail: format!(
                "suite `{}` cannot be watched; use `mcp` or `rcp`",
                clip(raw)
            ),
        })
}

fn events_of(asked: Option<Vec<String>>) -> ApiResult<Vec<String>> {
    let Some(asked) = asked else {
        return Ok(vec![RUN_REGRESSED.to_owned(), RUN_RECOVERED.to_owned()]);
    };
    if asked.is_empty() {
        return Err(WebError::Invalid {
            field: "events",
            detail: "events must name at least one event; leave it out for run.regressed and \
                     run.recovered"
                .into(),
        });
    }
    if let Some(unknown) = asked.iter().find(|e| !WEBHOOK_EVENTS.contains(&e.as_str())) {
        return Err(WebError::Invalid {
            field: "events",
            detail: format!(
                "event `{}` is unknown; the events are {}",
                clip(unknown),
                WEBHOOK_EVENTS.join(", ")
            ),
        });
    }
    // In the API's order, each once.
    Ok(WEBHOOK_EVENTS
        .iter()
        .filter(|e| asked.iter().any(|a| a == *e))
        .map(|e| (*e).to_owned())
        .collect())
}

/// A watch as asked for, its values checked.
pub(super) struct Wanted {
    pub(super) suite: &'static str,
    pub(super) interval: Duration,
    pub(super) webhook_url: Option<String>,
    pub(super) events: Vec<String>,
}

impl Wanted {
    /// Checks what a client asked for.
    pub(super) fn check(
        state: &AppState,
        suite: &str,
        interval_s: Option<u64>,
        webhook_url: Option<&str>,
        events: Option<Vec<String>>,
    ) -> ApiResult<Self> {
        let suite = suite_of(suite)?;
        let min = state.watch.min_interval;
        let interval = match interval_s {
            None => Duration::from_secs(86_400).max(min),
            Some(s) => Duration::from_secs(s),
        };
        if interval < min || interval > MAX_INTERVAL {
            return Err(WebError::Invalid {
                field: "interval_s",
                detail: format!(
                    "interval_s must be between {} and {} seconds",
                    min.as_secs(),
                    MAX_INTERVAL.as_secs()
                ),
            });
        }
        let webhook_url = webhook_url
            .map(|raw| state.queue.check_webhook_url("webhook_url", raw))
            .transpose()
            .map_err(|detail| WebError::Invalid {
                field: "webhook_url",
                detail,
            })?
            .map(String::from);
        Ok(Self {
            suite,
            interval,
            webhook_url,
            events: events_of(events)?,
        })
    }
}

/// Refuses `key` a new watch of `target_id` and `suite` when it keeps as
/// many as its quota allows, before anything else is done (a submission
/// asks before its run is queued); [`keep`] decides again, atomically.
pub(super) async fn may_watch(
    state: &AppState,
    key: &ApiKey,
    target_id: &str,
    suite: &str,
) -> ApiResult<()> {
    let store = &state.store;
    if store
        .get_watch(target_id, suite, Some(key.id))
        .await?
        .is_some()
    {
        return Ok(());
    }
    let kept = store.count_key_watches(key.id).await?;
    let quota = i64::from(key.watch_quota);
    if kept >= quota {
        return Err(over_quota(key, quota, kept));
    }
    Ok(())
}

fn over_quota(key: &ApiKey, quota: i64, kept: i64) -> WebError {
    WebError::WatchQuota {
        key: key.name.clone(),
        quota,
        kept,
    }
}

/// Stores `wanted` as `key`'s watch of `target_id`, repeating `options`, or
/// without them the options of the target's latest run of the suite (never
/// its credentials, which were wiped when it ended). True when it was made,
/// false when it replaced the key's own. Other keys' watches of the target
/// are theirs and left alone.
pub(super) async fn keep(
    state: &AppState,
    key: &ApiKey,
    target_id: &str,
    wanted: Wanted,
    options: Option<RunOptions>,
) -> ApiResult<(Watch, bool)> {
    let options = match options {
        Some(options) => options,
        None => {
            let latest = state
                .store
                .latest_runs_for_suite(target_id, wanted.suite)
                .await?;
            latest
                .verdict
                .or(latest.finished)
                .or(latest.active)
                .map_or_else(RunOptions::default, |r| r.options)
        }
    };
    let now = crate::now_ms();
    let interval_ms = crate::duration_ms(wanted.interval);
    let new = NewWatch {
        target_id: target_id.to_owned(),
        suite: wanted.suite.to_owned(),
        options,
        interval_ms,
        // Taken only by a new watch or a new interval: the same interval
        // keeps its beat.
        first_due_at_ms: crate::scheduler::first_slot(now, interval_ms),
        api_key: Some(key.id),
        created_at_ms: now,
        expires_at_ms: None,
        webhook_url: wanted.webhook_url,
        events: wanted.events,
    };
    match state
        .store
        .put_key_watch(&new, i64::from(key.watch_quota))
        .await?
    {
        KeyWatch::Made(watch) => {
            state.queue.watches_changed();
            Ok((watch, true))
        }
        KeyWatch::Replaced(watch) => {
            state.queue.watches_changed();
            Ok((watch, false))
        }
        KeyWatch::OverQuota { quota, kept } => Err(over_quota(key, quota, kept)),
    }
}

async fn put(
    state: &AppState,
    key: &ApiKey,
    id: &str,
    body: Result<ApiJson<WatchBody>, WebError>,
) -> ApiResult<Response> {
    let ApiJson(body) = body?;
    let wanted = Wanted::check(
        state,
        &body.suite,
        body.interval_s,
        body.webhook_url.as_deref(),
        body.events,
    )?;
    let target = find_target(state, id).await?;
    let (watch, made) = keep(state, key, &target.id, wanted, None).await?;
    let status = if made {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, ApiJson(WatchView::new(&watch))).into_response())
}

async fn delete(
    state: &AppState,
    key: &ApiKey,
    id: &str,
    query: Result<super::extract::ApiQuery<UnwatchQuery>, WebError>,
) -> ApiResult<()> {
    let super::extract::ApiQuery(query) = query?;
    let suite = suite_of(&query.suite)?;
    let target = find_target(state, id).await?;
    if !state
        .store
        .delete_watch(&target.id, suite, Some(key.id))
        .await?
    {
        return Err(WebError::NotFound(format!(
            "this API key has no watch of target `{}`'s {suite} runs",
            target.id
        )));
    }
    Ok(())
}
