//! What the store keeps: targets, runs, findings, attestations, signing and API
//! keys, webhook deliveries, as the rest of protocheck sees them. Plain data,
//! independent of either database; [`super::rows`] decodes them from rows.

use crate::suite::{Finding, RunOptions, SuiteChoice, Verdict};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

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
    pub suite: SuiteChoice,
    /// Version of the rules the run was judged with; set when the run finishes.
    pub suite_version: Option<String>,
    pub options: RunOptions,
    /// Where the run's end is announced (see [`crate::webhook`]).
    pub webhook_url: Option<String>,
    /// Hash of target, suite, options and webhook: active runs with equal keys
    /// are deduplicated.
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
    /// `bearer` when the run is judged with a token its submitter supplied
    /// (see [`crate::credentials`]); stays after the token is wiped.
    pub credentials: Option<String>,
    /// The machine the per-host limits count the run by (see [`host_of`]
    /// and [`super::Store::rehost_run`]). Internal: never shown.
    #[serde(skip)]
    pub target_host: Option<String>,
    /// The address policy of the service that accepted the run, which the
    /// worker that claims it connects under: `Some(true)` private targets
    /// allowed, `Some(false)` public addresses only, `None` the worker's own
    /// (see [`RunOrigin::private_targets`]). Internal: never shown.
    #[serde(skip)]
    pub private_targets: Option<bool>,
}

impl Run {
    /// The kind of credentials the run was judged with, as everything that
    /// shows the run says it: its `credentials`, except when the RCP suite
    /// judged it (an `auto` run whose target speaks RCP), which sends no token.
    pub fn credentials_used(&self) -> Option<&str> {
        let rcp = matches!(&self.verdict, Some(v) if v.suite == crate::suite::SuiteId::Rcp);
        self.credentials.as_deref().filter(|_| !rcp)
    }
}

/// What `insert_run` needs.
#[derive(Debug, Clone)]
pub struct NewRun {
    pub id: Uuid,
    pub target_id: String,
    pub suite: SuiteChoice,
    pub options: RunOptions,
    pub webhook_url: Option<String>,
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
    /// The newest run with a verdict (`passed` or `failed`): `finished`
    /// itself unless that ended `error`.
    pub verdict: Option<Run>,
    /// When `finished` ended `error` without reaching its target (see
    /// [`crate::suite::context::UNREACHABLE_PREFIX`]): the end of the first run of
    /// that streak, the runs since the last other ending that could not
    /// reach the target either.
    pub unreachable_since_ms: Option<i64>,
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
    /// How many watches the key may keep (see [`NewApiKey::watch_quota`]).
    pub watch_quota: i32,
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
    /// How many watches the key may keep at once: a key cannot schedule
    /// runs without bound.
    pub watch_quota: i32,
}

/// A run's webhook delivery: one per run that asked for a webhook, created when the run ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookDelivery {
    /// Sent as `Protocheck-Delivery`; the same on every attempt, so receivers can deduplicate.
    pub id: String,
    pub run_id: Uuid,
    pub url: String,
    pub state: DeliveryState,
    /// Attempts made so far.
    pub attempts: i32,
    pub next_attempt_at_ms: Option<i64>,
    /// `run.finished`, `run.regressed` or `run.recovered` (see
    /// [`crate::events::WEBHOOK_EVENTS`]).
    pub event: String,
    /// What the event adds to the run's announcement, fixed when the run ended.
    pub detail: Option<serde_json::Value>,
    /// The key whose secret signs it; None: the run's own key.
    pub api_key: Option<Uuid>,
}

/// Everything a worker records when a run ends, written in the one
/// transaction that ends it (see [`super::Store::end_run`]).
#[derive(Debug, Clone, Copy)]
pub struct EndRecord<'a> {
    pub end: &'a RunEnd,
    pub suite_version: &'a str,
    pub now_ms: i64,
    /// What the end announces besides `run.finished` when its target's
    /// watch asks for more.
    pub announcer: Option<&'a dyn Announcer>,
    /// The protocol the run saw its target speak, recorded on the target.
    pub target_protocol: Option<&'a str>,
    /// The verdict's attestation, signed over the run as this end stores it
    /// (its `finished_at` is `now_ms`). Kept as it is if the run has one.
    pub attestation: Option<&'a StoredAttestation>,
}

