-- Back to one watch per target and suite, and one delivery per run and
-- event: the oldest of each is kept.
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
SELECT * FROM webhook_deliveries_kept d
WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries_kept e
                  WHERE e.run_id = d.run_id AND e.event = d.event
                    AND (e.created_at_ms < d.created_at_ms
                         OR (e.created_at_ms = d.created_at_ms AND e.id < d.id)));
INSERT INTO webhook_attempts SELECT * FROM webhook_attempts_kept
WHERE delivery_id IN (SELECT id FROM webhook_deliveries);
DROP TABLE webhook_attempts_kept;
DROP TABLE webhook_deliveries_kept;

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
    events         TEXT,
    UNIQUE (target_id, suite)
);
CREATE INDEX watches_due ON watches (next_due_at_ms);
INSERT INTO watches
    (id, target_id, suite, options, interval_ms, next_due_at_ms, api_key_id, created_at_ms,
     last_due_at_ms, expires_at_ms, webhook_url, events)
SELECT id, target_id, suite, options, interval_ms, next_due_at_ms, api_key_id, created_at_ms,
       last_due_at_ms, expires_at_ms, webhook_url, events
FROM watches_kept w
WHERE NOT EXISTS (SELECT 1 FROM watches_kept o
                  WHERE o.target_id = w.target_id AND o.suite = w.suite
                    AND (o.created_at_ms < w.created_at_ms
                         OR (o.created_at_ms = w.created_at_ms AND o.id < w.id)));
DROP TABLE watches_kept;
