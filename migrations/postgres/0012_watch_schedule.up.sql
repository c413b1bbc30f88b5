-- Scheduling state of a watch (#28):
-- `last_due_at_ms`: the slot last taken, so that lateness can be measured and
--   the target page can say when the last scheduled run was due.
-- `expires_at_ms`: when a watch kept alive by its badge being served ends
--   (30 days after the badge was last served); NULL for a watch an API key
--   asked for, which lasts until it is deleted.
-- `webhook_url`, `events`: where the runs it starts are announced, and which
--   events (a JSON array of event names) the receiver asked for.
ALTER TABLE watches ADD COLUMN last_due_at_ms BIGINT;
ALTER TABLE watches ADD COLUMN expires_at_ms BIGINT;
ALTER TABLE watches ADD COLUMN webhook_url TEXT;
ALTER TABLE watches ADD COLUMN events TEXT;
