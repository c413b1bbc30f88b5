-- Webhooks: a run submitted with options.webhook_url is announced to that URL when it
-- finishes. One delivery per run, created in the same transaction that ends the run, so
-- a crash cannot lose it; each try is kept as an attempt. The delivery loop claims a due
-- delivery with a lease, like the run queue, and any process picks up what another left.
CREATE TABLE webhook_deliveries (
    id                  TEXT PRIMARY KEY,
    run_id              TEXT NOT NULL UNIQUE REFERENCES runs (id) ON DELETE CASCADE,
    url                 TEXT NOT NULL,
    state               TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts            INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    -- When the next attempt is due; NULL once delivered or given up.
    next_attempt_at_ms  BIGINT,
    lease_expires_at_ms BIGINT,
    created_at_ms       BIGINT NOT NULL
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at_ms)
    WHERE state = 'pending';

CREATE TABLE webhook_attempts (
    delivery_id        TEXT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempt            INTEGER NOT NULL,
    at_ms              BIGINT NOT NULL,
    -- The receiver's HTTP status, or NULL when no response came (see error).
    status_code        INTEGER,
    error              TEXT,
    next_attempt_at_ms BIGINT,
    PRIMARY KEY (delivery_id, attempt)
);
