//! Workers: claim a run with a lease, run the suite, store findings as they are
//! produced, heartbeat while running, and end the run with its verdict, a retry
//! with backoff, or `error` with the reason.
//!
//! A worker never holds a database transaction across a run: the claim commits at
//! once and the lease is what keeps other workers away. A worker that dies keeps
//! its lease until it expires; the reaper then puts the run back in the queue.
//!
//! A run's deadline is the whole run's: it counts from the first claim
//! (`started_at`), and a later attempt gets only what is left. Retries are for
//! the worker's failures (a crash, a lost database, a shutdown), not for a
//! target that is slow or broken: that is judged on the first attempt (see
//! [`suite::context::EngineError::is_retryable`]).
//!
//! A worker that loses the database keeps its runs: a failed heartbeat is
//! retried, and once the database answers again the worker takes its run back
//! at once (the lease row still names it, or the reaper requeued it and nobody
//! else claimed it) instead of waiting for the lease to expire. Only a run that
//! another worker holds is "lost".

use crate::events::RunEvents;
use crate::metrics::Metrics;
use crate::store::{Announcer, EndRecord, HostBudget, HostLimits, Run, RunEnd, RunStatus, Store};
use crate::suite::context::{Endpoint, HandshakeHistory, HistoryLookup, RunContext};
use crate::suite::{self, Finding, SuiteChoice};
use crate::transport::{AddressPolicy, HttpClient, Limits};
use crate::webhook::{WatchAnnouncer, WebhookConfig};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Notify, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// First retry delay; doubled per attempt.
const RETRY_BASE: Duration = Duration::from_secs(2);
/// Longest retry delay.
const RETRY_CAP: Duration = Duration::from_secs(120);
/// A webhook receiver's answer is never read beyond this.
const WEBHOOK_BODY_BYTES: usize = 4096;
/// Findings buffered between the engine and the store writer.
const FINDINGS_BUFFER: usize = 64;
/// First wait between tries to reach a database that stopped answering; doubled
/// per try up to [`DB_RETRY_CAP`].
const DB_RETRY_BASE: Duration = Duration::from_millis(100);
/// Longest wait between tries to reach the database: also about the longest a
/// run waits, once the database is back, before its worker takes it back. A
/// try costs one connection attempt, so a short wait costs a database that is
/// down nothing it would notice.
const DB_RETRY_CAP: Duration = Duration::from_millis(250);
/// How long after a run becomes due its wake-up timer fires: the claim
/// compares times in milliseconds, so it must not come early.
const WAKE_SLACK_MS: u64 = 5;

/// Worker settings.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    pub workers: usize,
    pub lease: Duration,
    /// Heartbeat period; a third of the lease leaves room for two missed beats.
    pub heartbeat: Duration,
    pub poll: Duration,
    /// How often the reaper looks for expired leases.
    pub reap_every: Duration,
    pub shutdown_grace: Duration,
    pub run_deadline: Duration,
    pub retry_base: Duration,
    pub policy: AddressPolicy,
    pub limits: Limits,
    /// Signs each verdict as it is stored; without one, verdicts are signed when
    /// their attestation is first requested.
    pub attestor: Option<crate::attest::Attestor>,
    /// Webhook delivery: retries, timeout, the public base of report links.
    pub webhooks: WebhookConfig,
    /// What a claim passes over so that one host is not flooded. None by
    /// default here; the service's settings ([`crate::config::HostLimitArgs`])
    /// carry the defaults it runs with.
    pub host_limits: HostLimits,
    /// Opens the credentials a run was submitted with; a run with credentials
    /// that this worker cannot open ends as `error` (and its token is wiped).
    pub keyring: Option<Arc<crate::credentials::Keyring>>,
    /// The scheduler that runs beside the workers (see [`crate::scheduler`]).
    pub schedule: crate::scheduler::ScheduleConfig,
    /// Requests a run has in flight to its target at once.
    pub target_concurrency: usize,
    /// CA certificates (DER) trusted for targets beside the built-in roots
    /// (`PROTOCHECK_CA_CERT`).
    pub extra_roots: Vec<Vec<u8>>,
    /// The User-Agent of the runs of servers the public directory lists,
    /// naming the service and its operator's contact (see
    /// [`crate::config::directory_user_agent`]); `None`: the default.
    pub directory_user_agent: Option<String>,
}

impl WorkerConfig {
    pub fn new(workers: usize, lease: Duration, policy: AddressPolicy) -> Self {
        Self {
            workers: workers.max(1),
            lease,
            heartbeat: lease / 3,
            poll: Duration::from_secs(30),
            reap_every: (lease / 2).max(Duration::from_millis(100)),
            shutdown_grace: Duration::from_secs(20),
            run_deadline: suite::DEFAULT_RUN_DEADLINE,
            retry_base: RETRY_BASE,
            policy,
            limits: Limits::default()
                .with_max_answer_bytes(crate::transport::DEFAULT_MAX_ANSWER_BYTES),
            attestor: None,
            webhooks: WebhookConfig::default(),
            host_limits: HostLimits::NONE,
            keyring: None,
            schedule: crate::scheduler::ScheduleConfig::default(),
            target_concurrency: suite::context::DEFAULT_TARGET_CONCURRENCY,
            extra_roots: Vec::new(),
            directory_user_agent: None,
        }
    }

