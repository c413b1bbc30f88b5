-- Same shape as migrations/postgres/0001_schema.up.sql. Times are milliseconds since the
-- Unix epoch (INTEGER), supplied by the application. Ids are text: target keys and UUIDs.
-- Primary keys are NOT NULL explicitly: SQLite would otherwise accept NULL in a TEXT key.

CREATE TABLE targets (
    id            TEXT PRIMARY KEY NOT NULL,
    canonical_url TEXT NOT NULL UNIQUE,
    protocol      TEXT,
    created_at_ms INTEGER NOT NULL
);

-- The runs table is also the work queue: a run is claimed with a lease
-- (locked_by, lease_expires_at_ms), never by holding a transaction open.
CREATE TABLE runs (
    id                  TEXT PRIMARY KEY NOT NULL,
    target_id           TEXT NOT NULL REFERENCES targets (id),
    suite               TEXT NOT NULL,
    suite_version       TEXT,
    options             TEXT NOT NULL,
    dedup_key           TEXT NOT NULL,
    status              TEXT NOT NULL
        CHECK (status IN ('queued', 'running', 'passed', 'failed', 'error', 'cancelled')),
    attempts            INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    max_attempts        INTEGER NOT NULL CHECK (max_attempts >= 1),
    locked_by           TEXT,
    lease_expires_at_ms INTEGER,
    available_at_ms     INTEGER NOT NULL,
    created_at_ms       INTEGER NOT NULL,
    started_at_ms       INTEGER,
    finished_at_ms      INTEGER,
    verdict             TEXT,
    error               TEXT
);

-- At most one active run per dedup key. insert_run targets this index with
-- ON CONFLICT DO NOTHING, which makes deduplication atomic.
CREATE UNIQUE INDEX runs_active_dedup_key ON runs (dedup_key)
    WHERE status IN ('queued', 'running');

CREATE INDEX runs_claim ON runs (status, available_at_ms, created_at_ms);

CREATE INDEX runs_target_history ON runs (target_id, created_at_ms DESC, id DESC);

CREATE INDEX runs_lease_expiry ON runs (lease_expires_at_ms) WHERE status = 'running';

-- Freshness check on submit: the newest finished run with a given key.
CREATE INDEX runs_latest_finished ON runs (dedup_key, finished_at_ms DESC)
    WHERE status IN ('passed', 'failed');

-- Findings are kept per attempt so that a stale worker's late writes can never
-- mix with the attempt that is running now.
CREATE TABLE findings (
    run_id        TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    attempt       INTEGER NOT NULL,
    seq           INTEGER NOT NULL,
    rule_id       TEXT NOT NULL,
    outcome       TEXT NOT NULL CHECK (outcome IN ('pass', 'fail', 'warn', 'info', 'skip')),
    message       TEXT NOT NULL,
    evidence      TEXT NOT NULL,
    duration_ms   INTEGER NOT NULL,
    created_at_ms INTEGER NOT NULL,
    PRIMARY KEY (run_id, attempt, seq)
);

-- No foreign key to runs: the store does not dictate whether the submit path records
-- the key before or after it inserts the run.
CREATE TABLE idempotency_keys (
    key           TEXT PRIMARY KEY NOT NULL,
    request_hash  TEXT NOT NULL,
    run_id        TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL
);
