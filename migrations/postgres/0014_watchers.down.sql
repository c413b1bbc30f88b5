-- Back to one watch per target and suite, and one delivery per run and
-- event: the oldest of each is kept.
DELETE FROM webhook_deliveries d
WHERE EXISTS (SELECT 1 FROM webhook_deliveries e
              WHERE e.run_id = d.run_id AND e.event = d.event
                AND (e.created_at_ms, e.id) < (d.created_at_ms, d.id));
DROP INDEX webhook_deliveries_once;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_run_event UNIQUE (run_id, event);

DELETE FROM watches w
WHERE EXISTS (SELECT 1 FROM watches o
              WHERE o.target_id = w.target_id AND o.suite = w.suite
                AND (o.created_at_ms, o.id) < (w.created_at_ms, w.id));
DROP INDEX watches_by_key;
DROP INDEX watches_of_badge;
DROP INDEX watches_of_key;
ALTER TABLE watches ADD CONSTRAINT watches_target_id_suite_key UNIQUE (target_id, suite);