    pub fn from_args(args: &crate::config::WorkerArgs, policy: AddressPolicy) -> Self {
        let mut cfg = Self::new(args.workers, args.lease(), policy);
        cfg.poll = Duration::from_secs(args.poll_secs.max(1));
        cfg.target_concurrency = args.target_concurrency.max(1);
        cfg.limits = Limits::default().with_max_answer_bytes(args.max_answer_bytes);
        // An expired lease is found within a lease of its expiry: what a
        // crashed worker's run waits is at most two leases, and an idle
        // process reads the leases once a lease (one commit a minute).
        cfg.reap_every = cfg.lease.max(Duration::from_millis(100));
        cfg.shutdown_grace = Duration::from_secs(args.shutdown_grace_secs);
        cfg.run_deadline = Duration::from_secs(args.run_deadline_secs.max(1));
        cfg.webhooks.public_url = args.webhook_public_url.clone();
        cfg.host_limits = HostLimits {
            running_per_host: args.host_limits.host_concurrency,
            gap_ms: crate::duration_ms(Duration::from_secs(args.host_limits.host_gap_secs)),
        };
        let per_hour = args.host_limits.host_runs_per_hour;
        cfg.schedule = crate::scheduler::ScheduleConfig {
            enabled: args.schedule_tick_ms > 0,
            tick: Duration::from_millis(args.schedule_tick_ms.max(1)),
            max_attempts: args.max_attempts,
            // The schedule is one submitter among others: at most the share
            // of a host's hour that anyone gets, so people keep the rest.
            budget: HostBudget {
                per_hour,
                share: if per_hour == 0 {
                    0
                } else {
                    crate::submit::host_share(per_hour)
                },
            },
            ..crate::scheduler::ScheduleConfig::default()
        };
        cfg
    }

    /// What is left of `run`'s deadline at `now_ms`; `None` once it has passed.
    /// The deadline counts from the run's first claim, across attempts.
    fn remaining(&self, run: &Run, now_ms: i64) -> Option<Duration> {
        let started = run.started_at_ms.unwrap_or(now_ms);
        let used = u64::try_from(now_ms.saturating_sub(started)).unwrap_or(0);
        self.run_deadline
            .checked_sub(Duration::from_millis(used))
            .filter(|left| !left.is_zero())
    }

    /// How long one store call may take before the database counts as
    /// unreachable: a heartbeat period, so a missed beat is noticed before the
    /// next is due.
    fn store_patience(&self) -> Duration {
        self.heartbeat.max(Duration::from_millis(50))
    }

    fn backoff(&self, attempt: i32) -> Duration {
        let exp = u32::try_from(attempt.saturating_sub(1).clamp(0, 16)).unwrap_or(16);
        self.retry_base
            .saturating_mul(2u32.saturating_pow(exp))
            .min(RETRY_CAP)
    }
}

/// Everything the workers of one process share.
#[derive(Clone)]
pub struct WorkerDeps {
    pub store: Arc<dyn Store>,
    pub wake: Arc<Notify>,
    pub events: RunEvents,
    pub metrics: Metrics,
}

/// A running set of workers plus the reaper and, on Postgres, the NOTIFY listener.
pub struct WorkerPool {
    tasks: JoinSet<()>,
    shutdown: CancellationToken,
}

impl WorkerPool {
    pub fn start(
        deps: WorkerDeps,
        cfg: WorkerConfig,
    ) -> Result<Self, crate::transport::TransportError> {
        let http =
            HttpClient::with_extra_roots(cfg.policy, cfg.limits.clone(), cfg.extra_roots.clone())?;
        let shutdown = CancellationToken::new();
        let mut tasks = JoinSet::new();
        let cfg = Arc::new(cfg);
        let webhook_wake = Arc::new(Notify::new());
        let poked = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let process = Uuid::new_v4().simple().to_string();
        for n in 0..cfg.workers {
            let worker = Worker {
                id: format!("{}-{}-{n}", host_name(), &process[..8]),
                deps: deps.clone(),
                cfg: cfg.clone(),
                http: http.clone(),
                shutdown: shutdown.clone(),
                webhook_wake: webhook_wake.clone(),
                poked: poked.clone(),
            };
            tasks.spawn(worker.run());
        }
        tasks.spawn(reaper(deps.clone(), cfg.clone(), shutdown.clone()));
        tasks.spawn(poke(deps.wake.clone(), poked, cfg.poll, shutdown.clone()));
        if cfg.schedule.enabled {
            tasks.spawn(crate::scheduler::run(
                deps.store.clone(),
                cfg.schedule.clone(),
                deps.wake.clone(),
                deps.metrics.clone(),
                shutdown.clone(),
            ));
        }
        let (store, wake, stop) = (deps.store.clone(), deps.wake.clone(), shutdown.clone());
        tasks.spawn(async move { store.listen_for_work(wake, stop).await });
        // Webhooks go through the same guard as targets: a receiver the policy
        // refuses is never contacted. The response body is not read (see `webhook`).
        let hooks = HttpClient::new(
            cfg.policy,
            Limits {
                request_timeout: cfg.webhooks.timeout,
                max_body_bytes: WEBHOOK_BODY_BYTES,
                ..cfg.limits.clone()
            },
        )?;
        tasks.spawn(crate::webhook::delivery_loop(
            deps.store.clone(),
            hooks,
            Arc::new(cfg.webhooks.clone()),
            webhook_wake.clone(),
            shutdown.clone(),
        ));
        Ok(Self { tasks, shutdown })
    }

    /// Graceful stop: no new claims; in-flight runs get the grace period, then are released.
    pub async fn shutdown(mut self) {
        self.shutdown.cancel();
        while self.tasks.join_next().await.is_some() {}
    }

    /// Stops every task at once, releasing nothing: what a crash or `kill -9` does.
    /// The leases of in-flight runs stay until they expire.
    pub async fn abort(mut self) {
        self.tasks.abort_all();
        while self.tasks.join_next().await.is_some() {}
    }
}

fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "worker".to_owned())
}

struct Worker {
    id: String,
    deps: WorkerDeps,
    cfg: Arc<WorkerConfig>,
    http: HttpClient,
    shutdown: CancellationToken,
    /// Told when a run ends, so its webhook goes out without waiting for a poll.
    webhook_wake: Arc<Notify>,
    /// Set by the pool's poke: the worker it wakes, when it claims a run,
    /// wakes another, as the poke may have found several.
    poked: Arc<std::sync::atomic::AtomicBool>,
}

/// How a run's execution ended, from the worker's side.
enum Execution {
    /// The engine ended; with a verdict, the findings it reported (all
    /// stored, in order).
    Done(Result<Box<(suite::Verdict, Vec<Finding>)>, suite::context::EngineError>),
    /// Another worker owns the run now (named when known); this one must not touch it.
    LeaseLost(Option<String>),
    /// Shutdown grace ran out; the run goes back to the queue.
    Released,
    /// The machine the target resolved to is at its limits: the store put the
    /// run back in the queue (see [`Store::rehost_run`]).
    Deferred,
    /// A finding could not be stored: the database was unreachable, or the run
    /// is no longer this worker's. [`Worker::recover`] tells which.
    StoreFailed,
}

/// What a worker records when an attempt ends. The run's end is boxed: a
/// verdict is large, and an ending is moved around while the store retries.
enum Ending {
    Finish {
        end: Box<RunEnd>,
        suite_version: String,
        status: &'static str,
        /// The protocol the run saw its target speak.
        target_protocol: Option<&'static str>,
        /// The findings of a verdict, which its attestation signs.
        findings: Vec<Finding>,
    },
    Requeue {
        reason: String,
        available_at_ms: i64,
        count_attempt: bool,
        status: &'static str,
    },
}

impl Ending {
    fn error(reason: String) -> Self {
        Self::Finish {
            end: Box::new(RunEnd::Error(reason)),
            // A run that ended in error was judged by no suite: it records protocheck's version.
            suite_version: env!("CARGO_PKG_VERSION").to_owned(),
            status: "error",
            target_protocol: None,
            findings: Vec::new(),
        }
    }
}

