-- Sessions and everything that belongs to them.
--
-- Conventions, shared with the PostgreSQL twin of this file:
-- * Times are Unix nanoseconds (UTC) in 64-bit integers: they sort and
--   compare as numbers, with no text format to parse.
-- * JSON documents (turn payloads, mail bodies, tool calls and results) are
--   TEXT: they are always read whole.
-- * Rows that belong to a session reference it with ON DELETE CASCADE, so
--   deleting a session deletes them.
-- * Tables are STRICT so a value of the wrong type is an error, as it would
--   be in PostgreSQL.

CREATE TABLE sessions (
    id               TEXT    NOT NULL PRIMARY KEY,
    agent            TEXT    NOT NULL,
    owner            TEXT    NOT NULL,
    title            TEXT    NOT NULL DEFAULT '',
    status           TEXT    NOT NULL,
    status_reason    TEXT    NOT NULL DEFAULT '',
    -- parent_id and forked_from are '' when absent. They are not foreign
    -- keys: a child outlives its parent when the parent alone is deleted,
    -- and a fork outlives its source.
    parent_id        TEXT    NOT NULL DEFAULT '',
    forked_from      TEXT    NOT NULL DEFAULT '',
    turn_count       INTEGER NOT NULL DEFAULT 0,
    usage_prompt     INTEGER NOT NULL DEFAULT 0,
    usage_completion INTEGER NOT NULL DEFAULT 0,
    usage_cached     INTEGER NOT NULL DEFAULT 0,
    usage_reasoning  INTEGER NOT NULL DEFAULT 0,
    depth            INTEGER NOT NULL DEFAULT 0,
    created          INTEGER NOT NULL,
    updated          INTEGER NOT NULL
) STRICT;

-- Listing is newest first with id as the tie-break, for all owners or one.
CREATE INDEX sessions_created ON sessions (created DESC, id DESC);
CREATE INDEX sessions_owner_created ON sessions (owner, created DESC, id DESC);
CREATE INDEX sessions_parent ON sessions (parent_id, created, id);
CREATE INDEX sessions_status ON sessions (status);

-- Append-only history; idx runs 0, 1, … without gaps.
CREATE TABLE turns (
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    idx        INTEGER NOT NULL,
    created    INTEGER NOT NULL,
    payload    TEXT    NOT NULL,
    PRIMARY KEY (session_id, idx)
) STRICT;

-- seq is the delivery order. AUTOINCREMENT keeps it from ever being reused,
-- even after the newest mail is deleted.
CREATE TABLE mail (
    seq         INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    id          TEXT    NOT NULL UNIQUE,
    session_id  TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    sender_kind TEXT    NOT NULL,
    sender_name TEXT    NOT NULL,
    priority    TEXT    NOT NULL,
    body        TEXT    NOT NULL,
    created     INTEGER NOT NULL,
    delivered   INTEGER
) STRICT;

CREATE INDEX mail_session ON mail (session_id, seq);
CREATE INDEX mail_pending ON mail (session_id, seq) WHERE delivered IS NULL;

-- seq keeps the calls of a round in the order the model made them.
CREATE TABLE deferred_calls (
    seq        INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    token      TEXT    NOT NULL UNIQUE,
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    round      INTEGER NOT NULL,
    tool_call  TEXT    NOT NULL,
    reason     TEXT    NOT NULL DEFAULT '',
    created    INTEGER NOT NULL,
    result     TEXT,
    completed  INTEGER
) STRICT;

CREATE INDEX deferred_session ON deferred_calls (session_id, round, seq);
CREATE INDEX deferred_pending ON deferred_calls (session_id, seq) WHERE completed IS NULL;

CREATE TABLE watches (
    watcher_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    target_id  TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    expires    INTEGER NOT NULL,
    PRIMARY KEY (watcher_id, target_id)
) STRICT;

CREATE INDEX watches_target ON watches (target_id);
CREATE INDEX watches_expires ON watches (expires);

-- Which server runs a session when several share one database.
CREATE TABLE run_leases (
    session_id TEXT    NOT NULL PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    holder     TEXT    NOT NULL,
    expires    INTEGER NOT NULL
) STRICT;
