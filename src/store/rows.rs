//! Row decoding shared by both backends. The stores use runtime queries rather than
//! the `query!` macros, so there is no DATABASE_URL or `.sqlx` cache at build time;
//! what the compiler would have checked is checked here and by the contract tests.
//! Anything that does not decode is `StoreError::Corrupt`, never a panic.

/// The columns of a [`Run`], in the order [`RunRow`] decodes them. Usable after
/// `SELECT` from `runs` and in `RETURNING` of an `INSERT`/`UPDATE` on `runs`, in
/// both dialects: the target URL comes from a scalar subquery because `RETURNING`
/// cannot join.
macro_rules! run_columns {
    () => {
        "runs.id, runs.target_id, \
         (SELECT targets.canonical_url FROM targets WHERE targets.id = runs.target_id) AS target_url, \
         runs.suite, runs.suite_version, runs.options, runs.webhook_url, runs.dedup_key, runs.status, \
         runs.attempts, runs.max_attempts, runs.locked_by, runs.lease_expires_at_ms, \
         runs.available_at_ms, runs.created_at_ms, runs.started_at_ms, runs.finished_at_ms, \
         runs.verdict, runs.error, runs.credentials, runs.target_host, runs.private_targets"
    };
}

/// The columns of an [`ApiKey`], never the token hash or the webhook secret.
macro_rules! api_key_columns {
    () => {
        "api_keys.id, api_keys.name, api_keys.owner, api_keys.rate_count, \
         api_keys.rate_period_s, api_keys.created_at_ms, api_keys.revoked_at_ms, \
         api_keys.last_used_at_ms, api_keys.watch_quota"
    };
}

use super::{
    ApiKey, DeliveryState, IdempotencyRecord, PublicKeyRecord, Run, RunEnd, RunStatus, StoreError,
    StoreResult, StoredAttestation, StoredFinding, Target, WebhookAttempt, WebhookDelivery,
};
use crate::suite::{Finding, SuiteChoice};
use serde::Serialize;
use uuid::Uuid;

pub(super) fn corrupt(what: &str, err: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{what}: {err}"))
}

/// Decodes a row into one of the row structs below.
pub(super) fn decode_row<'r, R, T>(row: &'r R) -> StoreResult<T>
where
    R: sqlx::Row,
    T: sqlx::FromRow<'r, R>,
{
    T::from_row(row).map_err(|e| corrupt("row", e))
}

pub(super) fn parse_uuid(what: &str, s: &str) -> StoreResult<Uuid> {
    Uuid::parse_str(s).map_err(|e| corrupt(what, format_args!("`{s}`: {e}")))
}

pub(super) fn from_json<T: serde::de::DeserializeOwned>(what: &str, s: &str) -> StoreResult<T> {
    serde_json::from_str(s).map_err(|e| corrupt(what, e))
}

pub(super) fn to_json<T: Serialize>(what: &str, value: &T) -> StoreResult<String> {
    serde_json::to_string(value).map_err(|e| corrupt(what, e))
}

/// A row of [`run_columns!`].
#[derive(sqlx::FromRow)]
pub(super) struct RunRow {
    id: String,
    target_id: String,
    target_url: String,
    suite: String,
    suite_version: Option<String>,
    options: String,
    webhook_url: Option<String>,
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
    credentials: Option<String>,
    target_host: Option<String>,
    private_targets: Option<i32>,
}

pub(super) fn run_from_row<'r, R>(row: &'r R) -> StoreResult<Run>
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
        suite: SuiteChoice::parse(&r.suite)
            .ok_or_else(|| corrupt("run suite", format_args!("`{}`", r.suite)))?,
        suite_version: r.suite_version,
        webhook_url: r.webhook_url,
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
        credentials: r.credentials,
        target_host: r.target_host,
        private_targets: r.private_targets.map(|p| p != 0),
    })
}

/// `targets` columns, in declaration order.
#[derive(sqlx::FromRow)]
pub(super) struct TargetRow {
    id: String,
    canonical_url: String,
    protocol: Option<String>,
    created_at_ms: i64,
}

