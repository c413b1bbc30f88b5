-- A run's webhook URL gets its own column: delivery is the service's concern, not
-- one of the options the suite engine reads, and a column needs no JSON access.
ALTER TABLE runs ADD COLUMN webhook_url TEXT;
UPDATE runs
SET webhook_url = options::jsonb ->> 'webhook_url',
    options = (options::jsonb - 'webhook_url')::text
WHERE options::jsonb ? 'webhook_url';
