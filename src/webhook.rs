//! Webhooks: a run submitted with `options.webhook_url` (which needs an API key)
//! is announced to that URL when it ends as `passed`, `failed` or `error`.
//!
//! The store creates the delivery in the transaction that ends the run, so a
//! crash cannot lose it. A delivery loop in every worker pool claims due
//! deliveries with a lease (as workers claim runs), POSTs the JSON announcement
//! and records each attempt; connection errors, timeouts and non-2xx answers are
//! retried with growing delays, and a delivery left by a stopped process is
//! picked up by the next one. Addresses the SSRF guard refuses are not retried.
//!
//! The body is signed with the API key's webhook secret:
//! `Protocheck-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
//! A receiver recomputes the HMAC over the raw body it received and compares in
//! constant time ([`verify_signature`] does exactly that), and refuses old `t`s.

use crate::store::{AttemptOutcome, Run, Store, WebhookAttempt, WebhookDelivery};
use crate::submit::validate_webhook_url;
use crate::suite::{Finding, Outcome};
use crate::transport::{HttpClient, HttpRequest, TransportError};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use url::Url;

/// The event every run with a webhook announces.
pub use crate::events::RUN_FINISHED as EVENT_RUN_FINISHED;
pub const SIGNATURE_HEADER: &str = "protocheck-signature";
pub const DELIVERY_HEADER: &str = "protocheck-delivery";
pub const EVENT_HEADER: &str = "protocheck-event";
/// Longest an error kept with an attempt.
const MAX_ERROR_CHARS: usize = 300;

type HmacSha256 = Hmac<Sha256>;

/// Delivery settings.
#[derive(Debug, Clone)]
pub struct WebhookConfig {
    /// Delay before each retry: attempts = retries + 1.
    pub retry_delays: Vec<Duration>,
    /// Time for the receiver to answer (its status line and headers).
    pub timeout: Duration,
    /// How often the loop looks for due deliveries when nothing woke it:
    /// a run's end wakes it, and it wakes for the retries it schedules, so
    /// this only finds what another process left (an expired lease).
    pub poll: Duration,
    /// A claimed delivery is another process's again after this.
    pub lease: Duration,
    /// Deliveries in flight at once per process.
    pub concurrency: usize,
    /// Base of the report and page URLs in the announcement (`PROTOCHECK_PUBLIC_URL`);
    /// without it they are paths.
    pub public_url: Option<String>,
}

impl Default for WebhookConfig {
    fn default() -> Self {
        Self {
            retry_delays: vec![
                Duration::from_secs(10),
                Duration::from_secs(30),
                Duration::from_secs(120),
                Duration::from_secs(600),
            ],
            timeout: Duration::from_secs(10),
            poll: Duration::from_secs(60),
            lease: Duration::from_secs(60),
            concurrency: 4,
            public_url: None,
        }
    }
}

impl WebhookConfig {
    pub fn max_attempts(&self) -> i32 {
        i32::try_from(self.retry_delays.len()).unwrap_or(i32::MAX - 1) + 1
    }
}

/// How a webhook URL is shown to people: scheme, host and port only. Receivers
/// often put a secret in the path or query (`/hooks/T0/B0/XYZ`), and runs are public.
pub fn display_url(raw: &str) -> String {
    match Url::parse(raw) {
        Ok(url) => {
            let origin = url.origin().ascii_serialization();
            if url.path() == "/" && url.query().is_none() {
                origin
            } else {
                format!("{origin}/…")
            }
        }
        Err(_) => "(invalid URL)".to_owned(),
    }
}

/// The `Protocheck-Signature` value of `body` sent at `t` (Unix seconds).
pub fn sign(secret: &[u8], t: i64, body: &[u8]) -> String {
    format!(
        "t={t},v1={}",
        hex::encode(mac(secret, t, body).finalize().into_bytes())
    )
}

