//! SQLite store: the embedded default, one process sharing one database file.
//!
//! SQLite serialises writers, so the queue needs no row locks: a claim is one
//! `UPDATE … RETURNING` inside a `BEGIN IMMEDIATE` transaction, which takes the
//! write lock up front (waiting up to [`BUSY_TIMEOUT`]) instead of failing with
//! `SQLITE_BUSY` when a read transaction tries to upgrade. Everything this file
//! does not say is in [`super::sql`], shared with Postgres.

use super::Backend;
use super::sql::{Dialect, SqlStore};
use sqlx::migrate::Migrator;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteQueryResult, SqliteSynchronous};
use sqlx::{Sqlite, SqlitePool};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Migrations for SQLite, embedded in the binary.
pub static MIGRATOR: Migrator = sqlx::migrate!("migrations/sqlite");

/// How long a writer waits for the write lock before giving up with `SQLITE_BUSY`.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The SQLite implementation of [`super::Store`]: `SqliteStore::connect` opens
/// (and creates when missing) the database `sqlite://path` or `sqlite:path` names.
pub type SqliteStore = SqlStore<Sqlite>;

impl Dialect for Sqlite {
    const BACKEND: Backend = Backend::Sqlite;
    const MIGRATOR: &'static Migrator = &MIGRATOR;

    // WAL lets readers run beside the one writer.
    const MAX_CONNECTIONS: u32 = 8;

    const BEGIN_CLAIM: Option<&'static str> = Some("BEGIN IMMEDIATE");
    // `BEGIN IMMEDIATE` already serialises every claim.
    const CLAIM_LOCK: Option<&'static str> = None;
    // The claim's `BEGIN IMMEDIATE` already holds the only write lock there is,
    // and no requeue can run between `append_findings`' check and its insert.
    const SKIP_LOCKED: &'static str = "";
    const FOR_SHARE: &'static str = "";
    const FOR_UPDATE: &'static str = "";
    const NEW_ID: &'static str = "lower(hex(randomblob(16)))";

    /// The database holds every webhook secret and, for a run's length, a
    /// sealed token: like the signing key, its file is readable by its owner
    /// only (0600). A new file is created so; an existing one, and its WAL
    /// and shared-memory files, are narrowed to that (SQLite creates those
    /// two with the database file's permissions).
    fn prepare(url: &str) -> std::io::Result<()> {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let Ok(options) = SqliteConnectOptions::from_str(url) else {
            return Ok(()); // `connect_options` reports the bad URL.
        };
        let path = options.get_filename().to_path_buf();
        if path.as_os_str().is_empty() || path.to_string_lossy().starts_with(":memory:") {
            return Ok(());
        }
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
        {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            // A directory that does not exist: `connect` says so.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        }
        for suffix in ["", "-wal", "-shm"] {
            let mut file = path.clone().into_os_string();
            file.push(suffix);
            if std::path::Path::new(&file).exists() {
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))?;
            }
        }
        Ok(())
    }

    fn connect_options(url: &str) -> Result<SqliteConnectOptions, sqlx::Error> {
        Ok(SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // NORMAL is durable across application crashes in WAL mode; only a power
            // loss can lose the last commits, which a conformance queue can afford.
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(BUSY_TIMEOUT)
            // Deleted rows are overwritten, not left in free pages: a run's sealed
            // token is gone from the file when its run ends, not merely unlinked.
            // Deletes are rare here (those tokens, expired idempotency records).
            .pragma("secure_delete", "ON")
            .foreign_keys(true))
    }

    fn json_text(column: &str, field: &str) -> String {
        format!("json_extract({column}, '$.{field}')")
    }

    fn rows_affected(done: &SqliteQueryResult) -> u64 {
        done.rows_affected()
    }

    // Submits and workers share one process and its `Notify`: there is nothing
    // to listen to.
    async fn listen_for_work(_: &SqlitePool, _: Arc<Notify>, _: CancellationToken) {}
}
