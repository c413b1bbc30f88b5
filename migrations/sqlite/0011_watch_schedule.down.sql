ALTER TABLE watches DROP COLUMN events;
ALTER TABLE watches DROP COLUMN webhook_url;
ALTER TABLE watches DROP COLUMN expires_at_ms;
ALTER TABLE watches DROP COLUMN last_due_at_ms;
