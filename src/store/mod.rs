//! Persistence: one [`Store`] trait, implemented once ([`sql::SqlStore`]) over
//! two databases, Postgres ([`postgres::PgStore`]) for production and SQLite
//! ([`sqlite::SqliteStore`]) as the embedded default. The store knows nothing
//! about protocols: findings and verdicts are data to it.
//!
//! The module is laid out as: `model` what is stored, this file the trait,
//! `rows` the decoding of rows into the model, [`sql`] the statements, `count`
//! the tally of statements sent, and one file per database for what that
//! database does its own way. The model's types
//! are re-exported here, so they are named `store::Run`, `store::Target`, ….
//!
//! Times are integer milliseconds since the Unix epoch in both backends, passed
//! in by the caller. Lease arithmetic then reads the same on both, and tests can
//! move the clock. Workers on several machines need synchronised clocks; a lease
//! of a minute tolerates ordinary skew.

#[macro_use]
mod rows;
mod count;
mod hosts;
mod model;
pub mod postgres;
pub mod sql;
pub mod sqlite;

pub use model::{
    Announcement, Announcer, ApiKey, AttemptOutcome, DIRECTORY_FROM_REGISTRY,
    DIRECTORY_FROM_SUBMISSION, DIRECTORY_GRADES, DeliveryState, DirectoryEntry, DirectoryKey,
    DirectoryQuery, DirectorySort, DirectorySync, DueWatches, EndRecord, GradeFilter,
    HistoryCursor, HostBudget, HostLimits, HostLoad, IdempotencyRecord, Inserted, KeyWatch,
    LoadQuery, NewApiKey, NewRun, NewWatch, PublicKeyRecord, QueuePlace, ReapReport, Rehosted, Run,
    RunEnd, RunOrigin, RunStatus, SCHEDULE_SUBMITTER, StoredAttestation, StoredFinding,
    SubmissionFacts, SubmitChoice, SubmitDecision, SubmitOutcome, SubmitRequest, SubmitResult,
    SuiteRuns, Target, Watch, WebhookAttempt, WebhookDelivery, directory_grade_rank,
    directory_name_key, host_of, same_server,
};

pub use sql::FINDINGS_PER_STATEMENT;

use crate::suite::Finding;
use async_trait::async_trait;
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

