ALTER TABLE runs DROP COLUMN api_key_id;
DROP TABLE api_keys;
