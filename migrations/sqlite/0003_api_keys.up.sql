-- Same shape as migrations/postgres/0004_api_keys.up.sql. Only the SHA-256 of a token is
-- kept; the webhook signing secret must be kept as is, because protocheck signs with it.
CREATE TABLE api_keys (
    id                 TEXT PRIMARY KEY NOT NULL,
    name               TEXT NOT NULL,
    owner              TEXT,
    token_hash         TEXT NOT NULL UNIQUE,
    rate_count         INTEGER NOT NULL CHECK (rate_count >= 1),
    rate_period_s      INTEGER NOT NULL CHECK (rate_period_s >= 1),
    webhook_secret     TEXT NOT NULL,
    created_at_ms      INTEGER NOT NULL,
    revoked_at_ms      INTEGER,
    last_used_at_ms    INTEGER
);

-- A name names one live key; a revoked key's name may be reused.
CREATE UNIQUE INDEX api_keys_live_name ON api_keys (name) WHERE revoked_at_ms IS NULL;

-- The key a run was submitted with (NULL: anonymous). No REFERENCES clause: SQLite cannot
-- drop a column that is part of a foreign key, which the down migration must do; keys are
-- revoked, never deleted, so the store never leaves a run pointing nowhere.
ALTER TABLE runs ADD COLUMN api_key_id TEXT;