fn mac(secret: &[u8], t: i64, body: &[u8]) -> HmacSha256 {
    // HMAC takes keys of any length; `new_from_slice` cannot fail for it.
    let mut mac = <HmacSha256 as Mac>::new_from_slice(secret)
        .unwrap_or_else(|_| unreachable!("HMAC accepts every key length"));
    mac.update(t.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// What a receiver does: true when `header` signs `body` with `secret` and its
/// time is within `tolerance` of `now_s`. The comparison is constant-time.
pub fn verify_signature(
    secret: &[u8],
    header: &str,
    body: &[u8],
    now_s: i64,
    tolerance: Duration,
) -> bool {
    let mut t = None;
    let mut v1 = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", value)) => t = value.parse::<i64>().ok(),
            Some(("v1", value)) => v1.extend(hex::decode(value).ok()),
            _ => {}
        }
    }
    let Some(t) = t else { return false };
    let tolerance = i64::try_from(tolerance.as_secs()).unwrap_or(i64::MAX);
    if now_s.abs_diff(t) > tolerance.unsigned_abs() {
        return false;
    }
    v1.iter()
        .any(|sig| mac(secret, t, body).verify_slice(sig).is_ok())
}

/// The announcement of a finished run.
pub fn payload(run: &Run, public_url: Option<&str>) -> Value {
    let base = public_url.unwrap_or("").trim_end_matches('/');
    let verdict = run.verdict.as_ref().map(|v| {
        let mut doc = json!({
            "suite": v.suite,
            "suite_version": v.suite_version,
            "passed": v.passed,
            "summary": v.summary,
            "counts": v.counts,
        });
        match &v.detail {
            crate::suite::VerdictDetail::Rcp {
                certified_level,
                declared_level,
                honest,
                ..
            } => {
                doc["certified_level"] = json!(certified_level);
                doc["declared_level"] = json!(declared_level);
                doc["honest"] = json!(honest);
            }
            crate::suite::VerdictDetail::Mcp {
                grade,
                withheld,
                grade_by_revision,
                revisions,
                not_judged,
            } => {
                doc["grade"] = json!(grade);
                if let Some(why) = withheld {
                    doc["withheld"] = json!(why);
                }
                // A verdict of one revision reads as it always has; one of
                // several names each revision's grade beside the lowest.
                if !revisions.is_empty() {
                    doc["grade_by_revision"] = json!(grade_by_revision);
                    doc["revisions"] = json!(revisions);
                    doc["not_judged"] = json!(not_judged);
                }
            }
        }
        doc
    });
    let mut doc = json!({
        "event": EVENT_RUN_FINISHED,
        "run_id": run.id,
        "target_url": run.target_url,
        "suite": run.suite.as_str(),
        "status": run.status,
        "verdict": verdict,
        "error": run.error,
        "report_url": format!("{base}/api/v1/runs/{}/report.json", run.id),
        "run_url": format!("{base}/runs/{}", run.id),
        "api_url": format!("{base}/api/v1/runs/{}", run.id),
        "finished_at": run.finished_at_ms.map(crate::rfc3339),
    });
    // Said as the reports say it; the token itself was wiped with the run's end.
    if let Some(kind) = run.credentials_used() {
        doc["credentials"] = json!({
            "kind": kind,
            "note": crate::credentials::judged_with(Some(kind), &run.options),
        });
    }
    doc
}

/// Claims and sends due deliveries until `shutdown`; deliveries in flight finish
/// (each is bounded by the timeout) before it returns.
pub async fn delivery_loop(
    store: Arc<dyn Store>,
    http: HttpClient,
    cfg: Arc<WebhookConfig>,
    wake: Arc<Notify>,
    shutdown: CancellationToken,
) {
    let mut in_flight = JoinSet::new();
    // The earliest retry this process scheduled: the loop wakes for it
    // rather than polling for it.
    let mut next_retry: Option<i64> = None;
    loop {
        while in_flight.len() < cfg.concurrency.max(1) && !shutdown.is_cancelled() {
            let claimed = store
                .claim_webhook_delivery(crate::now_ms(), crate::duration_ms(cfg.lease))
                .await;
            match claimed {
                Ok(Some(delivery)) => {
                    let (store, http, cfg) = (store.clone(), http.clone(), cfg.clone());
                    in_flight
                        .spawn(async move { deliver(store.as_ref(), &http, &cfg, delivery).await });
                }
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "claiming a webhook delivery failed");
                    break;
                }
            }
        }
        if shutdown.is_cancelled() {
            break;
        }
        let now = crate::now_ms();
        if next_retry.is_some_and(|at| at <= now) {
            next_retry = None;
        }
        let until_retry = next_retry.map(|at| {
            Duration::from_millis(u64::try_from(at.saturating_sub(now)).unwrap_or(0) + 5)
        });
        tokio::select! {
            Some(done) = in_flight.join_next() => {
                if let Ok(Some(at)) = done {
                    next_retry = Some(next_retry.map_or(at, |t| t.min(at)));
                }
            }
            () = wake.notified() => {}
            () = tokio::time::sleep(until_retry.map_or(cfg.poll, |d| d.min(cfg.poll))) => {}
            () = shutdown.cancelled() => break,
        }
    }
    while in_flight.join_next().await.is_some() {}
}

