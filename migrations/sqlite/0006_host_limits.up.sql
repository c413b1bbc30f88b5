-- Per-host limits: protocheck must not be usable to flood a third party.
--
-- targets.host is the host of the canonical URL, as the application parses it;
-- upsert_target fills it for new targets and for targets stored before this
-- migration when they are next submitted. runs.target_host copies it when a
-- run is queued, so the claim and the submission checks read one column.
-- Runs queued before this migration have no host and are not limited.
ALTER TABLE targets ADD COLUMN host TEXT;
ALTER TABLE runs ADD COLUMN target_host TEXT;
-- Whether the submission asked for a new run despite a fresh result (`force`).
ALTER TABLE runs ADD COLUMN forced INTEGER NOT NULL DEFAULT 0 CHECK (forced IN (0, 1));

-- Runs created for a host in the last hour (submission).
CREATE INDEX runs_host_created ON runs (target_host, created_at_ms);
-- The last end of a run on a host (the claim's politeness gap).
CREATE INDEX runs_host_finished ON runs (target_host, finished_at_ms);
-- Runs running on a host (the claim's concurrency limit).
CREATE INDEX runs_host_running ON runs (target_host) WHERE status = 'running';
-- The newest forced run of a target (submission).
CREATE INDEX runs_target_forced ON runs (target_id, created_at_ms) WHERE forced = 1;
