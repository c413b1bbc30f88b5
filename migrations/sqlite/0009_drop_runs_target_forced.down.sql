CREATE INDEX runs_target_forced ON runs (target_id, created_at_ms) WHERE forced = 1;
