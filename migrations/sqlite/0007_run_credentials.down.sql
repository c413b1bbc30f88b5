DROP TRIGGER runs_wipe_credentials;
DROP TABLE run_credentials;
ALTER TABLE runs DROP COLUMN credentials;
