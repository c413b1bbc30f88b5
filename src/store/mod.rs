//! Persistence: one [`Store`] trait with two honest implementations, Postgres
//! ([`postgres::PgStore`]) for production and SQLite ([`sqlite::SqliteStore`]) as
//! the embedded default. The store knows nothing about protocols: findings and
//! verdicts are data to it.
//!
//! Times are integer milliseconds since the Unix epoch in both backends, passed
//! in by the caller. Lease arithmetic then reads the same on both, and tests can
//! move the clock. Workers on several machines need synchronised clocks; a lease
//! of a minute tolerates ordinary skew.

// Defined before the backend modules so that both can use it (textual macro scope).
/// The columns of a [`Run`], in the order [`RunRow`] decodes them. Usable after
/// `SELECT` from `runs` and in `RETURNING` of an `INSERT`/`UPDATE` on `runs`, in
/// both dialects: the target URL comes from a scalar subquery because `RETURNING`
/// cannot join.
macro_rules! run_columns {
    () => {
        "runs.id, runs.target_id, \
         (SELECT targets.canonical_url FROM targets WHERE targets.id = runs.target_id) AS target_url, \
         runs.suite, runs.suite_version, runs.options, runs.dedup_key, runs.status, \
         runs.attempts, runs.max_attempts, runs.locked_by, runs.lease_expires_at_ms, \
         runs.available_at_ms, runs.created_at_ms, runs.started_at_ms, runs.finished_at_ms, \
         runs.verdict, runs.error"
    };
}

/// The columns of an [`ApiKey`], never the token hash or the webhook secret.
macro_rules! api_key_columns {
    () => {
        "api_keys.id, api_keys.name, api_keys.owner, api_keys.rate_count, \
         api_keys.rate_period_s, api_keys.created_at_ms, api_keys.revoked_at_ms, \
         api_keys.last_used_at_ms"
    };
}

pub mod postgres;
pub mod sqlite;

use crate::suite::{Finding, RunOptions, Verdict};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// Which database a store talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Postgres,
    Sqlite,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migration error: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("stored data is invalid: {0}")]
    Corrupt(String),
    #[error("unsupported database URL: {0}")]
    UnsupportedUrl(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

/// A server under test, identified by its canonical URL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// Stable URL-safe key (see [`crate::target::target_key`]).
    pub id: String,
    pub canonical_url: String,
    /// The protocol last detected on it (`mcp`, `rcp`), if any.
    pub protocol: Option<String>,
    pub created_at_ms: i64,
}

/// Where a run is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Queued,
    Running,
    Passed,
    Failed,
    Error,
    Cancelled,
}

impl RunStatus {
    pub const ALL: [RunStatus; 6] = [
        Self::Queued,
        Self::Running,
        Self::Passed,
        Self::Failed,
        Self::Error,
        Self::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Passed => "passed",
            Self::Failed => "failed",
            Self::Error => "error",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// True once the run will not change again.
    pub fn is_finished(self) -> bool {
        !matches!(self, Self::Queued | Self::Running)
    }
}

/// A conformance run: the queue entry and, once finished, its verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub id: Uuid,
    pub target_id: String,
    pub target_url: String,
    /// The suite requested: `auto`, `mcp` or `rcp`.
    pub suite: String,
    /// Version of the rules the run was judged with; set when the run finishes.
    pub suite_version: Option<String>,
    pub options: RunOptions,
    /// Hash of target, suite and options: active runs with equal keys are deduplicated.
    pub dedup_key: String,
    pub status: RunStatus,
    /// Attempts started so far (claims), including the current one.
    pub attempts: i32,
    pub max_attempts: i32,
    pub locked_by: Option<String>,
    pub lease_expires_at_ms: Option<i64>,
    /// A queued run is not claimed before this time (retry backoff).
    pub available_at_ms: i64,
    pub created_at_ms: i64,
    pub started_at_ms: Option<i64>,
    pub finished_at_ms: Option<i64>,
    pub verdict: Option<Verdict>,
    /// Why the run ended as `error`, or why the last attempt was retried.
    pub error: Option<String>,
}

/// What `insert_run` needs.
#[derive(Debug, Clone)]
pub struct NewRun {
    pub id: Uuid,
    pub target_id: String,
    pub suite: String,
    pub options: RunOptions,
    pub dedup_key: String,
    pub max_attempts: i32,
    pub created_at_ms: i64,
}

