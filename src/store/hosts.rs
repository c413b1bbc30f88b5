//! The statements of the per-host limits and of a worker taking back its run,
//! shared by both databases; [`super::sql`] runs them.
//!
//! A host's limits are checked in the claim itself, in SQL, so that a run is
//! never taken only to be put back: the claim passes over every queued run
//! whose host is at its limits and takes the oldest of the others.

use super::sql::Dialect;

/// An SQL condition: the queued run `alias` may start now as far as its host
/// is concerned. `now`, `per_host` and `gap` name the parameters holding the
/// time, [`super::HostLimits::running_per_host`] and
/// [`super::HostLimits::gap_ms`]. A run without a host (queued before hosts
/// were recorded) is not limited. The run itself is not counted among those
/// running (it is when a worker checks the machine it connects to, see
/// [`allowed`]).
fn host_allows(alias: &str, now: &str, per_host: &str, gap: &str) -> String {
    format!(
        "({per_host} <= 0 OR {alias}.target_host IS NULL
          OR (SELECT COUNT(*) FROM runs busy
              WHERE busy.target_host = {alias}.target_host AND busy.status = 'running'
                AND busy.id <> {alias}.id)
             < {per_host})
         AND ({gap} <= 0 OR {alias}.target_host IS NULL
          OR NOT EXISTS (SELECT 1 FROM runs ended
                         WHERE ended.target_host = {alias}.target_host
                           AND ended.finished_at_ms > {now} - {gap}))"
    )
}

/// Claims a queued run its host allows: `$1` worker, `$2` lease expiry, `$3`
/// now, `$4` runs per host, `$5` gap in ms. Among them, the run of the
/// submitter with the fewest runs running goes first, then the oldest (#31
/// item 4): one submitter's thirty runs of slow servers do not make another
/// submitter's run wait for all of them; it starts at the next free worker.
/// Runs without a submitter (queued by a library caller) rank as a submitter
/// with none running. Scheduled runs ([`super::SCHEDULE_SUBMITTER`]) go after
/// every run a person or a CI job is waiting for (#28): a scheduled re-check
/// never makes a submission wait for more than the run already on its host.
pub(super) fn claim<DB: Dialect>() -> String {
    format!(
        concat!(
            "UPDATE runs
             SET status = 'running', locked_by = $1, lease_expires_at_ms = $2,
                 attempts = attempts + 1, started_at_ms = COALESCE(started_at_ms, $3)
             WHERE id = (SELECT q.id FROM runs q
                         WHERE q.status = 'queued' AND q.available_at_ms <= $3 AND {allows}
                         ORDER BY {scheduled},
                                  (SELECT COUNT(*) FROM runs mine
                                   WHERE mine.status = 'running'
                                     AND mine.submitter = q.submitter),
                                  q.created_at_ms, q.id
                         LIMIT 1{skip_locked})
             RETURNING ",
            run_columns!()
        ),
        allows = host_allows("q", "$3", "$4", "$5"),
        scheduled = super::sql::scheduled_rank("q"),
        skip_locked = DB::SKIP_LOCKED,
    )
}

/// Takes back run `$1` for worker `$2` whose attempt `$3` it was driving:
/// `$4` lease expiry, `$5` 1 to start the next attempt or 0 to go on, `$6`
/// now, `$7` runs per host, `$8` gap in ms.
pub(super) fn reclaim() -> String {
    format!(
        concat!(
            "UPDATE runs
             SET status = 'running', locked_by = $2, lease_expires_at_ms = $4, error = NULL,
                 attempts = attempts + $5
             WHERE id = $1 AND attempts = $3 AND attempts + $5 <= max_attempts
               AND ((status = 'running' AND locked_by = $2)
                    OR (status = 'queued' AND locked_by IS NULL AND {allows}))
             RETURNING ",
            run_columns!()
        ),
        allows = host_allows("runs", "$6", "$7", "$8"),
    )
}

/// Selects run `$1` when its host's limits allow it to run now: `$2` now,
/// `$3` runs per host, `$4` gap in ms.
pub(super) fn allowed() -> String {
    format!(
        "SELECT 1 FROM runs r WHERE r.id = $1 AND {allows}",
        allows = host_allows("r", "$2", "$3", "$4"),
    )
}

/// Puts run `$1` back in the queue, its attempt given back, its start
/// forgotten when this was its first (see `Store::rehost_run`).
pub(super) const DEFER: &str = "UPDATE runs
     SET status = 'queued', locked_by = NULL, lease_expires_at_ms = NULL,
         started_at_ms = CASE WHEN attempts <= 1 THEN NULL ELSE started_at_ms END,
         attempts = attempts - 1
     WHERE id = $1";

/// Runs created for host `$1` after `$2`, and when the oldest was created;
/// the same of those submitted by `$3`.
pub(super) const HOST_LOAD: &str = "SELECT COUNT(*), MIN(created_at_ms),
            COUNT(CASE WHEN submitter = $3 THEN 1 END),
            MIN(CASE WHEN submitter = $3 THEN created_at_ms END)
     FROM runs
     WHERE target_host = $1 AND created_at_ms > $2";

/// The target URLs of the runs on host `$1` created after `$2`, newest
/// first, with when each was created: the runs a cooldown looks through for
/// one of the same server (see `super::same_server`). The host's recent runs
/// are found by `runs_host_created`; the hourly budget keeps them few, and
/// the limit bounds them whatever happens.
pub(super) const RECENT_ON_HOST: &str = "SELECT targets.canonical_url, runs.created_at_ms
     FROM runs JOIN targets ON targets.id = runs.target_id
     WHERE runs.target_host = $1 AND runs.created_at_ms > $2
     ORDER BY runs.created_at_ms DESC
     LIMIT 1000";