/// Everything protocheck keeps: targets, runs and their findings, the queue,
/// idempotency records; and, through its parts, API keys ([`KeyStore`]),
/// signed attestations ([`SigningStore`]) and webhook deliveries
/// ([`WebhookStore`]). One implementation serves both databases
/// ([`sql::SqlStore`]); a `dyn Store` reaches every part's methods once the
/// part's trait is in scope.
#[async_trait]
pub trait Store:
    KeyStore
    + SigningStore
    + WebhookStore
    + CredentialStore
    + WatchStore
    + DirectoryStore
    + Send
    + Sync
    + 'static
{
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
    async fn insert_run_as(&self, new: &NewRun, api_key: Option<Uuid>) -> StoreResult<Inserted> {
        let origin = RunOrigin {
            api_key,
            ..RunOrigin::default()
        };
        self.insert_run_from(new, &origin).await
    }

    /// [`Store::insert_run`], recording who submitted the run and whether it was
    /// forced. The run takes the machine its submission resolved, else its
    /// target's host (see [`host_of`]).
    async fn insert_run_from(&self, new: &NewRun, origin: &RunOrigin) -> StoreResult<Inserted>;

    /// A whole submission in one transaction: upserts the target (as
    /// [`Store::upsert_target`] does), reads what `submission` asks
    /// ([`SubmissionFacts`]), and does what `decide` chooses from them:
    /// answers with the fresh run, refuses (answering with an equal run under
    /// way, if any), or queues the run as [`Store::insert_run_from`] does. The
    /// facts are returned with the outcome, so the submitter can say why it
    /// refused, and with the answering run's place in the queue
    /// ([`Store::queue_place`]) when it is queued.
    async fn submit_run(
        &self,
        submission: &SubmitRequest<'_>,
        decide: &SubmitDecision<'_>,
    ) -> StoreResult<SubmitResult>;

    /// The queued or running run with this dedup key, if any.
    async fn active_run(&self, dedup_key: &str) -> StoreResult<Option<Run>>;

    /// Runs created for `host` after `since_ms`, whatever their status, and
    /// how many of them `submitter` submitted.
    async fn host_load(
        &self,
        host: &str,
        submitter: Option<&str>,
        since_ms: i64,
    ) -> StoreResult<HostLoad>;

    /// When the newest run of the endpoint `endpoint` (a canonical URL
    /// without its query) on `host` created after `since_ms` was created,
    /// whatever query string its target had, whatever name of the machine it
    /// was reached by (see [`same_server`]), and whether or not it was forced.
    async fn latest_run_of_endpoint(
        &self,
        host: &str,
        endpoint: &str,
        since_ms: i64,
    ) -> StoreResult<Option<i64>>;

    /// The newest `passed` or `failed` run with this dedup key finished at or after `since_ms`.
    async fn latest_finished(&self, dedup_key: &str, since_ms: i64) -> StoreResult<Option<Run>>;

    /// The newest `passed` or `failed` run of `target_id` whose findings (of
    /// its last attempt) hold `rule_id` with `outcome`. The RCP suite's
    /// handshake history reads it: a run where `RCP-L0-011` passed saw the
    /// target complete `initialize` (see [`crate::suite::context::HandshakeHistory`]).
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
    /// attempts are deleted in the same transaction. No host limit applies.
    async fn claim_run(
        &self,
        worker: &str,
        now_ms: i64,
        lease_ms: i64,
    ) -> StoreResult<Option<Run>> {
        self.claim_run_within(worker, now_ms, lease_ms, &HostLimits::NONE)
            .await
    }

    /// [`Store::claim_run`], passing over runs whose target host is at its
    /// limits: `running_per_host` runs of that host running, or a run of that
    /// host that ended less than `gap_ms` ago. Runs without a host are not
    /// limited. Claims that apply limits are serialised, so two claimers never
    /// both take the last place of a host.
    async fn claim_run_within(
        &self,
        worker: &str,
        now_ms: i64,
        lease_ms: i64,
        limits: &HostLimits,
    ) -> StoreResult<Option<Run>>;

    /// Takes back run `run_id` whose attempt `attempt` `worker` was driving when
    /// it lost the database: while the row still names `worker`, or once the
    /// reaper put it back in the queue and nobody else claimed it (the claim's
    /// host limits apply then). With `new_attempt` the run restarts as the next
    /// attempt (earlier findings deleted, `attempts` at most `max_attempts`);
    /// without, the attempt goes on with its findings. `None` when the run is
    /// another worker's, ended, or out of attempts.
    #[allow(clippy::too_many_arguments)]
    async fn reclaim_run(
        &self,
        run_id: Uuid,
        worker: &str,
        attempt: i32,
        new_attempt: bool,
        now_ms: i64,
        lease_ms: i64,
        limits: &HostLimits,
    ) -> StoreResult<Option<Run>>;

    /// Records that run `run_id`, which `worker` holds at attempt `attempt`,
    /// connects to the machine `machine` (#31 item 1: the address its name
    /// resolved to when the worker was about to connect, which the claim could
    /// not know), and checks that machine's limits as a claim would, counting
    /// every other run of it. When they do not allow it now, the run goes back
    /// to the queue with its attempt given back and, if it had not started
    /// before, its start forgotten, so that waiting for the machine does not
    /// count against its deadline: the next claim of it waits for the
    /// machine's limits. Serialised with claims, so two workers never both take
    /// a machine's last place.
    #[allow(clippy::too_many_arguments)]
    async fn rehost_run(
        &self,
        run_id: Uuid,
        worker: &str,
        attempt: i32,
        machine: &str,
        now_ms: i64,
        limits: &HostLimits,
    ) -> StoreResult<Rehosted>;

    /// Whether the database refuses connections right now: its address
    /// answers a new TCP connection with a refusal (the server is stopped, or
    /// restarting). The pool itself keeps retrying a refused connection until
    /// its acquire timeout, as a database that is starting would be; a caller
    /// that must answer at once asks this instead of waiting. False where the
    /// database is not reached over TCP (SQLite, a Unix socket), when the
    /// connection opens, or when it gets no answer within half a second.
    async fn refuses_connections(&self) -> bool {
        false
    }

    /// Extends the lease. False when `worker` no longer holds the run.
    async fn heartbeat(
        &self,
        run_id: Uuid,
        worker: &str,
        now_ms: i64,
        lease_ms: i64,
    ) -> StoreResult<bool>;

    /// Stores `findings` as findings `first_seq`, `first_seq + 1`, … of the
    /// current attempt, all or none: one statement for up to
    /// [`FINDINGS_PER_STATEMENT`], one transaction beyond. False (and nothing
    /// stored) when `worker` no longer holds the run or `attempt` is not the
    /// current one; checked once, in the same transaction as the writes. An
    /// empty batch stores nothing and answers that question alone.
    async fn append_findings(
        &self,
        run_id: Uuid,
        worker: &str,
        attempt: i32,
        first_seq: i64,
        findings: &[Finding],
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
    ) -> StoreResult<bool> {
        let record = EndRecord::plain(end, suite_version, now_ms);
        Ok(self.end_run(run_id, worker, &record).await?.is_some())
    }

    /// [`Store::finish_run`], recording in the same transaction what `record`
    /// adds: the deliveries of what its announcer decides (at most one per
    /// event and run), its target's protocol and its attestation. One commit
    /// ends a run. None when the lease was lost; else how many announcements
    /// besides `run.finished` were queued.
    async fn end_run(
        &self,
        run_id: Uuid,
        worker: &str,
        record: &EndRecord<'_>,
    ) -> StoreResult<Option<usize>>;

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

    /// Where run `run_id` stands in the queue; `None` unless it is queued.
    async fn queue_place(&self, run_id: Uuid) -> StoreResult<Option<QueuePlace>>;

    /// The runs a badge of `target_id` and `suite` (`mcp`, `rcp`) shows. A run counts
    /// for a suite when its verdict names that suite; a run without a verdict (active,
    /// or ended as `error`) counts when it asked for that suite or for `auto`.
    async fn latest_runs_for_suite(&self, target_id: &str, suite: &str) -> StoreResult<SuiteRuns>;

    /// Wakes `notify` whenever another process queues work (Postgres LISTEN), until
    /// `shutdown`. Reconnects with backoff. Returns at once where there is no such
    /// channel (SQLite: submits and workers share one process and its `Notify`).
    async fn listen_for_work(&self, notify: Arc<Notify>, shutdown: CancellationToken);

    /// How many statements this store has sent its database since it was opened,
    /// `BEGIN` and `COMMIT` included (see `count.rs` for what is not counted):
    /// what a run costs the database, for benchmarks and tests.
    fn statements(&self) -> u64;
}

