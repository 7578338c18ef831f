-- The event log, idempotency keys, and what a helper call runs.
--
-- events holds every event a client can observe except text and thinking
-- deltas, written in the same transaction as the change it describes.
-- seq is the position clients resume from: AUTOINCREMENT never reuses a
-- value, and the single writer commits in seq order. Events are not
-- foreign keys of their session: a session.deleted event outlives the
-- session until retention prunes it.
CREATE TABLE events (
    seq        INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    session_id TEXT    NOT NULL DEFAULT '',
    owner      TEXT    NOT NULL DEFAULT '',
    kind       TEXT    NOT NULL,
    time       INTEGER NOT NULL,
    -- The event as protobuf binary (seq left out: it is the column).
    body       BLOB    NOT NULL
) STRICT;

-- No index but the seq: every index would cost each commit a page more,
-- and commits are the hot path. A replay from the log (only after a
-- restart, or for a client further behind than the memory ring) and
-- pruning scan in seq order from the position.

-- A mutating request's key and what it produced, so a retry returns the
-- first answer instead of doing the work twice.
CREATE TABLE idempotency_keys (
    owner   TEXT    NOT NULL,
    key     TEXT    NOT NULL,
    op      TEXT    NOT NULL,
    result  TEXT    NOT NULL,
    created INTEGER NOT NULL,
    PRIMARY KEY (owner, key)
) STRICT;

CREATE INDEX idempotency_created ON idempotency_keys (created);

-- The child session a helper call runs, so a restart waits for the same
-- child instead of starting the work again.
CREATE TABLE helper_calls (
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    call_id    TEXT    NOT NULL,
    child_id   TEXT    NOT NULL,
    created    INTEGER NOT NULL,
    PRIMARY KEY (session_id, call_id)
) STRICT;