impl<'a> EndRecord<'a> {
    /// An end that records nothing besides the run's own row (and its webhook).
    pub fn plain(end: &'a RunEnd, suite_version: &'a str, now_ms: i64) -> Self {
        Self {
            end,
            suite_version,
            now_ms,
            announcer: None,
            target_protocol: None,
            attestation: None,
        }
    }
}

/// Decides what a run's end announces besides `run.finished` when its
/// target is watched for the suite with a webhook: the store reads the watch,
/// the run with a verdict before this one and that run's findings in the
/// end's transaction, and queues what [`Announcer::announce`] returns.
pub trait Announcer: Send + Sync {
    /// The suite whose watch and verdicts are read.
    fn suite(&self) -> &str;
    /// Whether a run with these findings may be compared with: a run that
    /// is not is passed over when the store looks for the run before.
    fn comparable(&self, _findings: &[crate::suite::Finding]) -> bool {
        true
    }
    /// The events to queue, given the watch (which has a webhook URL), the
    /// run with a verdict before this one and its findings.
    fn announce(
        &self,
        watch: &Watch,
        previous: &Run,
        previous_findings: &[crate::suite::Finding],
    ) -> Vec<Announcement>;
}

impl std::fmt::Debug for dyn Announcer + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Announcer({})", self.suite())
    }
}

/// An event a run announces besides `run.finished`, queued in the
/// transaction that ends the run (see [`super::Store::end_run`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Announcement {
    pub event: String,
    pub url: String,
    /// The key whose secret signs it.
    pub api_key: Option<Uuid>,
    pub detail: serde_json::Value,
}

/// Where a webhook delivery stands, stored as `pending`, `delivered` or `failed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryState {
    /// Not yet delivered; another attempt is due.
    Pending,
    Delivered,
    /// Given up.
    Failed,
}

impl DeliveryState {
    pub const ALL: [Self; 3] = [Self::Pending, Self::Delivered, Self::Failed];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Delivered => "delivered",
            Self::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|st| st.as_str() == s)
    }
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
    pub(super) fn columns(self) -> (&'static str, Option<i64>) {
        let (state, next) = match self {
            Self::Delivered => (DeliveryState::Delivered, None),
            Self::RetryAt(at) => (DeliveryState::Pending, Some(at)),
            Self::Failed => (DeliveryState::Failed, None),
        };
        (state.as_str(), next)
    }
}

/// Limits a claim applies per target host, so that protocheck cannot be used
/// to flood a third party. Zero turns a limit off.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostLimits {
    /// Runs of one host running at once.
    pub running_per_host: u32,
    /// Milliseconds between the end of one run on a host and the start of the
    /// next there.
    pub gap_ms: i64,
}

impl HostLimits {
    /// No limit at all: what [`super::Store::claim_run`] applies.
    pub const NONE: Self = Self {
        running_per_host: 0,
        gap_ms: 0,
    };

    pub fn is_limited(&self) -> bool {
        self.running_per_host > 0 || self.gap_ms > 0
    }
}

/// The submitter scheduled runs count for (see `submit::submitter_of` for
/// people's): the claim ranks it like any other submitter.
pub const SCHEDULE_SUBMITTER: &str = "s:schedule";

/// A target re-checked on a schedule (see [`super::WatchStore`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Watch {
    pub id: Uuid,
    pub target_id: String,
    /// `mcp` or `rcp`.
    pub suite: String,
    /// The options of the runs it starts.
    pub options: RunOptions,
    pub interval_ms: i64,
    pub next_due_at_ms: i64,
    /// The API key that asked for it.
    pub api_key: Option<Uuid>,
    pub created_at_ms: i64,
    /// The slot last taken (None before the first).
    pub last_due_at_ms: Option<i64>,
    /// When a watch kept by its badge ends; None for one an API key asked for.
    pub expires_at_ms: Option<i64>,
    /// Where the runs it starts are announced.
    pub webhook_url: Option<String>,
    /// The events announced there (see `events::WEBHOOK_EVENTS`).
    pub events: Vec<String>,
}

/// What [`super::WatchStore::put_key_watch`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyWatch {
    /// The key had no watch of the target and suite; now it has.
    Made(Watch),
    /// The key's watch of the target and suite was replaced.
    Replaced(Watch),
    /// The key keeps `kept` watches already, its quota `quota`: nothing was
    /// written.
    OverQuota { quota: i64, kept: i64 },
}

