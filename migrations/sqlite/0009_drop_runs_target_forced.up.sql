-- The newest forced run of a target is no longer looked up: the cooldown
-- counts every run of a server on its machine, forced or not (#31 item 2),
-- through `runs_host_created`. The index only cost writes.
DROP INDEX runs_target_forced;
