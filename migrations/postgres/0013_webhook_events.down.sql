DELETE FROM webhook_deliveries WHERE event <> 'run.finished';
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_run_event;
ALTER TABLE webhook_deliveries DROP COLUMN api_key_id;
ALTER TABLE webhook_deliveries DROP COLUMN detail;
ALTER TABLE webhook_deliveries DROP COLUMN event;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_run_id_key UNIQUE (run_id);
