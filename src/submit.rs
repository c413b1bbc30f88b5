//! Submitting runs: validation, freshness, dedup and idempotency, over the
//! store's primitives. The web API, the web form and the CLI all submit here.

use crate::credentials::{Credentials, Keyring};
use crate::store::{
    IdempotencyRecord, Inserted, LoadQuery, NewRun, QueuePlace, Run, RunOrigin, Store, StoreError,
    SubmissionFacts, SubmitChoice, SubmitOutcome, SubmitRequest,
};
use crate::suite::{BearerToken, McpRevision, RunOptions, SuiteChoice};
use crate::target::{CanonicalUrl, UrlError};
use crate::transport::AddressPolicy;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use url::Url;
use uuid::Uuid;

/// A finished run younger than this is returned instead of queueing a new one.
pub const DEFAULT_MAX_AGE_S: u64 = 300;
/// Why credentials on an anonymous submission are refused.
pub const CREDENTIALS_NEED_KEY: &str = "credentials need an API key (Authorization: Bearer …): a token is held for a run only on behalf of a known submitter, whose quota it counts against";
/// Why credentials are refused by a service without a credentials key.
pub const CREDENTIALS_NOT_ACCEPTED: &str = "this service accepts no credentials: its operator has set no credentials key (PROTOCHECK_CREDENTIALS_KEY) to hold a token encrypted until its run ends; use `protocheck check --bearer-token` locally";
/// Why credentials on a run of the RCP suite are refused.
pub const RCP_TAKES_NO_CREDENTIALS: &str = "RCP/1 runs take no credentials: the RCP suite sends no token to its target, so the run would claim one it never used; submit with suite `mcp` (or `auto`) for a server that requires a token";
/// Why a webhook on an anonymous submission is refused.
pub const WEBHOOK_NEEDS_KEY: &str = "options.webhook_url needs an API key (Authorization: Bearer …): webhooks are signed with the key's secret";
/// Longest `Idempotency-Key` accepted.
pub const MAX_IDEMPOTENCY_KEY_BYTES: usize = 255;

/// Room for the submitter's scope the API puts before an `Idempotency-Key`
/// (`k:<API key id>:` or `a:<address or /64>:`), so that one client's key
/// never finds another's run (#31 item 11).
pub const IDEMPOTENCY_SCOPE_BYTES: usize = 64;

/// Whether `key`, as a client sent it, is an acceptable `Idempotency-Key`.
pub fn check_idempotency_key(key: &str) -> Result<(), SubmitError> {
    if key.is_empty()
        || key.len() > MAX_IDEMPOTENCY_KEY_BYTES
        || !key.bytes().all(|b| b.is_ascii_graphic())
    {
        return Err(SubmitError::IdempotencyKey);
    }
    Ok(())
}
/// Longest webhook URL accepted.
pub const MAX_WEBHOOK_URL_BYTES: usize = 2048;

// The `options` object of a submission: the engine's `RunOptions` and where to
// announce the run's end, which is the service's concern and never reaches the
// engine. The API reads and shows it as one object, documented under the name
// `RunOptions` (so the field docs below are the API's). `into_parts` and
// `from_parts` name every field, so a field added to one type and not the
// other does not compile.
/// Options a run carries. Unknown keys are refused so a typo is not silently ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = RunOptions)]
pub struct SubmitOptions {
    /// RCP profile: `spec` (default) or `reference`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^(spec|reference)$")]
    pub profile: Option<String>,
    /// Allow probes that write to the target (RCP `index/*`, `feedback`,
    /// `memory/build`). Off when absent: no side effects on a stranger's server
    /// unless the run asks for them (see [`RunOptions::writes_allowed`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_writes: Option<bool>,
    /// Allow MCP tool calls with real arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_tool_calls: Option<bool>,
    /// MCP registry `server.json`: a URL or the document itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_json: Option<serde_json::Value>,
    /// Per-request timeout in milliseconds (bounded by the service's limits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 30000)]
    pub request_timeout_ms: Option<u64>,
    /// Read so that the service can refuse it and point to the submission's
    /// `credentials` member instead (see [`Queue::submit`]); never serialised.
    #[serde(default, skip_serializing)]
    #[schema(ignore)]
    pub bearer_token: Option<BearerToken>,
    /// Where to announce the run's end (see [`crate::webhook`]); needs an API key.
    /// Part of the dedup key: submissions with different webhooks are different
    /// runs, so every receiver is told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_url: Option<String>,
    /// The MCP revision to judge: `newest` (the default: the newest one the
    /// server speaks), `2026-07-28`, `2025-11-25`, or `all` (each one the
    /// server speaks, one suite after the other, with a verdict per revision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_revision: Option<McpRevision>,
}