impl Worker {
    async fn run(self) {
        tracing::debug!(worker = %self.id, "worker started");
        loop {
            if self.shutdown.is_cancelled() {
                break;
            }
            // Armed before the poll, so a submit between the poll and the wait is not missed.
            let notified = self.deps.wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let lease_ms = crate::duration_ms(self.cfg.lease);
            let poked = self.poked.swap(false, std::sync::atomic::Ordering::SeqCst);
            match self
                .deps
                .store
                .claim_run_within(&self.id, crate::now_ms(), lease_ms, &self.cfg.host_limits)
                .await
            {
                Ok(Some(run)) => {
                    if poked {
                        // The poke found work nothing announced: there may be more.
                        self.poked.store(true, std::sync::atomic::Ordering::SeqCst);
                        self.deps.wake.notify_one();
                    }
                    self.execute(run).await;
                    continue;
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(worker = %self.id, error = %e, "claiming a run failed"),
            }
            // No timer per worker: the pool's one poke (see `poke`) stands in
            // for every wake-up that could be missed, so an idle process
            // costs the database one claim per `poll`, not one per worker.
            tokio::select! {
                _ = &mut notified => {}
                _ = self.shutdown.cancelled() => break,
            }
        }
        tracing::debug!(worker = %self.id, "worker stopped");
    }

    /// Drives a claimed run to its end, taking it back (as a new attempt) when
    /// the database was lost under it.
    async fn execute(&self, claimed: Run) {
        let mut run = claimed;
        while let Some(next) = self.attempt(&run).await {
            run = next;
        }
    }

    /// One attempt of `run`; the run to go on with when the worker took it back
    /// after losing the database.
    async fn attempt(&self, run: &Run) -> Option<Run> {
        let started = Instant::now();
        tracing::info!(worker = %self.id, run = %run.id, attempt = run.attempts, url = %run.target_url, "run claimed");
        self.deps.events.changed(run.id);
        let Some(left) = self.cfg.remaining(run, crate::now_ms()) else {
            let reason = format!(
                "the run's {}s deadline passed before attempt {} could start (it counts from the run's first start)",
                self.cfg.run_deadline.as_secs(),
                run.attempts
            );
            self.record(run, Ending::error(reason), started).await;
            return None;
        };
        let execution = self.drive(run, left).await;
        let now = crate::now_ms();
        let ending = match execution {
            Execution::LeaseLost(Some(holder)) => {
                tracing::warn!(worker = %self.id, run = %run.id, holder, "lease lost to another worker; leaving the run to it");
                return None;
            }
            Execution::LeaseLost(None) => {
                tracing::warn!(worker = %self.id, run = %run.id, "the run was requeued while this worker could not reach the database, and cannot be taken back now; leaving it to the queue");
                return None;
            }
            Execution::StoreFailed => return self.recover(run).await,
            Execution::Deferred => {
                tracing::info!(worker = %self.id, run = %run.id, "the machine the target resolved to is at its limits; the run waits in the queue");
                self.deps.events.changed(run.id);
                return None;
            }
            Execution::Released => Ending::Requeue {
                reason: "released by a worker shutting down; will run again".into(),
                available_at_ms: now,
                count_attempt: false,
                status: "released",
            },
            Execution::Done(Ok(done)) => {
                let (verdict, findings) = *done;
                let observed = match verdict.suite {
                    crate::suite::SuiteId::Rcp => verdict.detail.protocol_observed(),
                    crate::suite::SuiteId::Mcp => crate::suite::mcp_observed(&findings),
                };
                let status = if verdict.passed { "passed" } else { "failed" };
                Ending::Finish {
                    suite_version: verdict.suite_version.clone(),
                    target_protocol: observed.then_some(verdict.suite.as_str()),
                    end: Box::new(RunEnd::Verdict(verdict)),
                    status,
                    findings,
                }
            }
            Execution::Done(Err(err)) => self.after_error(run, &err, now),
        };
        self.record(run, ending, started).await;
        None
    }

    /// Wakes one worker of this process at `at_ms` (a few milliseconds
    /// after, so that the claim finds the run due), unless the pool stops first.
    fn wake_at(&self, at_ms: i64) {
        let wait = Duration::from_millis(
            u64::try_from(at_ms.saturating_sub(crate::now_ms()))
                .unwrap_or(0)
                .saturating_add(WAKE_SLACK_MS),
        );
        let (wake, shutdown) = (self.deps.wake.clone(), self.shutdown.clone());
        tokio::spawn(async move {
            tokio::select! {
                () = tokio::time::sleep(wait) => wake.notify_one(),
                () = shutdown.cancelled() => {}
            }
        });
    }

    /// The attestation of `run` ending now (`now_ms`) with `end`, when it is
    /// a verdict and the service signs: signed over the run as the end will
    /// store it, with the findings the worker stored, so that the end records
    /// it in its own transaction. A signing failure must not cost the run its
    /// verdict: it is logged, and the attestation is created when it is first
    /// requested ([`crate::attest::attest_run`]).
    async fn attest(
        &self,
        run: &Run,
        end: &RunEnd,
        findings: &[Finding],
        now_ms: i64,
    ) -> Option<crate::store::StoredAttestation> {
        let (RunEnd::Verdict(verdict), Some(attestor)) = (end, &self.cfg.attestor) else {
            return None;
        };
        let signed = async {
            // No stored attestation names a key the key set lacks.
            attestor.ensure_published(self.deps.store.as_ref()).await?;
            crate::attest::attest_ending(attestor, run, verdict, now_ms, findings)
        };
        match signed.await {
            Ok(attestation) => Some(attestation),
            Err(e) => {
                tracing::warn!(run = %run.id, error = %e, "signing the verdict failed");
                None
            }
        }
    }

    /// What an attempt that failed leaves the run as: another attempt when a
    /// later one could succeed and the deadline leaves room for it, else `error`.
    fn after_error(&self, run: &Run, err: &suite::context::EngineError, now: i64) -> Ending {
        let deadline_s = self.cfg.run_deadline.as_secs();
        let delay = self.cfg.backoff(run.attempts);
        let next_at = now.saturating_add(crate::duration_ms(delay));
        let time_left = self.cfg.remaining(run, next_at).is_some();
        if err.is_retryable() && run.attempts < run.max_attempts && time_left {
            return Ending::Requeue {
                reason: format!(
                    "attempt {} of {} failed: {err}; retrying in {}s",
                    run.attempts,
                    run.max_attempts,
                    delay.as_secs()
                ),
                available_at_ms: next_at,
                count_attempt: true,
                status: "retried",
            };
        }
        let reason = match err {
            // The engine was given what was left; the user is told the run's deadline.
            suite::context::EngineError::Deadline(_) if run.attempts > 1 => format!(
                "{} (counted from the run's first start, over {} attempts)",
                suite::context::EngineError::Deadline(self.cfg.run_deadline),
                run.attempts
            ),
            suite::context::EngineError::Deadline(_) => {
                suite::context::EngineError::Deadline(self.cfg.run_deadline).to_string()
            }
            _ if err.is_retryable() && run.attempts < run.max_attempts => format!(
                "{err} (gave up after {} attempts: the run's {deadline_s}s deadline leaves no time for another)",
                run.attempts
            ),
            _ if err.is_retryable() => format!("{err} (gave up after {} attempts)", run.attempts),
            _ => err.to_string(),
        };
        Ending::error(reason)
    }

    /// Records how an attempt ended, waiting out a database outage for up to a
    /// lease (after that the run is the reaper's).
    async fn record(&self, run: &Run, ending: Ending, started: Instant) {
        let store = &self.deps.store;
        let give_up = Instant::now() + self.cfg.lease;
        let mut delay = DB_RETRY_BASE;
        let recorded = loop {
            let now = crate::now_ms();
            let tried = async {
                match &ending {
                    Ending::Finish {
                        end,
                        suite_version,
                        target_protocol,
                        findings,
                        ..
                    } => {
                        let attestation = self.attest(run, end, findings, now).await;
                        let announcer = match &**end {
                            RunEnd::Verdict(verdict) => Some(WatchAnnouncer::new(
                                verdict,
                                findings,
                                self.cfg.webhooks.public_url.as_deref(),
                            )),
                            RunEnd::Error(_) => None,
                        };
                        let record = EndRecord {
                            end,
                            suite_version,
                            now_ms: now,
                            announcer: announcer.as_ref().map(|a| a as &dyn Announcer),
                            target_protocol: *target_protocol,
                            attestation: attestation.as_ref(),
                        };
                        store.end_run(run.id, &self.id, &record).await
                    }
                    Ending::Requeue {
                        reason,
                        available_at_ms,
                        count_attempt,
                        ..
                    } => {
                        let requeued = store
                            .requeue_run(run.id, &self.id, reason, *available_at_ms, *count_attempt)
                            .await?;
                        Ok(requeued.then_some(0))
                    }
                }
            };
            match tokio::time::timeout(self.cfg.store_patience(), tried).await {
                Ok(Ok(done)) => break Ok(done),
                Ok(Err(e)) if Instant::now() >= give_up => break Err(e.to_string()),
                Err(_) if Instant::now() >= give_up => {
                    break Err("the database did not answer".to_owned());
                }
                Ok(Err(e)) => {
                    tracing::warn!(worker = %self.id, run = %run.id, error = %e, "database unreachable; retrying to record the end of the run");
                }
                Err(_) => {
                    tracing::warn!(worker = %self.id, run = %run.id, "database unreachable (no answer); retrying to record the end of the run");
                }
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(DB_RETRY_CAP);
        };
        let status = match &ending {
            Ending::Finish { status, .. } | Ending::Requeue { status, .. } => *status,
        };
        match recorded {
            Ok(Some(announced)) => {
                self.deps
                    .metrics
                    .observe_run(run.suite, status, started.elapsed().as_secs_f64());
                tracing::info!(worker = %self.id, run = %run.id, status, "run ended");
                if run.webhook_url.is_some() || announced > 0 {
                    self.webhook_wake.notify_one();
                }
                // What this end makes claimable later is known here: a retry
                // at its time, another run of the host once the gap is over.
                // A timer wakes a worker then, so that the queue is not polled
                // for it (on Postgres the trigger also tells other processes
                // of the requeue at once; they find it not yet due).
                let later = match &ending {
                    Ending::Requeue {
                        available_at_ms, ..
                    } => Some(*available_at_ms),
                    Ending::Finish { .. } if self.cfg.host_limits.gap_ms > 0 => {
                        Some(crate::now_ms().saturating_add(self.cfg.host_limits.gap_ms))
                    }
                    Ending::Finish { .. } => None,
                };
                if let Some(at_ms) = later {
                    self.wake_at(at_ms);
                }
            }
            Ok(None) => {
                tracing::warn!(worker = %self.id, run = %run.id, "the run is no longer this worker's; its end was not recorded");
            }
            Err(e) => {
                tracing::error!(worker = %self.id, run = %run.id, error = %e, "recording the end of a run failed; its lease will expire and it will run again");
            }
        }
        self.deps.events.changed(run.id);
    }

    /// After a finding could not be stored: waits until the database answers,
    /// then takes the run back as its next attempt if it is still this
    /// worker's (or was requeued and nobody else claimed it). `None` when it is
    /// another worker's, has ended, or shutdown comes first.
    async fn recover(&self, run: &Run) -> Option<Run> {
        let store = &self.deps.store;
        let mut delay = DB_RETRY_BASE;
        let mut warned = false;
        let lost_at = Instant::now();
        loop {
            let now = crate::now_ms();
            let lease_ms = crate::duration_ms(self.cfg.lease);
            let limits = &self.cfg.host_limits;
            let tried =
                store.reclaim_run(run.id, &self.id, run.attempts, true, now, lease_ms, limits);
            match tokio::time::timeout(self.cfg.store_patience(), tried).await {
                Ok(Ok(Some(next))) => {
                    tracing::info!(worker = %self.id, run = %run.id, attempt = next.attempts, after_ms = lost_at.elapsed().as_millis(), "database reachable again; run taken back");
                    return Some(next);
                }
                Ok(Ok(None)) => {
                    self.explain_loss(run).await;
                    return None;
                }
                Ok(Err(e)) if !warned => {
                    tracing::warn!(worker = %self.id, run = %run.id, error = %e, "database unreachable; keeping the run until it answers");
                    warned = true;
                }
                Err(_) if !warned => {
                    tracing::warn!(worker = %self.id, run = %run.id, "database unreachable (no answer); keeping the run until it answers");
                    warned = true;
                }
                Ok(Err(_)) | Err(_) => {}
            }
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = self.shutdown.cancelled() => return None,
            }
            delay = (delay * 2).min(DB_RETRY_CAP);
        }
    }

    /// Says why a run this worker was driving cannot be taken back; ends it
    /// as `error` when it is still this worker's but out of attempts.
    async fn explain_loss(&self, run: &Run) {
        let current = match self.deps.store.get_run(run.id).await {
            Ok(Some(current)) => current,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(worker = %self.id, run = %run.id, error = %e, "reading the run failed; its lease will expire");
                return;
            }
        };
        match (&current.status, current.locked_by.as_deref()) {
            (RunStatus::Running, Some(holder)) if holder == self.id => {
                let reason = format!(
                    "the database was lost during attempt {} of {}, and no attempt is left",
                    current.attempts, current.max_attempts
                );
                self.record(&current, Ending::error(reason), Instant::now())
                    .await;
            }
            (RunStatus::Running, Some(holder)) => {
                tracing::warn!(worker = %self.id, run = %run.id, holder, "lease lost to another worker; leaving the run to it");
            }
            (status, _) => {
                tracing::info!(worker = %self.id, run = %run.id, status = status.as_str(), "the run moved on without this worker");
            }
        }
    }