/// API keys: who may submit, at what rate, and the secret that signs their
/// runs' webhooks.
#[async_trait]
pub trait KeyStore: Send + Sync + 'static {
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
}

/// Attestations of finished runs and the public keys that verify them.
#[async_trait]
pub trait SigningStore: Send + Sync + 'static {
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
}

/// The sealed credentials of queued and running runs (see
/// [`crate::credentials`]). They are written with their run
/// ([`RunOrigin::credentials`]) and deleted by the database itself when the
/// run ends in any state (the migrations' `runs_wipe_credentials` trigger).
#[async_trait]
pub trait CredentialStore: Send + Sync + 'static {
    /// The sealed credentials of a run; `None` once it has ended.
    async fn run_credentials(
        &self,
        run_id: Uuid,
    ) -> StoreResult<Option<crate::credentials::SealedCredentials>>;

    /// How many runs hold sealed credentials now (for the operator and tests).
    async fn count_run_credentials(&self) -> StoreResult<i64>;
}

/// Watches: targets re-checked on a schedule (#28). Each due slot of a
/// watch starts exactly one run, however many schedulers tick at once. A
/// target and suite have a watch per API key that asked for one, and at most
/// one without a key (its badge's, or an operator's) (#54).
#[async_trait]
pub trait WatchStore: Send + Sync + 'static {
    /// Creates the watch of `new.target_id` and `new.suite` kept by
    /// `new.api_key` (or the one without a key), or replaces its options,
    /// interval, events and webhook, in one statement. The same interval
    /// keeps its beat (`new.first_due_at_ms` is then not used) and a watch
    /// keeps its creation time.
    async fn put_watch(&self, new: &NewWatch) -> StoreResult<Watch>;

    /// [`put_watch`](Self::put_watch) for the key `new.api_key` (which must
    /// be set), refused when the watch would be new and the key keeps
    /// `quota` watches already; the count and the write are one atomic step
    /// (the key's row is locked on Postgres; SQLite has one writer).
    async fn put_key_watch(&self, new: &NewWatch, quota: i64) -> StoreResult<KeyWatch>;

    /// Removes the watch of `target_id` and `suite` kept by `api_key` (None:
    /// the one without a key); false when there was none.
    async fn delete_watch(
        &self,
        target_id: &str,
        suite: &str,
        api_key: Option<Uuid>,
    ) -> StoreResult<bool>;

    /// Removes watch `id`, whoever keeps it (an operator's removal); false
    /// when there was none.
    async fn delete_watch_by_id(&self, id: Uuid) -> StoreResult<bool>;

    /// The watch of `target_id` and `suite` kept by `api_key` (None: the
    /// one without a key), if any.
    async fn get_watch(
        &self,
        target_id: &str,
        suite: &str,
        api_key: Option<Uuid>,
    ) -> StoreResult<Option<Watch>>;

    /// How many watches API key `key` keeps.
    async fn count_key_watches(&self, key: Uuid) -> StoreResult<i64>;

    /// Every watch of `target_id` (all targets' when None), by target, suite
    /// and creation.
    async fn list_watches(&self, target_id: Option<&str>) -> StoreResult<Vec<Watch>>;

    /// Keeps a watch alive because its badge was served: creates the watch
    /// without a key with `new` when the target and suite have none, and
    /// otherwise, when it is a badge's watch too (it expires), moves its end
    /// to `new.expires_at_ms` and takes `new.options`. A watch without a key
    /// that does not expire (an operator's) is left as it is, as are the
    /// keys' watches.
    async fn keep_badge_watch(&self, new: &NewWatch) -> StoreResult<()>;

    /// Starts the runs of at most `limit` watches due at `now_ms`, earliest
    /// first, and moves each to its next slot (a whole interval later; when
    /// slots were missed, which are not caught up, the first of its slots
    /// after now, so that jitter keeps spreading them), in one transaction: a
    /// slot is taken once, however many callers tick together (Postgres skips
    /// the watches another caller holds; SQLite has one writer). A watch whose
    /// previous run is still queued or running starts none (`skipped`), nor
    /// one whose host has started `budget.per_hour` runs in the last hour or
    /// the schedule `budget.share` of them (`over_budget`). Runs count for the
    /// submitter [`SCHEDULE_SUBMITTER`] and are announced at the watch's
    /// webhook. Watches past their end are removed.
    async fn start_due_watches(
        &self,
        now_ms: i64,
        limit: u32,
        max_attempts: i32,
        budget: HostBudget,
    ) -> StoreResult<DueWatches>;
}

