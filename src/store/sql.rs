//! The one implementation of [`Store`], over either database.
//!
//! SQLite and Postgres run the same statements, and differ in a handful of
//! places: how a connection pool is opened, how a claim locks its row, how a
//! JSON field is read, how a random id is made, and whether another process can
//! announce new work. [`Dialect`] names exactly those places; [`SqlStore`] is
//! generic over it and holds everything else, once.
//!
//! Why a trait over [`sqlx::Database`] rather than a macro stamping out two
//! copies, or sqlx's `Any` driver: every statement is type-checked once against
//! the bounds below, a difference between the backends can only live in
//! [`Dialect`] where it is named and documented, and each backend keeps its
//! native driver (SQLite's `BEGIN IMMEDIATE`, Postgres' `LISTEN`), which `Any`
//! would hide. The `where` clause on the implementation lists what sqlx must be
//! able to encode and decode for a database to serve as a store.
//!
//! Queries are built at run time (`sqlx::query`), not with the `query!` macros:
//! there is no database at build time and no `.sqlx` cache to keep in sync; the
//! contract tests in `tests/it/store_contract.rs` check every statement instead.
//! Parameters are written `$N`, which sqlx binds by number on SQLite as on
//! Postgres. The statements with a dialect's fragment in them are formatted per
//! call; next to a round trip to the database that costs nothing.

use super::count::{Counted, Statements};
use super::rows::{
    end_columns, finding_columns, finding_from_row, idempotency_from_row, run_from_row,
    status_count_from_row, target_from_row, to_json,
};
use super::{
    Announcement, Announcer, Backend, EndRecord, HistoryCursor, HostLimits, HostLoad,
    IdempotencyRecord, Inserted, NewRun, QueuePlace, ReapReport, Rehosted, Run, RunOrigin,
    RunStatus, Store, StoreError, StoreResult, StoredFinding, SubmissionFacts, SubmitChoice,
    SubmitDecision, SubmitOutcome, SubmitRequest, SubmitResult, SuiteRuns, Target, hosts,
};
use crate::suite::Finding;
use sqlx::migrate::Migrator;
use sqlx::pool::PoolOptions;
use sqlx::{Database, Executor, IntoArguments, Pool, Row, Transaction};
use std::future::Future;
use std::sync::Arc;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// How many times `insert_run` retries when the conflicting active run finishes
/// between the insert and the lookup. Once is enough in practice; the bound only
/// guarantees termination.
const INSERT_RUN_TRIES: usize = 3;

/// How many earlier runs with a verdict a run's end looks through for one to
/// compare with, passing over those that lost their target part-way: enough
/// for a few restarts in a row, and a bounded read in the end's transaction.
const LOOK_BACK: i64 = 5;

/// The most findings one `INSERT` carries; a larger batch takes several
/// statements in one transaction. With the 4 shared parameters and 6 per
/// finding, 128 findings bind 772 parameters: under 999, the lowest limit any
/// SQLite build has had, so a system SQLite built with old defaults serves too.
/// Workers flush at most this many at once, so each flush is one statement.
pub const FINDINGS_PER_STATEMENT: usize = 128;

/// The parameters each finding of a batch binds.
const FINDING_PARAMS: usize = 6;

/// What one database does its own way. Implemented by [`sqlx::Sqlite`] (in
/// [`super::sqlite`]) and [`sqlx::Postgres`] (in [`super::postgres`]).
pub trait Dialect: Database {
    /// Which database this is, as [`Store::backend`] reports it.
    const BACKEND: Backend;

    /// Work before the pool connects to `url` (SQLite: the database file is
    /// created readable by its owner only). None by default.
    fn prepare(_url: &str) -> std::io::Result<()> {
        Ok(())
    }

    /// The migrations of this database, embedded in the binary.
    const MIGRATOR: &'static Migrator;

    /// Connections in the pool.
    const MAX_CONNECTIONS: u32;

    /// The statement that begins the transaction of a run's claim, where plain
    /// `BEGIN` is not enough.
    const BEGIN_CLAIM: Option<&'static str>;

    /// The statement that serialises claims which apply host limits, run first
    /// in the claim's transaction, where the transaction does not already:
    /// without it two claimers could each see a host's last free place and
    /// both take it.
    const CLAIM_LOCK: Option<&'static str>;

    /// Appended to the subquery that picks the run or webhook delivery a claim
    /// takes, after its `LIMIT 1`: the row lock that keeps two claimers from
    /// taking the same row, or nothing where the claim's transaction already
    /// excludes every other writer.
    const SKIP_LOCKED: &'static str;

    /// Appended to the check in `append_findings` that the worker still holds the
    /// run: a lock that keeps the run from being requeued until the findings are
    /// written, or nothing where writers are serialised anyway.
    const FOR_SHARE: &'static str;

    /// Appended to a `SELECT` that locks the rows it reads until the
    /// transaction ends, or nothing where writers are serialised anyway.
    const FOR_UPDATE: &'static str;

    /// An SQL expression for a new random id as text (webhook delivery ids).
    const NEW_ID: &'static str;

    /// How to open the database `url` names.
    fn connect_options(url: &str) -> Result<ConnectOptions<Self>, sqlx::Error>;

    /// The TCP address the database is reached at, where it is reached over
    /// TCP at all (see [`Store::refuses_connections`]). None by default.
    fn tcp_address(_options: &ConnectOptions<Self>) -> Option<(String, u16)> {
        None
    }

    /// An SQL expression for the text of the top-level `field` of the JSON
    /// document stored as text in `column`; NULL when the field is absent.
    fn json_text(column: &str, field: &str) -> String;

    /// How many rows a statement changed (sqlx has no trait for it).
    fn rows_affected(done: &Self::QueryResult) -> u64;

    /// [`Store::listen_for_work`] on this database.
    fn listen_for_work(
        pool: &Pool<Self>,
        notify: Arc<Notify>,
        shutdown: CancellationToken,
    ) -> impl Future<Output = ()> + Send;
}

/// The options a connection of `DB` is opened with.
pub type ConnectOptions<DB> = <<DB as Database>::Connection as sqlx::Connection>::Options;

