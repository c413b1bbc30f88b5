-- The public directory of judged MCP servers (#52). An entry is one remote
-- URL: from the MCP Registry (`source` 'registry', with its registry name,
-- version and status) or from a person who asked for their run's target to
-- be listed (`source` 'submission'). `target_id` is set when the URL is
-- judged (a watch re-checks it); `not_probed` says why it is listed without
-- a verdict ("templated URL", "needs a header (…)").
CREATE TABLE directory_entries (
    url                 TEXT PRIMARY KEY,
    source              TEXT NOT NULL CHECK (source IN ('registry', 'submission')),
    registry_name       TEXT,
    title               TEXT,
    description         TEXT,
    version             TEXT,
    status              TEXT NOT NULL CHECK (status IN ('active', 'deprecated')),
    transport           TEXT NOT NULL,
    not_probed          TEXT,
    target_id           TEXT REFERENCES targets (id),
    registry_updated_at TEXT,
    listed_at_ms        BIGINT NOT NULL,
    updated_at_ms       BIGINT NOT NULL,
    -- The latest MCP verdict of its target (set when a run of it ends): the
    -- lowest grade over the revisions judged, the run, when, and the grade
    -- before it (the trend).
    grade               TEXT,
    previous_grade      TEXT,
    last_run_id         TEXT,
    judged_at_ms        BIGINT
);
CREATE INDEX directory_entries_name ON directory_entries (registry_name);
CREATE INDEX directory_entries_target ON directory_entries (target_id);
CREATE INDEX directory_entries_grade ON directory_entries (grade, url);
CREATE INDEX directory_entries_judged ON directory_entries (judged_at_ms, url);

-- The grade of each MCP revision the latest run judged, for filtering by
-- revision from an index.
CREATE TABLE directory_grades (
    url      TEXT NOT NULL,
    revision TEXT NOT NULL,
    grade    TEXT NOT NULL,
    PRIMARY KEY (url, revision)
);
CREATE INDEX directory_grades_revision ON directory_grades (revision, grade, url);

-- URLs taken out of the directory for good: by an operator
-- (`protocheck directory delist`) or by their owner's opt-out file. A sync
-- never lists them again.
CREATE TABLE directory_delisted (
    url        TEXT PRIMARY KEY,
    reason     TEXT NOT NULL,
    delisted_by TEXT NOT NULL,
    at_ms      BIGINT NOT NULL
);

-- One row per registry synced: when it last succeeded, the newest
-- `updatedAt` it has seen (the next sync asks only for entries updated
-- since), and the last failure, so the directory can say how current it is.
CREATE TABLE directory_syncs (
    registry         TEXT PRIMARY KEY,
    high_water       TEXT,
    last_success_ms  BIGINT,
    last_attempt_ms  BIGINT NOT NULL,
    last_error       TEXT,
    listed           BIGINT NOT NULL DEFAULT 0,
    skipped          BIGINT NOT NULL DEFAULT 0
);
