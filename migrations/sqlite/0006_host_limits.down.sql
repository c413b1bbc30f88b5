DROP INDEX runs_target_forced;
DROP INDEX runs_host_running;
DROP INDEX runs_host_finished;
DROP INDEX runs_host_created;
ALTER TABLE runs DROP COLUMN forced;
ALTER TABLE runs DROP COLUMN target_host;
ALTER TABLE targets DROP COLUMN host;
