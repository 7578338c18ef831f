-- Several servers on one database.
--
-- A lease's epoch grows each time the lease is taken anew; every write a
-- server makes for a session it runs names the epoch it holds, so a server
-- that lost the lease cannot write.
ALTER TABLE run_leases ADD COLUMN epoch INTEGER NOT NULL DEFAULT 0;

CREATE INDEX run_leases_holder ON run_leases (holder);

-- A request one server accepted for a session another server runs. The
-- holder applies it and writes result (a JSON document: the answer or the
-- error), which the accepting server reads back. session_id is not a
-- foreign key: the result of a delete outlives the session.
CREATE TABLE commands (
    id         TEXT   NOT NULL PRIMARY KEY,
    session_id TEXT   NOT NULL,
    owner      TEXT   NOT NULL,
    kind       TEXT   NOT NULL,
    body       TEXT   NOT NULL,
    created    INTEGER NOT NULL,
    result     TEXT,
    done       INTEGER
) STRICT;

CREATE INDEX commands_pending ON commands (session_id, created) WHERE done IS NULL;
CREATE INDEX commands_created ON commands (created);
