-- Same shape as migrations/postgres/0005_webhooks.up.sql. Webhooks: a run submitted with
-- options.webhook_url is announced to that URL when it finishes. One delivery per run,
-- created in the same transaction that ends the run, so a crash cannot lose it; each try
-- is kept as an attempt.
CREATE TABLE webhook_deliveries (
    id                  TEXT PRIMARY KEY NOT NULL,
    run_id              TEXT NOT NULL UNIQUE REFERENCES runs (id) ON DELETE CASCADE,
    url                 TEXT NOT NULL,
    state               TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts            INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    -- When the next attempt is due; NULL once delivered or given up.
    next_attempt_at_ms  INTEGER,
    lease_expires_at_ms INTEGER,
    created_at_ms       INTEGER NOT NULL
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
