//! REST API v1 handlers.

use super::AppState;
use super::error::{ApiResult, WebError};
use super::extract::{ApiJson, ApiPath, ApiQuery};
use super::openapi::{
    BadRequest, BodyTimedOut, InternalError, InvalidApiKey, NotFound, PayloadTooLarge, TimedOut,
    TooManyRequests, Unprocessable, UnsupportedMediaType,
};
use super::ratelimit::RateState;
use crate::api_keys;
use crate::store::{
    ApiKey, HistoryCursor, Run, RunStatus, StoredFinding, Target, WebhookAttempt, WebhookDelivery,
};
use crate::submit::{self, Reason, Submission, SubmitOptions};
use crate::suite::{Finding, McpRevision, SuiteChoice, Verdict};
use crate::webhook;
use axum::extract::connect_info::ConnectInfo;
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// Runs listed per page of a target's history, unless the client asks for fewer.
const DEFAULT_PAGE: u32 = 20;
const MAX_PAGE: u32 = 100;

/// The client's address, as the connection reports it. Without connection
/// info (a router driven in-process) every client shares one bucket.
pub struct ClientAddr(pub IpAddr);

impl<S: Send + Sync> FromRequestParts<S> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let ip = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |c| c.0.ip());
        Ok(Self(ip))
    }
}

/// The body of `POST /api/v1/runs`.
#[derive(Debug, Deserialize, serde::Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitBody {
    /// The server to check: an `http` or `https` URL.
    #[schema(examples("http://127.0.0.1:8766/rcp"))]
    pub url: String,
    /// `auto` (the default) detects the protocol.
    #[serde(default, deserialize_with = "present_suite")]
    #[schema(value_type = SuiteChoice)]
    pub suite: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<SubmitOptions>)]
    pub options: Option<Value>,
    /// A finished run of the same target, suite and options younger than this
    /// is returned instead of a new one (default 300; int64).
    #[serde(default)]
    pub max_age_s: Option<u64>,
    /// Queue a new run even when a fresh result exists.
    #[serde(default)]
    pub force: Option<bool>,
    /// Tokens to judge a protected MCP server with; needs an API key, and a
    /// service whose operator set a credentials key. Held encrypted for this
    /// run only and wiped when it ends; never shown, logged or reported. A run
    /// with credentials is never deduplicated with, nor answered by, another run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<crate::credentials::Credentials>,
    /// Keep re-checking the server after this run, as
    /// `POST /api/v1/targets/{id}/watch` does: needs an API key and a suite
    /// (`mcp` or `rcp`). The watch repeats this submission's options and
    /// announces its events at `options.webhook_url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<WatchOnSubmit>,
    /// List this server in the public directory (off by default): MCP
    /// servers only, on a service that keeps a directory. Its owner's
    /// opt-out file (`/.well-known/protocheck-optout`) is asked first; a
    /// listed server is re-checked weekly on every MCP revision it speaks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_in_directory: Option<bool>,
}

/// `watch` in a submission.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WatchOnSubmit {
    /// Seconds between two runs (default 86400; int64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_s: Option<u64>,
    /// The events sent to `options.webhook_url` (default `run.regressed`
    /// and `run.recovered`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<String>>,
}

/// `POST /api/v1/runs`. With `Authorization: Bearer <API key>` the submission
/// counts against the key's quota and the run records the key; without the header
/// it counts against the client address. A header that names no live key is
/// refused (401), never taken for anonymous use. Every answer after the rate
/// decision carries the limiter's `RateLimit-*` headers.
/// Why a submission returned the run it did.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SubmitReason {
    /// A new run was queued.
    Queued,
    /// The same target, suite and options are already queued or running.
    AlreadyActive,
    /// A finished run younger than `max_age_s` exists.
    FreshResult,
    /// The same `Idempotency-Key` was seen with the same request.
    IdempotentReplay,
}

impl From<Reason> for SubmitReason {
    fn from(r: Reason) -> Self {
        match r {
            Reason::Queued => Self::Queued,
            Reason::AlreadyActive => Self::AlreadyActive,
            Reason::FreshResult => Self::FreshResult,
            Reason::IdempotentReplay => Self::IdempotentReplay,
        }
    }
}