/// The result of inserting a run.
#[derive(Debug, Clone, PartialEq)]
pub enum Inserted {
    /// A new run was queued.
    New(Run),
    /// A run with the same dedup key is queued or running: that one is returned.
    Active(Run),
}

/// A finding as stored, with its position in the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredFinding {
    /// 0-based order within the run's current attempt.
    pub seq: i64,
    #[serde(flatten)]
    pub finding: Finding,
    pub created_at_ms: i64,
}

/// How a run ends.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEnd {
    /// The suite finished: status is `passed` or `failed` from `verdict.passed`.
    Verdict(Verdict),
    /// The run could not complete; the reason is shown to the user.
    Error(String),
}

/// What the reaper did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReapReport {
    /// Expired leases put back in the queue.
    pub requeued: u64,
    /// Expired leases on runs out of attempts, ended as `error`.
    pub errored: u64,
}

/// An `Idempotency-Key` seen on a submit, with what it produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyRecord {
    pub key: String,
    /// SHA-256 of the request body, to refuse the same key with a different request.
    pub request_hash: String,
    pub run_id: Uuid,
}

/// Cursor for a target's run history, newest first: runs strictly older than this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryCursor {
    pub created_at_ms: i64,
    pub id: Uuid,
}

/// A signed attestation of a run's verdict: a DSSE envelope, kept as the JSON
/// text that was produced so it is served byte for byte (see [`crate::attest`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAttestation {
    pub run_id: Uuid,
    /// The `kid` of the key that signed it.
    pub key_id: String,
    pub envelope: String,
    pub created_at_ms: i64,
}

/// The public half of a signing key, as published in the key set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKeyRecord {
    pub key_id: String,
    /// `Ed25519`.
    pub algorithm: String,
    /// The raw public key, base64url without padding (a JWK's `x`).
    pub public_key: String,
    pub created_at_ms: i64,
}

/// What a badge of one target and suite is drawn from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SuiteRuns {
    /// The newest run that ended `passed`, `failed` or `error`, by finish time.
    pub finished: Option<Run>,
    /// The newest queued or running run that may be judged by the suite.
    pub active: Option<Run>,
}

/// An API key as listed: never its token (only a hash is stored) nor its webhook secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiKey {
    pub id: Uuid,
    /// Unique among keys that are not revoked.
    pub name: String,
    /// Who the key's runs are shown as belonging to; the name when absent.
    pub owner: Option<String>,
    /// Submissions allowed per `rate_period_s`.
    pub rate_count: i32,
    pub rate_period_s: i64,
    pub created_at_ms: i64,
    pub revoked_at_ms: Option<i64>,
    pub last_used_at_ms: Option<i64>,
}

impl ApiKey {
    /// What a run submitted with this key shows as its owner.
    pub fn display_owner(&self) -> &str {
        self.owner.as_deref().unwrap_or(&self.name)
    }

    pub fn is_revoked(&self) -> bool {
        self.revoked_at_ms.is_some()
    }
}

/// What `create_api_key` stores.
#[derive(Debug, Clone)]
pub struct NewApiKey {
    pub id: Uuid,
    pub name: String,
    pub owner: Option<String>,
    /// SHA-256 of the token, hex.
    pub token_hash: String,
    pub rate_count: i32,
    pub rate_period_s: i64,
    /// The HMAC key webhooks of this key's runs are signed with.
    pub webhook_secret: String,
    pub created_at_ms: i64,
}

/// A run's webhook delivery: one per run that asked for a webhook, created when the run ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookDelivery {
    /// Sent as `Protocheck-Delivery`; the same on every attempt, so receivers can deduplicate.
    pub id: String,
    pub run_id: Uuid,
    pub url: String,
    /// `pending`, `delivered` or `failed` (gave up).
    pub state: String,
    /// Attempts made so far.
    pub attempts: i32,
    pub next_attempt_at_ms: Option<i64>,
}

/// One try of a delivery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WebhookAttempt {
    /// 1-based.
    pub attempt: i32,
    pub at_ms: i64,
    /// The receiver's HTTP status; absent when no response came.
    pub status_code: Option<i32>,
    /// Why the attempt did not deliver (never the receiver's body).
    pub error: Option<String>,
    /// When the next attempt is due; absent once delivered or given up.
    pub next_attempt_at_ms: Option<i64>,
}

