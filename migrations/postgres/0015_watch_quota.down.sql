ALTER TABLE api_keys DROP COLUMN watch_quota;
