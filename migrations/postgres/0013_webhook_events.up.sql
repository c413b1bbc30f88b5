-- Webhook events (#28): besides `run.finished`, a run of a watched target can
-- announce `run.regressed` or `run.recovered` at the watch's receiver. A run
-- has at most one delivery per event. `detail` is what the event adds to the
-- run's announcement (the rules that changed, the run before), fixed when the
-- run ends; `api_key_id` is the key whose secret signs it (the watch's), NULL
-- for the run's own key.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_run_id_key;
ALTER TABLE webhook_deliveries ADD COLUMN event TEXT NOT NULL DEFAULT 'run.finished';
ALTER TABLE webhook_deliveries ADD COLUMN detail TEXT;
ALTER TABLE webhook_deliveries ADD COLUMN api_key_id TEXT;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_run_event UNIQUE (run_id, event);
