-- Credentials submitted with a run through the API (src/credentials.rs).
--
-- runs.credentials says what the run was judged with ('bearer': a token the
-- submitter supplied) and stays after the run ends, for its reports.
-- run_credentials holds the sealed token (XChaCha20-Poly1305, base64 of the
-- nonce and ciphertext, with the id of the operator's key that sealed it) only
-- while the run is queued or running.
ALTER TABLE runs ADD COLUMN credentials TEXT CHECK (credentials IN ('bearer'));

CREATE TABLE run_credentials (
    run_id        TEXT PRIMARY KEY NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key_id        TEXT NOT NULL,
    sealed        TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL
);

-- Wiped the moment the run ends, whatever ends it (a worker's verdict or
-- error, the reaper, a cancellation): no code path can forget.
CREATE TRIGGER runs_wipe_credentials
    AFTER UPDATE OF status ON runs
    FOR EACH ROW
    WHEN NEW.status NOT IN ('queued', 'running')
BEGIN
    DELETE FROM run_credentials WHERE run_id = NEW.id;
END;