    /// Runs the suite, with what is left of the run's deadline, while keeping
    /// the lease and writing findings; watches for shutdown.
    async fn drive(&self, run: &Run, deadline: Duration) -> Execution {
        let choice = run.suite;
        let endpoint = match url::Url::parse(&run.target_url) {
            Ok(url) => Endpoint::Http(url),
            Err(e) => {
                return Execution::Done(Err(suite::context::EngineError::Unsupported(format!(
                    "stored target URL is invalid: {e}"
                ))));
            }
        };
        let http = match &endpoint {
            Endpoint::Http(url) => match self.connect_to(run, url).await {
                Ok(http) => http,
                Err(execution) => return execution,
            },
            _ => self.http.clone(),
        };
        let mut options = run.options.clone();
        if run.credentials.is_some() {
            match self.unseal(run).await {
                Ok(credentials) => credentials.apply(&mut options),
                Err(None) => return Execution::StoreFailed,
                Err(Some(reason)) => {
                    return Execution::Done(Err(suite::context::EngineError::Unsupported(reason)));
                }
            }
        }
        // The token lives in this run's options only, and goes with them when the
        // run ends; the engine sends it to the target's origin alone (no
        // redirect is followed) and redacts it from every finding.
        let mut ctx = RunContext::new(http, options);
        ctx.deadline = deadline;
        ctx.target_concurrency = self.cfg.target_concurrency;
        if choice != SuiteChoice::Mcp {
            ctx.handshake_history = self.handshake_history(run);
        }
        let (tx, rx) = mpsc::channel::<Finding>(FINDINGS_BUFFER);

        let engine = suite::runner::run_suite(choice, &endpoint, &ctx, tx);
        let sink = self.store_findings(run, rx);
        // A sink that gave up ends the attempt at once: the engine would
        // otherwise probe the target to the end for findings nobody stores.
        let work = async {
            tokio::pin!(engine);
            tokio::pin!(sink);
            tokio::select! {
                verdict = &mut engine => (verdict, sink.await),
                stored = &mut sink => match stored {
                    Some(findings) => (engine.await, Some(findings)),
                    None => (Err(suite::context::EngineError::Aborted), None),
                },
            }
        };
        tokio::pin!(work);
        let lease = self.keep_lease(run);
        tokio::pin!(lease);

        let grace = tokio::time::sleep(Duration::MAX / 4);
        tokio::pin!(grace);
        let mut draining = false;
        loop {
            tokio::select! {
                (verdict, stored) = &mut work => {
                    return match (verdict, stored) {
                        (Ok(verdict), Some(findings)) => {
                            Execution::Done(Ok(Box::new((verdict, findings))))
                        }
                        (Err(e), Some(_)) => Execution::Done(Err(e)),
                        (_, None) => Execution::StoreFailed,
                    };
                }
                holder = &mut lease => return Execution::LeaseLost(holder),
                _ = self.shutdown.cancelled(), if !draining => {
                    draining = true;
                    grace.as_mut().reset(tokio::time::Instant::now() + self.cfg.shutdown_grace);
                }
                _ = &mut grace, if draining => return Execution::Released,
            }
        }
    }