impl SubmitOptions {
    /// The engine's options and the webhook URL.
    pub fn into_parts(self) -> (RunOptions, Option<String>) {
        let Self {
            profile,
            allow_writes,
            allow_tool_calls,
            server_json,
            request_timeout_ms,
            bearer_token,
            webhook_url,
            mcp_revision,
        } = self;
        let options = RunOptions {
            profile,
            allow_writes,
            allow_tool_calls,
            server_json,
            request_timeout_ms,
            bearer_token,
            // The service accepts no credential (see `Queue::submit`).
            limited_token: None,
            mcp_revision,
            // Set by the web form's sign-in only (see `web::sign_in`).
            sign_in: None,
        };
        (options, webhook_url)
    }

    /// The canonical JSON form used in the dedup key: keys sorted, absent
    /// options omitted.
    pub fn canonical_json(&self) -> String {
        // serde_json's map is ordered by key, so re-serialising a Value sorts nested keys too.
        let value = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        value.to_string()
    }

    /// The one object the API shows for a run's options and webhook.
    pub fn from_parts(options: RunOptions, webhook_url: Option<String>) -> Self {
        let RunOptions {
            profile,
            allow_writes,
            allow_tool_calls,
            server_json,
            request_timeout_ms,
            bearer_token,
            limited_token: _,
            mcp_revision,
            // The sign-in's steps are judged into the run's findings.
            sign_in: _,
        } = options;
        Self {
            profile,
            allow_writes,
            allow_tool_calls,
            server_json,
            request_timeout_ms,
            bearer_token,
            webhook_url,
            mcp_revision,
        }
    }
}

/// Checks a webhook URL: absolute `http`/`https` with a host, no user name or
/// password, at most [`MAX_WEBHOOK_URL_BYTES`]. Webhook delivery checks it
/// again before each attempt.
pub fn validate_webhook_url(raw: &str) -> Result<Url, String> {
    validate_webhook_url_as("options.webhook_url", raw)
}

/// [`validate_webhook_url`], its errors naming `field`. The shape is held
/// to what a target URL is held to ([`CanonicalUrl::parse`]): port 0,
/// missing or extra slashes after the scheme (`http:///host`, which a parser
/// rewrites into `http://host/`), hidden characters and bad percent-escapes
/// are refused here rather than found out at delivery.
pub fn validate_webhook_url_as(field: &str, raw: &str) -> Result<Url, String> {
    if raw.len() > MAX_WEBHOOK_URL_BYTES {
        return Err(format!(
            "{field} must be at most {MAX_WEBHOOK_URL_BYTES} bytes"
        ));
    }
    let url = Url::parse(raw).map_err(|e| format!("{field} is not an absolute URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("{field} must be an http or https URL"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("{field} must name a host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!(
            "{field} must not carry a user name or password; receivers check the signature instead"
        ));
    }
    CanonicalUrl::parse(raw).map_err(|e| format!("{field} is refused: {e}"))?;
    Ok(url)
}

/// Why `policy` refuses to connect to `url`'s host, when that can be told
/// without a DNS lookup: an IP literal it forbids, or `localhost` and the
/// names under it (RFC 6761: always loopback). Other names are checked when
/// they are resolved, at connect time.
pub fn forbidden_host(policy: AddressPolicy, url: &Url) -> Option<UrlError> {
    let ip: std::net::IpAddr = match url.host()? {
        url::Host::Ipv4(v4) => v4.into(),
        url::Host::Ipv6(v6) => v6.into(),
        url::Host::Domain(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            if name != "localhost" && !name.ends_with(".localhost") {
                return None;
            }
            std::net::Ipv4Addr::LOCALHOST.into()
        }
    };
    let reason = policy.check(ip).err()?;
    Some(UrlError::Forbidden {
        host: url.host_str().unwrap_or_default().to_owned(),
        reason: reason.to_owned(),
    })
}

