-- Wake workers in every process when work is queued (channel: postgres::WORK_CHANNEL).
-- Workers keep polling as well, so a lost notification only costs latency.

CREATE FUNCTION protocheck_notify_inserted_runs() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- A deduplicated submit (ON CONFLICT DO NOTHING) inserts nothing: no wake-up.
    IF EXISTS (SELECT 1 FROM inserted_runs) THEN
        PERFORM pg_notify('protocheck_runs', '');
    END IF;
    RETURN NULL;
END;
$$;

CREATE FUNCTION protocheck_notify_requeued_run() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- Identical notifications within one transaction are delivered once, so a reaper
    -- requeueing many runs sends a single wake-up.
    PERFORM pg_notify('protocheck_runs', '');
    RETURN NULL;
END;
$$;

CREATE TRIGGER runs_notify_insert
    AFTER INSERT ON runs
    REFERENCING NEW TABLE AS inserted_runs
    FOR EACH STATEMENT
    EXECUTE FUNCTION protocheck_notify_inserted_runs();

CREATE TRIGGER runs_notify_requeue
    AFTER UPDATE OF status ON runs
    FOR EACH ROW
    WHEN (NEW.status = 'queued' AND OLD.status <> 'queued')
    EXECUTE FUNCTION protocheck_notify_requeued_run();