/// Inserts a queued run unless an active run has its dedup key: `$1` id, `$2`
/// target, `$3` suite, `$4` options, `$5` webhook URL, `$6` dedup key, `$7`
/// attempts allowed, `$8` created (and available) at, `$9` API key, `$10`
/// forced, `$11` credentials kind, `$12` submitter, `$13` machine (else the
/// target's host); `$private` the address policy it was accepted under
/// (`RunOrigin::private_targets`). Returns the run, or nothing on a conflict.
macro_rules! insert_run {
    ($private:literal) => {
        concat!(
            "INSERT INTO runs (id, target_id, suite, options, webhook_url, dedup_key, status,
                               max_attempts, available_at_ms, created_at_ms, api_key_id,
                               forced, target_host, credentials, submitter, private_targets)
             VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $8, $8, $9, $10,
                     COALESCE($13, (SELECT targets.host FROM targets WHERE targets.id = $2)),
                     $11, $12, ",
            $private,
            ")
             ON CONFLICT (dedup_key) WHERE status IN ('queued', 'running') DO NOTHING
             RETURNING ",
            run_columns!()
        )
    };
}

/// [`insert_run!`] for the scheduler's runs: the address policy of the
/// target's latest run that a service accepted. A watch is kept only for a
/// target some service accepted (a key's watch through its API, a badge's for
/// a target with runs), so its runs are connected under that service's
/// policy, not whichever worker claims them; a target with no such run yet
/// leaves it to the claiming worker.
pub(super) const INSERT_RUN: &str = insert_run!(
    "(SELECT accepted.private_targets FROM runs AS accepted
      WHERE accepted.target_id = $2 AND accepted.private_targets IS NOT NULL
      ORDER BY accepted.created_at_ms DESC LIMIT 1)"
);

/// [`insert_run!`] with `$14`, the address policy of the service that
/// accepted the run (1 private targets allowed, 0 public only, NULL none).
const INSERT_SUBMITTED_RUN: &str = insert_run!("$14");

/// How long [`Store::refuses_connections`] waits for its connection.
const REFUSAL_PROBE_WITHIN: std::time::Duration = std::time::Duration::from_millis(500);

/// A store on the database `DB`; see [`super::sqlite::SqliteStore`] and
/// [`super::postgres::PgStore`].
#[derive(Debug, Clone)]
pub struct SqlStore<DB: Database> {
    pool: Pool<DB>,
    statements: Arc<Statements>,
    /// Where the database listens over TCP, if it does.
    address: Option<(String, u16)>,
}

impl<DB: Dialect> SqlStore<DB> {
    /// Opens the database `url` names (see [`Dialect::connect_options`]).
    pub async fn connect(url: &str) -> StoreResult<Self> {
        DB::prepare(url).map_err(sqlx::Error::Io)?;
        let options = DB::connect_options(url)?;
        let address = DB::tcp_address(&options);
        let pool = PoolOptions::new()
            .max_connections(DB::MAX_CONNECTIONS)
            .connect_with(options)
            .await?;
        Ok(Self {
            pool,
            statements: Arc::default(),
            address,
        })
    }

    /// The pool, counting each statement run on it.
    fn db(&self) -> Counted<'_, &Pool<DB>> {
        self.statements.on(&self.pool)
    }

    async fn begin(&self) -> StoreResult<Transaction<'static, DB>> {
        self.statements.add();
        Ok(self.pool.begin().await?)
    }

    /// A transaction opened by `statement` instead of plain `BEGIN`.
    async fn begin_with(&self, statement: &'static str) -> StoreResult<Transaction<'static, DB>> {
        self.statements.add();
        Ok(self.pool.begin_with(statement).await?)
    }

    async fn commit(&self, tx: Transaction<'static, DB>) -> StoreResult<()> {
        self.statements.add();
        Ok(tx.commit().await?)
    }
}

impl<DB: Dialect> SqlStore<DB>
where
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
{
    /// The transaction of a claim: begun as [`Dialect::BEGIN_CLAIM`] says, and
    /// holding [`Dialect::CLAIM_LOCK`] when host limits apply.
    async fn begin_claim(
        &self,
        limits: &HostLimits,
    ) -> StoreResult<sqlx::Transaction<'static, DB>> {
        let mut tx = match DB::BEGIN_CLAIM {
            Some(begin) => self.begin_with(begin).await?,
            None => self.begin().await?,
        };
        if let (true, Some(lock)) = (limits.is_limited(), DB::CLAIM_LOCK) {
            sqlx::query(lock)
                .execute(self.statements.on(&mut *tx))
                .await?;
        }
        Ok(tx)
    }
}

/// 1 for a scheduled run (claimed after every other), 0 for any other; as
/// the claim ranks them (see `hosts::claim`).
pub(super) fn scheduled_rank(alias: &str) -> String {
    format!(
        "(CASE WHEN {alias}.submitter = '{}' THEN 1 ELSE 0 END)",
        super::SCHEDULE_SUBMITTER
    )
}

/// Creates the webhook delivery of run `$1`, ended at `$2`, if it has a webhook.
fn enqueue_webhook<DB: Dialect>() -> String {
    format!(
        "INSERT INTO webhook_deliveries
            (id, run_id, url, state, attempts, next_attempt_at_ms, created_at_ms)
        SELECT {new_id}, runs.id, runs.webhook_url, 'pending', 0, $2, $2
        FROM runs WHERE runs.id = $1 AND runs.webhook_url IS NOT NULL
        ON CONFLICT DO NOTHING",
        new_id = DB::NEW_ID,
    )
}

/// Queues event `$4` of run `$1`, ended at `$2`, for `$3`, signed with key
/// `$5`, adding `$6` to the announcement.
fn enqueue_announcement<DB: Dialect>() -> String {
    format!(
        "INSERT INTO webhook_deliveries
            (id, run_id, url, state, attempts, next_attempt_at_ms, created_at_ms, event,
             api_key_id, detail)
        VALUES ({new_id}, $1, $3, 'pending', 0, $2, $2, $4, $5, $6)
        ON CONFLICT DO NOTHING",
        new_id = DB::NEW_ID,
    )
}

/// The same for every run the reaper ended as `error` at `$1`.
fn enqueue_reaped_webhooks<DB: Dialect>() -> String {
    format!(
        "INSERT INTO webhook_deliveries
            (id, run_id, url, state, attempts, next_attempt_at_ms, created_at_ms)
        SELECT {new_id}, runs.id, runs.webhook_url, 'pending', 0, $1, $1
        FROM runs
        WHERE runs.status = 'error' AND runs.finished_at_ms = $1 AND runs.webhook_url IS NOT NULL
        ON CONFLICT DO NOTHING",
        new_id = DB::NEW_ID,
    )
}

/// The condition on `runs` that worker `$2` holds run `$1` at attempt `$3`.
///
/// On Postgres, FOR SHARE holds the run row until the statement's transaction
/// commits, so a requeue or reap cannot slip in between the check and the
/// write; one that already did makes the check re-read the new row version and
/// fail. SQLite's single writer gives the same guarantee without it.
fn holds_run<DB: Dialect>() -> String {
    format!(
        "id = $1 AND status = 'running' AND locked_by = $2 AND attempts = $3{for_share}",
        for_share = DB::FOR_SHARE,
    )
}