/// What an attempt leaves the delivery as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    Delivered,
    RetryAt(i64),
    /// Given up: out of attempts, or a refusal that retrying cannot change.
    Failed,
}

impl AttemptOutcome {
    /// `(state, next_attempt_at_ms)` as stored.
    fn columns(self) -> (&'static str, Option<i64>) {
        match self {
            Self::Delivered => ("delivered", None),
            Self::RetryAt(at) => ("pending", Some(at)),
            Self::Failed => ("failed", None),
        }
    }
}

#[async_trait]
pub trait Store: Send + Sync + 'static {
    fn backend(&self) -> Backend;

    /// Applies pending migrations.
    async fn migrate(&self) -> StoreResult<()>;

    /// Reverts every migration (tests of reversible migrations; `migrate --down`).
    async fn migrate_down_all(&self) -> StoreResult<()>;

    /// A round trip to the database, for `/readyz`.
    async fn ping(&self) -> StoreResult<()>;

    /// Inserts the target if it is new and returns it as stored.
    async fn upsert_target(
        &self,
        id: &str,
        canonical_url: &str,
        now_ms: i64,
    ) -> StoreResult<Target>;

    async fn get_target(&self, id: &str) -> StoreResult<Option<Target>>;

    async fn set_target_protocol(&self, id: &str, protocol: &str) -> StoreResult<()>;

    /// Queues a run unless one with the same dedup key is queued or running,
    /// atomically (a unique index over active runs, not a read-then-write).
    async fn insert_run(&self, new: &NewRun) -> StoreResult<Inserted> {
        self.insert_run_as(new, None).await
    }

    /// [`Store::insert_run`], recording the API key that submitted the run. A run
    /// returned as [`Inserted::Active`] keeps the key it was submitted with.
    async fn insert_run_as(&self, new: &NewRun, api_key: Option<Uuid>) -> StoreResult<Inserted>;

    /// The newest `passed` or `failed` run with this dedup key finished at or after `since_ms`.
    async fn latest_finished(&self, dedup_key: &str, since_ms: i64) -> StoreResult<Option<Run>>;

    /// The newest `passed` or `failed` run of `target_id` whose findings (of
    /// its last attempt) hold `rule_id` with `outcome`. The RCP suite's
    /// handshake history reads it: a run where `RCP-L0-011` passed saw the
    /// target complete `initialize` (see [`crate::suite::HandshakeHistory`]).
    async fn latest_run_with_finding(
        &self,
        target_id: &str,
        rule_id: &str,
        outcome: crate::suite::Outcome,
    ) -> StoreResult<Option<Run>>;

    async fn get_run(&self, id: Uuid) -> StoreResult<Option<Run>>;

    /// A target's runs, newest first, at most `limit`, older than `before` when given.
    async fn target_runs(
        &self,
        target_id: &str,
        before: Option<&HistoryCursor>,
        limit: u32,
    ) -> StoreResult<Vec<Run>>;

    /// The newest runs of every target, newest first (the home page's list).
    async fn recent_runs(&self, limit: u32) -> StoreResult<Vec<Run>>;

    /// Claims the oldest available queued run in one statement and commits at once:
    /// status `running`, `locked_by = worker`, lease until `now + lease_ms`,
    /// `attempts + 1`, `started_at` set on the first claim. Findings of earlier
    /// attempts are deleted in the same transaction.
    async fn claim_run(&self, worker: &str, now_ms: i64, lease_ms: i64)
    -> StoreResult<Option<Run>>;

    /// Extends the lease. False when `worker` no longer holds the run.
    async fn heartbeat(
        &self,
        run_id: Uuid,
        worker: &str,
        now_ms: i64,
        lease_ms: i64,
    ) -> StoreResult<bool>;

    /// Stores one finding of the current attempt. False (and nothing stored) when
    /// `worker` no longer holds the run or `attempt` is not the current one.
    async fn append_finding(
        &self,
        run_id: Uuid,
        worker: &str,
        attempt: i32,
        seq: i64,
        finding: &Finding,
        now_ms: i64,
    ) -> StoreResult<bool>;

    /// Ends a running run held by `worker`. False when the lease was lost. A run
    /// whose options name a webhook gets its delivery in the same transaction.
    async fn finish_run(
        &self,
        run_id: Uuid,
        worker: &str,
        end: &RunEnd,
        suite_version: &str,
        now_ms: i64,
    ) -> StoreResult<bool>;

    /// Puts a running run held by `worker` back in the queue, available at
    /// `available_at_ms`, with `reason` kept in `error`. With `count_attempt` false
    /// (graceful shutdown) the attempt is given back. False when the lease was lost.
    async fn requeue_run(
        &self,
        run_id: Uuid,
        worker: &str,
        reason: &str,
        available_at_ms: i64,
        count_attempt: bool,
    ) -> StoreResult<bool>;

    /// Handles runs whose lease expired before `now_ms`: back to the queue
    /// (available after `backoff_ms`) while attempts remain, else `error` with the reason
    /// (and, for runs that asked for one, a webhook delivery, as `finish_run`).
    async fn reap_expired(&self, now_ms: i64, backoff_ms: i64) -> StoreResult<ReapReport>;

    /// Findings of the run's current attempt with `seq > after_seq`, in order.
    async fn findings(&self, run_id: Uuid, after_seq: i64) -> StoreResult<Vec<StoredFinding>>;

    /// Number of runs in each status (statuses with no runs may be absent).
    async fn count_by_status(&self) -> StoreResult<Vec<(RunStatus, i64)>>;

    async fn get_idempotency(&self, key: &str) -> StoreResult<Option<IdempotencyRecord>>;

    /// Records the key, or returns the record already stored under it.
    async fn put_idempotency(
        &self,
        record: &IdempotencyRecord,
        now_ms: i64,
    ) -> StoreResult<IdempotencyRecord>;

    /// The runs a badge of `target_id` and `suite` (`mcp`, `rcp`) shows. A run counts
    /// for a suite when its verdict names that suite; a run without a verdict (active,
    /// or ended as `error`) counts when it asked for that suite or for `auto`.
    async fn latest_runs_for_suite(&self, target_id: &str, suite: &str) -> StoreResult<SuiteRuns>;

    /// Stores the run's attestation unless it has one; returns the one stored.
    /// The first attestation of a run stays: the same run is never signed twice
    /// with different results.
    async fn put_attestation(
        &self,
        attestation: &StoredAttestation,
    ) -> StoreResult<StoredAttestation>;

    async fn get_attestation(&self, run_id: Uuid) -> StoreResult<Option<StoredAttestation>>;

    /// Records a public signing key unless its id is known. Keys are never removed.
    async fn put_public_key(&self, key: &PublicKeyRecord) -> StoreResult<()>;

    /// Every public key ever recorded, oldest first.
    async fn public_keys(&self) -> StoreResult<Vec<PublicKeyRecord>>;

    /// Stores a new API key. `None` when a key that is not revoked has the same name.
    async fn create_api_key(&self, key: &NewApiKey) -> StoreResult<Option<ApiKey>>;

    /// Every API key, revoked ones too, oldest first.
    async fn api_keys(&self) -> StoreResult<Vec<ApiKey>>;

    async fn get_api_key(&self, id: Uuid) -> StoreResult<Option<ApiKey>>;

    /// The key whose token hashes to `token_hash`, revoked or not.
    async fn api_key_by_token_hash(&self, token_hash: &str) -> StoreResult<Option<ApiKey>>;

    /// Revokes the live key with this id, or else the live key with this name.
    /// Returns the key as revoked; `None` when no live key matches.
    async fn revoke_api_key(&self, id_or_name: &str, now_ms: i64) -> StoreResult<Option<ApiKey>>;

    /// Records that the key was used.
    async fn touch_api_key(&self, id: Uuid, now_ms: i64) -> StoreResult<()>;

    /// The secret that signs webhooks of this key's runs.
    async fn api_key_webhook_secret(&self, id: Uuid) -> StoreResult<Option<String>>;

    /// The key a run was submitted with, if any.
    async fn run_api_key(&self, run_id: Uuid) -> StoreResult<Option<ApiKey>>;

    /// Claims the due webhook delivery that has waited longest: its lease runs until
    /// `now + lease_ms`, after which another process may claim it again.
    async fn claim_webhook_delivery(
        &self,
        now_ms: i64,
        lease_ms: i64,
    ) -> StoreResult<Option<WebhookDelivery>>;

    /// Records attempt `attempt.attempt` of a delivery and what it leaves the delivery
    /// as. False (nothing stored) when that attempt was already recorded.
    async fn record_webhook_attempt(
        &self,
        delivery_id: &str,
        attempt: &WebhookAttempt,
        outcome: AttemptOutcome,
    ) -> StoreResult<bool>;

    /// A run's webhook delivery with its attempts, oldest first.
    async fn run_webhook(
        &self,
        run_id: Uuid,
    ) -> StoreResult<Option<(WebhookDelivery, Vec<WebhookAttempt>)>>;

    /// Wakes `notify` whenever another process queues work (Postgres LISTEN), until
    /// `shutdown`. Reconnects with backoff. Returns at once where there is no such
    /// channel (SQLite: submits and workers share one process and its `Notify`).
    async fn listen_for_work(&self, notify: Arc<Notify>, shutdown: CancellationToken);
}

