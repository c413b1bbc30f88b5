//! Watches ([`WatchStore`]) on the SQL store: targets re-checked on a
//! schedule. A tick takes the due watches and starts their runs in one
//! transaction, so that each slot starts one run whoever ticks.

use super::{Dialect, INSERT_RUN};
use crate::store::rows::{from_json, parse_uuid, run_from_row, to_json};
use crate::store::{
    DueWatches, HostLimits, NewWatch, SCHEDULE_SUBMITTER, StoreResult, Watch, WatchStore,
};
use sqlx::Row;
use uuid::Uuid;

/// The columns of a [`Watch`], in [`watch_from_row`]'s order.
const WATCH_COLUMNS: &str =
    "id, target_id, suite, options, interval_ms, next_due_at_ms, api_key_id, created_at_ms";

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
    })
}

/// Moves at most `$2` watches due at `$1` to their next slot, earliest
/// first; returns them.
fn take_due<DB: Dialect>() -> String {
    format!(
        "UPDATE watches
         SET next_due_at_ms = CASE WHEN next_due_at_ms + interval_ms > $1
                                   THEN next_due_at_ms + interval_ms
                                   ELSE $1 + interval_ms END
         WHERE id IN (SELECT w.id FROM watches w WHERE w.next_due_at_ms <= $1
                      ORDER BY w.next_due_at_ms, w.id LIMIT $2{skip_locked})
         RETURNING {WATCH_COLUMNS}",
        skip_locked = DB::SKIP_LOCKED,
    )
}

impl_sql_store!(WatchStore {
    async fn put_watch(&self, new: &NewWatch) -> StoreResult<Watch> {
        let row = sqlx::query(&format!(
            "INSERT INTO watches ({WATCH_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT (target_id, suite) DO UPDATE
             SET options = excluded.options, interval_ms = excluded.interval_ms,
                 next_due_at_ms = excluded.next_due_at_ms, api_key_id = excluded.api_key_id
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
        .fetch_one(self.db())
        .await?;
        watch_from_row(&row)
    }

    async fn delete_watch(&self, target_id: &str, suite: &str) -> StoreResult<bool> {
        let done = sqlx::query("DELETE FROM watches WHERE target_id = $1 AND suite = $2")
            .bind(target_id)
            .bind(suite)
            .execute(self.db())
            .await?;
        Ok(DB::rows_affected(&done) == 1)
    }

    async fn get_watch(&self, target_id: &str, suite: &str) -> StoreResult<Option<Watch>> {
        let row = sqlx::query(&format!(
            "SELECT {WATCH_COLUMNS} FROM watches WHERE target_id = $1 AND suite = $2"
        ))
        .bind(target_id)
        .bind(suite)
        .fetch_optional(self.db())
        .await?;
        row.as_ref().map(watch_from_row).transpose()
    }

    async fn start_due_watches(
        &self,
        now_ms: i64,
        limit: u32,
        max_attempts: i32,
    ) -> StoreResult<DueWatches> {
        // A claim's transaction: SQLite's single writer from the start, so
        // that two ticks never both read a slot as due.
        let mut tx = self.begin_claim(&HostLimits::NONE).await?;
        let due = sqlx::query(&take_due::<DB>())
            .bind(now_ms)
            .bind(i64::from(limit))
            .fetch_all(self.statements.on(&mut *tx))
            .await?;
        let mut ticked = DueWatches::default();
        for row in &due {
            let watch = watch_from_row(row)?;
            let options = to_json("watch options", &watch.options)?;
            // One active run per watch: a slow run is not piled on.
            let started = sqlx::query(INSERT_RUN)
                .bind(Uuid::now_v7().to_string())
                .bind(&watch.target_id)
                .bind(&watch.suite)
                .bind(&options)
                .bind(None::<String>)
                .bind(format!("watch:{}", watch.id))
                .bind(max_attempts)
                .bind(now_ms)
                .bind(watch.api_key.map(|k| k.to_string()))
                .bind(0i32)
                .bind(None::<String>)
                .bind(SCHEDULE_SUBMITTER)
                .bind(None::<String>)
                .fetch_optional(self.statements.on(&mut *tx))
                .await?;
            match started {
                Some(run) => ticked.started.push(run_from_row(&run)?),
                None => ticked.skipped.push(watch.id),
            }
        }
        self.commit(tx).await?;
        Ok(ticked)
    }
});