/// What [`super::WatchStore::put_watch`] needs.
#[derive(Debug, Clone)]
pub struct NewWatch {
    pub target_id: String,
    pub suite: String,
    pub options: RunOptions,
    pub interval_ms: i64,
    /// Its first slot (the caller spreads first slots with jitter).
    pub first_due_at_ms: i64,
    pub api_key: Option<Uuid>,
    pub created_at_ms: i64,
    /// None: the watch lasts until deleted (an API key asked for it).
    pub expires_at_ms: Option<i64>,
    pub webhook_url: Option<String>,
    pub events: Vec<String>,
}

/// What a tick of [`super::WatchStore::start_due_watches`] may spend of a
/// host's rolling hour of runs: the host's budget, and the schedule's share
/// of it (so that people keep the rest). `per_hour` 0: no budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostBudget {
    pub per_hour: u32,
    pub share: u32,
}

/// What one tick of [`super::WatchStore::start_due_watches`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DueWatches {
    /// The runs it started.
    pub started: Vec<Run>,
    /// Watches due whose previous run was still queued or running.
    pub skipped: Vec<Uuid>,
    /// Watches due whose host had spent its hourly budget, or the schedule's
    /// share of it (see [`super::WatchStore::start_due_watches`]).
    pub over_budget: Vec<Uuid>,
    /// How long after its slot each watch taken was taken, in ms.
    pub lateness_ms: Vec<i64>,
    /// The earliest slot of any watch after the tick (None: no watch).
    pub next_due_at_ms: Option<i64>,
}

/// Where a queued run stands (see [`super::Store::queue_place`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuePlace {
    /// Queued runs a claim takes before it: people's runs before scheduled
    /// ones, then the oldest first (the rotation between submitters aside,
    /// so an estimate).
    pub ahead: i64,
    /// The machine it counts for, when it has one.
    pub host: Option<String>,
    /// Runs of that host running now.
    pub running_on_host: i64,
    /// When the last run of that host ended.
    pub last_end_on_host_ms: Option<i64>,
    /// When it may start at the earliest (a retry's backoff).
    pub available_at_ms: i64,
}

/// What [`super::Store::rehost_run`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rehosted {
    /// The run goes on, counted by its machine.
    Go,
    /// The machine is at its limits: the run is back in the queue.
    Deferred,
    /// The worker no longer holds the run.
    Lost,
}

/// Who asked for a run, and how.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunOrigin {
    /// The API key it was submitted with.
    pub api_key: Option<Uuid>,
    /// Whether the submission asked for a new run despite a fresh result.
    pub forced: bool,
    /// The run's credentials, sealed; stored with the run in one transaction
    /// and wiped when it ends.
    pub credentials: Option<crate::credentials::SealedCredentials>,
    /// Who submitted it (see `submit::submitter_of`).
    pub submitter: Option<String>,
    /// The machine its target resolved to at submission (see
    /// [`host_of`]); `None` counts it by its URL's host.
    pub machine: Option<String>,
    /// Whether the service that accepted it allows private targets (its
    /// `PROTOCHECK_ALLOW_PRIVATE_TARGETS` decision): recorded so that a
    /// worker configured otherwise neither refuses what was accepted nor
    /// connects where the service would not. `None`: no decision (the
    /// claiming worker's own policy applies).
    pub private_targets: Option<bool>,
}

/// A submission, as the store takes it in one transaction (see
/// [`super::Store::submit_run`]): the run it would queue, and what the store
/// reads for the submitter to decide whether it does.
#[derive(Debug, Clone)]
pub struct SubmitRequest<'a> {
    pub new: &'a NewRun,
    pub origin: &'a RunOrigin,
    /// The target's canonical URL (its id is `new.target_id`).
    pub canonical_url: &'a str,
    /// Read the newest `passed` or `failed` run with `new.dedup_key` finished
    /// at or after this time.
    pub fresh_since_ms: Option<i64>,
    /// Read what the limits count.
    pub load: Option<LoadQuery<'a>>,
}

/// What a submission's limits count on one machine.
#[derive(Debug, Clone, Copy)]
pub struct LoadQuery<'a> {
    pub host: &'a str,
    /// The endpoint (canonical URL without its query) whose newest run is read.
    pub endpoint: &'a str,
    pub endpoint_since_ms: i64,
    /// Read the host's runs created after this time, and the submitter's share.
    pub host_since_ms: Option<i64>,
    pub submitter: Option<&'a str>,
}

