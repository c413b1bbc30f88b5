-- Signed attestations (issue #5). One DSSE envelope per run that ended with a verdict,
-- stored as served, byte for byte, so a verifier receives exactly what was signed.
CREATE TABLE attestations (
    run_id        TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    key_id        TEXT NOT NULL,
    envelope      TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL
);

-- The public half of every key that ever signed, published as a JWKS. Rotating the
-- signing key adds a row and removes none, so old attestations keep verifying. Private
-- keys never reach the database.
CREATE TABLE signing_keys (
    key_id        TEXT PRIMARY KEY,
    algorithm     TEXT NOT NULL,
    public_key    TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL
);

-- Badges ask for the newest finished run of a target.
CREATE INDEX runs_target_finished ON runs (target_id, finished_at_ms DESC)
    WHERE status IN ('passed', 'failed', 'error');
