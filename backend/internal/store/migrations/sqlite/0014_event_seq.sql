-- An event's seq is its rowid without AUTOINCREMENT. AUTOINCREMENT kept a
-- seq from ever being reused after the newest event was deleted, at the
-- price of reading and writing its counter in sqlite_sequence with every
-- INSERT, a page more in every commit's WAL frames. The newest event is
-- never deleted (PruneEvents keeps it: it carries the log's position into
-- the next start), so the next rowid, one more than the largest, never
-- reuses a seq either. SQLite cannot drop AUTOINCREMENT from a table: the
-- log is copied into a new one, seqs and all.
CREATE TABLE events_new (
    seq        INTEGER NOT NULL PRIMARY KEY,
    session_id TEXT    NOT NULL DEFAULT '',
    owner      TEXT    NOT NULL DEFAULT '',
    kind       TEXT    NOT NULL,
    time       INTEGER NOT NULL,
    -- The event as protobuf binary (seq left out: it is the column).
    body       BLOB    NOT NULL
) STRICT;

INSERT INTO events_new (seq, session_id, owner, kind, time, body)
SELECT seq, session_id, owner, kind, time, body FROM events;

DROP TABLE events;
ALTER TABLE events_new RENAME TO events;
DELETE FROM sqlite_sequence WHERE name = 'events';
