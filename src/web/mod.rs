//! The axum router: REST API v1, server-sent progress, badges, attestations,
//! health and metrics. `app(state)` is used by `serve` and by the tests alike.

// Routes read paths and JSON bodies only through the owned extractors of
// `extract` (clippy.toml names axum's raw ones), so every API rejection is a
// problem document.
#![deny(clippy::disallowed_types)]

pub mod api;
pub mod attest;
pub mod badge;
pub mod directory;
pub mod error;
pub mod extract;
pub mod openapi;
pub mod ops;
pub mod pages;
pub mod progress;
pub mod ratelimit;
pub mod report;
pub mod rules;
pub mod serve;
pub mod sign_in;
pub mod slots;
pub mod watch;

use crate::events::RunEvents;
use crate::metrics::Metrics;
use crate::store::Store;
use crate::submit::Queue;
use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower_http::timeout::{RequestBodyTimeoutLayer, TimeoutLayer};
use tower_http::trace::TraceLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Largest API request body: a submission is a URL and a few options.
pub const MAX_API_BODY_BYTES: usize = 64 * 1024;
/// Requests other than progress streams must finish within this, so shutdown can drain.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a submission or a page may wait for the database. A database that
/// answers at all answers in milliseconds; one that has gone silent would hold
/// a submission until the 30-second request timeout, which answers an empty
/// 503, and a page (outside that timeout) for ever. Above SQLite's 5-second
/// busy timeout, so a busy SQLite gives its own answer first.
pub const STORE_WITHIN: Duration = Duration::from_secs(10);

/// After this long a store call that has not answered checks whether the
/// database refuses connections (see [`Store::refuses_connections`]), and
/// again as often while it waits.
const REFUSAL_CHECK_EVERY: Duration = Duration::from_millis(250);

/// Runs `work`, a handler's work on `store`, answering
/// [`error::WebError::Unavailable`] if it takes longer than
/// [`STORE_WITHIN`], or at once when the database refuses connections (the
/// pool would keep retrying a refused connection until the deadline, as for
/// a database that is starting). A submission cut short may still have been
/// queued; retrying it finds the same run through deduplication.
pub async fn store_deadline<T, E: From<error::WebError>>(
    store: &dyn Store,
    work: impl Future<Output = Result<T, E>>,
) -> Result<T, E> {
    let refused = async {
        loop {
            tokio::time::sleep(REFUSAL_CHECK_EVERY).await;
            if store.refuses_connections().await {
                return;
            }
        }
    };
    tokio::select! {
        done = tokio::time::timeout(STORE_WITHIN, work) => match done {
            Ok(done) => done,
            Err(_) => {
                tracing::warn!("the database did not answer within {STORE_WITHIN:?}");
                Err(error::WebError::Unavailable.into())
            }
        },
        () = refused => {
            tracing::warn!("the database refuses connections");
            Err(error::WebError::Unavailable.into())
        }
    }
}

/// Shared state of the web layer.
#[derive(Clone)]
pub struct AppState(Arc<Inner>);

pub struct Inner {
    pub store: Arc<dyn Store>,
    pub queue: Queue,
    pub events: RunEvents,
    pub metrics: Metrics,
    pub limiter: ratelimit::SubmitLimiter,
    /// How often a progress stream re-reads the store when nothing woke it.
    pub progress_poll: Duration,
    /// Signs verdicts whose attestation is requested before a worker signed them.
    pub attestor: Option<crate::attest::Attestor>,
    pub badges: badge::BadgeSettings,
    pub badge_cache: badge::BadgeCache,
    /// The progress streams each client address follows.
    pub streams: slots::ClientSlots,
    /// How long a request body may pause (see [`WebOptions::body_timeout`]).
    pub body_timeout: Duration,
    /// Sign-ins under way (see [`sign_in`]); `None` when the service cannot
    /// seal the token one would get (no credentials key) or was not asked to.
    pub sign_in: Option<sign_in::SignInFlows>,
    /// What bounds the watches the API accepts, and those badges keep.
    pub watch: watch::WatchSettings,
    /// When this process last renewed the watch of each badge it served.
    pub badge_renewals: watch::BadgeRenewals,
    /// The limits the workers claim runs under.
    pub host_limits: crate::store::HostLimits,
    /// Lists the servers people ask to list; `None`: the service keeps no
    /// public directory and refuses such requests.
    pub directory: Option<crate::directory::Listing>,
}