/// What the store read for a submission, in its transaction.
#[derive(Debug, Clone, Default)]
pub struct SubmissionFacts {
    /// The newest finished run that answers it, when asked.
    pub fresh: Option<Run>,
    /// When the newest run of the endpoint was created (see
    /// [`super::Store::latest_run_of_endpoint`]), when asked.
    pub endpoint_last_at_ms: Option<i64>,
    /// The host's recent runs, when asked.
    pub load: Option<HostLoad>,
}

/// How a submitter decides from what the store read (see
/// [`super::Store::submit_run`]).
pub type SubmitDecision<'a> =
    dyn for<'f> Fn(&'f SubmissionFacts) -> SubmitChoice + Send + Sync + 'a;

/// What a submitter decides from [`SubmissionFacts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubmitChoice {
    /// The fresh run answers it; nothing is queued.
    Fresh,
    /// Queue nothing; an equal run already under way answers it, if any.
    Refuse,
    /// Queue the run (unless an equal one is under way).
    Queue,
}

/// What [`super::Store::submit_run`] did, with what it read.
#[derive(Debug, Clone)]
pub struct SubmitResult {
    pub facts: SubmissionFacts,
    pub outcome: SubmitOutcome,
    /// The answering run's place in the queue, when it is queued.
    pub place: Option<QueuePlace>,
}

impl SubmitOutcome {
    /// The run that answers the submission, if any.
    pub fn run(&self) -> Option<&Run> {
        match self {
            Self::Fresh(run) | Self::Queued(Inserted::New(run) | Inserted::Active(run)) => {
                Some(run)
            }
            Self::Refused(run) => run.as_ref(),
        }
    }
}

/// How a submission ended in the store.
#[derive(Debug, Clone, PartialEq)]
pub enum SubmitOutcome {
    Fresh(Run),
    /// Refused; the equal run under way, if there is one.
    Refused(Option<Run>),
    Queued(Inserted),
}

/// Runs created for one host since some time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostLoad {
    pub count: i64,
    /// When the oldest of them was created.
    pub oldest_at_ms: Option<i64>,
    /// How many of them the submitter asked about submitted.
    pub mine: i64,
    /// When the oldest of those was created.
    pub mine_oldest_at_ms: Option<i64>,
}

/// The machine the limits of [`HostLimits`] and the submission quotas count
/// by, as far as the URL alone tells: its host without the port (one machine,
/// whatever port it is reached on), with every spelling of one address and of
/// `localhost` folded into one (see [`crate::transport::machine_of_host`]).
/// A name is resolved to its address at submission and again when a worker
/// connects (see [`super::Store::rehost_run`]); this is what a run counts by
/// until then, and when the name does not resolve.
pub fn host_of(canonical_url: &str) -> Option<String> {
    let url = url::Url::parse(canonical_url).ok()?;
    let host = url.host()?;
    let machine = crate::transport::machine_of_host(&host);
    (!machine.is_empty()).then_some(machine)
}

/// Whether the target URL `url` is the server `endpoint` (a canonical URL
/// without its query) on the same machine: the same scheme, port and path,
/// whatever name reaches the machine and whatever query string `url` has.
/// The machine itself is the caller's (runs are looked up by it).
pub fn same_server(url: &str, endpoint: &str) -> bool {
    let (Ok(a), Ok(b)) = (url::Url::parse(url), url::Url::parse(endpoint)) else {
        return false;
    };
    a.scheme() == b.scheme()
        && a.port_or_known_default() == b.port_or_known_default()
        && a.path() == b.path()
}

/// Where a directory entry came from (#52).
pub const DIRECTORY_FROM_REGISTRY: &str = "registry";
/// A person asked for their run's target to be listed.
pub const DIRECTORY_FROM_SUBMISSION: &str = "submission";

/// An entry of the public directory of judged MCP servers: one remote URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DirectoryEntry {
    /// The URL as listed: the canonical target URL when it is judged, the
    /// registry's URL as given when it is not.
    pub url: String,
    /// [`DIRECTORY_FROM_REGISTRY`] or [`DIRECTORY_FROM_SUBMISSION`].
    pub source: String,
    pub registry_name: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub version: Option<String>,
    /// `active` or `deprecated` (a deleted registry entry leaves).
    pub status: String,
    /// `streamable-http` or `sse`.
    pub transport: String,
    /// Why it is listed without a verdict, when it is.
    pub not_probed: Option<String>,
    /// The target that is judged, when it is.
    pub target_id: Option<String>,
    /// The registry's `updatedAt` of the entry.
    pub registry_updated_at: Option<String>,
    pub listed_at_ms: i64,
    pub updated_at_ms: i64,
    /// The latest MCP verdict of its target, set when a run of it ends: the
    /// lowest grade over the revisions judged (None: not judged yet).
    pub grade: Option<String>,
    /// The grade before it (the trend).
    pub previous_grade: Option<String>,
    pub last_run_id: Option<String>,
    pub judged_at_ms: Option<i64>,
    /// Why the latest verdict gave no grade (`authorization required`), when
    /// its grade is `not judged`.
    pub withheld: Option<String>,
}