/// Inserts `rows` findings of run `$1`, attempt `$3`, created at `$4`, when worker
/// `$2` holds the run: parameters from `$5` on are `(seq, rule_id, outcome,
/// message, evidence, duration_ms)` per row. Column names `column1`… are what
/// both databases call the columns of a bare `VALUES` list.
fn insert_findings<DB: Dialect>(rows: usize) -> String {
    let values = (0..rows)
        .map(|row| {
            let p = 5 + row * FINDING_PARAMS;
            format!(
                "(${p}, ${}, ${}, ${}, ${}, ${})",
                p + 1,
                p + 2,
                p + 3,
                p + 4,
                p + 5
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "INSERT INTO findings (run_id, attempt, seq, rule_id, outcome, message, evidence,
                               duration_ms, created_at_ms)
         SELECT $1, $3, v.column1, v.column2, v.column3, v.column4, v.column5, v.column6, $4
         FROM (VALUES {values}) AS v
         WHERE EXISTS (SELECT 1 FROM runs WHERE {holds})",
        holds = holds_run::<DB>(),
    )
}

/// Implements one of the store's traits for [`SqlStore`] over every database
/// that can serve as a store. The bounds are what sqlx must provide for `DB`:
/// executors for pools and transactions, migrations, and encoding and decoding
/// of the column types the store uses (text, 64- and 32-bit integers, and
/// NULLs of each through `Option`). They are written here once because Rust
/// does not carry such bounds from a trait's declaration to its uses.
///
/// `impl_sql_store!(inherent { … })` writes methods of [`SqlStore`] itself
/// under the same bounds.
macro_rules! impl_sql_store {
    (@bounded [$($head:tt)*] { $($body:tt)* }) => {
        $($head)*
        where
            DB: $crate::store::sql::Dialect,
            for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
            for<'q> DB::Arguments<'q>: sqlx::IntoArguments<'q, DB>,
            DB::Connection: sqlx::migrate::Migrate,
            for<'q> String: sqlx::Encode<'q, DB> + sqlx::Decode<'q, DB> + sqlx::Type<DB>,
            for<'q> &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
            for<'q> i64: sqlx::Encode<'q, DB> + sqlx::Decode<'q, DB> + sqlx::Type<DB>,
            for<'q> i32: sqlx::Encode<'q, DB> + sqlx::Decode<'q, DB> + sqlx::Type<DB>,
            for<'q> Option<String>: sqlx::Encode<'q, DB>,
            for<'q> Option<&'q str>: sqlx::Encode<'q, DB>,
            for<'q> Option<i64>: sqlx::Encode<'q, DB>,
            for<'q> Option<i32>: sqlx::Encode<'q, DB>,
            for<'r> &'r str: sqlx::ColumnIndex<DB::Row>,
            usize: sqlx::ColumnIndex<DB::Row>,
        {
            $($body)*
        }
    };
    (inherent { $($body:tt)* }) => {
        impl_sql_store!(@bounded [impl<DB> $crate::store::sql::SqlStore<DB>] { $($body)* });
    };
    ($store:path { $($body:tt)* }) => {
        impl_sql_store!(@bounded [
            #[async_trait::async_trait]
            impl<DB> $store for $crate::store::sql::SqlStore<DB>
        ] { $($body)* });
    };
}

// The statements of a submission, on a connection or inside a transaction
// (`Store::submit_run` runs them all in one).
impl_sql_store!(inherent {
    /// Inserts the target if it is new and reads it as stored. Conflict on
    /// the id only: the same URL under another id is a real error. A target
    /// stored before hosts were recorded, or recorded by an earlier reading of
    /// its URL (see `host_of`), gets its host now.
    async fn upsert_target_in(
        &self,
        conn: &mut DB::Connection,
        id: &str,
        canonical_url: &str,
        now_ms: i64,
    ) -> StoreResult<Target> {
        sqlx::query(
            "INSERT INTO targets (id, canonical_url, created_at_ms, host) VALUES ($1, $2, $3, $4)
             ON CONFLICT (id) DO UPDATE SET host = excluded.host
             WHERE targets.host IS NULL OR targets.host <> excluded.host",
        )
        .bind(id)
        .bind(canonical_url)
        .bind(now_ms)
        .bind(super::host_of(canonical_url))
        .execute(self.statements.on(&mut *conn))
        .await?;
        let row = sqlx::query(
            "SELECT id, canonical_url, protocol, created_at_ms FROM targets WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(self.statements.on(&mut *conn))
        .await?;
        row.as_ref()
            .map(target_from_row)
            .transpose()?
            .ok_or_else(|| StoreError::Corrupt(format!("target `{id}` vanished after upsert")))
    }

    /// Queues a run unless one with its dedup key is queued or running (that
    /// one is returned), with its sealed credentials: the caller makes the
    /// two inserts one transaction when there are credentials.
    async fn queue_run_in(
        &self,
        conn: &mut DB::Connection,
        new: &NewRun,
        origin: &RunOrigin,
    ) -> StoreResult<Inserted> {
        let options = to_json("run options", &new.options)?;
        let kind = origin
            .credentials
            .as_ref()
            .map(|_| crate::credentials::KIND_BEARER);
        for _ in 0..INSERT_RUN_TRIES {
            let inserted = sqlx::query(INSERT_SUBMITTED_RUN)
                .bind(new.id.to_string())
                .bind(&new.target_id)
                .bind(new.suite.as_str())
                .bind(&options)
                .bind(&new.webhook_url)
                .bind(&new.dedup_key)
                .bind(new.max_attempts)
                .bind(new.created_at_ms)
                .bind(origin.api_key.map(|k| k.to_string()))
                .bind(i32::from(origin.forced))
                .bind(kind)
                .bind(origin.submitter.as_deref())
                .bind(origin.machine.as_deref())
                .bind(origin.private_targets.map(i32::from))
                .fetch_optional(self.statements.on(&mut *conn))
                .await?;
            if let Some(row) = inserted {
                if let Some(sealed) = &origin.credentials {
                    sqlx::query(
                        "INSERT INTO run_credentials (run_id, key_id, sealed, created_at_ms)
                         VALUES ($1, $2, $3, $4)",
                    )
                    .bind(new.id.to_string())
                    .bind(&sealed.key_id)
                    .bind(&sealed.sealed)
                    .bind(new.created_at_ms)
                    .execute(self.statements.on(&mut *conn))
                    .await?;
                }
                return Ok(Inserted::New(run_from_row(&row)?));
            }
            if let Some(run) = self.active_run_in(conn, &new.dedup_key).await? {
                return Ok(Inserted::Active(run));
            }
        }
        Err(StoreError::Corrupt(format!(
            "dedup key `{}` kept conflicting with runs that then finished",
            new.dedup_key
        )))
    }

    async fn active_run_in(
        &self,
        conn: &mut DB::Connection,
        dedup_key: &str,
    ) -> StoreResult<Option<Run>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs WHERE dedup_key = $1 AND status IN ('queued', 'running')"
        ))
        .bind(dedup_key)
        .fetch_optional(self.statements.on(&mut *conn))
        .await?;
        row.as_ref().map(run_from_row).transpose()
    }

    async fn host_load_in(
        &self,
        conn: &mut DB::Connection,
        host: &str,
        submitter: Option<&str>,
        since_ms: i64,
    ) -> StoreResult<HostLoad> {
        let row = sqlx::query(hosts::HOST_LOAD)
            .bind(host)
            .bind(since_ms)
            .bind(submitter)
            .fetch_one(self.statements.on(&mut *conn))
            .await?;
        Ok(HostLoad {
            count: row.try_get(0)?,
            oldest_at_ms: row.try_get(1)?,
            mine: row.try_get(2)?,
            mine_oldest_at_ms: row.try_get(3)?,
        })
    }

    async fn latest_run_of_endpoint_in(
        &self,
        conn: &mut DB::Connection,
        host: &str,
        endpoint: &str,
        since_ms: i64,
    ) -> StoreResult<Option<i64>> {
        let rows: Vec<(String, i64)> = sqlx::query_as(hosts::RECENT_ON_HOST)
            .bind(host)
            .bind(since_ms)
            .fetch_all(self.statements.on(&mut *conn))
            .await?;
        Ok(rows
            .into_iter()
            .find(|(url, _)| super::same_server(url, endpoint))
            .map(|(_, at)| at))
    }

    async fn latest_finished_in(
        &self,
        conn: &mut DB::Connection,
        dedup_key: &str,
        since_ms: i64,
    ) -> StoreResult<Option<Run>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs
             WHERE dedup_key = $1 AND status IN ('passed', 'failed') AND finished_at_ms >= $2
             ORDER BY finished_at_ms DESC, id DESC
             LIMIT 1"
        ))
        .bind(dedup_key)
        .bind(since_ms)
        .fetch_optional(self.statements.on(&mut *conn))
        .await?;
        row.as_ref().map(run_from_row).transpose()
    }

    /// What `announcer` decides run `run_id`'s end announces to each watch
    /// of its target for the suite that has a webhook: nothing unless an
    /// earlier run has a verdict.
    async fn announcements_in(
        &self,
        conn: &mut DB::Connection,
        run_id: Uuid,
        announcer: &dyn Announcer,
    ) -> StoreResult<Vec<Announcement>> {
        let suite = announcer.suite();
        let watches: Vec<_> = self
            .watches_of_run_in(conn, run_id, suite)
            .await?
            .into_iter()
            .filter(|w| w.webhook_url.is_some())
            .collect();
        let Some(target_id) = watches.first().map(|w| w.target_id.clone()) else {
            return Ok(Vec::new());
        };
        // The newest earlier run the announcer may compare with; one that
        // lost its target part-way measured its reachability and is passed
        // over, up to a bound (a target down for longer is compared with
        // nothing).
        let mut previous = None;
        for run in self
            .recent_verdicts_in(conn, &target_id, suite, LOOK_BACK)
            .await?
        {
            if run.id == run_id {
                continue;
            }
            let findings: Vec<Finding> = self
                .findings_in(conn, run.id, -1)
                .await?
                .into_iter()
                .map(|f| f.finding)
                .collect();
            if announcer.comparable(&findings) {
                previous = Some((run, findings));
                break;
            }
        }
        let Some((previous, findings)) = previous else {
            return Ok(Vec::new());
        };
        Ok(watches
            .iter()
            .flat_map(|watch| announcer.announce(watch, &previous, &findings))
            .collect())
    }

    /// The newest run of `target_id` with a verdict of `suite`.
    async fn latest_verdict_in(
        &self,
        conn: &mut DB::Connection,
        target_id: &str,
        suite: &str,
    ) -> StoreResult<Option<Run>> {
        Ok(self
            .recent_verdicts_in(conn, target_id, suite, 1)
            .await?
            .into_iter()
            .next())
    }

    /// The newest `limit` runs of `target_id` with a verdict of `suite`,
    /// newest first.
    async fn recent_verdicts_in(
        &self,
        conn: &mut DB::Connection,
        target_id: &str,
        suite: &str,
        limit: i64,
    ) -> StoreResult<Vec<Run>> {
        let rows = sqlx::query(&format!(
            concat!(
                "SELECT ",
                run_columns!(),
                " FROM runs
                 WHERE runs.target_id = $1 AND runs.status IN ('passed', 'failed')
                   AND {verdict_suite} = $2
                 ORDER BY runs.finished_at_ms DESC, runs.id DESC
                 LIMIT $3"
            ),
            verdict_suite = DB::json_text("runs.verdict", "suite"),
        ))
        .bind(target_id)
        .bind(suite)
        .bind(limit)
        .fetch_all(self.statements.on(&mut *conn))
        .await?;
        rows.iter().map(run_from_row).collect()
    }

    /// The findings of run `run_id`'s last attempt after `after_seq`, in order.
    async fn findings_in(
        &self,
        conn: &mut DB::Connection,
        run_id: Uuid,
        after_seq: i64,
    ) -> StoreResult<Vec<StoredFinding>> {
        let rows = sqlx::query(
            "SELECT f.seq, f.rule_id, f.outcome, f.message, f.evidence, f.duration_ms,
                    f.created_at_ms
             FROM findings f JOIN runs r ON r.id = f.run_id AND f.attempt = r.attempts
             WHERE f.run_id = $1 AND f.seq > $2
             ORDER BY f.seq",
        )
        .bind(run_id.to_string())
        .bind(after_seq)
        .fetch_all(self.statements.on(&mut *conn))
        .await?;
        rows.iter().map(finding_from_row).collect()
    }

    /// Where queued run `run_id` stands (see `Store::queue_place`).
    async fn queue_place_in(
        &self,
        conn: &mut DB::Connection,
        run_id: Uuid,
    ) -> StoreResult<Option<QueuePlace>> {
        let row = sqlx::query(&format!(
            "SELECT
               (SELECT COUNT(*) FROM runs q
                WHERE q.status = 'queued' AND q.id <> r.id
                  AND ({rank_q} < {rank_r}
                       OR ({rank_q} = {rank_r}
                           AND (q.created_at_ms < r.created_at_ms
                                OR (q.created_at_ms = r.created_at_ms AND q.id < r.id))))),
               r.target_host,
               (SELECT COUNT(*) FROM runs b
                WHERE b.target_host = r.target_host AND b.status = 'running'),
               (SELECT MAX(e.finished_at_ms) FROM runs e WHERE e.target_host = r.target_host),
               r.available_at_ms
             FROM runs r WHERE r.id = $1 AND r.status = 'queued'",
            rank_q = scheduled_rank("q"),
            rank_r = scheduled_rank("r"),
        ))
        .bind(run_id.to_string())
        .fetch_optional(self.statements.on(&mut *conn))
        .await?;
        row.map(|row| {
            Ok(QueuePlace {
                ahead: row.try_get(0)?,
                host: row.try_get(1)?,
                running_on_host: row.try_get(2)?,
                last_end_on_host_ms: row.try_get(3)?,
                available_at_ms: row.try_get(4)?,
            })
        })
        .transpose()
    }
});