/// Opens the store `database_url` names: `postgres://` or `postgresql://` for
/// Postgres, `sqlite:` for SQLite (the file is created when missing).
pub async fn connect(database_url: &str) -> StoreResult<Arc<dyn Store>> {
    if database_url.starts_with("postgres://") || database_url.starts_with("postgresql://") {
        Ok(Arc::new(postgres::PgStore::connect(database_url).await?))
    } else if database_url.starts_with("sqlite:") {
        Ok(Arc::new(sqlite::SqliteStore::connect(database_url).await?))
    } else {
        let scheme = database_url.split(':').next().unwrap_or_default();
        Err(StoreError::UnsupportedUrl(format!(
            "scheme `{scheme}`; use postgres://… or sqlite:…"
        )))
    }
}

// Row decoding shared by both backends. The stores use runtime queries rather than
// the `query!` macros, so there is no DATABASE_URL or `.sqlx` cache at build time;
// what the compiler would have checked is checked here and by the contract tests.
// Anything that does not decode is `StoreError::Corrupt`, never a panic.

fn corrupt(what: &str, err: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{what}: {err}"))
}

/// Decodes a row into one of the row structs below.
fn decode_row<'r, R, T>(row: &'r R) -> StoreResult<T>
where
    R: sqlx::Row,
    T: sqlx::FromRow<'r, R>,
{
    T::from_row(row).map_err(|e| corrupt("row", e))
}