/// The MCP grades as the directory ranks them, lowest first (rank 1 to 4;
/// 0 is an entry with no verdict yet).
pub const DIRECTORY_GRADES: [&str; 4] = ["non-compliant", "not judged", "compliant", "strict"];

/// The rank of `grade` in [`DIRECTORY_GRADES`] (1 to 4), 0 for none or an
/// unknown word.
pub fn directory_grade_rank(grade: Option<&str>) -> i64 {
    grade
        .and_then(|g| DIRECTORY_GRADES.iter().position(|k| *k == g))
        .map_or(0, |i| i as i64 + 1)
}

/// The key a directory entry is sorted and searched by name with: its
/// registry name, or its URL when it has none, in lower case.
pub fn directory_name_key(registry_name: Option<&str>, url: &str) -> String {
    registry_name.unwrap_or(url).to_lowercase()
}

/// A column the directory is sorted by (each has an index on its key and
/// the URL).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DirectorySort {
    /// The registry name (the URL for an entry without one).
    #[default]
    Name,
    Url,
    Transport,
    Status,
    /// Lowest grade first ascending; no verdict yet below every grade.
    Grade,
    /// When it was last judged; never judged first ascending.
    Judged,
}

impl DirectorySort {
    pub const ALL: [Self; 6] = [
        Self::Name,
        Self::Url,
        Self::Transport,
        Self::Status,
        Self::Grade,
        Self::Judged,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Name => "name",
            Self::Url => "url",
            Self::Transport => "transport",
            Self::Status => "status",
            Self::Grade => "grade",
            Self::Judged => "judged",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// Whether the column's key is a number (else text).
    pub fn numeric(self) -> bool {
        matches!(self, Self::Grade | Self::Judged)
    }

    /// The key of `e` in this column, as a cursor carries it.
    pub fn key_of(self, e: &DirectoryEntry) -> DirectoryKey {
        match self {
            Self::Name => {
                DirectoryKey::Text(directory_name_key(e.registry_name.as_deref(), &e.url))
            }
            Self::Url => DirectoryKey::Text(e.url.clone()),
            Self::Transport => DirectoryKey::Text(e.transport.clone()),
            Self::Status => DirectoryKey::Text(e.status.clone()),
            Self::Grade => DirectoryKey::Int(directory_grade_rank(e.grade.as_deref())),
            Self::Judged => DirectoryKey::Int(e.judged_at_ms.unwrap_or(0)),
        }
    }
}

/// A sort key value of a directory entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirectoryKey {
    Text(String),
    Int(i64),
}

/// Which grades a directory query keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GradeFilter {
    /// One of [`DIRECTORY_GRADES`].
    Grade(&'static str),
    /// No verdict yet (not probed, or not judged yet).
    None,
}

/// One page of the directory: filters, the order, and where it starts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DirectoryQuery {
    /// With `revision`, the grade of that revision; else the lowest grade.
    pub grade: Option<GradeFilter>,
    /// Only entries whose latest verdict judged this MCP revision.
    pub revision: Option<String>,
    pub transport: Option<String>,
    /// Part of the registry name, title or URL (any case).
    pub search: Option<String>,
    pub sort: DirectorySort,
    pub descending: bool,
    /// Start after this row: its key in `sort` and its URL.
    pub after: Option<(DirectoryKey, String)>,
    pub limit: u32,
}

/// The state of the syncs of one registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DirectorySync {
    /// The registry's base URL.
    pub registry: String,
    /// The newest `updatedAt` a complete sync saw: the next one asks only for
    /// entries updated since.
    pub high_water: Option<String>,
    pub last_success_ms: Option<i64>,
    pub last_attempt_ms: i64,
    /// Why the last attempt failed, when it did (the directory keeps its last
    /// good state meanwhile).
    pub last_error: Option<String>,
    /// Entries the last complete sync read, and those it could not read.
    pub listed: i64,
    pub skipped: i64,
}
