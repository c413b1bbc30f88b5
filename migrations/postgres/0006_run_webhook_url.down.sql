UPDATE runs
SET options = jsonb_set(options::jsonb, '{webhook_url}', to_jsonb(webhook_url))::text
WHERE webhook_url IS NOT NULL;
ALTER TABLE runs DROP COLUMN webhook_url;
