-- Targets protocheck re-checks on a schedule (#28): at most one watch per
-- target and suite. A watch starts a run with `options` every `interval_ms`,
-- at `next_due_at_ms` (its first slot spread by jitter, the next ones a whole
-- interval later). `api_key_id` is the key that asked for it.
CREATE TABLE watches (
    id             TEXT PRIMARY KEY,
    target_id      TEXT NOT NULL REFERENCES targets (id),
    suite          TEXT NOT NULL CHECK (suite IN ('mcp', 'rcp')),
    options        TEXT NOT NULL,
    interval_ms    BIGINT NOT NULL CHECK (interval_ms > 0),
    next_due_at_ms BIGINT NOT NULL,
    api_key_id     TEXT,
    created_at_ms  BIGINT NOT NULL,
    UNIQUE (target_id, suite)
);

-- The due watches, earliest first (the scheduler's tick).
CREATE INDEX watches_due ON watches (next_due_at_ms);