/// The headers of a submission (documentation only: the handler reads them itself).
#[derive(IntoParams)]
#[into_params(parameter_in = Header)]
pub struct SubmitHeaders {
    /// Repeating a submission with the same key and body returns the same run
    /// (`idempotent-replay`); the same key with another body is refused.
    #[param(rename = "Idempotency-Key", value_type = String, required = false,
        pattern = "^[!-~]{1,255}$")]
    pub idempotency_key: Option<String>,
}

/// The answer to a submission: the run, and why it is this one.
#[derive(Debug, Serialize, ToSchema)]
pub struct SubmittedRun {
    #[serde(flatten)]
    pub run: RunView,
    pub reason: SubmitReason,
    /// The watch the submission asked for, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watch: Option<super::watch::WatchView>,
    /// When the submission asked to list the server: `listed`,
    /// `opted-out` (its owner's file names this service) or `delisted`
    /// (taken out before, for good).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub directory: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/v1/runs",
    tag = "runs",
    summary = "Submit a run",
    description = "Queues a conformance run of a server, or returns an equal run that is \
        active or fresh. Submissions are rate-limited per API key (`Authorization: Bearer`) \
        or, without one, per client address; `RateLimit-*` headers tell the state.",
    params(SubmitHeaders),
    security((), ("api_key" = [])),
    request_body(content = SubmitBody, content_type = "application/json"),
    responses(
        (status = 200, description = "An existing run answers the submission (see `reason`)",
            body = SubmittedRun,
            headers(
                ("Location" = String, description = "The run's URL"),
                ("RateLimit-Limit" = u32, description = "Submissions allowed in a window"),
                ("RateLimit-Remaining" = u32, description = "Submissions still allowed now"),
                ("RateLimit-Reset" = u64, description = "Seconds until the limit is whole again"),
                ("RateLimit-Policy" = String, description = "`{limit};w={window seconds}`"),
            )),
        (status = 202, description = "A new run was queued",
            body = SubmittedRun,
            headers(
                ("Location" = String, description = "The run's URL"),
                ("RateLimit-Limit" = u32, description = "Submissions allowed in a window"),
                ("RateLimit-Remaining" = u32, description = "Submissions still allowed now"),
                ("RateLimit-Reset" = u64, description = "Seconds until the limit is whole again"),
                ("RateLimit-Policy" = String, description = "`{limit};w={window seconds}`"),
            )),
        (status = 400, response = BadRequest),
        (status = 401, response = InvalidApiKey),
        (status = 408, response = BodyTimedOut),
        (status = 413, response = PayloadTooLarge),
        (status = 415, response = UnsupportedMediaType),
        (status = 422, response = Unprocessable),
        (status = 429, response = TooManyRequests),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn submit_run(
    State(state): State<AppState>,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    body: Result<ApiJson<SubmitBody>, WebError>,
) -> ApiResult<Response> {
    super::store_deadline(state.store.as_ref(), submit(&state, client, &headers, body)).await
}

async fn submit(
    state: &AppState,
    client: IpAddr,
    headers: &HeaderMap,
    body: Result<ApiJson<SubmitBody>, WebError>,
) -> ApiResult<Response> {
    let (key, rate) = caller(state, client, headers).await?;
    let resp = match accept_submission(state, key.as_ref(), client, headers, body).await {
        Ok(resp) => resp,
        Err(e) => e.into_response(),
    };
    Ok(with_rate_headers(resp, &rate))
}

/// Who calls a write of the API: the API key the `Authorization` header names
/// (none without the header; 401 for a header that names no live key, never
/// taken for anonymous use), and the rate limiter's state for the key, or
/// for the client address without one (429 beyond it). Refusals count
/// against the address, so guessing keys is rate limited too; the limit
/// counts every call, malformed ones too: they cost as much to refuse.
pub(super) async fn caller(
    state: &AppState,
    client: IpAddr,
    headers: &HeaderMap,
) -> ApiResult<(Option<ApiKey>, RateState)> {
    let key = match headers.get(header::AUTHORIZATION) {
        None => None,
        Some(value) => {
            match api_keys::authenticate(state.store.as_ref(), value.as_bytes()).await? {
                Ok(key) => Some(key),
                Err(refused) => {
                    // Refusals count against the address, so guessing keys is rate limited too.
                    if let Err(limited) = state.limiter.check_addr(client) {
                        return Err(WebError::RateLimited {
                            key: None,
                            rate: limited,
                        });
                    }
                    return Err(WebError::Unauthorized(refused.detail().to_owned()));
                }
            }
        }
    };
    // The limit counts every POST, malformed ones too: they cost as much to refuse.
    let decision = match &key {
        Some(k) => state.limiter.check_key(k),
        None => state.limiter.check_addr(client),
    };
    let rate = decision.map_err(|limited| WebError::RateLimited {
        key: key.as_ref().map(|k| k.name.clone()),
        rate: limited,
    })?;
    if let Some(k) = &key
        && let Err(e) = state.store.touch_api_key(k.id, crate::now_ms()).await
    {
        tracing::warn!(key = %k.id, error = %e, "recording the use of an API key failed");
    }
    Ok((key, rate))
}

/// The stored form of an `Idempotency-Key`: scoped to its API key, or to the
/// client's address without one, so that another client sending the same
/// key (and body) never gets someone else's run (#31 item 11).
fn idempotency_scope(api_key: Option<&ApiKey>, client: IpAddr, key: &str) -> String {
    match api_key {
        Some(k) => format!("k:{}:{key}", k.id.simple()),
        // The address the rate limit counts: IPv4 (mapped forms folded),
        // or an IPv6 client's /64.
        None => format!("a:{}:{key}", super::ratelimit::client_key(client)),
    }
}

pub(super) fn with_rate_headers(mut resp: Response, rate: &RateState) -> Response {
    resp.headers_mut().extend(rate.headers());
    resp
}

async fn accept_submission(
    state: &AppState,
    key: Option<&ApiKey>,
    client: IpAddr,
    headers: &HeaderMap,
    body: Result<ApiJson<SubmitBody>, WebError>,
) -> ApiResult<Response> {
    let ApiJson(body) = body?;

    let suite_name = body.suite.as_deref().unwrap_or("auto");
    let suite = SuiteChoice::parse(suite_name).ok_or_else(|| WebError::Invalid {
        field: "suite",
        detail: format!("suite `{suite_name}` is unknown; use `auto`, `mcp` or `rcp`"),
    })?;
    let options: SubmitOptions = match &body.options {
        None | Some(Value::Null) => SubmitOptions::default(),
        // serde would read a struct from an array too, by position.
        Some(v) if !v.is_object() => {
            return Err(WebError::Invalid {
                field: "options",
                detail: "options must be an object".into(),
            });
        }
        Some(v) => {
            check_mcp_revision(v)?;
            serde_json::from_value(v.clone()).map_err(|e| WebError::Invalid {
                field: "options",
                detail: format!("options: {e}"),
            })?
        }
    };
    // The document says int64, as most clients can hold; larger ages mean nothing anyway.
    if body.max_age_s.is_some_and(|s| i64::try_from(s).is_err()) {
        return Err(WebError::Invalid {
            field: "max_age_s",
            detail: format!("max_age_s must be between 0 and {}", i64::MAX),
        });
    }
    let (options, webhook_url) = options.into_parts();
    let list = body.list_in_directory == Some(true);
    if list {
        listing_allowed(state, suite)?;
    }
    let watch = match (&body.watch, key) {
        (None, _) => None,
        (Some(_), None) => {
            return Err(WebError::Invalid {
                field: "watch",
                detail: "watch needs an API key (Authorization: Bearer …): its runs and \
                         webhooks are the key's"
                    .into(),
            });
        }
        (Some(w), Some(k)) => {
            let mut wanted = super::watch::Wanted::check(
                state,
                suite_name,
                w.interval_s,
                None,
                w.events.clone(),
            )?;
            // Checked with the run's webhook, by the queue.
            wanted.webhook_url = webhook_url.clone();
            // A watch past the key's quota is refused before anything is queued.
            if let Ok(url) = crate::target::CanonicalUrl::parse(&body.url) {
                super::watch::may_watch(state, k, &url.key(), wanted.suite).await?;
            }
            Some((k, wanted))
        }
    };
    let key_of = key;
    let idempotency = match headers.get("idempotency-key") {
        None => None,
        Some(v) => {
            let key = v.to_str().map_err(|_| WebError::Invalid {
                field: "Idempotency-Key",
                detail: "the Idempotency-Key must be visible ASCII".into(),
            })?;
            // The parsed body, re-serialised, so formatting differences are the same request.
            let canonical = serde_json::to_vec(&body).unwrap_or_default();
            submit::check_idempotency_key(key)?;
            Some((
                idempotency_scope(key_of, client, key),
                submit::request_hash(&canonical),
            ))
        }
    };
    let submitted = state
        .queue
        .submit_as(
            Submission {
                url: body.url,
                suite,
                options,
                webhook_url,
                credentials: body.credentials,
                max_age_s: body.max_age_s.unwrap_or(submit::DEFAULT_MAX_AGE_S),
                force: body.force.unwrap_or(false),
                idempotency,
                submitter: Some(super::ratelimit::submitter_of(key.map(|k| k.id), client)),
            },
            key.map(|k| k.id),
        )
        .await?;

    let location = format!("/api/v1/runs/{}", submitted.run.id);
    let status = if submitted.reason == Reason::Queued {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    };
    let watch = match watch {
        Some((k, wanted)) => {
            let options = Some(submitted.run.options.clone());
            let (watch, _) =
                super::watch::keep(state, k, &submitted.run.target_id, wanted, options).await?;
            Some(super::watch::WatchView::new(&watch))
        }
        None => None,
    };
    let directory = match &state.directory {
        Some(listing) if list => Some(
            crate::directory::list_submission(
                state.store.as_ref(),
                listing,
                &submitted.run.target_id,
                &submitted.run.target_url,
            )
            .await?
            .as_str()
            .to_owned(),
        ),
        _ => None,
    };
    // A run this submission queued is its key's; what the queue already held
    // may be another's, and is read.
    let owner = match submitted.reason {
        Reason::Queued => key.cloned(),
        _ => state.store.run_api_key(submitted.run.id).await?,
    };
    let mut run = RunView::new(&submitted.run, None);
    run.owner = Some(owner.as_ref().map(|k| k.display_owner().to_owned()));
    // The place was read in the submission's transaction; a replayed request
    // reads it now.
    run.queue = match &submitted.place {
        Some(place) => Some(describe_queue(place, &state.host_limits, crate::now_ms())),
        None => queue_view(state, &submitted.run).await?,
    };
    let doc = SubmittedRun {
        run,
        reason: submitted.reason.into(),
        watch,
        directory,
    };
    Ok((status, [(header::LOCATION, location)], ApiJson(doc)).into_response())
}

/// Whether a submission may ask to list its server: the service keeps a
/// directory, and the suite may be MCP.
pub(super) fn listing_allowed(state: &AppState, suite: SuiteChoice) -> Result<(), WebError> {
    if state.directory.is_none() {
        return Err(WebError::Invalid {
            field: "list_in_directory",
            detail: "this service keeps no public directory".into(),
        });
    }
    if suite == SuiteChoice::Rcp {
        return Err(WebError::Invalid {
            field: "list_in_directory",
            detail: "the public directory lists MCP servers only".into(),
        });
    }
    Ok(())
}

/// A `suite` that is given must name one: `null` is refused rather than read
/// as `auto`, since a client that sends it may well mean something else.
/// Leaving the member out means `auto`.
fn present_suite<'de, D>(d: D) -> Result<Option<String>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    match Option::<String>::deserialize(d)? {
        Some(suite) => Ok(Some(suite)),
        None => Err(serde::de::Error::custom(
            "suite must be `auto`, `mcp` or `rcp`, not null; leave it out for `auto`",
        )),
    }
}

