DROP TABLE idempotency_keys;
DROP TABLE findings;
DROP TABLE runs;
DROP TABLE targets;
