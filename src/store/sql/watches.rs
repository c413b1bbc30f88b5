//! Watches ([`WatchStore`]) on the SQL store: targets re-checked on a
//! schedule. A tick takes the due watches and starts their runs in one
//! transaction, so that each slot starts one run whoever ticks.

use super::{Dialect, INSERT_RUN};
use crate::store::rows::{from_json, parse_uuid, run_from_row, to_json};
use crate::store::{
    DueWatches, HostBudget, HostLimits, KeyWatch, NewWatch, SCHEDULE_SUBMITTER, StoreError,
    StoreResult, Watch, WatchStore,
};
use sqlx::Row;
use uuid::Uuid;

/// The columns of a [`Watch`], in [`watch_from_row`]'s order.
const WATCH_COLUMNS: &str = "id, target_id, suite, options, interval_ms, next_due_at_ms, \
     api_key_id, created_at_ms, expires_at_ms, webhook_url, events, last_due_at_ms";

fn watch_from_row<R: Row>(row: &R) -> StoreResult<Watch>
where
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    usize: sqlx::ColumnIndex<R>,
{
    let id: String = row.try_get(0)?;
    let options: String = row.try_get(3)?;
    let api_key: Option<String> = row.try_get(6)?;
    let events: Option<String> = row.try_get(10)?;
    Ok(Watch {
        id: parse_uuid("watch id", &id)?,
        target_id: row.try_get(1)?,
        suite: row.try_get(2)?,
        options: from_json("watch options", &options)?,
        interval_ms: row.try_get(4)?,
        next_due_at_ms: row.try_get(5)?,
        api_key: api_key
            .as_deref()
            .map(|k| parse_uuid("watch API key", k))
            .transpose()?,
        created_at_ms: row.try_get(7)?,
        expires_at_ms: row.try_get(8)?,
        webhook_url: row.try_get(9)?,
        events: events
            .as_deref()
            .map(|e| from_json("watch events", e))
            .transpose()?
            .unwrap_or_default(),
        last_due_at_ms: row.try_get(11)?,
    })
}

impl_sql_store!(inherent {
    /// The watches of run `run_id`'s target for `suite`, oldest first.
    pub(super) async fn watches_of_run_in(
        &self,
        conn: &mut DB::Connection,
        run_id: Uuid,
        suite: &str,
    ) -> StoreResult<Vec<Watch>> {
        let rows = sqlx::query(&format!(
            "SELECT {WATCH_COLUMNS} FROM watches
             WHERE target_id = (SELECT target_id FROM runs WHERE id = $1) AND suite = $2
             ORDER BY created_at_ms, id"
        ))
        .bind(run_id.to_string())
        .bind(suite)
        .fetch_all(self.statements.on(&mut *conn))
        .await?;
        rows.iter().map(watch_from_row).collect()
    }

    /// [`WatchStore::put_watch`] on `conn`.
    async fn upsert_watch_in(
        &self,
        conn: &mut DB::Connection,
        new: &NewWatch,
    ) -> StoreResult<Watch> {
        // A key's watch is one of its key's; the one without a key is the
        // target's only one (a partial index).
        let conflict = match new.api_key {
            Some(_) => "(target_id, suite, api_key_id)",
            None => "(target_id, suite) WHERE api_key_id IS NULL",
        };
        let row = sqlx::query(&format!(
            "INSERT INTO watches ({WATCH_COLUMNS})
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, NULL)
             ON CONFLICT {conflict} DO UPDATE
             SET options = excluded.options,
                 next_due_at_ms = CASE WHEN watches.interval_ms = excluded.interval_ms
                                       THEN watches.next_due_at_ms
                                       ELSE excluded.next_due_at_ms END,
                 interval_ms = excluded.interval_ms,
                 expires_at_ms = excluded.expires_at_ms, webhook_url = excluded.webhook_url,
                 events = excluded.events
             RETURNING {WATCH_COLUMNS}"
        ))
        .bind(Uuid::now_v7().to_string())
        .bind(&new.target_id)
        .bind(&new.suite)
        .bind(to_json("watch options", &new.options)?)
        .bind(new.interval_ms)
        .bind(new.first_due_at_ms)
        .bind(new.api_key.map(|k| k.to_string()))
        .bind(new.created_at_ms)
        .bind(new.expires_at_ms)
        .bind(&new.webhook_url)
        .bind(to_json("watch events", &new.events)?)
        .fetch_one(self.statements.on(&mut *conn))
        .await?;
        watch_from_row(&row)
    }
});

