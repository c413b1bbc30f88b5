DROP INDEX runs_target_finished;
DROP TABLE signing_keys;
DROP TABLE attestations;
