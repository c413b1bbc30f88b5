-- Who submitted a run, for the per-submitter share of a host's hourly budget
-- (#31 item 3): `k:<API key id>`, or `a:<client address>` (IPv4, or an IPv6
-- client's /64, as the rate limiter counts them). Runs queued before this
-- migration have none and count for the host only.
ALTER TABLE runs ADD COLUMN submitter TEXT;

-- A submitter's runs of a host in the last hour (submission).
CREATE INDEX runs_host_submitter ON runs (target_host, submitter, created_at_ms);
-- A submitter's running runs (the claim ranks submitters by them).
CREATE INDEX runs_running_submitter ON runs (submitter) WHERE status = 'running';