/// Moves at most `$2` watches due at `$1` to their next slot, earliest
/// first; returns them, the slot taken in `last_due_at_ms`. The next slot is
/// the first after `$1` on the watch's own beat (`next_due_at_ms` plus whole
/// intervals), so that a scheduler that was down does not bunch the slots it
/// missed into one minute. Watches past their end are not taken, nor those
/// of a revoked API key (they wait, unrun, until deleted).
fn take_due<DB: Dialect>() -> String {
    format!(
        "UPDATE watches
         SET last_due_at_ms = next_due_at_ms,
             next_due_at_ms = next_due_at_ms
                 + interval_ms * (($1 - next_due_at_ms) / interval_ms + 1)
         WHERE id IN (SELECT w.id FROM watches w
                      WHERE w.next_due_at_ms <= $1
                        AND (w.expires_at_ms IS NULL OR w.expires_at_ms > $1)
                        AND NOT EXISTS (SELECT 1 FROM api_keys k
                                        WHERE k.id = w.api_key_id
                                          AND k.revoked_at_ms IS NOT NULL)
                      ORDER BY w.next_due_at_ms, w.id LIMIT $2{skip_locked})
         RETURNING {WATCH_COLUMNS}",
        skip_locked = DB::SKIP_LOCKED,
    )
}

/// Removes the watches whose end has passed at `$1`.
fn remove_ended<DB: Dialect>() -> String {
    format!(
        "DELETE FROM watches
         WHERE id IN (SELECT w.id FROM watches w
                      WHERE w.expires_at_ms IS NOT NULL AND w.expires_at_ms <= $1{skip_locked})",
        skip_locked = DB::SKIP_LOCKED,
    )
}

/// The host a scheduled run of target `$1` counts for: the machine its last
/// run connected to (a worker moves the run if the name now leads elsewhere,
/// see `Store::rehost_run`), else the host of its URL.
const SCHEDULED_HOST: &str = "SELECT COALESCE(
         (SELECT runs.target_host FROM runs
          WHERE runs.target_id = $1 AND runs.target_host IS NOT NULL
          ORDER BY runs.created_at_ms DESC, runs.id DESC LIMIT 1),
         (SELECT targets.host FROM targets WHERE targets.id = $1))";

/// Runs created on host `$1` after `$2`, and those of them submitter `$3` did.
const HOUR_ON_HOST: &str = "SELECT COUNT(*), COUNT(CASE WHEN submitter = $3 THEN 1 END)
     FROM runs WHERE target_host = $1 AND created_at_ms > $2";

/// The window of [`HostBudget::per_hour`].
const HOUR_MS: i64 = 3_600_000;

