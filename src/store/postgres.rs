//! Postgres store: production, with any number of worker processes on any number
//! of machines sharing the queue.
//!
//! Claims use `FOR UPDATE SKIP LOCKED`, so concurrent workers pass over each
//! other's candidate rows instead of queueing behind them, and commit at once:
//! the lease, not a transaction, holds the run while it talks to the network.
//! New work is announced on [`WORK_CHANNEL`] by triggers (migration 0002).
//! Everything this file does not say is in [`super::sql`], shared with SQLite.

use super::Backend;
use super::sql::{Dialect, SqlStore};
use sqlx::Postgres;
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgListener, PgPool, PgQueryResult};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Migrations for Postgres, embedded in the binary.
pub static MIGRATOR: Migrator = sqlx::migrate!("migrations/postgres");

/// The `LISTEN`/`NOTIFY` channel on which the runs triggers announce queued work.
/// Must match the name in `migrations/postgres/0002_notify_runs.up.sql`.
pub const WORK_CHANNEL: &str = "protocheck_runs";

/// First delay before reconnecting a failed work listener; doubled on each failure.
const LISTEN_BACKOFF_MIN: Duration = Duration::from_millis(250);
/// Longest delay between reconnection attempts of the work listener.
const LISTEN_BACKOFF_MAX: Duration = Duration::from_secs(30);

/// The Postgres implementation of [`super::Store`]: `PgStore::connect` connects
/// to the database a `postgres://` or `postgresql://` URL names.
pub type PgStore = SqlStore<Postgres>;

impl Dialect for Postgres {
    const BACKEND: Backend = Backend::Postgres;
    const MIGRATOR: &'static Migrator = &MIGRATOR;

    // Including the one a work listener keeps.
    const MAX_CONNECTIONS: u32 = 10;

    // Row locks, not the transaction, keep claimers apart.
    const BEGIN_CLAIM: Option<&'static str> = None;
    // A transaction-scoped advisory lock (its key spells "protochk" in ASCII):
    // held from the check of a host's runs to the commit that records the
    // claim. Claims are short, so serialising those that apply host limits
    // costs little next to a run; per-host locks would need the host before the
    // run is chosen.
    const CLAIM_LOCK: Option<&'static str> =
        Some("SELECT pg_advisory_xact_lock(8102661225468618859)");
    const SKIP_LOCKED: &'static str = " FOR UPDATE SKIP LOCKED";
    // Each write of `append_findings` runs in a transaction of its own (its one
    // statement, or the batch's): the lock lasts until the findings are written.
    const FOR_SHARE: &'static str = " FOR SHARE";
    const FOR_UPDATE: &'static str = " FOR UPDATE";
    const NEW_ID: &'static str = "gen_random_uuid()::text";

    fn connect_options(url: &str) -> Result<PgConnectOptions, sqlx::Error> {
        url.parse()
    }

    fn tcp_address(options: &PgConnectOptions) -> Option<(String, u16)> {
        // A host starting with `/` is the directory of a Unix socket.
        let host = options.get_host();
        (!host.starts_with('/')).then(|| (host.to_owned(), options.get_port()))
    }

    fn json_text(column: &str, field: &str) -> String {
        format!("({column}::jsonb ->> '{field}')")
    }

    fn rows_affected(done: &PgQueryResult) -> u64 {
        done.rows_affected()
    }

    async fn listen_for_work(pool: &PgPool, notify: Arc<Notify>, shutdown: CancellationToken) {
        let mut backoff = LISTEN_BACKOFF_MIN;
        loop {
            let outcome = tokio::select! {
                () = shutdown.cancelled() => return,
                outcome = listen(pool, &notify, &mut backoff) => outcome,
            };
            let Err(failed) = outcome;
            tracing::warn!(error = %failed, retry_in = ?backoff, "work listener failed; reconnecting");
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(backoff) => {}
            }
            backoff = (backoff * 2).min(LISTEN_BACKOFF_MAX);
        }
    }
}

/// Listens on [`WORK_CHANNEL`] until the connection fails for good.
async fn listen(
    pool: &PgPool,
    notify: &Notify,
    backoff: &mut Duration,
) -> Result<Infallible, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(WORK_CHANNEL).await?;
    *backoff = LISTEN_BACKOFF_MIN;
    // Work queued while nobody was listening was announced to no one.
    wake(notify);
    loop {
        // `None` means the connection dropped: the next call reconnects (an error if it
        // cannot), and notifications sent in between are lost, so wake workers either way.
        let _notification = listener.try_recv().await?;
        wake(notify);
    }
}

/// Wakes every idle worker, and leaves a permit for one that is not waiting yet.
///
/// Workers create their `notified()` future before each poll of the queue, and
/// `notify_waiters` reaches every such future, polled or not. That alone loses no
/// work, and it is the right breadth: Postgres folds the notifications of one
/// transaction into one, so a single wake-up can stand for many runs (a reaper
/// requeueing several), and every idle worker should look. `notify_one` adds a
/// stored permit for a worker that polls before arming its future; it costs at
/// most one extra, empty poll.
fn wake(notify: &Notify) {
    notify.notify_waiters();
    notify.notify_one();
}
