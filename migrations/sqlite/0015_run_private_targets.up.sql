-- The address policy of the service that accepted a run (#54 item 10): 1 when
-- it allowed private, loopback and link-local targets, 0 when it allowed
-- public addresses only. The worker that claims the run connects under it,
-- so a run `serve` accepted is never refused by a `worker` configured
-- otherwise. NULL (runs queued before this migration, and the runs the
-- scheduler starts): the claiming worker's own policy.
ALTER TABLE runs ADD COLUMN private_targets INTEGER CHECK (private_targets IN (0, 1));
