//! The shared context of a run: what it is pointed at, what it may use
//! ([`RunContext`]), how it fails ([`EngineError`]), and the [`Reporter`] that
//! carries its findings out. Every suite (MCP, RCP) and the detection read
//! these; none of them needs the runner that picks between them.

use super::{Counts, DEFAULT_RUN_DEADLINE, Finding, Outcome, RunOptions};
use crate::transport::{HttpClient, TransportError};
use futures::future::BoxFuture;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use url::Url;

/// What a run is pointed at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A server reached over HTTP at this (canonical) URL.
    Http(Url),
    /// A command spawned as a child speaking stdio (the CLI only).
    Stdio(String),
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Http(url) => write!(f, "{url}"),
            Self::Stdio(cmd) => write!(f, "stdio: {cmd}"),
        }
    }
}

/// Everything a suite needs to probe a target.
#[derive(Debug, Clone)]
pub struct RunContext {
    pub http: HttpClient,
    pub options: RunOptions,
    /// Whole-run deadline.
    pub deadline: Duration,
    /// What earlier runs saw of this target's RCP handshake, read when the
    /// run needs it. Not an option: it is looked up by whoever drives the
    /// run, never stored with it, and not part of the dedup key.
    pub handshake_history: HistoryLookup,
    /// Most requests in flight to the target at once (the MCP engines over
    /// HTTP); set by whoever drives the run (`PROTOCHECK_TARGET_CONCURRENCY`,
    /// `check --concurrency`), [`DEFAULT_TARGET_CONCURRENCY`] otherwise.
    pub target_concurrency: usize,
}

/// Requests one run has in flight to its target at once unless told
/// otherwise. A run sends the same requests whatever this is (about 150 for
/// MCP 2026-07-28); it sets how close together they come. Over HTTP/2 (most
/// servers behind TLS) they are streams of one connection, a sixth of the
/// 100 concurrent streams RFC 9113 (§6.5.2) recommends a server allow; over
/// HTTP/1.1 as many connections. With one run per host at a time (the
/// service's `PROTOCHECK_HOST_CONCURRENCY`) that is the most a host sees
/// from protocheck. At 4 a run across 100 ms of network took 5 s, bound by
/// its requests; at 16 it is bound by its own chains of round trips (under
/// 2 s: docs/src/performance/suites.md).
pub const DEFAULT_TARGET_CONCURRENCY: usize = 16;

impl RunContext {
    pub fn new(http: HttpClient, options: RunOptions) -> Self {
        Self {
            http,
            options,
            deadline: DEFAULT_RUN_DEADLINE,
            handshake_history: HistoryLookup::default(),
            target_concurrency: DEFAULT_TARGET_CONCURRENCY,
        }
    }
}

/// Whether an earlier run saw this target complete its RCP `initialize`
/// handshake (RCP decision 3, as narrowed by the amendment of 2026-11-30).
///
/// A server that keeps one initialized flag for its whole process (as the
/// Python and C++ reference servers do) looks, to a second client, exactly
/// like a server whose `initialize` never succeeds: gated calls answer before
/// `initialize`, and `initialize` is refused with -32600. One run cannot tell
/// them apart; the service's history can. With it, the level is certified as
/// the earlier run showed; without it, no level is, because L0 needs
/// `initialize` answered (spec §14.1 rule 1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum HandshakeHistory {
    /// No history is kept: `protocheck check` runs without a database.
    #[default]
    Unavailable,
    /// No finished run of this target saw its handshake complete.
    NotObserved,
    /// Run `run_id`, finished at `at_ms` (ms since the epoch), saw this target
    /// complete `initialize`.
    Observed { run_id: String, at_ms: i64 },
}

/// How a run reads its target's [`HandshakeHistory`]: at most once, and only
/// if it needs it (a server that refuses `initialize` as already done), so
/// that a run that does not costs the service's database nothing (#29 item 4).
#[derive(Clone)]
pub struct HistoryLookup {
    read: Arc<dyn Fn() -> BoxFuture<'static, HandshakeHistory> + Send + Sync>,
    found: Arc<tokio::sync::OnceCell<HandshakeHistory>>,
}

