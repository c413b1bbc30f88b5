-- Several watchers per target (#54): each API key keeps a watch of its own
-- of a target and suite (its interval, webhook and events), so that no key
-- can hold a target's watch against every other; a badge keeps at most one
-- watch of its own (no key). A revoked key's watches are removed with it,
-- and those left by keys revoked before are removed here. SQLite cannot drop
-- the old one-per-target constraints, so both tables are rebuilt (webhook
-- attempts first: dropping a table with children would delete them through
-- the cascade).
CREATE TABLE watches_kept AS SELECT * FROM watches;
DROP TABLE watches;
CREATE TABLE watches (
    id             TEXT PRIMARY KEY,
    target_id      TEXT NOT NULL REFERENCES targets (id),
    suite          TEXT NOT NULL CHECK (suite IN ('mcp', 'rcp')),
    options        TEXT NOT NULL,
    interval_ms    BIGINT NOT NULL CHECK (interval_ms > 0),
    next_due_at_ms BIGINT NOT NULL,
    api_key_id     TEXT,
    created_at_ms  BIGINT NOT NULL,
    last_due_at_ms BIGINT,
    expires_at_ms  BIGINT,
    webhook_url    TEXT,
    events         TEXT
);
CREATE INDEX watches_due ON watches (next_due_at_ms);
CREATE UNIQUE INDEX watches_of_key ON watches (target_id, suite, api_key_id);
CREATE UNIQUE INDEX watches_of_badge ON watches (target_id, suite) WHERE api_key_id IS NULL;
CREATE INDEX watches_by_key ON watches (api_key_id);
INSERT INTO watches
    (id, target_id, suite, options, interval_ms, next_due_at_ms, api_key_id, created_at_ms,
     last_due_at_ms, expires_at_ms, webhook_url, events)
SELECT id, target_id, suite, options, interval_ms, next_due_at_ms, api_key_id, created_at_ms,
       last_due_at_ms, expires_at_ms, webhook_url, events
FROM watches_kept
WHERE api_key_id IS NULL
   OR api_key_id NOT IN (SELECT id FROM api_keys WHERE revoked_at_ms IS NOT NULL);
DROP TABLE watches_kept;

-- Each watcher is told of a transition with its own delivery, signed with
-- its own key: at most one delivery per run, event and signing key (NULL:
-- the run's own).
CREATE TABLE webhook_attempts_kept AS SELECT * FROM webhook_attempts;
CREATE TABLE webhook_deliveries_kept AS SELECT * FROM webhook_deliveries;
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;

CREATE TABLE webhook_deliveries (
    id                  TEXT PRIMARY KEY NOT NULL,
    run_id              TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    url                 TEXT NOT NULL,
    state               TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts            INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    -- When the next attempt is due; NULL once delivered or given up.
    next_attempt_at_ms  INTEGER,
    lease_expires_at_ms INTEGER,
    created_at_ms       INTEGER NOT NULL,
    event               TEXT NOT NULL DEFAULT 'run.finished',
    detail              TEXT,
    api_key_id          TEXT
);

CREATE UNIQUE INDEX webhook_deliveries_once
    ON webhook_deliveries (run_id, event, COALESCE(api_key_id, ''));
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at_ms)
    WHERE state = 'pending';

CREATE TABLE webhook_attempts (
    delivery_id        TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt            INTEGER NOT NULL,
    at_ms              INTEGER NOT NULL,
    -- The receiver's HTTP status, or NULL when no response came (see error).
    status_code        INTEGER,
    error              TEXT,
    next_attempt_at_ms INTEGER,
    PRIMARY KEY (delivery_id, attempt)
);

INSERT INTO webhook_deliveries SELECT * FROM webhook_deliveries_kept;
INSERT INTO webhook_attempts SELECT * FROM webhook_attempts_kept;
DROP TABLE webhook_attempts_kept;
DROP TABLE webhook_deliveries_kept;