/// Where a verdict stands, to compare two runs of one suite: an MCP grade or
/// an RCP level, higher is better; None when it is neither (`not judged`).
pub fn standing(v: &crate::suite::Verdict) -> Option<(u8, String)> {
    use crate::suite::VerdictDetail;
    let (levels, label) = match &v.detail {
        VerdictDetail::Mcp { grade, .. } => (MCP_STANDINGS, grade),
        VerdictDetail::Rcp {
            certified_level, ..
        } => (RCP_STANDINGS, certified_level),
    };
    let rank = levels.iter().position(|l| l == label)?;
    Some((u8::try_from(rank).ok()?, label.clone()))
}

/// The standings of MCP verdicts, lowest first (see [`standing`]).
pub const MCP_STANDINGS: &[&str] = &["non-compliant", "compliant", "strict"];
/// The standings of RCP verdicts, lowest first.
pub const RCP_STANDINGS: &[&str] = &["none", "L0", "L1", "L2"];

/// Each rule's outcome in a run: the worst of its findings, where a rule
/// judged several times counts as failed once any finding failed. Skipped
/// and informational findings judge nothing and are left out.
fn outcomes(findings: &[Finding]) -> BTreeMap<&str, Outcome> {
    let severity = |o: Outcome| match o {
        Outcome::Fail => 2,
        Outcome::Warn => 1,
        _ => 0,
    };
    let mut out: BTreeMap<&str, Outcome> = BTreeMap::new();
    for f in findings {
        if matches!(f.outcome, Outcome::Skip | Outcome::Info) {
            continue;
        }
        let worst = out.entry(f.rule_id.as_str()).or_insert(f.outcome);
        if severity(f.outcome) > severity(*worst) {
            *worst = f.outcome;
        }
    }
    out
}

/// A rule whose outcome changed between two runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleChange {
    pub rule_id: String,
    pub before: Outcome,
    pub after: Outcome,
}

/// How a run compares with the run of the same target and suite before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    /// [`crate::events::RUN_REGRESSED`] or [`crate::events::RUN_RECOVERED`].
    pub event: &'static str,
    pub before: Option<String>,
    pub after: Option<String>,
    /// Every rule that changed either way.
    pub changes: Vec<RuleChange>,
}

/// How a run that ended with `verdict` and `cur_findings` compares with the
/// run before it (`prev_verdict`, `prev_findings`): `run.regressed` when its
/// grade or level is lower or a rule that passed (or warned) now fails, else
/// `run.recovered` when its grade or level is higher or a rule that failed now
/// passes; None when neither. A rule one of the runs did not judge (skipped,
/// or absent) is not a change: nothing was seen of it.
pub fn compare(
    prev_verdict: Option<&crate::suite::Verdict>,
    prev_findings: &[Finding],
    verdict: &crate::suite::Verdict,
    cur_findings: &[Finding],
) -> Option<Comparison> {
    let before = prev_verdict.and_then(standing);
    let after = standing(verdict);
    let (old, new) = (outcomes(prev_findings), outcomes(cur_findings));
    let mut worse = matches!((&before, &after), (Some(b), Some(a)) if a.0 < b.0);
    let mut better = matches!((&before, &after), (Some(b), Some(a)) if a.0 > b.0);
    let mut changes = Vec::new();
    for (rule, &now) in &new {
        let Some(&was) = old.get(rule) else { continue };
        let regressed = now == Outcome::Fail && was != Outcome::Fail;
        let recovered = was == Outcome::Fail && now != Outcome::Fail;
        worse |= regressed;
        better |= recovered;
        if regressed || recovered {
            changes.push(RuleChange {
                rule_id: (*rule).to_owned(),
                before: was,
                after: now,
            });
        }
    }
    let event = if worse {
        crate::events::RUN_REGRESSED
    } else if better {
        crate::events::RUN_RECOVERED
    } else {
        return None;
    };
    Some(Comparison {
        event,
        before: before.map(|b| b.1),
        after: after.map(|a| a.1),
        changes,
    })
}