// The parts of the store, each in a file of its own.
mod credentials;
mod directory;
mod keys;
mod signing;
mod watches;
mod webhooks;

impl_sql_store!(Store {
    fn backend(&self) -> Backend {
        DB::BACKEND
    }

    async fn migrate(&self) -> StoreResult<()> {
        DB::MIGRATOR.run(&self.pool).await?;
        Ok(())
    }

    async fn migrate_down_all(&self) -> StoreResult<()> {
        DB::MIGRATOR.undo(&self.pool, 0).await?;
        Ok(())
    }

    async fn ping(&self) -> StoreResult<()> {
        sqlx::query("SELECT 1").execute(self.db()).await?;
        Ok(())
    }

    async fn refuses_connections(&self) -> bool {
        let Some((host, port)) = &self.address else {
            return false;
        };
        let attempt = tokio::net::TcpStream::connect((host.as_str(), *port));
        matches!(
            tokio::time::timeout(REFUSAL_PROBE_WITHIN, attempt).await,
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused
        )
    }

    async fn upsert_target(
        &self,
        id: &str,
        canonical_url: &str,
        now_ms: i64,
    ) -> StoreResult<Target> {
        // The write and the read in one transaction: one commit a submission.
        let mut tx = self.begin().await?;
        let target = self.upsert_target_in(&mut tx, id, canonical_url, now_ms).await?;
        self.commit(tx).await?;
        Ok(target)
    }

    async fn get_target(&self, id: &str) -> StoreResult<Option<Target>> {
        let row = sqlx::query(
            "SELECT id, canonical_url, protocol, created_at_ms FROM targets WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(self.db())
        .await?;
        row.as_ref().map(target_from_row).transpose()
    }

    async fn set_target_protocol(&self, id: &str, protocol: &str) -> StoreResult<()> {
        sqlx::query("UPDATE targets SET protocol = $2 WHERE id = $1")
            .bind(id)
            .bind(protocol)
            .execute(self.db())
            .await?;
        Ok(())
    }

    async fn insert_run_from(&self, new: &NewRun, origin: &RunOrigin) -> StoreResult<Inserted> {
        // A run with credentials and its sealed token are one write: a
        // worker never claims such a run without its token.
        if origin.credentials.is_some() {
            let mut tx = self.begin().await?;
            let inserted = self.queue_run_in(&mut tx, new, origin).await?;
            self.commit(tx).await?;
            return Ok(inserted);
        }
        let mut conn = self.pool.acquire().await?;
        self.queue_run_in(&mut conn, new, origin).await
    }

    async fn submit_run(
        &self,
        submission: &SubmitRequest<'_>,
        decide: &SubmitDecision<'_>,
    ) -> StoreResult<SubmitResult> {
        let new = submission.new;
        let mut tx = self.begin().await?;
        self.upsert_target_in(&mut tx, &new.target_id, submission.canonical_url, new.created_at_ms)
            .await?;
        let mut facts = SubmissionFacts::default();
        if let Some(since) = submission.fresh_since_ms {
            facts.fresh = self.latest_finished_in(&mut tx, &new.dedup_key, since).await?;
        }
        if let Some(load) = &submission.load {
            facts.endpoint_last_at_ms = self
                .latest_run_of_endpoint_in(&mut tx, load.host, load.endpoint, load.endpoint_since_ms)
                .await?;
            if let Some(since) = load.host_since_ms {
                facts.load = Some(
                    self.host_load_in(&mut tx, load.host, load.submitter, since)
                        .await?,
                );
            }
        }
        let outcome = match (decide(&facts), &facts.fresh) {
            (SubmitChoice::Fresh, Some(run)) => SubmitOutcome::Fresh(run.clone()),
            (SubmitChoice::Refuse, _) => {
                SubmitOutcome::Refused(self.active_run_in(&mut tx, &new.dedup_key).await?)
            }
            (SubmitChoice::Queue | SubmitChoice::Fresh, _) => {
                SubmitOutcome::Queued(self.queue_run_in(&mut tx, new, submission.origin).await?)
            }
        };
        let place = match outcome.run() {
            Some(run) if run.status == RunStatus::Queued => {
                self.queue_place_in(&mut tx, run.id).await?
            }
            _ => None,
        };
        self.commit(tx).await?;
        Ok(SubmitResult {
            facts,
            outcome,
            place,
        })
    }

    async fn active_run(&self, dedup_key: &str) -> StoreResult<Option<Run>> {
        let mut conn = self.pool.acquire().await?;
        self.active_run_in(&mut conn, dedup_key).await
    }

    async fn host_load(
        &self,
        host: &str,
        submitter: Option<&str>,
        since_ms: i64,
    ) -> StoreResult<HostLoad> {
        let mut conn = self.pool.acquire().await?;
        self.host_load_in(&mut conn, host, submitter, since_ms).await
    }

    async fn latest_run_of_endpoint(
        &self,
        host: &str,
        endpoint: &str,
        since_ms: i64,
    ) -> StoreResult<Option<i64>> {
        let mut conn = self.pool.acquire().await?;
        self.latest_run_of_endpoint_in(&mut conn, host, endpoint, since_ms)
            .await
    }

    async fn latest_finished(&self, dedup_key: &str, since_ms: i64) -> StoreResult<Option<Run>> {
        let mut conn = self.pool.acquire().await?;
        self.latest_finished_in(&mut conn, dedup_key, since_ms).await
    }

    async fn latest_run_with_finding(
        &self,
        target_id: &str,
        rule_id: &str,
        outcome: crate::suite::Outcome,
    ) -> StoreResult<Option<Run>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs
             WHERE target_id = $1 AND status IN ('passed', 'failed')
               AND EXISTS (SELECT 1 FROM findings f
                           WHERE f.run_id = runs.id AND f.attempt = runs.attempts
                             AND f.rule_id = $2 AND f.outcome = $3)
             ORDER BY finished_at_ms DESC, id DESC
             LIMIT 1"
        ))
        .bind(target_id)
        .bind(rule_id)
        .bind(outcome.as_str())
        .fetch_optional(self.db())
        .await?;
        row.as_ref().map(run_from_row).transpose()
    }

    async fn get_run(&self, id: Uuid) -> StoreResult<Option<Run>> {
        let row = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs WHERE id = $1"
        ))
        .bind(id.to_string())
        .fetch_optional(self.db())
        .await?;
        row.as_ref().map(run_from_row).transpose()
    }

    async fn target_runs(
        &self,
        target_id: &str,
        before: Option<&HistoryCursor>,
        limit: u32,
    ) -> StoreResult<Vec<Run>> {
        let query = match before {
            None => sqlx::query(concat!(
                "SELECT ",
                run_columns!(),
                " FROM runs WHERE target_id = $1
                 ORDER BY created_at_ms DESC, id DESC LIMIT $2"
            ))
            .bind(target_id)
            .bind(i64::from(limit)),
            Some(cursor) => sqlx::query(concat!(
                "SELECT ",
                run_columns!(),
                " FROM runs WHERE target_id = $1 AND (created_at_ms, id) < ($3, $4)
                 ORDER BY created_at_ms DESC, id DESC LIMIT $2"
            ))
            .bind(target_id)
            .bind(i64::from(limit))
            .bind(cursor.created_at_ms)
            .bind(cursor.id.to_string()),
        };
        let rows = query.fetch_all(self.db()).await?;
        rows.iter().map(run_from_row).collect()
    }

    async fn recent_runs(&self, limit: u32) -> StoreResult<Vec<Run>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs ORDER BY created_at_ms DESC, id DESC LIMIT $1"
        ))
        .bind(i64::from(limit))
        .fetch_all(self.db())
        .await?;
        rows.iter().map(run_from_row).collect()
    }

    async fn claim_run_within(
        &self,
        worker: &str,
        now_ms: i64,
        lease_ms: i64,
        limits: &HostLimits,
    ) -> StoreResult<Option<Run>> {
        // Dropping the transaction on an error path rolls it back.
        let mut tx = self.begin_claim(limits).await?;
        let row = sqlx::query(&hosts::claim::<DB>())
            .bind(worker)
            .bind(now_ms.saturating_add(lease_ms))
            .bind(now_ms)
            .bind(i64::from(limits.running_per_host))
            .bind(limits.gap_ms)
            .fetch_optional(self.statements.on(&mut *tx))
            .await?;
        let Some(row) = row else {
            self.commit(tx).await?;
            return Ok(None);
        };
        let id: String = row.try_get("id")?;
        // Every finding present now belongs to an earlier attempt. That includes one
        // with the same number when a shutdown gave its attempt back, which is why
        // this is not `attempt < attempts`.
        sqlx::query("DELETE FROM findings WHERE run_id = $1")
            .bind(&id)
            .execute(self.statements.on(&mut *tx))
            .await?;
        self.commit(tx).await?;
        // Decoded after the commit: a run that does not decode is then held under a
        // lease like any other, and the reaper ends it as `error` after max_attempts
        // instead of it blocking the head of the queue forever.
        run_from_row(&row).map(Some)
    }

    async fn reclaim_run(
        &self,
        run_id: Uuid,
        worker: &str,
        attempt: i32,
        new_attempt: bool,
        now_ms: i64,
        lease_ms: i64,
        limits: &HostLimits,
    ) -> StoreResult<Option<Run>> {
        let mut tx = self.begin_claim(limits).await?;
        let row = sqlx::query(&hosts::reclaim())
            .bind(run_id.to_string())
            .bind(worker)
            .bind(attempt)
            .bind(now_ms.saturating_add(lease_ms))
            .bind(i32::from(new_attempt))
            .bind(now_ms)
            .bind(i64::from(limits.running_per_host))
            .bind(limits.gap_ms)
            .fetch_optional(self.statements.on(&mut *tx))
            .await?;
        let Some(row) = row else {
            self.commit(tx).await?;
            return Ok(None);
        };
        if new_attempt {
            // The interrupted attempt's findings are incomplete: the next one starts afresh.
            sqlx::query("DELETE FROM findings WHERE run_id = $1 AND attempt <= $2")
                .bind(run_id.to_string())
                .bind(attempt)
                .execute(self.statements.on(&mut *tx))
                .await?;
        }
        self.commit(tx).await?;
        run_from_row(&row).map(Some)
    }

    async fn rehost_run(
        &self,
        run_id: Uuid,
        worker: &str,
        attempt: i32,
        machine: &str,
        now_ms: i64,
        limits: &HostLimits,
    ) -> StoreResult<Rehosted> {
        let mut tx = self.begin_claim(limits).await?;
        let moved = sqlx::query(
            "UPDATE runs SET target_host = $4
             WHERE id = $1 AND status = 'running' AND locked_by = $2 AND attempts = $3",
        )
        .bind(run_id.to_string())
        .bind(worker)
        .bind(attempt)
        .bind(machine)
        .execute(self.statements.on(&mut *tx))
        .await?;
        if DB::rows_affected(&moved) != 1 {
            self.commit(tx).await?;
            return Ok(Rehosted::Lost);
        }
        if !limits.is_limited() {
            self.commit(tx).await?;
            return Ok(Rehosted::Go);
        }
        let allowed = sqlx::query(&hosts::allowed())
            .bind(run_id.to_string())
            .bind(now_ms)
            .bind(i64::from(limits.running_per_host))
            .bind(limits.gap_ms)
            .fetch_optional(self.statements.on(&mut *tx))
            .await?
            .is_some();
        if !allowed {
            sqlx::query(hosts::DEFER)
                .bind(run_id.to_string())
                .execute(self.statements.on(&mut *tx))
                .await?;
        }
        self.commit(tx).await?;
        Ok(if allowed {
            Rehosted::Go
        } else {
            Rehosted::Deferred
        })
    }

    async fn heartbeat(
        &self,
        run_id: Uuid,
        worker: &str,
        now_ms: i64,
        lease_ms: i64,
    ) -> StoreResult<bool> {
        let done = sqlx::query(
            "UPDATE runs SET lease_expires_at_ms = $3
             WHERE id = $1 AND status = 'running' AND locked_by = $2",
        )
        .bind(run_id.to_string())
        .bind(worker)
        .bind(now_ms.saturating_add(lease_ms))
        .execute(self.db())
        .await?;
        Ok(DB::rows_affected(&done) == 1)
    }

    async fn append_findings(
        &self,
        run_id: Uuid,
        worker: &str,
        attempt: i32,
        first_seq: i64,
        findings: &[Finding],
        now_ms: i64,
    ) -> StoreResult<bool> {
        let run = run_id.to_string();
        if findings.is_empty() {
            let held = sqlx::query(&format!("SELECT 1 FROM runs WHERE {}", holds_run::<DB>()))
                .bind(&run)
                .bind(worker)
                .bind(attempt)
                .fetch_optional(self.db())
                .await?;
            return Ok(held.is_some());
        }
        let columns = findings
            .iter()
            .map(finding_columns)
            .collect::<StoreResult<Vec<_>>>()?;
        let rows: Vec<_> = findings.iter().zip(&columns).zip(first_seq..).collect();
        let chunks: Vec<_> = rows.chunks(FINDINGS_PER_STATEMENT).collect();
        // A batch that fits one statement, the common case, needs no transaction of
        // its own: one statement is atomic. A larger one writes all or nothing.
        let mut tx = match chunks.len() {
            1 => None,
            _ => Some(self.begin().await?),
        };
        for chunk in chunks {
            let sql = insert_findings::<DB>(chunk.len());
            let mut query = sqlx::query(&sql)
                .bind(&run)
                .bind(worker)
                .bind(attempt)
                .bind(now_ms);
            for ((finding, (outcome, evidence, duration_ms)), seq) in chunk {
                query = query
                    .bind(*seq)
                    .bind(&finding.rule_id)
                    .bind(*outcome)
                    .bind(&finding.message)
                    .bind(evidence)
                    .bind(*duration_ms);
            }
            let done = match &mut tx {
                Some(tx) => query.execute(self.statements.on(&mut **tx)).await?,
                None => query.execute(self.db()).await?,
            };
            if DB::rows_affected(&done) != chunk.len() as u64 {
                // Dropping the transaction rolls back what earlier chunks wrote.
                return Ok(false);
            }
        }
        if let Some(tx) = tx {
            self.commit(tx).await?;
        }
        Ok(true)
    }

    fn statements(&self) -> u64 {
        self.statements.total()
    }

    async fn end_run(
        &self,
        run_id: Uuid,
        worker: &str,
        record: &EndRecord<'_>,
    ) -> StoreResult<Option<usize>> {
        let (status, verdict, error) = end_columns(record.end)?;
        let now_ms = record.now_ms;
        // Two runs of one target that end together must not both compare
        // with the same run before them (each would announce the one
        // transition): the ends of a target's runs are serialised, by
        // SQLite's single writer taken at once, and on Postgres by a lock on
        // the target's row, after which the run that ended first is seen.
        let mut tx = self.begin_claim(&HostLimits::NONE).await?;
        let announce = match record.announcer {
            Some(announcer) => {
                sqlx::query(&format!(
                    "SELECT id FROM targets
                     WHERE id = (SELECT target_id FROM runs WHERE id = $1){for_update}",
                    for_update = DB::FOR_UPDATE,
                ))
                .bind(run_id.to_string())
                .fetch_optional(self.statements.on(&mut *tx))
                .await?;
                // Read while the run is still running, so that the run before
                // it is the newest with a verdict.
                self.announcements_in(&mut tx, run_id, announcer).await?
            }
            None => Vec::new(),
        };
        let done = sqlx::query(
            "UPDATE runs
             SET status = $3, verdict = $4, error = $5, suite_version = $6, finished_at_ms = $7,
                 locked_by = NULL, lease_expires_at_ms = NULL
             WHERE id = $1 AND status = 'running' AND locked_by = $2",
        )
        .bind(run_id.to_string())
        .bind(worker)
        .bind(status.as_str())
        .bind(verdict)
        .bind(error)
        .bind(record.suite_version)
        .bind(now_ms)
        .execute(self.statements.on(&mut *tx))
        .await?;
        if DB::rows_affected(&done) != 1 {
            return Ok(None);
        }
        sqlx::query(&enqueue_webhook::<DB>())
            .bind(run_id.to_string())
            .bind(now_ms)
            .execute(self.statements.on(&mut *tx))
            .await?;
        for a in &announce {
            sqlx::query(&enqueue_announcement::<DB>())
                .bind(run_id.to_string())
                .bind(now_ms)
                .bind(&a.url)
                .bind(&a.event)
                .bind(a.api_key.map(|k| k.to_string()))
                .bind(to_json("webhook detail", &a.detail)?)
                .execute(self.statements.on(&mut *tx))
                .await?;
        }
        if let Some(protocol) = record.target_protocol {
            sqlx::query(
                "UPDATE targets SET protocol = $2
                 WHERE id = (SELECT target_id FROM runs WHERE id = $1)",
            )
            .bind(run_id.to_string())
            .bind(protocol)
            .execute(self.statements.on(&mut *tx))
            .await?;
        }
        if let super::RunEnd::Verdict(verdict) = record.end {
            self.record_directory_grade_in(&mut tx, run_id, verdict, now_ms)
                .await?;
        }
        if let Some(attestation) = record.attestation {
            sqlx::query(signing::INSERT_ATTESTATION)
                .bind(attestation.run_id.to_string())
                .bind(&attestation.key_id)
                .bind(&attestation.envelope)
                .bind(attestation.created_at_ms)
                .execute(self.statements.on(&mut *tx))
                .await?;
        }
        self.commit(tx).await?;
        Ok(Some(announce.len()))
    }

    async fn requeue_run(
        &self,
        run_id: Uuid,
        worker: &str,
        reason: &str,
        available_at_ms: i64,
        count_attempt: bool,
    ) -> StoreResult<bool> {
        let given_back: i32 = if count_attempt { 0 } else { 1 };
        let done = sqlx::query(
            "UPDATE runs
             SET status = 'queued', locked_by = NULL, lease_expires_at_ms = NULL,
                 available_at_ms = $3, error = $4, attempts = attempts - $5
             WHERE id = $1 AND status = 'running' AND locked_by = $2",
        )
        .bind(run_id.to_string())
        .bind(worker)
        .bind(available_at_ms)
        .bind(reason)
        .bind(given_back)
        .execute(self.db())
        .await?;
        Ok(DB::rows_affected(&done) == 1)
    }

    async fn reap_expired(&self, now_ms: i64, backoff_ms: i64) -> StoreResult<ReapReport> {
        // SET expressions read the row as it was, so the reasons name the worker
        // that held the lease even though the same statement clears `locked_by`.
        // Race-safe under Postgres' READ COMMITTED: a row a heartbeat extended
        // meanwhile is re-checked against the WHERE clause and skipped.
        let mut tx = self.begin().await?;
        let errored = sqlx::query(
            "UPDATE runs
             SET status = 'error', finished_at_ms = $1,
                 error = 'lease expired after ' || attempts || ' attempts; last worker '
                         || COALESCE(locked_by, '?') || ' stopped responding',
                 locked_by = NULL, lease_expires_at_ms = NULL
             WHERE status = 'running' AND lease_expires_at_ms < $1
               AND attempts >= max_attempts",
        )
        .bind(now_ms)
        .execute(self.statements.on(&mut *tx))
        .await?;
        // Runs ended here announce their end like runs a worker finished.
        sqlx::query(&enqueue_reaped_webhooks::<DB>())
            .bind(now_ms)
            .execute(self.statements.on(&mut *tx))
            .await?;
        // In the same transaction: one commit a reap, which an idle service
        // pays once a lease.
        let requeued = sqlx::query(
            "UPDATE runs
             SET status = 'queued', available_at_ms = $2,
                 error = 'lease expired (worker ' || COALESCE(locked_by, '?')
                         || ' stopped responding); retrying',
                 locked_by = NULL, lease_expires_at_ms = NULL
             WHERE status = 'running' AND lease_expires_at_ms < $1
               AND attempts < max_attempts",
        )
        .bind(now_ms)
        .bind(now_ms.saturating_add(backoff_ms))
        .execute(self.statements.on(&mut *tx))
        .await?;
        self.commit(tx).await?;
        Ok(ReapReport {
            requeued: DB::rows_affected(&requeued),
            errored: DB::rows_affected(&errored),
        })
    }

    async fn findings(&self, run_id: Uuid, after_seq: i64) -> StoreResult<Vec<StoredFinding>> {
        let mut conn = self.pool.acquire().await?;
        self.findings_in(&mut conn, run_id, after_seq).await
    }

    async fn count_by_status(&self) -> StoreResult<Vec<(RunStatus, i64)>> {
        let rows = sqlx::query("SELECT status, COUNT(*) FROM runs GROUP BY status")
            .fetch_all(self.db())
            .await?;
        rows.iter().map(status_count_from_row).collect()
    }

    async fn get_idempotency(&self, key: &str) -> StoreResult<Option<IdempotencyRecord>> {
        let row =
            sqlx::query("SELECT key, request_hash, run_id FROM idempotency_keys WHERE key = $1")
                .bind(key)
                .fetch_optional(self.db())
                .await?;
        row.as_ref().map(idempotency_from_row).transpose()
    }

    async fn put_idempotency(
        &self,
        record: &IdempotencyRecord,
        now_ms: i64,
    ) -> StoreResult<IdempotencyRecord> {
        sqlx::query(
            "INSERT INTO idempotency_keys (key, request_hash, run_id, created_at_ms)
             VALUES ($1, $2, $3, $4)
             ON CONFLICT (key) DO NOTHING",
        )
        .bind(&record.key)
        .bind(&record.request_hash)
        .bind(record.run_id.to_string())
        .bind(now_ms)
        .execute(self.db())
        .await?;
        self.get_idempotency(&record.key).await?.ok_or_else(|| {
            StoreError::Corrupt(format!(
                "idempotency key `{}` vanished after insert",
                record.key
            ))
        })
    }

    async fn queue_place(&self, run_id: Uuid) -> StoreResult<Option<QueuePlace>> {
        let mut conn = self.pool.acquire().await?;
        self.queue_place_in(&mut conn, run_id).await
    }

    async fn latest_runs_for_suite(&self, target_id: &str, suite: &str) -> StoreResult<SuiteRuns> {
        let sql = format!(
            concat!(
                "SELECT ",
                run_columns!(),
                " FROM runs
                 WHERE runs.target_id = $1 AND runs.status IN ('passed', 'failed', 'error')
                   AND CASE WHEN runs.verdict IS NULL THEN runs.suite IN ($2, 'auto')
                            ELSE {verdict_suite} = $2 END
                 ORDER BY runs.finished_at_ms DESC, runs.id DESC
                 LIMIT 1"
            ),
            verdict_suite = DB::json_text("runs.verdict", "suite"),
        );
        let finished = sqlx::query(&sql)
            .bind(target_id)
            .bind(suite)
            .fetch_optional(self.db())
            .await?;
        let active = sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs
             WHERE runs.target_id = $1 AND runs.status IN ('queued', 'running')
               AND runs.suite IN ($2, 'auto')
             ORDER BY runs.created_at_ms DESC, runs.id DESC
             LIMIT 1"
        ))
        .bind(target_id)
        .bind(suite)
        .fetch_optional(self.db())
        .await?;
        let finished = finished.as_ref().map(run_from_row).transpose()?;
        let active = active.as_ref().map(run_from_row).transpose()?;
        let errored = finished.as_ref().filter(|r| r.status == RunStatus::Error);
        let Some(errored) = errored else {
            return Ok(SuiteRuns {
                verdict: finished.clone(),
                finished,
                active,
                unreachable_since_ms: None,
            });
        };
        let verdict = {
            let mut conn = self.pool.acquire().await?;
            self.latest_verdict_in(&mut conn, target_id, suite).await?
        };
        let unreachable = format!("{}%", crate::suite::context::UNREACHABLE_PREFIX);
        let unreachable_since_ms = if errored
            .error
            .as_deref()
            .is_some_and(|e| e.starts_with(crate::suite::context::UNREACHABLE_PREFIX))
        {
            sqlx::query_scalar(&format!(
                "SELECT MIN(r.finished_at_ms) FROM runs r
                 WHERE r.target_id = $1 AND r.status = 'error' AND r.suite IN ($2, 'auto')
                   AND r.error LIKE $3
                   AND r.finished_at_ms > COALESCE(
                       (SELECT MAX(o.finished_at_ms) FROM runs o
                        WHERE o.target_id = $1 AND o.status IN ('passed', 'failed', 'error')
                          AND NOT (o.status = 'error' AND COALESCE(o.error, '') LIKE $3)
                          AND CASE WHEN o.verdict IS NULL THEN o.suite IN ($2, 'auto')
                                   ELSE {verdict_suite} = $2 END),
                       -1)",
                verdict_suite = DB::json_text("o.verdict", "suite"),
            ))
            .bind(target_id)
            .bind(suite)
            .bind(&unreachable)
            .fetch_one(self.db())
            .await?
        } else {
            None
        };
        Ok(SuiteRuns {
            verdict,
            finished,
            active,
            unreachable_since_ms,
        })
    }

    async fn listen_for_work(&self, notify: Arc<Notify>, shutdown: CancellationToken) {
        DB::listen_for_work(&self.pool, notify, shutdown).await;
    }
});
