-- API keys: operators create them with `protocheck keys create`. A key raises the submit
-- rate limit to its own quota and marks the runs it submits. Only the SHA-256 of the
-- token is kept (tokens are long random strings, so a fast hash suffices); the webhook
-- signing secret must be kept as is, because protocheck signs with it.
CREATE TABLE api_keys (
    id                 TEXT PRIMARY KEY,
    name               TEXT NOT NULL,
    owner              TEXT,
    token_hash         TEXT NOT NULL UNIQUE,
    rate_count         INTEGER NOT NULL CHECK (rate_count >= 1),
    rate_period_s      BIGINT NOT NULL CHECK (rate_period_s >= 1),
    webhook_secret     TEXT NOT NULL,
    created_at_ms      BIGINT NOT NULL,
    revoked_at_ms      BIGINT,
    last_used_at_ms    BIGINT
);

-- A name names one live key; a revoked key's name may be reused.
CREATE UNIQUE INDEX api_keys_live_name ON api_keys (name) WHERE revoked_at_ms IS NULL;

-- The key a run was submitted with (NULL: anonymous).
ALTER TABLE runs ADD COLUMN api_key_id TEXT REFERENCES api_keys (id);