/// Words a finding says when its probe found the target gone: the
/// transport's own (`could not connect: …`, see [`TransportError::Connect`])
/// and the RCP suite's for the checks after it (`not verified: the server
/// stopped answering during …`). protocheck's words, not the target's.
const LOST_TARGET: &[&str] = &["could not connect", "the server stopped answering"];

/// Whether a run lost its target part-way: a finding that failed or was not
/// verified because the target stopped answering (a restart, an outage).
/// Such a run measured reachability, not conformance, so it is never compared
/// with another run (see [`WatchAnnouncer`]).
pub fn lost_target(findings: &[Finding]) -> bool {
    findings.iter().any(|f| {
        matches!(f.outcome, Outcome::Fail | Outcome::Skip)
            && LOST_TARGET.iter().any(|w| f.message.contains(w))
    })
}

/// What a run's end announces besides `run.finished` to its target's watch:
/// `run.regressed` or `run.recovered` against the run with a verdict before
/// it (see [`compare`]), when the watch asked for the event. The store reads
/// the watch and that run in the end's transaction. A run that lost its
/// target part-way ([`lost_target`]) announces neither, and is passed over
/// as the run before: its failures say the target was down, not that it
/// broke a rule.
pub struct WatchAnnouncer<'a> {
    verdict: &'a crate::suite::Verdict,
    findings: &'a [Finding],
    public_url: Option<&'a str>,
}

impl<'a> WatchAnnouncer<'a> {
    /// The announcer of a run that ended with `verdict` and `findings`;
    /// `public_url` is the base of the links in what it announces.
    pub fn new(
        verdict: &'a crate::suite::Verdict,
        findings: &'a [Finding],
        public_url: Option<&'a str>,
    ) -> Self {
        Self {
            verdict,
            findings,
            public_url,
        }
    }
}

impl crate::store::Announcer for WatchAnnouncer<'_> {
    fn suite(&self) -> &str {
        self.verdict.suite.as_str()
    }

    fn comparable(&self, findings: &[Finding]) -> bool {
        !lost_target(findings)
    }

    fn announce(
        &self,
        watch: &crate::store::Watch,
        previous: &Run,
        previous_findings: &[Finding],
    ) -> Vec<crate::store::Announcement> {
        let Some(url) = &watch.webhook_url else {
            return Vec::new();
        };
        if lost_target(self.findings) {
            tracing::info!(
                target = %watch.target_id,
                "the run lost its target part-way: neither a regression nor a recovery is announced"
            );
            return Vec::new();
        }
        compare(
            previous.verdict.as_ref(),
            previous_findings,
            self.verdict,
            self.findings,
        )
        .filter(|c| watch.events.iter().any(|e| e == c.event))
        .map(|c| crate::store::Announcement {
            event: c.event.to_owned(),
            url: url.clone(),
            api_key: watch.api_key,
            detail: c.detail(previous, self.public_url),
        })
        .into_iter()
        .collect()
    }
}

impl Comparison {
    /// What the event adds to the run's announcement: both standings, the
    /// rules that changed (old and new outcomes), and the run before, linked.
    pub fn detail(&self, previous: &Run, public_url: Option<&str>) -> Value {
        let base = public_url.unwrap_or("").trim_end_matches('/');
        let changes: Vec<Value> = self
            .changes
            .iter()
            .map(|c| {
                json!({"rule_id": c.rule_id, "before": c.before.as_str(), "after": c.after.as_str()})
            })
            .collect();
        json!({
            "standing": {"before": self.before, "after": self.after},
            "changes": changes,
            "previous": {
                "run_id": previous.id,
                "summary": previous.verdict.as_ref().map(|v| v.summary.clone()),
                "finished_at": previous.finished_at_ms.map(crate::rfc3339),
                "run_url": format!("{base}/runs/{}", previous.id),
                "api_url": format!("{base}/api/v1/runs/{}", previous.id),
            },
        })
    }
}