impl_sql_store!(WatchStore {
    async fn put_watch(&self, new: &NewWatch) -> StoreResult<Watch> {
        let mut conn = self.pool.acquire().await?;
        self.upsert_watch_in(&mut conn, new).await
    }

    async fn put_key_watch(&self, new: &NewWatch, quota: i64) -> StoreResult<KeyWatch> {
        let Some(key) = new.api_key.map(|k| k.to_string()) else {
            return Err(StoreError::Corrupt("a key's watch without a key".into()));
        };
        // The count and the write are one step: SQLite's single writer from
        // the start, and on Postgres the key's row, locked, so that two
        // watches of one key made together cannot both pass its quota.
        let mut tx = self.begin_claim(&HostLimits::NONE).await?;
        sqlx::query(&format!(
            "SELECT id FROM api_keys WHERE id = $1{for_update}",
            for_update = DB::FOR_UPDATE
        ))
        .bind(&key)
        .fetch_optional(self.statements.on(&mut *tx))
        .await?;
        let existing: Option<String> = sqlx::query_scalar(
            "SELECT id FROM watches WHERE target_id = $1 AND suite = $2 AND api_key_id = $3",
        )
        .bind(&new.target_id)
        .bind(&new.suite)
        .bind(&key)
        .fetch_optional(self.statements.on(&mut *tx))
        .await?;
        if existing.is_none() {
            let kept: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM watches WHERE api_key_id = $1")
                .bind(&key)
                .fetch_one(self.statements.on(&mut *tx))
                .await?;
            if kept >= quota {
                return Ok(KeyWatch::OverQuota { quota, kept });
            }
        }
        let watch = self.upsert_watch_in(&mut tx, new).await?;
        self.commit(tx).await?;
        Ok(match existing {
            None => KeyWatch::Made(watch),
            Some(_) => KeyWatch::Replaced(watch),
        })
    }

    async fn keep_badge_watch(&self, new: &NewWatch) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO watches (id, target_id, suite, options, interval_ms, next_due_at_ms,
                                  api_key_id, created_at_ms, expires_at_ms, webhook_url, events)
             VALUES ($1, $2, $3, $4, $5, $6, NULL, $7, $8, NULL, NULL)
             ON CONFLICT (target_id, suite) WHERE api_key_id IS NULL DO UPDATE
             SET options = excluded.options, expires_at_ms = excluded.expires_at_ms
             WHERE watches.expires_at_ms IS NOT NULL",
        )
        .bind(Uuid::now_v7().to_string())
        .bind(&new.target_id)
        .bind(&new.suite)
        .bind(to_json("watch options", &new.options)?)
        .bind(new.interval_ms)
        .bind(new.first_due_at_ms)
        .bind(new.created_at_ms)
        .bind(new.expires_at_ms)
        .execute(self.db())
        .await?;
        Ok(())
    }

    async fn delete_watch(
        &self,
        target_id: &str,
        suite: &str,
        api_key: Option<Uuid>,
    ) -> StoreResult<bool> {
        let done = sqlx::query(
            "DELETE FROM watches
             WHERE target_id = $1 AND suite = $2
               AND (api_key_id = $3 OR (api_key_id IS NULL AND $3 IS NULL))",
        )
        .bind(target_id)
        .bind(suite)
        .bind(api_key.map(|k| k.to_string()))
        .execute(self.db())
        .await?;
        Ok(DB::rows_affected(&done) == 1)
    }

    async fn delete_watch_by_id(&self, id: Uuid) -> StoreResult<bool> {
        let done = sqlx::query("DELETE FROM watches WHERE id = $1")
            .bind(id.to_string())
            .execute(self.db())
            .await?;
        Ok(DB::rows_affected(&done) == 1)
    }

    async fn get_watch(
        &self,
        target_id: &str,
        suite: &str,
        api_key: Option<Uuid>,
    ) -> StoreResult<Option<Watch>> {
        let row = sqlx::query(&format!(
            "SELECT {WATCH_COLUMNS} FROM watches
             WHERE target_id = $1 AND suite = $2
               AND (api_key_id = $3 OR (api_key_id IS NULL AND $3 IS NULL))"
        ))
        .bind(target_id)
        .bind(suite)
        .bind(api_key.map(|k| k.to_string()))
        .fetch_optional(self.db())
        .await?;
        row.as_ref().map(watch_from_row).transpose()
    }

    async fn count_key_watches(&self, key: Uuid) -> StoreResult<i64> {
        Ok(
            sqlx::query_scalar("SELECT COUNT(*) FROM watches WHERE api_key_id = $1")
                .bind(key.to_string())
                .fetch_one(self.db())
                .await?,
        )
    }

    async fn list_watches(&self, target_id: Option<&str>) -> StoreResult<Vec<Watch>> {
        let rows = sqlx::query(&format!(
            "SELECT {WATCH_COLUMNS} FROM watches
             WHERE $1 IS NULL OR target_id = $1
             ORDER BY target_id, suite, created_at_ms, id"
        ))
        .bind(target_id)
        .fetch_all(self.db())
        .await?;
        rows.iter().map(watch_from_row).collect()
    }

    async fn start_due_watches(
        &self,
        now_ms: i64,
        limit: u32,
        max_attempts: i32,
        budget: HostBudget,
    ) -> StoreResult<DueWatches> {
        // A claim's transaction: SQLite's single writer from the start, so
        // that two ticks never both read a slot as due.
        let mut tx = self.begin_claim(&HostLimits::NONE).await?;
        sqlx::query(&remove_ended::<DB>())
            .bind(now_ms)
            .execute(self.statements.on(&mut *tx))
            .await?;
        let due = sqlx::query(&take_due::<DB>())
            .bind(now_ms)
            .bind(i64::from(limit))
            .fetch_all(self.statements.on(&mut *tx))
            .await?;
        let mut ticked = DueWatches::default();
        for row in &due {
            let watch = watch_from_row(row)?;
            ticked.lateness_ms.push(
                watch
                    .last_due_at_ms
                    .map_or(0, |due| now_ms.saturating_sub(due).max(0)),
            );
            let host: Option<String> = sqlx::query_scalar(SCHEDULED_HOST)
                .bind(&watch.target_id)
                .fetch_one(self.statements.on(&mut *tx))
                .await?;
            if let (Some(host), true) = (&host, budget.per_hour > 0) {
                let (count, mine): (i64, i64) = sqlx::query_as(HOUR_ON_HOST)
                    .bind(host)
                    .bind(now_ms.saturating_sub(HOUR_MS))
                    .bind(SCHEDULE_SUBMITTER)
                    .fetch_one(self.statements.on(&mut *tx))
                    .await?;
                if count >= i64::from(budget.per_hour) || mine >= i64::from(budget.share) {
                    ticked.over_budget.push(watch.id);
                    continue;
                }
            }
            let options = to_json("watch options", &watch.options)?;
            // The run announces its end only when the watch's receiver asked
            // for `run.finished`; regressions are announced from the watch.
            let hook = watch
                .webhook_url
                .as_ref()
                .filter(|_| watch.events.iter().any(|e| e == crate::events::RUN_FINISHED))
                .cloned();
            // One active scheduled run per target and suite, whichever of
            // its watchers' slots started it: a slow run is not piled on, and
            // many watchers do not multiply the runs at once (each hears of
            // every run's transitions).
            let started = sqlx::query(INSERT_RUN)
                .bind(Uuid::now_v7().to_string())
                .bind(&watch.target_id)
                .bind(&watch.suite)
                .bind(&options)
                .bind(hook)
                .bind(format!("watch:{}:{}", watch.target_id, watch.suite))
                .bind(max_attempts)
                .bind(now_ms)
                .bind(watch.api_key.map(|k| k.to_string()))
                .bind(0i32)
                .bind(None::<String>)
                .bind(SCHEDULE_SUBMITTER)
                .bind(&host)
                .fetch_optional(self.statements.on(&mut *tx))
                .await?;
            match started {
                Some(run) => ticked.started.push(run_from_row(&run)?),
                None => ticked.skipped.push(watch.id),
            }
        }
        // When the next tick has work, read in the same transaction (a
        // scheduler sleeps until then rather than poll the database).
        ticked.next_due_at_ms = sqlx::query_scalar(
            "SELECT MIN(next_due_at_ms) FROM watches
             WHERE expires_at_ms IS NULL OR expires_at_ms > $1",
        )
        .bind(now_ms)
        .fetch_one(self.statements.on(&mut *tx))
        .await?;
        self.commit(tx).await?;
        Ok(ticked)
    }
});
