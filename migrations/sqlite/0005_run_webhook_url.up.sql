-- A run's webhook URL gets its own column: delivery is the service's concern, not
-- one of the options the suite engine reads, and a column needs no JSON access.
ALTER TABLE runs ADD COLUMN webhook_url TEXT;
UPDATE runs
SET webhook_url = json_extract(options, '$.webhook_url'),
    options = json_remove(options, '$.webhook_url')
WHERE json_type(options, '$.webhook_url') IS NOT NULL;