fn clip(s: &str) -> String {
    s.chars().take(MAX_ERROR_CHARS).collect()
}

/// One attempt of one delivery, recorded whatever happens; the time of the
/// next attempt when one is scheduled.
async fn deliver(
    store: &dyn Store,
    http: &HttpClient,
    cfg: &WebhookConfig,
    d: WebhookDelivery,
) -> Option<i64> {
    let attempt = d.attempts + 1;
    let (status_code, error, retryable) = match send(store, http, cfg, &d).await {
        Ok(status) if (200..300).contains(&status) => (Some(status), None, false),
        Ok(status) => (
            Some(status),
            Some(format!("the receiver answered HTTP {status}")),
            true,
        ),
        Err(Failure::Permanent(reason)) => (None, Some(clip(&reason)), false),
        Err(Failure::Transient(reason)) => (None, Some(clip(&reason)), true),
    };
    let now = crate::now_ms();
    let outcome = if error.is_none() {
        AttemptOutcome::Delivered
    } else if retryable && attempt < cfg.max_attempts() {
        let delay = usize::try_from(attempt - 1)
            .ok()
            .and_then(|i| cfg.retry_delays.get(i))
            .copied()
            .unwrap_or(Duration::from_secs(60));
        AttemptOutcome::RetryAt(now.saturating_add(crate::duration_ms(delay)))
    } else {
        AttemptOutcome::Failed
    };
    let record = WebhookAttempt {
        attempt,
        at_ms: now,
        status_code: status_code.map(i32::from),
        error,
        next_attempt_at_ms: match outcome {
            AttemptOutcome::RetryAt(at) => Some(at),
            _ => None,
        },
    };
    match store.record_webhook_attempt(&d.id, &record, outcome).await {
        Ok(true) => {
            tracing::info!(
                delivery = %d.id, run = %d.run_id, attempt, status = ?record.status_code,
                error = ?record.error, "webhook attempt recorded"
            );
            record.next_attempt_at_ms
        }
        Ok(false) => {
            tracing::warn!(delivery = %d.id, "webhook attempt recorded by another process");
            None
        }
        Err(e) => {
            tracing::error!(delivery = %d.id, error = %e, "recording a webhook attempt failed; it will be retried when the lease expires");
            // Its lease's end, when another claim may take it.
            Some(crate::now_ms().saturating_add(crate::duration_ms(cfg.lease)))
        }
    }
}

enum Failure {
    /// Retrying cannot help: the address is refused, the run or its key is gone.
    Permanent(String),
    Transient(String),
}

async fn send(
    store: &dyn Store,
    http: &HttpClient,
    cfg: &WebhookConfig,
    d: &WebhookDelivery,
) -> Result<u16, Failure> {
    let transient = |e: crate::store::StoreError| Failure::Transient(format!("database: {e}"));
    let run = store
        .get_run(d.run_id)
        .await
        .map_err(transient)?
        .ok_or_else(|| Failure::Permanent("the run no longer exists".into()))?;
    // An event of a watch is signed with the watch's key; a run's own
    // announcement with the key it was submitted with.
    let key = match d.api_key {
        Some(key) => key,
        None => {
            store
                .run_api_key(d.run_id)
                .await
                .map_err(transient)?
                .ok_or_else(|| Failure::Permanent("the run has no API key to sign with".into()))?
                .id
        }
    };
    let secret = store
        .api_key_webhook_secret(key)
        .await
        .map_err(transient)?
        .ok_or_else(|| Failure::Permanent("the API key has no webhook secret".into()))?;
    let url = validate_webhook_url(&d.url).map_err(Failure::Permanent)?;
    let mut doc = payload(&run, cfg.public_url.as_deref());
    doc["event"] = json!(d.event);
    if let (Some(Value::Object(detail)), Some(out)) = (&d.detail, doc.as_object_mut()) {
        for (k, v) in detail {
            out.insert(k.clone(), v.clone());
        }
    }
    let body = doc.to_string();
    let t = crate::now_ms() / 1000;
    let req = HttpRequest::post_raw(url, "application/json", body.clone().into())
        .header(
            SIGNATURE_HEADER,
            sign(secret.as_bytes(), t, body.as_bytes()),
        )
        .header(DELIVERY_HEADER, d.id.clone())
        .header(EVENT_HEADER, d.event.clone())
        .timeout(cfg.timeout);
    // Only the status matters: the body is never read beyond what arrives with the
    // head, never stored and never shown, and redirects are not followed.
    // A run's own hook is sent under the address policy the service that
    // accepted it checked it against (see `RunOrigin::private_targets`).
    let recorded = match run.private_targets {
        Some(true) => Some(crate::transport::AddressPolicy::AllowPrivate),
        Some(false) => Some(crate::transport::AddressPolicy::PublicOnly),
        None => None,
    };
    let under_recorded;
    let http = match recorded {
        Some(policy) if d.api_key.is_none() && policy != http.policy() => {
            under_recorded = http
                .with_policy(policy)
                .map_err(|e| Failure::Transient(e.to_string()))?;
            &under_recorded
        }
        _ => http,
    };
    match http.send_streaming(&req).await {
        Ok(resp) => Ok(resp.status),
        Err(e @ TransportError::Forbidden { .. }) => {
            Err(Failure::Permanent(scrub(&e.to_string(), &d.url)))
        }
        Err(e) => Err(Failure::Transient(scrub(&e.to_string(), &d.url))),
    }
}

