DROP TRIGGER runs_wipe_credentials ON runs;
DROP FUNCTION protocheck_wipe_run_credentials();
DROP TABLE run_credentials;
ALTER TABLE runs DROP COLUMN credentials;
