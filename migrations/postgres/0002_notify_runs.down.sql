DROP TRIGGER runs_notify_requeue ON runs;
DROP TRIGGER runs_notify_insert ON runs;
DROP FUNCTION protocheck_notify_requeued_run();
DROP FUNCTION protocheck_notify_inserted_runs();