fn parse_uuid(what: &str, s: &str) -> StoreResult<Uuid> {
    Uuid::parse_str(s).map_err(|e| corrupt(what, format_args!("`{s}`: {e}")))
}

fn from_json<T: serde::de::DeserializeOwned>(what: &str, s: &str) -> StoreResult<T> {
    serde_json::from_str(s).map_err(|e| corrupt(what, e))
}

fn to_json<T: Serialize>(what: &str, value: &T) -> StoreResult<String> {
    serde_json::to_string(value).map_err(|e| corrupt(what, e))
}

/// A row of [`run_columns!`].
#[derive(sqlx::FromRow)]
struct RunRow {
    id: String,
    target_id: String,
    target_url: String,
    suite: String,
    suite_version: Option<String>,
    options: String,
    dedup_key: String,
    status: String,
    attempts: i32,
    max_attempts: i32,
    locked_by: Option<String>,
    lease_expires_at_ms: Option<i64>,
    available_at_ms: i64,
    created_at_ms: i64,
    started_at_ms: Option<i64>,
    finished_at_ms: Option<i64>,
    verdict: Option<String>,
    error: Option<String>,
}

fn run_from_row<'r, R>(row: &'r R) -> StoreResult<Run>
where
    R: sqlx::Row,
    RunRow: sqlx::FromRow<'r, R>,
{
    let r: RunRow = decode_row(row)?;
    Ok(Run {
        id: parse_uuid("run id", &r.id)?,
        status: RunStatus::parse(&r.status)
            .ok_or_else(|| corrupt("run status", format_args!("`{}`", r.status)))?,
        options: from_json("run options", &r.options)?,
        verdict: r
            .verdict
            .as_deref()
            .map(|v| from_json("run verdict", v))
            .transpose()?,
        target_id: r.target_id,
        target_url: r.target_url,
        suite: r.suite,
        suite_version: r.suite_version,
        dedup_key: r.dedup_key,
        attempts: r.attempts,
        max_attempts: r.max_attempts,
        locked_by: r.locked_by,
        lease_expires_at_ms: r.lease_expires_at_ms,
        available_at_ms: r.available_at_ms,
        created_at_ms: r.created_at_ms,
        started_at_ms: r.started_at_ms,
        finished_at_ms: r.finished_at_ms,
        error: r.error,
    })
}

