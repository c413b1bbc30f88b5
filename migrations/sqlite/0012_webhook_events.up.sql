-- Webhook events (#28): besides `run.finished`, a run of a watched target can
-- announce `run.regressed` or `run.recovered` at the watch's receiver. A run
-- has at most one delivery per event. `detail` is what the event adds to the
-- run's announcement (the rules that changed, the run before), fixed when the
-- run ends; `api_key_id` is the key whose secret signs it (the watch's), NULL
-- for the run's own key. SQLite cannot drop the old one-per-run constraint,
-- so the two tables are rebuilt (attempts first: dropping a table with
-- children would delete them through the cascade).
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
    api_key_id          TEXT,
    UNIQUE (run_id, event)
);

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

INSERT INTO webhook_deliveries
    (id, run_id, url, state, attempts, next_attempt_at_ms, lease_expires_at_ms, created_at_ms)
SELECT id, run_id, url, state, attempts, next_attempt_at_ms, lease_expires_at_ms, created_at_ms
FROM webhook_deliveries_kept;
INSERT INTO webhook_attempts SELECT * FROM webhook_attempts_kept
WHERE delivery_id IN (SELECT id FROM webhook_deliveries);
DROP TABLE webhook_attempts_kept;
DROP TABLE webhook_deliveries_kept;
