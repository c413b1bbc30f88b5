-- Several watchers per target (#54): each API key keeps a watch of its own
-- of a target and suite (its interval, webhook and events), so that no key
-- can hold a target's watch against every other; a badge keeps at most one
-- watch of its own (no key). A revoked key's watches are removed with it,
-- and those left by keys revoked before are removed here.
ALTER TABLE watches DROP CONSTRAINT watches_target_id_suite_key;
CREATE UNIQUE INDEX watches_of_key ON watches (target_id, suite, api_key_id);
CREATE UNIQUE INDEX watches_of_badge ON watches (target_id, suite) WHERE api_key_id IS NULL;
CREATE INDEX watches_by_key ON watches (api_key_id);
DELETE FROM watches
WHERE api_key_id IN (SELECT id FROM api_keys WHERE revoked_at_ms IS NOT NULL);

-- Each watcher is told of a transition with its own delivery, signed with
-- its own key: at most one delivery per run, event and signing key (NULL:
-- the run's own).
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_run_event;
CREATE UNIQUE INDEX webhook_deliveries_once
    ON webhook_deliveries (run_id, event, COALESCE(api_key_id, ''));