pub(super) fn target_from_row<'r, R>(row: &'r R) -> StoreResult<Target>
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
pub(super) struct FindingRow {
    seq: i64,
    rule_id: String,
    outcome: String,
    message: String,
    evidence: String,
    duration_ms: i64,
    created_at_ms: i64,
}

pub(super) fn finding_from_row<'r, R>(row: &'r R) -> StoreResult<StoredFinding>
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
pub(super) fn finding_columns(finding: &Finding) -> StoreResult<(&'static str, String, i64)> {
    Ok((
        finding.outcome.as_str(),
        to_json("finding evidence", &finding.evidence)?,
        // A duration beyond i64 milliseconds is not a real measurement; clamp it.
        i64::try_from(finding.duration_ms).unwrap_or(i64::MAX),
    ))
}

/// The stored form of a run's end: `(status, verdict JSON, error)`.
pub(super) fn end_columns(end: &RunEnd) -> StoreResult<(RunStatus, Option<String>, Option<&str>)> {
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
pub(super) struct IdempotencyRow {
    key: String,
    request_hash: String,
    run_id: String,
}

pub(super) fn idempotency_from_row<'r, R>(row: &'r R) -> StoreResult<IdempotencyRecord>
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
pub(super) fn status_count_from_row<'r, R>(row: &'r R) -> StoreResult<(RunStatus, i64)>
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
pub(super) struct AttestationRow {
    run_id: String,
    key_id: String,
    envelope: String,
    created_at_ms: i64,
}

pub(super) fn attestation_from_row<'r, R>(row: &'r R) -> StoreResult<StoredAttestation>
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
pub(super) struct PublicKeyRow {
    key_id: String,
    algorithm: String,
    public_key: String,
    created_at_ms: i64,
}

pub(super) fn public_key_from_row<'r, R>(row: &'r R) -> StoreResult<PublicKeyRecord>
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
pub(super) struct ApiKeyRow {
    id: String,
    name: String,
    owner: Option<String>,
    rate_count: i32,
    rate_period_s: i64,
    created_at_ms: i64,
    revoked_at_ms: Option<i64>,
    last_used_at_ms: Option<i64>,
    watch_quota: i32,
}

pub(super) fn api_key_from_row<'r, R>(row: &'r R) -> StoreResult<ApiKey>
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
        watch_quota: r.watch_quota,
    })
}

/// `webhook_deliveries` columns as the stores select them.
pub(super) const WEBHOOK_DELIVERY_COLUMNS: &str =
    "id, run_id, url, state, attempts, next_attempt_at_ms, event, detail, api_key_id";

#[derive(sqlx::FromRow)]
pub(super) struct WebhookDeliveryRow {
    id: String,
    run_id: String,
    url: String,
    state: String,
    attempts: i32,
    next_attempt_at_ms: Option<i64>,
    event: String,
    detail: Option<String>,
    api_key_id: Option<String>,
}

pub(super) fn webhook_delivery_from_row<'r, R>(row: &'r R) -> StoreResult<WebhookDelivery>
where
    R: sqlx::Row,
    WebhookDeliveryRow: sqlx::FromRow<'r, R>,
{
    let r: WebhookDeliveryRow = decode_row(row)?;
    Ok(WebhookDelivery {
        run_id: parse_uuid("webhook run id", &r.run_id)?,
        id: r.id,
        url: r.url,
        state: DeliveryState::parse(&r.state)
            .ok_or_else(|| corrupt("webhook state", format_args!("`{}`", r.state)))?,
        attempts: r.attempts,
        next_attempt_at_ms: r.next_attempt_at_ms,
        event: r.event,
        detail: r
            .detail
            .as_deref()
            .map(|d| from_json("webhook detail", d))
            .transpose()?,
        api_key: r
            .api_key_id
            .as_deref()
            .map(|k| parse_uuid("webhook API key", k))
            .transpose()?,
    })
}

#[derive(sqlx::FromRow)]
pub(super) struct WebhookAttemptRow {
    attempt: i32,
    at_ms: i64,
    status_code: Option<i32>,
    error: Option<String>,
    next_attempt_at_ms: Option<i64>,
}

pub(super) fn webhook_attempt_from_row<'r, R>(row: &'r R) -> StoreResult<WebhookAttempt>
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