/// `targets` columns, in declaration order.
#[derive(sqlx::FromRow)]
struct TargetRow {
    id: String,
    canonical_url: String,
    protocol: Option<String>,
    created_at_ms: i64,
}

fn target_from_row<'r, R>(row: &'r R) -> StoreResult<Target>
where
    R: sqlx::Row,
    TargetRow: sqlx::FromRow<'r, R>,
{
    let r: TargetRow = decode_row(row)?;
    Ok(Target {
        id: r.id,
        canonical_url: r.canonical_url,
        protocol: r.protocol,
        created_at_ms: r.created_at_ms,
    })
}

/// A finding as `findings` selects it: `seq, rule_id, outcome, message, evidence,
/// duration_ms, created_at_ms`.
#[derive(sqlx::FromRow)]
struct FindingRow {
    seq: i64,
    rule_id: String,
    outcome: String,
    message: String,
    evidence: String,
    duration_ms: i64,
    created_at_ms: i64,
}

fn finding_from_row<'r, R>(row: &'r R) -> StoreResult<StoredFinding>
where
    R: sqlx::Row,
    FindingRow: sqlx::FromRow<'r, R>,
{
    let r: FindingRow = decode_row(row)?;
    Ok(StoredFinding {
        seq: r.seq,
        finding: Finding {
            outcome: crate::suite::Outcome::parse(&r.outcome)
                .ok_or_else(|| corrupt("finding outcome", format_args!("`{}`", r.outcome)))?,
            evidence: from_json("finding evidence", &r.evidence)?,
            duration_ms: u64::try_from(r.duration_ms)
                .map_err(|e| corrupt("finding duration", e))?,
            rule_id: r.rule_id,
            message: r.message,
        },
        created_at_ms: r.created_at_ms,
    })
}

/// The stored form of a finding's non-key columns: `(outcome, evidence JSON, duration_ms)`.
fn finding_columns(finding: &Finding) -> StoreResult<(&'static str, String, i64)> {
    Ok((
        finding.outcome.as_str(),
        to_json("finding evidence", &finding.evidence)?,
        // A duration beyond i64 milliseconds is not a real measurement; clamp it.
        i64::try_from(finding.duration_ms).unwrap_or(i64::MAX),
    ))
}

/// The stored form of a run's end: `(status, verdict JSON, error)`.
fn end_columns(end: &RunEnd) -> StoreResult<(RunStatus, Option<String>, Option<&str>)> {
    Ok(match end {
        RunEnd::Verdict(v) => {
            let status = if v.passed {
                RunStatus::Passed
            } else {
                RunStatus::Failed
            };
            // The error of a finished run explains its end; a retry reason from an
            // earlier attempt would only mislead next to a verdict.
            (status, Some(to_json("run verdict", v)?), None)
        }
        RunEnd::Error(reason) => (RunStatus::Error, None, Some(reason.as_str())),
    })
}

#[derive(sqlx::FromRow)]
struct IdempotencyRow {
    key: String,
    request_hash: String,
    run_id: String,
}

fn idempotency_from_row<'r, R>(row: &'r R) -> StoreResult<IdempotencyRecord>
where
    R: sqlx::Row,
    IdempotencyRow: sqlx::FromRow<'r, R>,
{
    let r: IdempotencyRow = decode_row(row)?;
    Ok(IdempotencyRecord {
        run_id: parse_uuid("idempotency run id", &r.run_id)?,
        key: r.key,
        request_hash: r.request_hash,
    })
}

/// Decodes `SELECT status, COUNT(*) ... GROUP BY status`.
fn status_count_from_row<'r, R>(row: &'r R) -> StoreResult<(RunStatus, i64)>
where
    R: sqlx::Row,
    (String, i64): sqlx::FromRow<'r, R>,
{
    let (status, count): (String, i64) = decode_row(row)?;
    let status = RunStatus::parse(&status)
        .ok_or_else(|| corrupt("run status", format_args!("`{status}`")))?;
    Ok((status, count))
}