/// A submission, as parsed from the API or the form.
#[derive(Debug, Clone)]
pub struct Submission {
    pub url: String,
    pub suite: SuiteChoice,
    pub options: RunOptions,
    /// Where to announce the run's end; needs an API key.
    pub webhook_url: Option<String>,
    /// Tokens to judge the run with (see [`crate::credentials`]); needs an
    /// API key and a service with a credentials key. Never in `options`.
    pub credentials: Option<Credentials>,
    /// Reuse a finished run younger than this many seconds.
    pub max_age_s: u64,
    /// Queue a new run even when a fresh result exists.
    pub force: bool,
    /// `Idempotency-Key` header with the SHA-256 of the request it came with.
    pub idempotency: Option<(String, String)>,
    /// Who submits (`k:<API key id>` or `a:<client address>`, see
    /// `web::ratelimit::submitter_of`): the share of a host's hour is counted by it.
    /// `None` (a caller of the library) counts for the host only.
    pub submitter: Option<String>,
}

/// Each submitter's share of a host's hourly runs: half, at least one.
pub fn host_share(per_hour: u32) -> u32 {
    (per_hour / 2).max(1)
}

/// Why a submission returned the run it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// A new run was queued.
    Queued,
    /// The same target, suite and options are already queued or running.
    AlreadyActive,
    /// A finished run younger than `max_age_s` exists.
    FreshResult,
    /// The same `Idempotency-Key` was seen with the same request.
    IdempotentReplay,
}

#[derive(Debug, Clone)]
pub struct Submitted {
    pub run: Run,
    pub reason: Reason,
    /// Where the run stands in the queue, when it is queued (read in the
    /// submission's transaction; None for a replayed idempotent request).
    pub place: Option<QueuePlace>,
}

/// Why a submission was refused.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error("{0}")]
    Url(#[from] UrlError),
    #[error("{0}")]
    Options(String),
    /// A webhook without an API key to sign it (`options.webhook_url`).
    #[error("{WEBHOOK_NEEDS_KEY}")]
    WebhookNeedsKey,
    /// `credentials` without an API key.
    #[error("{CREDENTIALS_NEED_KEY}")]
    CredentialsNeedKey,
    /// `credentials` on a service that has no key to seal them.
    #[error("{CREDENTIALS_NOT_ACCEPTED}")]
    CredentialsNotAccepted,
    /// `credentials` that are not acceptable tokens.
    #[error("{0}")]
    Credentials(String),
    #[error("this Idempotency-Key was already used with a different request")]
    IdempotencyMismatch,
    #[error(
        "the Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY_BYTES} visible ASCII characters"
    )]
    IdempotencyKey,
    /// The target's host or the target itself has had as many runs as
    /// protocheck sends it (see [`HostQuota`]).
    #[error("{detail}")]
    TargetLimited { detail: String, retry_after_s: u64 },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What protocheck sends one target host, whoever submits: protocheck must not
/// be usable to flood a third party. Zero turns a limit off. The concurrency
/// and the gap between runs of a host are the claim's (see
/// [`crate::store::HostLimits`]); these are checked at submission.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostQuota {
    /// New runs of one host per rolling hour.
    pub runs_per_hour: u32,
    /// A submission with `force` or a `max_age_s` below the default is
    /// refused until this long after the last run of its server (its URL
    /// without the query string, on the same machine).
    pub force_every: Duration,
}

impl HostQuota {
    /// No limit: what [`Queue::new`] starts with.
    pub const NONE: Self = Self {
        runs_per_hour: 0,
        force_every: Duration::ZERO,
    };

    pub fn from_args(args: &crate::config::HostLimitArgs) -> Self {
        Self {
            runs_per_hour: args.host_runs_per_hour,
            force_every: Duration::from_secs(args.force_every_secs),
        }
    }
}

/// How long a submission waits for its target's name to resolve before
/// counting it by the name (see `Queue::machine_of`).
const SUBMIT_LOOKUP: Duration = Duration::from_secs(2);

/// The window of [`HostQuota::runs_per_hour`].
const HOUR_MS: i64 = 3_600_000;