fn parse_run_id(raw: &str) -> ApiResult<Uuid> {
    Uuid::parse_str(raw)
        .map_err(|_| WebError::NotFound(format!("no run has the id `{}`", clip(raw))))
}

/// Refuses an `options.mcp_revision` that names no revision, naming the
/// field and the choices (serde's message would name only `options`).
fn check_mcp_revision(options: &Value) -> Result<(), WebError> {
    let Some(given) = options.get("mcp_revision") else {
        return Ok(());
    };
    if given.as_str().and_then(McpRevision::parse).is_some() {
        return Ok(());
    }
    let choices: Vec<String> = McpRevision::CHOICES
        .iter()
        .map(|r| format!("`{}`", r.as_str()))
        .collect();
    let shown = match given.as_str() {
        Some(s) => format!("`{}`", clip(s)),
        None => "a value that is not a string".to_owned(),
    };
    Err(WebError::Invalid {
        field: "options.mcp_revision",
        detail: format!(
            "options.mcp_revision is {shown}; use one of {}",
            choices.join(", ")
        ),
    })
}

pub(super) fn clip(s: &str) -> String {
    s.chars().take(64).collect()
}

/// `GET /api/v1/runs/{id}`: status, verdict, findings and timings.
#[utoipa::path(
    get,
    path = "/api/v1/runs/{id}",
    tag = "runs",
    summary = "A run with its findings",
    params(("id" = String, Path, description = "The run's id (a UUID)")),
    responses(
        (status = 200, description = "The run, its verdict once finished, and every finding so far",
            body = RunView),
        (status = 404, response = NotFound),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn show_run(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<ApiJson<RunView>> {
    let id = parse_run_id(&id)?;
    let run = state
        .store
        .get_run(id)
        .await?
        .ok_or_else(|| WebError::NotFound(format!("no run has the id `{id}`")))?;
    let findings = state.store.findings(id, -1).await?;
    let owner = state.store.run_api_key(id).await?;
    let mut view = RunView::new(&run, Some(&findings));
    // The key's owner (or name), never anything that would authenticate.
    view.owner = Some(owner.as_ref().map(|k| k.display_owner().to_owned()));
    if run.webhook_url.is_some() {
        view.webhook = Some(WebhookView::new(&run, state.store.run_webhook(id).await?));
    }
    view.queue = queue_view(&state, &run).await?;
    Ok(ApiJson(view))
}

/// Where a queued run stands, and what it waits for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct QueueView {
    /// 1 for the next run a free worker takes; an estimate (runs people
    /// submitted before scheduled ones, then the oldest first; the rotation
    /// between submitters can move it).
    pub position: i64,
    /// What it waits for, in words: a free worker, another run against the
    /// same host, the gap protocheck keeps between runs against one host, or
    /// a retry's backoff.
    pub waiting_for: String,
    /// The earliest it can start, when that is known (RFC 3339).
    pub not_before: Option<String>,
}

/// What a queued run at `place` waits for at `now_ms` under `limits`.
pub fn describe_queue(
    place: &crate::store::QueuePlace,
    limits: &crate::store::HostLimits,
    now_ms: i64,
) -> QueueView {
    let host = place.host.as_deref().unwrap_or("its host");
    let ahead = match place.ahead {
        0 => String::new(),
        1 => "; 1 run is ahead of it in the queue".to_owned(),
        n => format!("; {n} runs are ahead of it in the queue"),
    };
    let gap_ends = place
        .last_end_on_host_ms
        .map(|end| end.saturating_add(limits.gap_ms))
        .filter(|at| limits.gap_ms > 0 && *at > now_ms);
    let (waiting_for, not_before) = if place.available_at_ms > now_ms {
        (
            "a retry: an attempt failed, and the next starts after a pause".to_owned(),
            Some(place.available_at_ms),
        )
    } else if limits.running_per_host > 0
        && place.running_on_host >= i64::from(limits.running_per_host)
    {
        let at_once = match limits.running_per_host {
            1 => "one run at a time".to_owned(),
            n => format!("{n} runs at a time"),
        };
        (
            format!(
                "another run against {host} is in progress (protocheck sends {at_once} to one \
                 host); this one starts after it{ahead}"
            ),
            None,
        )
    } else if let Some(at) = gap_ends {
        (
            format!(
                "the pause of {} s protocheck keeps between runs against {host}{ahead}",
                limits.gap_ms / 1000
            ),
            Some(at),
        )
    } else {
        (format!("a free worker{ahead}"), None)
    };
    QueueView {
        position: place.ahead.saturating_add(1),
        waiting_for,
        not_before: not_before.map(crate::rfc3339),
    }
}

/// The queue view of `run` now, when it is queued.
pub(super) async fn queue_view(
    state: &AppState,
    run: &Run,
) -> crate::store::StoreResult<Option<QueueView>> {
    if run.status != RunStatus::Queued {
        return Ok(None);
    }
    let place = state.store.queue_place(run.id).await?;
    Ok(place.map(|p| describe_queue(&p, &state.host_limits, crate::now_ms())))
}

/// `GET /api/v1/targets/{id}`.
#[utoipa::path(
    get,
    path = "/api/v1/targets/{id}",
    tag = "targets",
    summary = "A target",
    params(("id" = String, Path, description = "The target's key: 24 lower-case hex digits")),
    responses(
        (status = 200, description = "The target", body = TargetView),
        (status = 404, response = NotFound),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn show_target(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<ApiJson<TargetView>> {
    let target = find_target(&state, &id).await?;
    Ok(ApiJson(TargetView::new(&target)))
}

pub(super) async fn find_target(state: &AppState, id: &str) -> ApiResult<Target> {
    state
        .store
        .get_target(id)
        .await?
        .ok_or_else(|| WebError::NotFound(format!("no target has the id `{}`", clip(id))))
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct HistoryQuery {
    /// Runs per page (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
    /// Cursor from the previous page's `next`: a run id of this target.
    pub before: Option<String>,
}

/// One page of a target's run history.
#[derive(Debug, Serialize, ToSchema)]
pub struct HistoryPage {
    pub target: TargetView,
    /// Newest first.
    pub runs: Vec<RunView>,
    /// The cursor of the next page (`before`), or null on the last page.
    #[schema(required = true)]
    pub next: Option<String>,
    pub links: HistoryLinks,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct HistoryLinks {
    /// The next page, or null on the last page.
    #[schema(required = true)]
    pub next: Option<String>,
}

/// `GET /api/v1/targets/{id}/runs`: newest first, paginated by cursor.
#[utoipa::path(
    get,
    path = "/api/v1/targets/{id}/runs",
    tag = "targets",
    summary = "A target's run history",
    params(
        ("id" = String, Path, description = "The target's key: 24 lower-case hex digits"),
        HistoryQuery,
    ),
    responses(
        (status = 200, description = "A page of runs, newest first", body = HistoryPage),
        (status = 400, response = BadRequest),
        (status = 404, response = NotFound),
        (status = 422, response = Unprocessable),
        (status = 500, response = InternalError),
        (status = 503, response = TimedOut),
    )
)]
pub async fn target_history(
    State(state): State<AppState>,
    ApiPath(id): ApiPath<String>,
    ApiQuery(q): ApiQuery<HistoryQuery>,
) -> ApiResult<ApiJson<HistoryPage>> {
    let target = find_target(&state, &id).await?;
    let limit = q.limit.unwrap_or(DEFAULT_PAGE);
    if limit == 0 || limit > MAX_PAGE {
        return Err(WebError::Invalid {
            field: "limit",
            detail: format!("limit must be between 1 and {MAX_PAGE}"),
        });
    }
    let before = match q.before.as_deref() {
        None => None,
        Some(raw) => {
            let run_id = Uuid::parse_str(raw).map_err(|_| WebError::Invalid {
                field: "before",
                detail: "before must be a run id from `next`".into(),
            })?;
            let run = state
                .store
                .get_run(run_id)
                .await?
                .filter(|r| r.target_id == target.id)
                .ok_or_else(|| WebError::Invalid {
                    field: "before",
                    detail: "before names no run of this target".into(),
                })?;
            Some(HistoryCursor {
                created_at_ms: run.created_at_ms,
                id: run.id,
            })
        }
    };
    // One extra row tells whether another page exists.
    let mut runs = state
        .store
        .target_runs(&target.id, before.as_ref(), limit + 1)
        .await?;
    let next = if runs.len() > limit as usize {
        runs.truncate(limit as usize);
        runs.last().map(|r| r.id.to_string())
    } else {
        None
    };
    let next_link = next.as_ref().map(|n| {
        format!(
            "/api/v1/targets/{}/runs?limit={limit}&before={n}",
            target.id
        )
    });
    Ok(ApiJson(HistoryPage {
        target: TargetView::new(&target),
        runs: runs.iter().map(|r| RunView::new(r, None)).collect(),
        next,
        links: HistoryLinks { next: next_link },
    }))
}

/// Any other path.
pub async fn not_found(uri: axum::http::Uri) -> WebError {
    WebError::NotFound(format!("nothing is served at `{}`", clip(uri.path())))
}

/// A target as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct TargetView {
    /// The target's key: 24 lower-case hex digits.
    pub id: String,
    /// The canonical URL.
    pub url: String,
    /// The protocol last detected on it (`mcp`, `rcp`), or null.
    #[schema(required = true)]
    pub protocol: Option<String>,
    #[schema(format = DateTime)]
    pub created_at: String,
    pub links: TargetLinks,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TargetLinks {
    #[serde(rename = "self")]
    pub self_: String,
    pub runs: String,
}

impl TargetView {
    pub fn new(t: &Target) -> Self {
        Self {
            id: t.id.clone(),
            url: t.canonical_url.clone(),
            protocol: t.protocol.clone(),
            created_at: crate::rfc3339(t.created_at_ms),
            links: TargetLinks {
                self_: format!("/api/v1/targets/{}", t.id),
                runs: format!("/api/v1/targets/{}/runs", t.id),
            },
        }
    }
}

/// A finding as the API shows it: the rule's outcome with its evidence, its
/// position in the run, and when it was recorded.
#[derive(Debug, Serialize, ToSchema)]
pub struct FindingView {
    /// 0-based order within the run's current attempt (the SSE event id).
    pub seq: i64,
    #[serde(flatten)]
    pub finding: Finding,
    #[schema(format = DateTime)]
    pub created_at: String,
}

impl FindingView {
    pub fn new(f: &StoredFinding) -> Self {
        Self {
            seq: f.seq,
            finding: f.finding.clone(),
            created_at: crate::rfc3339(f.created_at_ms),
        }
    }
}

/// A run as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunView {
    pub id: Uuid,
    /// The target's canonical URL.
    pub url: String,
    pub target_id: String,
    /// The suite requested: `auto`, `mcp` or `rcp`.
    pub suite: String,
    /// Version of the rules the run was judged with; null until it finishes.
    #[schema(required = true)]
    pub suite_version: Option<String>,
    pub status: RunStatus,
    pub options: SubmitOptions,
    /// Attempts started so far, including the current one.
    pub attempts: i32,
    pub max_attempts: i32,
    #[schema(format = DateTime)]
    pub created_at: String,
    #[schema(required = true, format = DateTime)]
    pub started_at: Option<String>,
    #[schema(required = true, format = DateTime)]
    pub finished_at: Option<String>,
    #[schema(required = true)]
    pub duration_ms: Option<i64>,
    /// Null until the run finishes with a verdict.
    #[schema(required = true)]
    pub verdict: Option<Verdict>,
    /// Why the run ended as `error`, or why the last attempt was retried.
    #[schema(required = true)]
    pub error: Option<String>,
    /// `bearer` when the run is judged with a token supplied by the submitter
    /// (the submission's `credentials`); absent otherwise. The token itself is
    /// never shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^bearer$")]
    pub credentials: Option<String>,
    pub links: RunLinks,
    /// The owner (or name) of the API key that submitted the run, null for an
    /// anonymous run; on the answers about one run only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub owner: Option<Option<String>>,
    /// The run's webhook, when it has one (`GET /api/v1/runs/{id}` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook: Option<WebhookView>,
    /// Every finding so far (only on `GET /api/v1/runs/{id}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub findings: Option<Vec<FindingView>>,
    /// While the run is queued: its place and what it waits for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueView>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RunLinks {
    #[serde(rename = "self")]
    pub self_: String,
    /// Live progress as server-sent events.
    pub events: String,
    pub target: String,
}

impl RunView {
    /// The view of `run`; `findings` is included when given.
    pub fn new(run: &Run, findings: Option<&[StoredFinding]>) -> Self {
        let duration_ms = match (run.started_at_ms, run.finished_at_ms) {
            (Some(s), Some(f)) => Some(f - s),
            _ => None,
        };
        Self {
            id: run.id,
            url: run.target_url.clone(),
            target_id: run.target_id.clone(),
            suite: run.suite.as_str().to_owned(),
            suite_version: run.suite_version.clone(),
            status: run.status,
            options: shown_options(run),
            attempts: run.attempts,
            max_attempts: run.max_attempts,
            created_at: crate::rfc3339(run.created_at_ms),
            started_at: run.started_at_ms.map(crate::rfc3339),
            finished_at: run.finished_at_ms.map(crate::rfc3339),
            duration_ms,
            verdict: run.verdict.clone(),
            error: run.error.clone(),
            credentials: run.credentials_used().map(str::to_owned),
            links: RunLinks {
                self_: format!("/api/v1/runs/{}", run.id),
                events: format!("/api/v1/runs/{}/events", run.id),
                target: format!("/api/v1/targets/{}", run.target_id),
            },
            owner: None,
            webhook: None,
            findings: findings.map(|fs| fs.iter().map(FindingView::new).collect()),
            queue: None,
        }
    }
}

pub fn target_json(t: &Target) -> Value {
    serde_json::to_value(TargetView::new(t)).unwrap_or(Value::Null)
}

pub fn finding_json(f: &StoredFinding) -> Value {
    serde_json::to_value(FindingView::new(f)).unwrap_or(Value::Null)
}

/// A run's webhook and its delivery attempts. The URL is shown without its path
/// and query, which often carry the receiver's secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookView {
    #[schema(required = true)]
    pub url: Option<String>,
    /// `waiting` (the run has not ended), `pending`, `delivered` or `failed`.
    pub state: String,
    pub deliveries: Vec<WebhookAttemptView>,
}

/// One delivery attempt of a webhook.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookAttemptView {
    /// 1-based.
    pub attempt: i32,
    #[schema(format = DateTime)]
    pub at: String,
    /// The receiver's HTTP status; null when no response came.
    #[schema(required = true)]
    pub status_code: Option<i32>,
    /// Why the attempt did not deliver.
    #[schema(required = true)]
    pub error: Option<String>,
    /// When the next attempt is due; null once delivered or given up.
    #[schema(required = true, format = DateTime)]
    pub next_attempt_at: Option<String>,
}