    /// Heartbeats `run` until its lease is another worker's; returns that
    /// worker when known. A heartbeat the database does not answer is retried
    /// at the next beat: the run stays this worker's. When the database
    /// answers again and the lease row no longer names this worker (the
    /// reaper requeued the run meanwhile), the worker takes the run back
    /// unless someone else claimed it.
    async fn keep_lease(&self, run: &Run) -> Option<String> {
        let store = &self.deps.store;
        let mut beat = tokio::time::interval(self.cfg.store_patience());
        beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        beat.tick().await;
        let mut unreachable_since: Option<Instant> = None;
        loop {
            beat.tick().await;
            let now = crate::now_ms();
            let lease_ms = crate::duration_ms(self.cfg.lease);
            let answer = tokio::time::timeout(
                self.cfg.store_patience(),
                store.heartbeat(run.id, &self.id, now, lease_ms),
            )
            .await;
            let held = match answer {
                Ok(Ok(held)) => held,
                failed => {
                    if unreachable_since.is_none() {
                        let error = match failed {
                            Ok(Err(e)) => e.to_string(),
                            _ => "no answer".to_owned(),
                        };
                        tracing::warn!(worker = %self.id, run = %run.id, %error, "database unreachable; heartbeat failed, keeping the run");
                    }
                    unreachable_since.get_or_insert_with(Instant::now);
                    continue;
                }
            };
            if let Some(since) = unreachable_since.take() {
                tracing::info!(worker = %self.id, run = %run.id, down_ms = since.elapsed().as_millis(), "database reachable again");
            }
            if held {
                continue;
            }
            let limits = &self.cfg.host_limits;
            match store
                .reclaim_run(run.id, &self.id, run.attempts, false, now, lease_ms, limits)
                .await
            {
                Ok(Some(_)) => {
                    tracing::info!(worker = %self.id, run = %run.id, "lease expired while the database was unreachable and nobody else claimed the run; took it back");
                }
                Ok(None) => {
                    let current = store.get_run(run.id).await.ok().flatten();
                    return current.and_then(|r| r.locked_by);
                }
                Err(e) => {
                    tracing::warn!(worker = %self.id, run = %run.id, error = %e, "database unreachable; taking the run back failed, retrying");
                    unreachable_since.get_or_insert_with(Instant::now);
                }
            }
        }
    }
}

