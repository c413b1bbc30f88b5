DROP INDEX runs_running_submitter;
DROP INDEX runs_host_submitter;
ALTER TABLE runs DROP COLUMN submitter;
