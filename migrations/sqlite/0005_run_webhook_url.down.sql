UPDATE runs
SET options = json_set(options, '$.webhook_url', webhook_url)
WHERE webhook_url IS NOT NULL;
ALTER TABLE runs DROP COLUMN webhook_url;