impl Worker {
    /// The client `run` probes `url` with (#31 item 1): the target's name is
    /// resolved once, here, and the run connects to that machine alone. When
    /// the machine is not the one the run was counted by (a name the
    /// submission could not resolve, or whose answer changed since), the run
    /// is counted by the machine from now on, and goes back to the queue if
    /// the machine's limits do not allow it now: limits hold for the address
    /// actually connected to, however the target is named.
    async fn connect_to(&self, run: &Run, url: &url::Url) -> Result<HttpClient, Execution> {
        let http = self.client_of(run).map_err(|e| {
            Execution::Done(Err(suite::context::EngineError::Unsupported(e.to_string())))
        })?;
        let http = self.identified(run, http).await?;
        let Some(pin) = http.locate(url).await else {
            return Ok(http);
        };
        if let Some(machine) = pin.machine()
            && run.target_host.as_deref() != Some(machine.as_str())
        {
            let now = crate::now_ms();
            let limits = &self.cfg.host_limits;
            let rehosted =
                self.deps
                    .store
                    .rehost_run(run.id, &self.id, run.attempts, &machine, now, limits);
            match tokio::time::timeout(self.cfg.store_patience(), rehosted).await {
                Ok(Ok(crate::store::Rehosted::Go)) => {}
                Ok(Ok(crate::store::Rehosted::Deferred)) => return Err(Execution::Deferred),
                Ok(Ok(crate::store::Rehosted::Lost)) => return Err(Execution::LeaseLost(None)),
                Ok(Err(e)) => {
                    tracing::warn!(worker = %self.id, run = %run.id, error = %e, "recording the machine the target resolved to failed");
                    return Err(Execution::StoreFailed);
                }
                Err(_) => return Err(Execution::StoreFailed),
            }
        }
        http.pinned(pin).map_err(|e| {
            Execution::Done(Err(suite::context::EngineError::Unsupported(e.to_string())))
        })
    }

    /// `http`, sending the directory's User-Agent when `run` is a keyless
    /// run (no credentials) of a server the public directory lists: the
    /// server's operators see who checks it and how to reach them.
    async fn identified(&self, run: &Run, http: HttpClient) -> Result<HttpClient, Execution> {
        let Some(agent) = &self.cfg.directory_user_agent else {
            return Ok(http);
        };
        if run.credentials.is_some() {
            return Ok(http);
        }
        let listed = self.deps.store.directory_entry(&run.target_url);
        match tokio::time::timeout(self.cfg.store_patience(), listed).await {
            Ok(Ok(Some(_))) => http.with_user_agent(agent).map_err(|e| {
                Execution::Done(Err(suite::context::EngineError::Unsupported(e.to_string())))
            }),
            Ok(Ok(None)) => Ok(http),
            Ok(Err(e)) => {
                tracing::warn!(worker = %self.id, run = %run.id, error = %e, "reading the directory failed");
                Err(Execution::StoreFailed)
            }
            Err(_) => Err(Execution::StoreFailed),
        }
    }

    /// The worker's client under the address policy the service that
    /// accepted `run` applied (#54 item 10): a `worker` started without
    /// `PROTOCHECK_ALLOW_PRIVATE_TARGETS` runs the loopback target a `serve`
    /// allowing them accepted, and one allowing them does not connect where
    /// a public-only `serve` would not. A run with no recorded policy (the
    /// scheduler's) is connected under the worker's own.
    fn client_of(&self, run: &Run) -> Result<HttpClient, crate::transport::TransportError> {
        let policy = match run.private_targets {
            Some(true) => AddressPolicy::AllowPrivate,
            Some(false) => AddressPolicy::PublicOnly,
            None => return Ok(self.http.clone()),
        };
        if policy == self.http.policy() {
            return Ok(self.http.clone());
        }
        self.http.with_policy(policy)
    }

    /// The credentials `run` was submitted with, opened. `Err(None)` when the
    /// store could not be read (the run is then recovered like any other);
    /// `Err(Some(reason))` when they cannot be used, which ends the run.
    async fn unseal(&self, run: &Run) -> Result<crate::credentials::Credentials, Option<String>> {
        let sealed = match self.deps.store.run_credentials(run.id).await {
            Ok(Some(sealed)) => sealed,
            Ok(None) => {
                return Err(Some(
                    "the run's credentials are gone from the store; submit it again".to_owned(),
                ));
            }
            Err(e) => {
                tracing::warn!(worker = %self.id, run = %run.id, error = %e, "reading the run's credentials failed");
                return Err(None);
            }
        };
        let opened = match &self.cfg.keyring {
            Some(keyring) => keyring.open(run.id, &sealed),
            None => Err(crate::credentials::OpenError::NoKeyring),
        };
        opened.map_err(|e| {
            tracing::warn!(worker = %self.id, run = %run.id, error = %e, "cannot open the run's credentials");
            Some(e.to_string())
        })
    }

    /// Whether an earlier run of this target saw its RCP handshake complete:
    /// the newest finished run where `RCP-L0-011` (`initialize` negotiates)
    /// passed. A long-lived server that keeps one initialized flag for the
    /// whole process can then be certified on a later run, as that run showed
    /// (RCP decision 3; see [`HandshakeHistory`]). Read only when the run
    /// asks for it: most runs never do.
    fn handshake_history(&self, run: &Run) -> HistoryLookup {
        let (store, run_id, target_id) = (self.deps.store.clone(), run.id, run.target_id.clone());
        HistoryLookup::new(move || {
            let (store, target_id) = (store.clone(), target_id.clone());
            Box::pin(async move {
                let found = store
                    .latest_run_with_finding(
                        &target_id,
                        suite::rcp::l0::INITIALIZE_NEGOTIATES.id,
                        suite::Outcome::Pass,
                    )
                    .await;
                match found {
                    Ok(Some(earlier)) => HandshakeHistory::Observed {
                        run_id: earlier.id.to_string(),
                        at_ms: earlier.finished_at_ms.unwrap_or(earlier.created_at_ms),
                    },
                    Ok(None) => HandshakeHistory::NotObserved,
                    Err(e) => {
                        // Without the history a process-wide server gets no level and
                        // the verdict says no history was available; it never gets a
                        // level it did not show.
                        tracing::warn!(run = %run_id, error = %e, "reading the target's handshake history failed");
                        HandshakeHistory::Unavailable
                    }
                }
            })
        })
    }
}