/// `text` with the hook's URL, path and query replaced by its display form
/// (origin and `/…`): an attempt's error is shown to anyone who can read the
/// run (its resource, its page) and logged, and a hook's path and query are
/// its secret (the HTTP client's errors quote the whole URL).
fn scrub(text: &str, raw: &str) -> String {
    let shown = display_url(raw);
    let mut out = text.replace(raw, &shown);
    if let Ok(url) = Url::parse(raw) {
        out = out.replace(url.as_str(), &shown);
        let mut tail = url.path().to_owned();
        if let Some(q) = url.query() {
            tail.push('?');
            tail.push_str(q);
        }
        // The path and query alone, wherever they still appear.
        if tail.len() > 1 {
            out = out.replace(&tail, "/…");
        }
        if let Some(q) = url.query().filter(|q| !q.is_empty()) {
            out = out.replace(q, "…");
        }
        if url.path().len() > 1 {
            out = out.replace(url.path(), "/…");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Counts, SuiteId, Verdict, VerdictDetail};

    fn mcp_verdict(grade: &str) -> Verdict {
        Verdict {
            suite: SuiteId::Mcp,
            suite_version: "1".into(),
            spec_revision: "2026-07-28".into(),
            passed: grade != "non-compliant",
            summary: grade.into(),
            counts: Counts::default(),
            detail: VerdictDetail::mcp(grade),
        }
    }

    fn finding(rule: &str, outcome: Outcome) -> Finding {
        Finding {
            rule_id: rule.into(),
            outcome,
            message: String::new(),
            evidence: Vec::new(),
            duration_ms: 0,
        }
    }

    #[test]
    fn a_run_is_compared_by_its_standing_and_by_each_rule_it_judged() {
        use Outcome::{Fail, Pass, Skip, Warn};
        let strict = mcp_verdict("strict");
        let compliant = mcp_verdict("compliant");
        let before = [finding("A", Pass), finding("B", Fail), finding("C", Pass)];
        // A rule that passed now fails: regressed, though the grade holds.
        let now = [finding("A", Fail), finding("B", Fail), finding("C", Pass)];
        let c = compare(Some(&strict), &before, &strict, &now).expect("a change");
        assert_eq!(c.event, crate::events::RUN_REGRESSED);
        assert_eq!(
            c.changes,
            vec![RuleChange {
                rule_id: "A".into(),
                before: Pass,
                after: Fail
            }]
        );
        // A lower grade alone is a regression; a higher one a recovery.
        let c = compare(Some(&strict), &before, &compliant, &before).expect("a change");
        assert_eq!(
            (c.event, c.before.as_deref(), c.after.as_deref()),
            (
                crate::events::RUN_REGRESSED,
                Some("strict"),
                Some("compliant")
            )
        );
        assert!(c.changes.is_empty());
        let c = compare(Some(&compliant), &before, &strict, &before).expect("a change");
        assert_eq!(c.event, crate::events::RUN_RECOVERED);
        // A rule that failed now passes (or only warns): recovered.
        let now = [finding("A", Pass), finding("B", Warn), finding("C", Pass)];
        let c = compare(Some(&strict), &before, &strict, &now).expect("a change");
        assert_eq!(c.event, crate::events::RUN_RECOVERED);
        // A rule one run skipped or did not run is no change either way; a
        // rule judged twice counts as failed once any finding failed.
        let now = [
            finding("A", Skip),
            finding("C", Pass),
            finding("C", Fail),
            finding("D", Fail),
        ];
        let c = compare(Some(&strict), &before, &strict, &now).expect("C failed");
        assert_eq!(c.changes.len(), 1, "{c:?}");
        assert_eq!(c.changes[0].rule_id, "C");
        assert_eq!(compare(Some(&strict), &before, &strict, &before), None);
        // With no standing to compare (`not judged`), only the rules speak.
        let withheld = mcp_verdict("not judged");
        assert_eq!(compare(Some(&strict), &before, &withheld, &before), None);
    }

    #[test]
    fn a_run_that_lost_its_target_is_told_by_protocheck_s_words() {
        let lost = |outcome, message: &str| {
            let mut f = finding("RCP-L0-002", outcome);
            f.message = message.into();
            lost_target(&[finding("RCP-L0-001", Outcome::Pass), f])
        };
        assert!(lost(Outcome::Fail, "could not connect: connection refused"));
        assert!(lost(
            Outcome::Skip,
            "not verified: the server stopped answering during RCP-L0-001"
        ));
        assert!(!lost(Outcome::Fail, "the answer has no id"));
        // A rule that passed is no loss, whatever its message quotes.
        assert!(!lost(Outcome::Pass, "could not connect"));
    }

    #[test]
    fn signatures_verify_with_the_secret_only() {
        let body = br#"{"event":"run.finished"}"#;
        let header = sign(b"whsec_a", 1_000, body);
        assert!(header.starts_with("t=1000,v1="), "{header}");
        let tol = Duration::from_secs(300);
        assert!(verify_signature(b"whsec_a", &header, body, 1_100, tol));
        assert!(!verify_signature(b"whsec_b", &header, body, 1_100, tol));
        assert!(!verify_signature(b"whsec_a", &header, b"{}", 1_100, tol));
        assert!(!verify_signature(b"whsec_a", &header, body, 2_000, tol));
        assert!(!verify_signature(b"whsec_a", "v1=00", body, 1_000, tol));
    }

    #[test]
    fn an_error_quoting_the_hook_shows_its_origin_only() {
        let raw = "http://127.0.0.1:9/hooks/SECRETPATH?token=SECRETQUERY";
        for text in [
            format!("could not connect: error sending request for url ({raw})"),
            "error for /hooks/SECRETPATH?token=SECRETQUERY".to_owned(),
            "token=SECRETQUERY".to_owned(),
        ] {
            let out = scrub(&text, raw);
            assert!(
                !out.contains("SECRETPATH") && !out.contains("SECRETQUERY"),
                "{out}"
            );
        }
        assert_eq!(
            scrub(&format!("url ({raw})"), raw),
            "url (http://127.0.0.1:9/…)"
        );
    }

    #[test]
    fn urls_are_checked_and_shown_without_their_path() {
        use crate::submit::MAX_WEBHOOK_URL_BYTES;
        assert!(validate_webhook_url("https://hooks.example.com/x?y=1").is_ok());
        for bad in [
            "ftp://example.com/",
            "/relative",
            "https://user:pw@example.com/",
            "https://user@example.com/",
        ] {
            assert!(validate_webhook_url(bad).is_err(), "{bad}");
        }
        assert!(
            validate_webhook_url(&format!(
                "https://e.com/{}",
                "a".repeat(MAX_WEBHOOK_URL_BYTES)
            ))
            .is_err()
        );
        assert_eq!(
            display_url("https://hooks.example.com/T0/B0/XYZ?k=1"),
            "https://hooks.example.com/…"
        );
        assert_eq!(
            display_url("http://127.0.0.1:9000/"),
            "http://127.0.0.1:9000"
        );
    }
}
