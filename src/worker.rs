//! Workers: claim a run with a lease, run the suite, store findings as they are
//! produced, heartbeat while running, and end the run with its verdict, a retry
//! with backoff, or `error` with the reason.
//!
//! A worker never holds a database transaction across a run: the claim commits at
//! once and the lease is what keeps other workers away. A worker that dies keeps
//! its lease until it expires; the reaper then puts the run back in the queue.

use crate::events::RunEvents;
use crate::metrics::Metrics;
use crate::store::{Run, RunEnd, Store};
use crate::suite::{self, Endpoint, Finding, HandshakeHistory, RunContext, SuiteChoice};
use crate::transport::{AddressPolicy, HttpClient, Limits};
use crate::webhook::WebhookConfig;
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
}

impl WorkerConfig {
    pub fn new(workers: usize, lease: Duration, policy: AddressPolicy) -> Self {
        Self {
            workers: workers.max(1),
            lease,
            heartbeat: lease / 3,
            poll: Duration::from_secs(2),
            reap_every: (lease / 2).max(Duration::from_millis(100)),
            shutdown_grace: Duration::from_secs(20),
            run_deadline: suite::DEFAULT_RUN_DEADLINE,
            retry_base: RETRY_BASE,
            policy,
            limits: Limits::default(),
            attestor: None,
            webhooks: WebhookConfig::default(),
        }
    }

    pub fn from_args(args: &crate::config::WorkerArgs, policy: AddressPolicy) -> Self {
        let mut cfg = Self::new(args.workers, args.lease(), policy);
        cfg.poll = Duration::from_secs(args.poll_secs.max(1));
        cfg.shutdown_grace = Duration::from_secs(args.shutdown_grace_secs);
        cfg.run_deadline = Duration::from_secs(args.run_deadline_secs.max(1));
        cfg.webhooks.public_url = args.webhook_public_url.clone();
        cfg
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
        let http = HttpClient::new(cfg.policy, cfg.limits.clone())?;
        let shutdown = CancellationToken::new();
        let mut tasks = JoinSet::new();
        let cfg = Arc::new(cfg);
        let webhook_wake = Arc::new(Notify::new());
        let process = Uuid::new_v4().simple().to_string();
        for n in 0..cfg.workers {
            let worker = Worker {
                id: format!("{}-{}-{n}", host_name(), &process[..8]),
                deps: deps.clone(),
                cfg: cfg.clone(),
                http: http.clone(),
                shutdown: shutdown.clone(),
                webhook_wake: webhook_wake.clone(),
            };
            tasks.spawn(worker.run());
        }
        tasks.spawn(reaper(deps.clone(), cfg.clone(), shutdown.clone()));
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
}

/// How a run's execution ended, from the worker's side.
enum Execution {
    Done(Result<suite::Verdict, suite::EngineError>),
    /// Another worker owns the run now; this one must not touch it.
    LeaseLost,
    /// Shutdown grace ran out; the run goes back to the queue.
    Released,
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
            match self
                .deps
                .store
                .claim_run(&self.id, crate::now_ms(), lease_ms)
                .await
            {
                Ok(Some(run)) => {
                    self.execute(run).await;
                    continue;
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(worker = %self.id, error = %e, "claiming a run failed"),
            }
            tokio::select! {
                _ = &mut notified => {}
                _ = tokio::time::sleep(self.cfg.poll) => {}
                _ = self.shutdown.cancelled() => break,
            }
        }
        tracing::debug!(worker = %self.id, "worker stopped");
    }

    async fn execute(&self, run: Run) {
        let started = Instant::now();
        tracing::info!(worker = %self.id, run = %run.id, attempt = run.attempts, url = %run.target_url, "run claimed");
        self.deps.events.changed(run.id);
        let execution = self.drive(&run).await;
        let store = &self.deps.store;
        let now = crate::now_ms();
        // A run that ended in error was judged by no suite: it records protocheck's version.
        let protocheck_version = env!("CARGO_PKG_VERSION");
        let result = match execution {
            Execution::LeaseLost => {
                tracing::warn!(worker = %self.id, run = %run.id, "lease lost; another worker owns the run");
                return;
            }
            Execution::Released => {
                let reason = "released by a worker shutting down; will run again";
                store
                    .requeue_run(run.id, &self.id, reason, now, false)
                    .await
                    .map(|_| "released")
            }
            Execution::Done(Ok(verdict)) => {
                if verdict.detail.protocol_observed()
                    && let Err(e) = store
                        .set_target_protocol(&run.target_id, verdict.suite.as_str())
                        .await
                {
                    tracing::warn!(run = %run.id, error = %e, "recording the target's protocol failed");
                }
                let status = if verdict.passed { "passed" } else { "failed" };
                let version = verdict.suite_version.clone();
                let finished = store
                    .finish_run(run.id, &self.id, &RunEnd::Verdict(verdict), &version, now)
                    .await;
                if let (Ok(true), Some(attestor)) = (&finished, &self.cfg.attestor) {
                    // A signing failure must not cost the run its verdict: log it; the
                    // attestation is created when it is first requested.
                    if let Err(e) =
                        crate::attest::attest_run(store.as_ref(), attestor, run.id).await
                    {
                        tracing::warn!(run = %run.id, error = %e, "signing the verdict failed");
                    }
                }
                finished.map(|_| status)
            }
            Execution::Done(Err(err)) if err.is_retryable() && run.attempts < run.max_attempts => {
                let delay = self.cfg.backoff(run.attempts);
                let reason = format!(
                    "attempt {} of {} failed: {err}; retrying in {}s",
                    run.attempts,
                    run.max_attempts,
                    delay.as_secs()
                );
                store
                    .requeue_run(
                        run.id,
                        &self.id,
                        &reason,
                        now + crate::duration_ms(delay),
                        true,
                    )
                    .await
                    .map(|_| "retried")
            }
            Execution::Done(Err(err)) => {
                let reason = if err.is_retryable() {
                    format!("{err} (gave up after {} attempts)", run.attempts)
                } else {
                    err.to_string()
                };
                store
                    .finish_run(
                        run.id,
                        &self.id,
                        &RunEnd::Error(reason),
                        protocheck_version,
                        now,
                    )
                    .await
                    .map(|_| "error")
            }
        };
        match result {
            Ok(status) => {
                self.deps
                    .metrics
                    .observe_run(run.suite, status, started.elapsed().as_secs_f64());
                tracing::info!(worker = %self.id, run = %run.id, status, "run ended");
                if run.webhook_url.is_some() {
                    self.webhook_wake.notify_one();
                }
            }
            Err(e) => {
                tracing::error!(worker = %self.id, run = %run.id, error = %e, "recording the end of a run failed; its lease will expire and it will run again")
            }
        }
        self.deps.events.changed(run.id);
    }

