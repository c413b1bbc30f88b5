ALTER TABLE runs DROP COLUMN private_targets;
