-- The directory's page and API (#52): each column a person can sort by has a
-- non-null key and an index on (key, url), so a page is read from an index
-- in either direction and continues after the last row of the one before
-- (keyset pagination), never by sorting the whole table.
--
-- name_key: the registry name (or the URL of an entry without one), lower
--   case, also what the name search reads;
-- grade_rank: 0 no verdict yet, 1 non-compliant, 2 not judged, 3 compliant,
--   4 strict;
-- judged_key: when it was last judged, 0 for never.
-- withheld says why the last verdict gave no grade ("authorization
-- required"), so a protected server shows that rather than a grade.
ALTER TABLE directory_entries ADD COLUMN withheld TEXT;
ALTER TABLE directory_entries ADD COLUMN name_key TEXT COLLATE "C" NOT NULL DEFAULT '';
-- Names and URLs sort byte by byte, as on SQLite, whatever the database's
-- locale.
ALTER TABLE directory_entries ALTER COLUMN url TYPE TEXT COLLATE "C";
ALTER TABLE directory_entries ADD COLUMN grade_rank BIGINT NOT NULL DEFAULT 0;
ALTER TABLE directory_entries ADD COLUMN judged_key BIGINT NOT NULL DEFAULT 0;
UPDATE directory_entries SET
    name_key = lower(COALESCE(registry_name, url)),
    grade_rank = CASE grade WHEN 'non-compliant' THEN 1 WHEN 'not judged' THEN 2
        WHEN 'compliant' THEN 3 WHEN 'strict' THEN 4 ELSE 0 END,
    judged_key = COALESCE(judged_at_ms, 0);
CREATE INDEX directory_by_name ON directory_entries (name_key, url);
CREATE INDEX directory_by_grade ON directory_entries (grade_rank, name_key, url);
CREATE INDEX directory_by_grade_url ON directory_entries (grade_rank, url);
CREATE INDEX directory_by_judged ON directory_entries (judged_key, url);
CREATE INDEX directory_by_transport ON directory_entries (transport, url);
-- A transport filter on the default order (by name) reads a range.
CREATE INDEX directory_by_transport_name ON directory_entries (transport, name_key, url);
CREATE INDEX directory_by_status ON directory_entries (status, url);
-- The old grade and judged indexes read nullable columns no page sorts by.
DROP INDEX directory_entries_grade;
DROP INDEX directory_entries_judged;