impl WebhookView {
    fn new(run: &Run, delivery: Option<(WebhookDelivery, Vec<WebhookAttempt>)>) -> Self {
        let url = run.webhook_url.as_deref().map(webhook::display_url);
        let (state, deliveries) = match delivery {
            // Created when the run ends.
            None => ("waiting", Vec::new()),
            // The API names the states as the store does.
            Some((d, attempts)) => (d.state.as_str(), attempts),
        };
        Self {
            url,
            state: state.to_owned(),
            deliveries: deliveries
                .iter()
                .map(|a| WebhookAttemptView {
                    attempt: a.attempt,
                    at: crate::rfc3339(a.at_ms),
                    status_code: a.status_code,
                    error: a.error.clone(),
                    next_attempt_at: a.next_attempt_at_ms.map(crate::rfc3339),
                })
                .collect(),
        }
    }
}

/// Options as shown, with the webhook among them as it was submitted: its URL
/// without its path and query (see [`WebhookView`]).
fn shown_options(run: &Run) -> SubmitOptions {
    let url = run.webhook_url.as_deref().map(webhook::display_url);
    SubmitOptions::from_parts(run.options.clone(), url)
}

/// The API's view of a run; `findings` is included when given.
pub fn run_json(run: &Run, findings: Option<&[StoredFinding]>) -> Value {
    serde_json::to_value(RunView::new(run, findings)).unwrap_or(Value::Null)
}