/// Whether `sub` asks for a new run where a recent result would answer a
/// plain submission: `force`, or a `max_age_s` shorter than the default.
/// Only these are held by [`HostQuota::force_every`].
fn asks_for_a_new_run(sub: &Submission) -> bool {
    sub.force || sub.max_age_s < DEFAULT_MAX_AGE_S
}

/// Whole seconds from `now_ms` until `at_ms`, at least one.
fn secs_until(at_ms: i64, now_ms: i64) -> u64 {
    let ms = u64::try_from(at_ms.saturating_sub(now_ms)).unwrap_or(0);
    ms.div_ceil(1000).max(1)
}

/// What a submission's quota counts it against: one machine's recent runs,
/// and the newest run of the server submitted.
struct Limits {
    host: String,
    /// How refusals name the machine.
    label: String,
    /// The server: its URL without the query string.
    endpoint: String,
    submitter: Option<String>,
    /// The cooldown, 0 when it does not hold the run.
    every_ms: i64,
    per_hour: u32,
    now: i64,
    /// Since when the server's newest run is looked for: the longer of the
    /// cooldown and the hour.
    since_ms: i64,
}

impl Limits {
    fn query(&self) -> LoadQuery<'_> {
        LoadQuery {
            host: &self.host,
            endpoint: &self.endpoint,
            endpoint_since_ms: self.since_ms,
            host_since_ms: (self.per_hour > 0).then(|| self.now.saturating_sub(HOUR_MS)),
            submitter: self.submitter.as_deref(),
        }
    }
}

/// The submit side of the queue.
#[derive(Clone)]
pub struct Queue {
    store: Arc<dyn Store>,
    /// Wakes in-process workers when a run is queued.
    wake: Arc<Notify>,
    max_attempts: i32,
    quota: HostQuota,
    /// Seals submitted credentials; without one they are refused.
    keyring: Option<Arc<Keyring>>,
    /// The workers' address policy: a target whose host is an IP literal it
    /// refuses is refused at submission, before it is queued and counted.
    policy: Option<AddressPolicy>,
    /// Locks that make a machine's quota checks and insert one step (see
    /// `submit_as`), one per stripe of machines.
    counting: Arc<[tokio::sync::Mutex<()>]>,
    /// Wakes this process's scheduler when a watch is made or changed, so
    /// that its first slot is taken on time rather than after the scheduler's
    /// longest sleep (see [`crate::scheduler::ScheduleConfig::wake`]).
    schedule: Option<Arc<Notify>>,
}

/// Stripes of [`Queue::counting`]: machines share a lock only by chance, and
/// the lock is held for a few statements.
const COUNTING_STRIPES: usize = 64;

/// The stripe of [`Queue::counting`] that counts `host`.
fn stripe_of(host: &str) -> usize {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    host.hash(&mut hasher);
    usize::try_from(hasher.finish() % COUNTING_STRIPES as u64).unwrap_or(0)
}

impl Queue {
    pub fn new(store: Arc<dyn Store>, wake: Arc<Notify>, max_attempts: i32) -> Self {
        Self {
            store,
            wake,
            max_attempts: max_attempts.max(1),
            quota: HostQuota::NONE,
            keyring: None,
            policy: None,
            counting: (0..COUNTING_STRIPES)
                .map(|_| tokio::sync::Mutex::new(()))
                .collect(),
            schedule: None,
        }
    }

    /// The same queue, waking `schedule` (the scheduler's
    /// [`crate::scheduler::ScheduleConfig::wake`]) when watches change.
    pub fn with_schedule_wake(mut self, schedule: Arc<Notify>) -> Self {
        self.schedule = Some(schedule);
        self
    }

    /// A watch was made or changed: the scheduler of this process looks at
    /// the slots again now. Schedulers of other processes see it within their
    /// [`crate::scheduler::ScheduleConfig::refresh`].
    pub fn watches_changed(&self) {
        if let Some(schedule) = &self.schedule {
            schedule.notify_one();
        }
    }

    /// The same queue, refusing at submission a target whose host is an IP
    /// literal `policy` forbids (the workers would refuse it at connect time).
    pub fn with_address_policy(mut self, policy: AddressPolicy) -> Self {
        self.policy = Some(policy);
        self
    }

