ALTER TABLE runs DROP COLUMN api_key_id;
DROP INDEX api_keys_live_name;
DROP TABLE api_keys;