/// Web settings beyond the queue and the buses.
#[derive(Debug, Clone)]
pub struct WebOptions {
    pub submit_per_minute: u32,
    pub badges: badge::BadgeSettings,
    pub attestor: Option<crate::attest::Attestor>,
    /// Progress streams one client address may follow at once; more get 429.
    pub max_streams_per_client: usize,
    /// How long a request body may pause before the request is answered 408.
    pub body_timeout: Duration,
    /// Offer "Sign in to check this server" (see [`sign_in`]), its requests
    /// under this address policy (the workers'). Taken only when the queue
    /// accepts credentials.
    pub sign_in_policy: Option<crate::transport::AddressPolicy>,
    /// Roots the sign-in client trusts beyond the public ones (DER): the
    /// workers' `PROTOCHECK_CA_CERT`, so a server the workers can check over
    /// an internal CA can be signed in to as well.
    pub sign_in_roots: Vec<Vec<u8>>,
    pub watch: watch::WatchSettings,
    /// The limits the workers claim runs under, to tell a queued run why it
    /// waits (see `api::queue_view`).
    pub host_limits: crate::store::HostLimits,
    /// See [`Inner::directory`].
    pub directory: Option<crate::directory::Listing>,
}

impl Default for WebOptions {
    fn default() -> Self {
        Self {
            submit_per_minute: 30,
            badges: badge::BadgeSettings::default(),
            attestor: None,
            max_streams_per_client: 16,
            body_timeout: Duration::from_secs(10),
            sign_in_policy: None,
            sign_in_roots: Vec::new(),
            watch: watch::WatchSettings::default(),
            host_limits: crate::store::HostLimits::NONE,
            directory: None,
        }
    }
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl AppState {
    pub fn new(queue: Queue, events: RunEvents, metrics: Metrics, submit_per_minute: u32) -> Self {
        Self::with_options(
            queue,
            events,
            metrics,
            WebOptions {
                submit_per_minute,
                ..WebOptions::default()
            },
        )
    }

    pub fn with_options(
        queue: Queue,
        events: RunEvents,
        metrics: Metrics,
        options: WebOptions,
    ) -> Self {
        let sign_in = options
            .sign_in_policy
            .filter(|_| queue.accepts_credentials())
            .and_then(|policy| match sign_in::SignInFlows::new(policy, options.sign_in_roots) {
                Ok(flows) => Some(flows),
                Err(e) => {
                    tracing::error!(error = %e, "sign-in is off: its HTTP client could not be built");
                    None
                }
            });
        Self(Arc::new(Inner {
            sign_in,
            store: queue.store().clone(),
            queue,
            events,
            metrics,
            limiter: ratelimit::SubmitLimiter::per_minute(options.submit_per_minute),
            progress_poll: Duration::from_millis(500),
            attestor: options.attestor,
            badges: options.badges,
            badge_cache: badge::BadgeCache::default(),
            streams: slots::ClientSlots::per_client(options.max_streams_per_client),
            body_timeout: options.body_timeout,
            watch: options.watch,
            badge_renewals: watch::BadgeRenewals::default(),
            host_limits: options.host_limits,
            directory: options.directory,
        }))
    }
}

/// The API's routes, each registered with its OpenAPI operation (`routes!`
/// reads the path and method from the handler's `#[utoipa::path]`), so the
/// document at `/api/openapi.json` describes exactly what is served.
pub fn api_routes() -> OpenApiRouter<AppState> {
    // Progress streams live as long as the run; they are outside the request timeout.
    let streams = OpenApiRouter::new().routes(routes!(progress::run_events));
    let api = OpenApiRouter::new()
        .routes(routes!(api::submit_run))
        .routes(routes!(api::show_run))
        .routes(routes!(api::show_target))
        .routes(routes!(api::target_history))
        .routes(routes!(directory::list_directory))
        .routes(routes!(directory::export_directory))
        .routes(routes!(watch::watch_target, watch::unwatch_target))
        .routes(routes!(badge::badge_snippets))
        .routes(routes!(attest::show_attestation))
        .routes(routes!(report::report_json))
        .routes(routes!(report::report_junit))
        .routes(routes!(report::report_sarif))
        .routes(routes!(report::report_schema))
        .routes(routes!(rules::list_rules))
        .routes(routes!(rules::show_rule))
        .routes(routes!(attest::verify))
        .routes(routes!(attest::keys))
        .routes(routes!(badge::badge_by_key))
        .routes(routes!(badge::svg_by_url))
        .routes(routes!(badge::json_by_url))
        .routes(routes!(badge::latest_report))
        .routes(routes!(ops::healthz))
        .routes(routes!(ops::readyz))
        .routes(routes!(ops::metrics))
        .routes(routes!(openapi::openapi_json))
        .layer(TimeoutLayer::with_status_code(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            REQUEST_TIMEOUT,
        ));
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .merge(api)
        .merge(streams)
}

/// The whole router.
pub fn app(state: AppState) -> Router {
    let (api, _) = api_routes().split_for_parts();
    let pages = Router::new()
        .route("/", get(pages::home).post(pages::submit_form))
        .route("/runs/{id}", get(pages::show_run_page))
        .route("/runs/{id}/sign-in", axum::routing::post(sign_in::start))
        .route("/sign-in/callback", get(sign_in::callback))
        .route("/sign-in/client.json", get(sign_in::client_metadata))
        .route("/targets/{id}", get(pages::show_target_page))
        .route("/directory", get(pages::directory_page))
        .route("/rules", get(rules::rules_page))
        .route("/rules/{id}", get(rules::rule_page))
        .route("/static/{name}", get(pages::static_file))
        .route("/favicon.ico", get(pages::favicon))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            pages::page_deadline,
        ))
        .layer(middleware::from_fn(pages::page_headers))
        // Pages, styles and scripts gzipped for browsers that ask (the
        // default predicate leaves small bodies, images and event streams alone).
        .layer(tower_http::compression::CompressionLayer::new());
    Router::new()
        .merge(api)
        .merge(pages)
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            whole_body_within,
        ))
        .layer(middleware::from_fn(explain_bare_errors))
        .layer(DefaultBodyLimit::max(MAX_API_BODY_BYTES))
        // A body that stops arriving fails its extractor, which answers 408.
        .layer(RequestBodyTimeoutLayer::new(state.body_timeout))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            record_latency,
        ))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Records request latency per route template (never per raw path: ids would
/// make the label set unbounded).
async fn record_latency(
    axum::extract::State(state): axum::extract::State<AppState>,
    req: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let method = req.method().as_str().to_owned();
    let route = req.extensions().get::<MatchedPath>().map_or_else(
        || crate::metrics::UNMATCHED_ROUTE.to_owned(),
        |p| p.as_str().to_owned(),
    );
    let resp = next.run(req).await;
    state.metrics.observe_request(
        &method,
        &route,
        resp.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    resp
}

/// Whether a request asks for a page (a browser) rather than a document.
fn wants_html(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/html"))
}

/// Gives a body to the errors the router answers by itself with none (a
/// method a path does not answer): problem+json, or a page for a browser
/// outside `/api`, as every other error. Its `Allow` header is kept.
async fn explain_bare_errors(req: Request, next: Next) -> Response {
    use axum::response::IntoResponse;
    let method = req.method().to_string();
    let page = wants_html(req.headers()) && !req.uri().path().starts_with("/api/");
    let resp = next.run(req).await;
    if resp.status() != axum::http::StatusCode::METHOD_NOT_ALLOWED
        || resp
            .headers()
            .contains_key(axum::http::header::CONTENT_TYPE)
    {
        return resp;
    }
    // The method router sets `Allow` on its 405 after the layers of its
    // routes ran, so this layer seldom sees it: the detail then points at the
    // header rather than guessing.
    let allow = resp.headers().get(axum::http::header::ALLOW).cloned();
    let error = error::WebError::MethodNotAllowed {
        method,
        allow: allow.as_ref().and_then(|v| v.to_str().ok()).map_or_else(
            || "the methods its Allow header lists".to_owned(),
            |v| v.replace(',', ", "),
        ),
    };
    let mut out = if page {
        let mut r = error::AsPage(error).into_response();
        r.headers_mut().insert(
            axum::http::header::CONTENT_SECURITY_POLICY,
            axum::http::HeaderValue::from_static(pages::PAGE_CSP),
        );
        r
    } else {
        error.into_response()
    };
    if let Some(allow) = allow {
        out.headers_mut().insert(axum::http::header::ALLOW, allow);
    }
    out
}

/// Reads a request's whole body before its handler runs, within
/// [`WebOptions::body_timeout`] from the start: the body timeout of the router
/// bounds each pause, and a body trickled one byte just inside each pause
/// would otherwise hold its connection until the request timeout, answered
/// by an empty 503 (#31 item 7). Bodies are small (at most
/// [`MAX_API_BODY_BYTES`]), so holding one whole costs nothing. A body that
/// does not arrive in time is answered 408, one too large 413, as problem+json
/// under `/api` and as a page on the forms' paths.
async fn whole_body_within(
    axum::extract::State(state): axum::extract::State<AppState>,
    req: Request,
    next: Next,
) -> Response {
    use axum::http::header;
    use axum::response::IntoResponse;
    let declared: Option<u64> = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok());
    let chunked = req.headers().contains_key(header::TRANSFER_ENCODING);
    if !chunked && declared.unwrap_or(0) == 0 {
        return next.run(req).await;
    }
    // Only forms post outside `/api`, and forms answer with pages.
    let page = !req.uri().path().starts_with("/api/");
    let refuse = |error: error::WebError| {
        if page {
            error::AsPage(error).into_response()
        } else {
            error.into_response()
        }
    };
    if declared.is_some_and(|n| n > MAX_API_BODY_BYTES as u64) {
        return refuse(error::WebError::BodyTooLarge(MAX_API_BODY_BYTES));
    }
    let (parts, body) = req.into_parts();
    let read = axum::body::to_bytes(body, MAX_API_BODY_BYTES);
    match tokio::time::timeout(state.body_timeout, read).await {
        Ok(Ok(bytes)) => {
            next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
                .await
        }
        Ok(Err(e)) => {
            let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&e);
            let mut timed_out = false;
            let mut too_large = false;
            while let Some(c) = cause {
                timed_out |= c.is::<tower_http::timeout::TimeoutError>();
                too_large |= c.is::<http_body_util::LengthLimitError>();
                cause = c.source();
            }
            refuse(if timed_out {
                error::WebError::BodyTimeout
            } else if too_large {
                error::WebError::BodyTooLarge(MAX_API_BODY_BYTES)
            } else {
                error::WebError::MalformedBody("the request body could not be read".into())
            })
        }
        Err(_) => refuse(error::WebError::BodyTimeout),
    }
}

/// Unknown paths: an HTML page for browsers, problem+json for everyone else.
pub(crate) async fn not_found(headers: axum::http::HeaderMap, uri: axum::http::Uri) -> Response {
    use axum::response::IntoResponse;
    if wants_html(&headers) {
        let mut resp = error::AsPage(error::WebError::NotFound(
            "There is no page at this address.".into(),
        ))
        .into_response();
        resp.headers_mut().insert(
            axum::http::header::CONTENT_SECURITY_POLICY,
            axum::http::HeaderValue::from_static(pages::PAGE_CSP),
        );
        resp
    } else {
        api::not_found(uri).await.into_response()
    }
}