/// Longest the first findings of a run wait in the worker before they are
/// stored: what the run's page and its event stream lag behind the engine at
/// its start (plus one write). Each later batch may wait three times as long
/// as the one before it (see [`Worker::store_findings`]).
const FLUSH_FIRST: Duration = Duration::from_millis(100);

/// Most findings written in one flush: the store's one-statement batch, so a
/// flush is one statement.
const FLUSH_FINDINGS: usize = crate::store::FINDINGS_PER_STATEMENT;

impl Worker {
    /// Stores the engine's findings as they come, in batches: a batch is
    /// written a while after its first finding arrived ([`FLUSH_FIRST`] for
    /// the first, three times as long as the batch before for each later
    /// one), when it holds [`FLUSH_FINDINGS`], or when the engine is done,
    /// whichever comes first. One write per batch rather than per finding
    /// keeps a run's cost to the database about constant however many
    /// findings it has (#29 item 4); the growing wait bounds it however long
    /// the run takes (batch k is written at least 50 ms × (3^k − 1) into the
    /// run: at most 8 writes in the 120 s deadline with the last, 5 in 5 s),
    /// while a run's first findings show at once and its progress lags by at
    /// most two thirds of its age. The
    /// findings stored, in order, once the engine is
    /// done (the run's end signs them without reading them back); None when
    /// the lease was lost or a write failed: the run is then given up,
    /// whatever the engine still finds.
    async fn store_findings(
        &self,
        run: &Run,
        mut rx: mpsc::Receiver<Finding>,
    ) -> Option<Vec<Finding>> {
        let mut stored = Vec::new();
        let mut batch = Vec::with_capacity(FLUSH_FINDINGS);
        let mut first_seq = 0i64;
        let mut deadline: Option<tokio::time::Instant> = None;
        let mut wait = FLUSH_FIRST;
        loop {
            // `None`: the batch is due; `Some(None)`: the engine is done.
            let next = match deadline {
                None => Some(rx.recv().await),
                Some(at) => tokio::time::timeout_at(at, rx.recv()).await.ok(),
            };
            let (done, timed_out) = (matches!(next, Some(None)), next.is_none());
            if let Some(Some(finding)) = next {
                if batch.is_empty() {
                    deadline = Some(tokio::time::Instant::now() + wait);
                }
                batch.push(finding);
            }
            // A steady stream of findings never lets the timeout fire: look at the clock too.
            let due = timed_out
                || done
                || batch.len() >= FLUSH_FINDINGS
                || deadline.is_some_and(|at| tokio::time::Instant::now() >= at);
            if due && !batch.is_empty() {
                if !self.flush_findings(run, first_seq, &batch).await {
                    return None;
                }
                first_seq += i64::try_from(batch.len()).unwrap_or(i64::MAX);
                stored.append(&mut batch);
                deadline = None;
                wait = wait.saturating_mul(3);
            }
            if done {
                return Some(stored);
            }
        }
    }

    /// Writes one batch; false when it was refused (lease lost) or failed.
    async fn flush_findings(&self, run: &Run, first_seq: i64, batch: &[Finding]) -> bool {
        let stored = self
            .deps
            .store
            .append_findings(
                run.id,
                &self.id,
                run.attempts,
                first_seq,
                batch,
                crate::now_ms(),
            )
            .await;
        match stored {
            Ok(true) => {
                self.deps.events.changed(run.id);
                true
            }
            Ok(false) => false,
            Err(e) => {
                // Losing a finding would make the report lie; give the run up instead.
                tracing::error!(run = %run.id, error = %e, "storing findings failed");
                false
            }
        }
    }
}

/// Wakes one worker every `poll`: the fallback for what no signal announces
/// (a notification lost while the listener reconnected, a run of a host whose
/// gap ended in another process). Submissions, the scheduler, the reaper, a
/// run's end (its retry or its host's gap, by timer) and, on Postgres, other
/// processes' submissions and requeues (LISTEN/NOTIFY) wake workers at once.
async fn poke(
    wake: Arc<Notify>,
    poked: Arc<std::sync::atomic::AtomicBool>,
    poll: Duration,
    shutdown: CancellationToken,
) {
    loop {
        tokio::select! {
            () = tokio::time::sleep(poll) => {
                poked.store(true, std::sync::atomic::Ordering::SeqCst);
                wake.notify_one();
            }
            () = shutdown.cancelled() => return,
        }
    }
}

/// Puts runs whose worker stopped heartbeating back in the queue, or ends them
/// as `error` once their attempts are used up.
async fn reaper(deps: WorkerDeps, cfg: Arc<WorkerConfig>, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(cfg.reap_every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = shutdown.cancelled() => return,
        }
        match deps
            .store
            .reap_expired(crate::now_ms(), crate::duration_ms(cfg.retry_base))
            .await
        {
            Ok(report) if report.requeued > 0 || report.errored > 0 => {
                tracing::warn!(
                    requeued = report.requeued,
                    errored = report.errored,
                    "expired leases reaped"
                );
                for _ in 0..report.requeued {
                    deps.wake.notify_one();
                }
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "reaping expired leases failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        workers: crate::config::WorkerArgs,
    }

    /// `config` cannot name the engines' constant (the two sit in one layer):
    /// its literal default is kept equal to it here.
    #[test]
    fn the_target_concurrency_defaults_to_the_engines() {
        let cli = Cli::parse_from(["protocheck"]);
        assert_eq!(
            cli.workers.target_concurrency,
            crate::suite::context::DEFAULT_TARGET_CONCURRENCY
        );
    }
}