impl HistoryLookup {
    /// A lookup that runs `read` the first time the history is asked for.
    pub fn new(
        read: impl Fn() -> BoxFuture<'static, HandshakeHistory> + Send + Sync + 'static,
    ) -> Self {
        Self {
            read: Arc::new(read),
            found: Arc::default(),
        }
    }

    /// The history, read on the first call.
    pub async fn get(&self) -> HandshakeHistory {
        self.found.get_or_init(|| (self.read)()).await.clone()
    }
}

impl From<HandshakeHistory> for HistoryLookup {
    fn from(known: HandshakeHistory) -> Self {
        Self::new(move || {
            let known = known.clone();
            Box::pin(async move { known })
        })
    }
}

impl Default for HistoryLookup {
    fn default() -> Self {
        HandshakeHistory::default().into()
    }
}

impl std::fmt::Debug for HistoryLookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistoryLookup")
            .field("found", &self.found.get())
            .finish_non_exhaustive()
    }
}

/// Why a run could not produce a verdict. The message is shown to the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// Its message starts with [`UNREACHABLE_PREFIX`].
    #[error("the target could not be reached: {0}")]
    Unreachable(TransportError),
    #[error("the target is not allowed: {0}")]
    Forbidden(TransportError),
    #[error("could not tell which protocol the target speaks: {0}")]
    Detect(String),
    #[error("{0}")]
    Unsupported(String),
    #[error("the run did not finish within its {}s deadline", .0.as_secs())]
    Deadline(Duration),
    #[error("the run was abandoned: its findings could no longer be recorded")]
    Aborted,
}

/// How the message of a run that could not reach its target starts (see
/// [`EngineError::Unreachable`]): protocheck's own words, whatever the target
/// answered, so that the store can tell such runs from others (a badge says
/// "unreachable since" after a streak of them).
pub const UNREACHABLE_PREFIX: &str = "the target could not be reached:";

impl EngineError {
    /// Whether the run deserves another attempt. Retries are for the worker's
    /// failures; a target that is slow or broken is judged on the first
    /// attempt, since asking again would only send it the same load again
    /// (a slow target turned one run into three, each to its deadline).
    ///
    /// One exception: a connection refused or dropped before it was
    /// established, which is what a server restarting looks like. A later attempt costs such a target nothing it cannot
    /// refuse, and the run's deadline bounds every attempt together. A
    /// timeout (connecting or waiting for an answer), a reset mid-exchange, a
    /// name that does not resolve and the deadline itself are not retried.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::Unreachable(TransportError::Connect(_)))
    }

    /// Classifies a transport error met before the suite could start.
    pub fn from_transport(err: TransportError) -> Self {
        match err {
            TransportError::Forbidden { .. } => Self::Forbidden(err),
            other => Self::Unreachable(other),
        }
    }
}

/// Collects findings, streams each one out as it is produced, and keeps them for
/// the verdict.
pub struct Reporter {
    /// Where findings stream out; `None` for a reporter that only collects.
    tx: Option<mpsc::Sender<Finding>>,
    findings: Vec<Finding>,
}

/// The start of a [`TransportError::RateLimited`] message, as evidence keeps it.
const RATE_LIMITED: &str = "rate limited: ";

/// A rule whose evidence holds a request the target's rate limiter answered
/// and protocheck could not send again within the run (see
/// `transport::throttle`) was not completed: it is not verified, with the
/// limiter's figures, never failed or warned for what the server never
/// answered. Every finding of every suite passes through here.
fn unverified_when_rate_limited(finding: &mut Finding) {
    if !matches!(finding.outcome, Outcome::Fail | Outcome::Warn) {
        return;
    }
    let Some(limited) = finding
        .evidence
        .iter()
        .filter_map(|e| e.error.as_deref())
        .find(|e| e.starts_with(RATE_LIMITED))
    else {
        return;
    };
    finding.message = format!("not verified: {limited}");
    finding.outcome = Outcome::Skip;
}