/// Webhook deliveries of ended runs and their attempts.
/// The public directory of judged MCP servers (#52): its entries, the URLs
/// taken out of it for good, and the state of its registry syncs.
#[async_trait]
pub trait DirectoryStore: Send + Sync + 'static {
    /// Lists `entry` (or updates it, keeping when it was first listed);
    /// false, and nothing written, when its URL was delisted.
    async fn put_directory_entry(&self, entry: &DirectoryEntry) -> StoreResult<bool>;

    /// Removes the registry entries of `registry_name` whose URL is not in
    /// `keep`; returns what it removed.
    async fn remove_directory_entries(
        &self,
        registry_name: &str,
        keep: &[String],
    ) -> StoreResult<Vec<DirectoryEntry>>;

    /// Takes `url` out of the directory for good (a sync never lists it
    /// again); returns the entry it removed, if one was listed.
    async fn delist_directory_url(
        &self,
        url: &str,
        reason: &str,
        by: &str,
        now_ms: i64,
    ) -> StoreResult<Option<DirectoryEntry>>;

    /// Why `url` was delisted, when it was.
    async fn directory_delisting(&self, url: &str) -> StoreResult<Option<String>>;

    /// The entry listed at `url`.
    async fn directory_entry(&self, url: &str) -> StoreResult<Option<DirectoryEntry>>;

    /// Every entry, by registry name then URL.
    async fn directory_entries(&self) -> StoreResult<Vec<DirectoryEntry>>;

    /// One page of the directory, read from the index of its sort column.
    async fn directory_page(&self, query: &DirectoryQuery) -> StoreResult<Vec<DirectoryEntry>>;

    /// The grade of each MCP revision the latest verdict of each of `urls`
    /// judged: (url, revision, grade).
    async fn directory_revision_grades(
        &self,
        urls: &[String],
    ) -> StoreResult<Vec<(String, String, String)>>;

    /// The state of every registry synced.
    async fn directory_syncs(&self) -> StoreResult<Vec<DirectorySync>>;

    /// Up to `limit` entries by URL after `after`, each with the DSSE
    /// envelope of its latest run's signed statement, when there is one
    /// (the dataset export).
    async fn directory_export(
        &self,
        after: Option<&str>,
        limit: u32,
    ) -> StoreResult<Vec<(DirectoryEntry, Option<String>)>>;

    /// The sync state of `registry`.
    async fn directory_sync(&self, registry: &str) -> StoreResult<Option<DirectorySync>>;

    /// Records a sync attempt of `sync.registry`.
    async fn put_directory_sync(&self, sync: &DirectorySync) -> StoreResult<()>;
}

#[async_trait]
pub trait WebhookStore: Send + Sync + 'static {
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