#[derive(sqlx::FromRow)]
struct AttestationRow {
    run_id: String,
    key_id: String,
    envelope: String,
    created_at_ms: i64,
}

fn attestation_from_row<'r, R>(row: &'r R) -> StoreResult<StoredAttestation>
where
    R: sqlx::Row,
    AttestationRow: sqlx::FromRow<'r, R>,
{
    let r: AttestationRow = decode_row(row)?;
    Ok(StoredAttestation {
        run_id: parse_uuid("attestation run id", &r.run_id)?,
        key_id: r.key_id,
        envelope: r.envelope,
        created_at_ms: r.created_at_ms,
    })
}

#[derive(sqlx::FromRow)]
struct PublicKeyRow {
    key_id: String,
    algorithm: String,
    public_key: String,
    created_at_ms: i64,
}

fn public_key_from_row<'r, R>(row: &'r R) -> StoreResult<PublicKeyRecord>
where
    R: sqlx::Row,
    PublicKeyRow: sqlx::FromRow<'r, R>,
{
    let r: PublicKeyRow = decode_row(row)?;
    Ok(PublicKeyRecord {
        key_id: r.key_id,
        algorithm: r.algorithm,
        public_key: r.public_key,
        created_at_ms: r.created_at_ms,
    })
}

/// `api_keys` columns as [`api_key_columns!`] selects them.
#[derive(sqlx::FromRow)]
struct ApiKeyRow {
    id: String,
    name: String,
    owner: Option<String>,
    rate_count: i32,
    rate_period_s: i64,
    created_at_ms: i64,
    revoked_at_ms: Option<i64>,
    last_used_at_ms: Option<i64>,
}

fn api_key_from_row<'r, R>(row: &'r R) -> StoreResult<ApiKey>
where
    R: sqlx::Row,
    ApiKeyRow: sqlx::FromRow<'r, R>,
{
    let r: ApiKeyRow = decode_row(row)?;
    Ok(ApiKey {
        id: parse_uuid("api key id", &r.id)?,
        name: r.name,
        owner: r.owner,
        rate_count: r.rate_count,
        rate_period_s: r.rate_period_s,
        created_at_ms: r.created_at_ms,
        revoked_at_ms: r.revoked_at_ms,
        last_used_at_ms: r.last_used_at_ms,
    })
}

/// `webhook_deliveries` columns as the stores select them.
const WEBHOOK_DELIVERY_COLUMNS: &str = "id, run_id, url, state, attempts, next_attempt_at_ms";

#[derive(sqlx::FromRow)]
struct WebhookDeliveryRow {
    id: String,
    run_id: String,
    url: String,
    state: String,
    attempts: i32,
    next_attempt_at_ms: Option<i64>,
}

fn webhook_delivery_from_row<'r, R>(row: &'r R) -> StoreResult<WebhookDelivery>
where
    R: sqlx::Row,
    WebhookDeliveryRow: sqlx::FromRow<'r, R>,
{
    let r: WebhookDeliveryRow = decode_row(row)?;
    Ok(WebhookDelivery {
        run_id: parse_uuid("webhook run id", &r.run_id)?,
        id: r.id,
        url: r.url,
        state: r.state,
        attempts: r.attempts,
        next_attempt_at_ms: r.next_attempt_at_ms,
    })
}

#[derive(sqlx::FromRow)]
struct WebhookAttemptRow {
    attempt: i32,
    at_ms: i64,
    status_code: Option<i32>,
    error: Option<String>,
    next_attempt_at_ms: Option<i64>,
}

fn webhook_attempt_from_row<'r, R>(row: &'r R) -> StoreResult<WebhookAttempt>
where
    R: sqlx::Row,
    WebhookAttemptRow: sqlx::FromRow<'r, R>,
{
    let r: WebhookAttemptRow = decode_row(row)?;
    Ok(WebhookAttempt {
        attempt: r.attempt,
        at_ms: r.at_ms,
        status_code: r.status_code,
        error: r.error,
        next_attempt_at_ms: r.next_attempt_at_ms,
    })
}