    /// Runs the suite while heartbeating and writing findings; watches for shutdown.
    async fn drive(&self, run: &Run) -> Execution {
        let choice = run.suite;
        let endpoint = match url::Url::parse(&run.target_url) {
            Ok(url) => Endpoint::Http(url),
            Err(e) => {
                return Execution::Done(Err(suite::EngineError::Unsupported(format!(
                    "stored target URL is invalid: {e}"
                ))));
            }
        };
        let mut ctx = RunContext::new(self.http.clone(), run.options.clone());
        ctx.deadline = self.cfg.run_deadline;
        if choice != SuiteChoice::Mcp {
            ctx.handshake_history = self.handshake_history(run).await;
        }
        let (tx, mut rx) = mpsc::channel::<Finding>(FINDINGS_BUFFER);

        let engine = suite::run_suite(choice, &endpoint, &ctx, tx);
        let sink = async {
            let mut seq = 0i64;
            while let Some(finding) = rx.recv().await {
                let stored = self
                    .deps
                    .store
                    .append_finding(
                        run.id,
                        &self.id,
                        run.attempts,
                        seq,
                        &finding,
                        crate::now_ms(),
                    )
                    .await;
                match stored {
                    Ok(true) => self.deps.events.changed(run.id),
                    Ok(false) => return false,
                    Err(e) => {
                        // Losing a finding would make the report lie; give the run up instead.
                        tracing::error!(run = %run.id, error = %e, "storing a finding failed");
                        return false;
                    }
                }
                seq += 1;
            }
            true
        };
        let work = async { tokio::join!(engine, sink) };
        tokio::pin!(work);

        let mut heartbeat =
            tokio::time::interval(self.cfg.heartbeat.max(Duration::from_millis(50)));
        heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        heartbeat.tick().await;
        let grace = tokio::time::sleep(Duration::MAX / 4);
        tokio::pin!(grace);
        let mut draining = false;
        loop {
            tokio::select! {
                (verdict, sink_ok) = &mut work => {
                    return if sink_ok { Execution::Done(verdict) } else { Execution::LeaseLost };
                }
                _ = heartbeat.tick() => {
                    let ok = self.deps.store
                        .heartbeat(run.id, &self.id, crate::now_ms(), crate::duration_ms(self.cfg.lease))
                        .await;
                    match ok {
                        Ok(true) => {}
                        Ok(false) => return Execution::LeaseLost,
                        Err(e) => tracing::warn!(run = %run.id, error = %e, "heartbeat failed; retrying"),
                    }
                }
                _ = self.shutdown.cancelled(), if !draining => {
                    draining = true;
                    grace.as_mut().reset(tokio::time::Instant::now() + self.cfg.shutdown_grace);
                }
                _ = &mut grace, if draining => return Execution::Released,
            }
        }
    }
}

impl Worker {
    /// Whether an earlier run of this target saw its RCP handshake complete:
    /// the newest finished run where `RCP-L0-011` (`initialize` negotiates)
    /// passed. A long-lived server that keeps one initialized flag for the
    /// whole process can then be certified on a later run, as that run showed
    /// (RCP decision 3; see [`HandshakeHistory`]).
    async fn handshake_history(&self, run: &Run) -> HandshakeHistory {
        let found = self
            .deps
            .store
            .latest_run_with_finding(
                &run.target_id,
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
                tracing::warn!(run = %run.id, error = %e, "reading the target's handshake history failed");
                HandshakeHistory::Unavailable
            }
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
                if report.requeued > 0 {
                    deps.wake.notify_one();
                }
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "reaping expired leases failed"),
        }
    }
}
