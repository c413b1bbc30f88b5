-- How many watches a key may keep (#54): set when the key is created
-- (`protocheck keys create --watch-quota`), a hundred by default, so that one
-- key cannot schedule without bound.
ALTER TABLE api_keys ADD COLUMN watch_quota INTEGER NOT NULL DEFAULT 100 CHECK (watch_quota >= 0);