    /// The same queue, accepting credentials sealed with `keyring`.
    pub fn with_keyring(mut self, keyring: Option<Arc<Keyring>>) -> Self {
        self.keyring = keyring;
        self
    }

    /// The same queue, refusing new runs beyond `quota`.
    pub fn with_host_quota(mut self, quota: HostQuota) -> Self {
        self.quota = quota;
        self
    }

    /// A webhook URL as [`validate_webhook_url_as`] checks it, refused also
    /// when its host is one the workers' address policy forbids (see
    /// [`forbidden_host`]): delivery would refuse it at every attempt. Cloud
    /// metadata addresses are refused under every policy, so also by a queue
    /// given none.
    pub fn check_webhook_url(&self, field: &str, raw: &str) -> Result<Url, String> {
        let url = validate_webhook_url_as(field, raw)?;
        let policy = self.policy.unwrap_or(AddressPolicy::AllowPrivate);
        if let Some(refused) = forbidden_host(policy, &url) {
            return Err(format!("{field} is refused: {refused}"));
        }
        Ok(url)
    }

    /// Whether submissions may carry credentials (the queue has a key to seal them).
    pub fn accepts_credentials(&self) -> bool {
        self.keyring.is_some()
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    pub fn wake(&self) -> &Arc<Notify> {
        &self.wake
    }

    /// Validates and submits. Nothing is stored unless the submission is valid.
    pub async fn submit(&self, sub: Submission) -> Result<Submitted, SubmitError> {
        self.submit_as(sub, None).await
    }

    /// [`Queue::submit`] on behalf of an API key, which a new run records.
    pub async fn submit_as(
        &self,
        sub: Submission,
        api_key: Option<Uuid>,
    ) -> Result<Submitted, SubmitError> {
        // The signature's secret belongs to an API key: no key, no webhook.
        if sub.webhook_url.is_some() && api_key.is_none() {
            return Err(SubmitError::WebhookNeedsKey);
        }
        let url = CanonicalUrl::parse(&sub.url)?;
        if let Some(refused) = self.policy.and_then(|p| forbidden_host(p, url.url())) {
            return Err(SubmitError::Url(refused));
        }
        sub.options
            .validate_for(sub.suite)
            .map_err(SubmitError::Options)?;
        if let Some(webhook) = &sub.webhook_url {
            self.check_webhook_url("options.webhook_url", webhook)
                .map_err(SubmitError::Options)?;
        }
        // Tokens travel in `credentials`, which is sealed; `options` is stored and
        // shown as it is.
        if sub.options.carries_credentials() {
            return Err(SubmitError::Options(
                "options.bearer_token is not accepted: send the token as `credentials: {\"bearer_token\": …}` with an API key, which holds it encrypted for the run only".into(),
            ));
        }
        let keyring = match &sub.credentials {
            None => None,
            // RCP/1 defines no authorization: its probes carry no token, so a
            // run, its reports and its signed statement would claim one that
            // was never sent.
            Some(_) if sub.suite == SuiteChoice::Rcp => {
                return Err(SubmitError::Credentials(RCP_TAKES_NO_CREDENTIALS.into()));
            }
            // A token the web form's sign-in obtained needs no API key: the
            // person signed in at the server's own authorization server.
            Some(_) if api_key.is_none() && sub.options.sign_in.is_none() => {
                return Err(SubmitError::CredentialsNeedKey);
            }
            Some(credentials) => {
                credentials.validate().map_err(SubmitError::Credentials)?;
                Some(
                    self.keyring
                        .clone()
                        .ok_or(SubmitError::CredentialsNotAccepted)?,
                )
            }
        };
        // The stored form may carry its submitter's scope before the key the
        // client sent (see `IDEMPOTENCY_SCOPE_BYTES`).
        if let Some((key, _)) = &sub.idempotency
            && (key.is_empty()
                || key.len() > MAX_IDEMPOTENCY_KEY_BYTES + IDEMPOTENCY_SCOPE_BYTES
                || !key.bytes().all(|b| b.is_ascii_graphic()))
        {
            return Err(SubmitError::IdempotencyKey);
        }
        if let Some((key, hash)) = &sub.idempotency
            && let Some(found) = self.replay(key, hash).await?
        {
            return Ok(found);
        }

        let now = crate::now_ms();
        let target_id = url.key();
        let run_id = Uuid::now_v7();
        let mut dedup_key = dedup_key(
            &target_id,
            sub.suite,
            &sub.options,
            sub.webhook_url.as_deref(),
        );
        // A run judged with a token is its own: it is never merged with another
        // run nor answered by one (a result without the token would not be the
        // one asked for, and a token's result must not answer a submitter
        // without it). A key no other run has makes both impossible.
        // A run started by a sign-in is its own too, token or not: its
        // findings carry what that sign-in saw.
        let own = sub.credentials.is_some() || sub.options.sign_in.is_some();
        if own {
            dedup_key = format!("credentials:{run_id}");
        }
        // The webhook URL is in the key, so runs with different webhooks are not
        // merged and every receiver is told. A webhook is signed with the submitting
        // key's secret, so with one the key is part of the identity too: another key's
        // receiver could not verify a run this key submitted.
        if sub.webhook_url.is_some()
            && let Some(key) = api_key
        {
            dedup_key = hex::encode(Sha256::digest(format!("{dedup_key}\0{key}")));
        }
        let fresh_since_ms = (!sub.force && !own).then(|| {
            let max_age_ms = i64::try_from(sub.max_age_s.saturating_mul(1000)).unwrap_or(i64::MAX);
            now.saturating_sub(max_age_ms)
        });

        // The machine the run counts against (#31 item 1): every name and
        // spelling of one address is one budget. Looked up only where limits
        // apply; the worker looks again when it connects (`Store::rehost_run`).
        // Looked up before the store is asked anything, so that the whole
        // submission is one transaction (one commit, #29 item 4), even when a
        // fresh result then answers it.
        let machine = match self.quota != HostQuota::NONE {
            true => self.machine_of(&url).await,
            false => None,
        };
        // The cooldown holds only a submission that asks for a run although a
        // result may be fresh (`force`, or a `max_age_s` below the default):
        // a plain submission of a URL never run (another query string, other
        // options) is a first run, bounded by the host's hourly budget alone,
        // and a plain one of a URL run recently is answered by that run.
        let cooled = sub.credentials.is_none() && asks_for_a_new_run(&sub);
        let limits = self.limits_of(
            &url,
            machine.as_deref(),
            cooled,
            sub.submitter.as_deref(),
            now,
        );
        let sealed = match (&sub.credentials, &keyring) {
            (Some(credentials), Some(keyring)) => Some(
                keyring
                    .seal(run_id, credentials)
                    .map_err(|e| StoreError::Corrupt(format!("credentials: {e}")))?,
            ),
            _ => None,
        };
        let new = NewRun {
            id: run_id,
            target_id,
            suite: sub.suite,
            options: sub.options.clone(),
            webhook_url: sub.webhook_url.clone(),
            dedup_key,
            max_attempts: self.max_attempts,
            created_at_ms: now,
        };
        let origin = RunOrigin {
            api_key,
            forced: sub.force,
            credentials: sealed,
            submitter: sub.submitter.clone(),
            machine: machine.clone(),
            private_targets: self
                .policy
                .map(|policy| policy == AddressPolicy::AllowPrivate),
        };
        let submission = SubmitRequest {
            new: &new,
            origin: &origin,
            canonical_url: url.as_str(),
            fresh_since_ms,
            load: limits.as_ref().map(Limits::query),
        };
        let refusal =
            |facts: &SubmissionFacts| limits.as_ref().and_then(|l| self.refusal(l, facts));
        let decide = |facts: &SubmissionFacts| {
            if facts.fresh.is_some() {
                SubmitChoice::Fresh
            } else if refusal(facts).is_some() {
                SubmitChoice::Refuse
            } else {
                SubmitChoice::Queue
            }
        };
        // The submission is one step for the machine in this process:
        // submissions arriving together are counted one after the other, so a
        // burst does not pass the cooldown or the budget by as many as arrive
        // at once.
        let _counting = match &machine {
            Some(host) => Some(self.counting[stripe_of(host)].lock().await),
            None => None,
        };
        let done = self.store.submit_run(&submission, &decide).await?;
        let place = done.place;
        let submitted = match done.outcome {
            SubmitOutcome::Fresh(run) => Submitted {
                run,
                reason: Reason::FreshResult,
                place,
            },
            // An equal run already under way is the answer: it sends the host
            // nothing more.
            SubmitOutcome::Refused(Some(run)) | SubmitOutcome::Queued(Inserted::Active(run)) => {
                Submitted {
                    run,
                    reason: Reason::AlreadyActive,
                    place,
                }
            }
            SubmitOutcome::Refused(None) => {
                return Err(refusal(&done.facts).unwrap_or_else(|| {
                    SubmitError::Store(StoreError::Corrupt(
                        "a submission was refused for no reason".into(),
                    ))
                }));
            }
            SubmitOutcome::Queued(Inserted::New(run)) => {
                // A permit for one worker; a worker already waiting takes it at once.
                self.wake.notify_one();
                Submitted {
                    run,
                    reason: Reason::Queued,
                    place,
                }
            }
        };

        if let Some((key, hash)) = sub.idempotency {
            let record = IdempotencyRecord {
                key,
                request_hash: hash,
                run_id: submitted.run.id,
            };
            let stored = self.store.put_idempotency(&record, now).await?;
            // A concurrent request with the same key won the race: answer as it did.
            if stored.run_id != record.run_id {
                return self
                    .replay(&stored.key, &record.request_hash)
                    .await?
                    .ok_or(SubmitError::IdempotencyMismatch);
            }
        }
        Ok(submitted)
    }

    /// The machine `url` is: its host's first address when the name resolves
    /// within [`SUBMIT_LOOKUP`] to one the workers may connect to, else what
    /// the URL alone says (see [`crate::store::host_of`]).
    async fn machine_of(&self, url: &CanonicalUrl) -> Option<String> {
        let policy = self.policy.unwrap_or(AddressPolicy::AllowPrivate);
        crate::transport::resolve_machine(policy, url.url(), SUBMIT_LOOKUP)
            .await
            .or_else(|| crate::store::host_of(url.as_str()))
    }

    /// What the quota counts a new run of `url` against, if anything:
    /// `machine` is the machine it counts against; a run that is not `cooled`
    /// (one with credentials) is not held by the cooldown.
    fn limits_of(
        &self,
        url: &CanonicalUrl,
        machine: Option<&str>,
        cooled: bool,
        submitter: Option<&str>,
        now: i64,
    ) -> Option<Limits> {
        let host = machine
            .map(str::to_owned)
            .or_else(|| crate::store::host_of(url.as_str()))?;
        let every = self.quota.force_every;
        let every_ms = match cooled {
            true => i64::try_from(every.as_millis()).unwrap_or(i64::MAX),
            false => 0,
        };
        let per_hour = self.quota.runs_per_hour;
        if every_ms == 0 && per_hour == 0 {
            return None;
        }
        // How refusals name the machine: its address, and the name the URL
        // gave when that is another spelling of it.
        let named = url.url().host_str().unwrap_or_default();
        let label = if named.trim_end_matches('.').eq_ignore_ascii_case(&host) {
            format!("`{host}`")
        } else {
            format!("`{host}` (which `{named}` is)")
        };
        let mut endpoint = url.url().clone();
        endpoint.set_query(None);
        endpoint.set_fragment(None);
        let hour_ms = if per_hour > 0 { HOUR_MS } else { 0 };
        Some(Limits {
            host,
            label,
            endpoint: endpoint.into(),
            submitter: submitter.map(str::to_owned),
            every_ms,
            per_hour,
            now,
            since_ms: now.saturating_sub(every_ms.max(hour_ms)),
        })
    }

    /// Why a new run would exceed the quota `limits` describes, if it would,
    /// from what the store read of the machine's recent runs.
    fn refusal(&self, limits: &Limits, facts: &SubmissionFacts) -> Option<SubmitError> {
        let Limits {
            label,
            endpoint,
            submitter,
            every_ms,
            per_hour,
            now,
            ..
        } = limits;
        let (every_ms, per_hour, now) = (*every_ms, *per_hour, *now);
        // The cooldown (#31 item 2, #53 item 6): a forced run of an endpoint
        // within `force_every` of its last run is refused, whatever query
        // string its URL carries: a query string makes a target of its own
        // (its results, its badge) but not another server to send forced
        // runs to. Only `force` and a short `max_age_s` are held
        // (`every_ms` 0 otherwise, see `asks_for_a_new_run`); so is not a
        // run with credentials: it judges what the run before it could not.
        // The hourly budget counts them all.
        let last = facts.endpoint_last_at_ms;
        if every_ms > 0
            && let Some(at) = last.filter(|at| *at > now.saturating_sub(every_ms))
        {
            let wait = secs_until(at.saturating_add(every_ms), now);
            return Some(SubmitError::TargetLimited {
                detail: format!(
                    "this server ({endpoint}) was last run {} s ago; protocheck starts a new \
                     run of a server at most once every {} s, so that it cannot be used \
                     to flood it (`force` or a short `max_age_s` alike, with any query \
                     string). Retry in {wait} s, or submit without `force` and with the \
                     default `max_age_s` to get the latest result.",
                    now.saturating_sub(at).max(0) / 1000,
                    self.quota.force_every.as_secs(),
                ),
                retry_after_s: wait,
            });
        }
        let load = facts.load.filter(|_| per_hour > 0)?;
        // Each submitter's share of the host's hour (#31 item 3): one
        // submitter cannot spend the whole budget and lock everyone else out.
        let share = i64::from(host_share(per_hour));
        if submitter.is_some() && load.mine >= share {
            let oldest = load.mine_oldest_at_ms.unwrap_or(now);
            let wait = secs_until(oldest.saturating_add(HOUR_MS), now);
            return Some(SubmitError::TargetLimited {
                detail: format!(
                    "you have started {} runs on the host {label} in the last hour; each \
                     submitter (API key, or address) may start {share} of the {per_hour} runs \
                     an hour protocheck sends one host, so that no one can flood it or lock \
                     others out of it. Retry in {wait} s.",
                    load.mine
                ),
                retry_after_s: wait,
            });
        }
        if load.count < i64::from(per_hour) {
            return None;
        }
        // Other people's runs of other servers on the host do not refuse a
        // server's first run of the hour, up to twice the budget: many
        // submitters together still cannot flood the host.
        let ceiling = i64::from(per_hour).saturating_mul(2);
        let first = last.is_none_or(|at| at <= now.saturating_sub(HOUR_MS));
        if submitter.is_some() && load.count < ceiling && first {
            return None;
        }
        let oldest = load.oldest_at_ms.unwrap_or(now);
        let wait = secs_until(oldest.saturating_add(HOUR_MS), now);
        Some(SubmitError::TargetLimited {
            detail: format!(
                "the host {label} has had {} runs in the last hour, whoever submitted them; \
                 protocheck sends at most {per_hour} runs an hour to one host (a server's \
                 first run of the hour up to {ceiling}), so that it cannot be used to flood \
                 a server. Retry in {wait} s.",
                load.count
            ),
            retry_after_s: wait,
        })
    }

    async fn replay(&self, key: &str, hash: &str) -> Result<Option<Submitted>, SubmitError> {
        let Some(record) = self.store.get_idempotency(key).await? else {
            return Ok(None);
        };
        if record.request_hash != hash {
            return Err(SubmitError::IdempotencyMismatch);
        }
        let run = self.store.get_run(record.run_id).await?.ok_or_else(|| {
            StoreError::Corrupt(format!(
                "idempotency key refers to missing run {}",
                record.run_id
            ))
        })?;
        Ok(Some(Submitted {
            place: None,
            run,
            reason: Reason::IdempotentReplay,
        }))
    }
}

/// Runs with equal keys are the same work: target, requested suite, options and
/// webhook. The options and webhook are hashed as the one `options` object the
/// API reads, in canonical form.
pub fn dedup_key(
    target_id: &str,
    suite: SuiteChoice,
    options: &RunOptions,
    webhook_url: Option<&str>,
) -> String {
    let canonical =
        SubmitOptions::from_parts(options.clone(), webhook_url.map(str::to_owned)).canonical_json();
    let mut h = Sha256::new();
    h.update(target_id.as_bytes());
    h.update([0]);
    h.update(suite.as_str().as_bytes());
    h.update([0]);
    h.update(canonical.as_bytes());
    hex::encode(h.finalize())
}

/// SHA-256 of a request body, for idempotency checks.
pub fn request_hash(body: &[u8]) -> String {
    hex::encode(Sha256::digest(body))
}