impl Reporter {
    pub fn new(tx: mpsc::Sender<Finding>) -> Self {
        Self {
            tx: Some(tx),
            findings: Vec::new(),
        }
    }

    /// A reporter that streams nothing out: what it collects is handed on
    /// later, in an order of the caller's choosing ([`into_findings`](Self::into_findings)).
    pub fn collecting() -> Self {
        Self {
            tx: None,
            findings: Vec::new(),
        }
    }

    /// The findings collected, in the order they were emitted.
    pub fn into_findings(self) -> Vec<Finding> {
        self.findings
    }

    /// Records a finding; fails when the receiving side has gone away.
    pub async fn emit(&mut self, mut finding: Finding) -> Result<(), EngineError> {
        unverified_when_rate_limited(&mut finding);
        self.findings.push(finding.clone());
        match &self.tx {
            Some(tx) => tx.send(finding).await.map_err(|_| EngineError::Aborted),
            None => Ok(()),
        }
    }

    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    pub fn outcome_of(&self, rule_id: &str) -> Option<Outcome> {
        self.findings
            .iter()
            .rev()
            .find(|f| f.rule_id == rule_id)
            .map(|f| f.outcome)
    }

    pub fn counts(&self) -> Counts {
        Counts::of(&self.findings)
    }
}

/// Measures how long a rule took, for the finding's `duration_ms`.
pub struct Stopwatch(Instant);

impl Stopwatch {
    pub fn start() -> Self {
        Self(Instant::now())
    }

    pub fn ms(&self) -> u64 {
        u64::try_from(self.0.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::evidence::{Exchange, RequestRecord};

    fn finding(outcome: Outcome, error: Option<String>) -> Finding {
        Finding {
            rule_id: "MCP-STL-004".into(),
            outcome,
            message: "the server relies on earlier requests".into(),
            evidence: vec![Exchange {
                request: RequestRecord {
                    line: "POST http://127.0.0.1:9/mcp".into(),
                    headers: Vec::new(),
                    body: String::new(),
                },
                response: None,
                error,
            }],
            duration_ms: 1,
        }
    }

    #[tokio::test]
    async fn a_rule_the_rate_limiter_kept_from_completing_is_not_verified() {
        let limited = TransportError::RateLimited {
            status: 429,
            wait_s: 90,
            detail: "40 s before the run's deadline (3 answer(s) of this run asked it to wait)"
                .into(),
            resend_after: None,
        };
        let mut reporter = Reporter::collecting();
        for outcome in [Outcome::Fail, Outcome::Warn] {
            reporter
                .emit(finding(outcome, Some(limited.to_string())))
                .await
                .expect("collected");
        }
        // A failure for another cause, and a pass, stay as they are.
        let other = TransportError::Timeout(Duration::from_secs(10)).to_string();
        reporter
            .emit(finding(Outcome::Fail, Some(other)))
            .await
            .expect("collected");
        reporter
            .emit(finding(Outcome::Pass, Some(limited.to_string())))
            .await
            .expect("collected");
        let got: Vec<(Outcome, &str)> = reporter
            .findings()
            .iter()
            .map(|f| (f.outcome, f.message.as_str()))
            .collect();
        let skipped = format!("not verified: {limited}");
        assert_eq!(
            got,
            [
                (Outcome::Skip, skipped.as_str()),
                (Outcome::Skip, skipped.as_str()),
                (Outcome::Fail, "the server relies on earlier requests"),
                (Outcome::Pass, "the server relies on earlier requests"),
            ]
        );
        assert!(
            skipped.starts_with(
                "not verified: rate limited: the target answered HTTP 429 with Retry-After 90 s, 40 s"
            ),
            "{skipped}"
        );
    }
}
