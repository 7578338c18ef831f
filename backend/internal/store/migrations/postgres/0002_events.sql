-- The event log, idempotency keys, and what a helper call runs; see the
-- SQLite twin of this file for the meaning of each column.
--
-- Several servers on one database: a sequence's values commit out of
-- order, so a reader that followed seq alone could pass over an event that
-- commits later with a smaller seq. Writers therefore take the advisory
-- transaction lock events_order (see docs/protocol.md) just before they
-- insert events, which makes event commits happen in seq order.
CREATE TABLE events (
    seq        BIGSERIAL NOT NULL PRIMARY KEY,
    session_id TEXT      NOT NULL DEFAULT '',
    owner      TEXT      NOT NULL DEFAULT '',
    kind       TEXT      NOT NULL,
    time       BIGINT    NOT NULL,
    body       BYTEA     NOT NULL
);

-- No index but the seq, as in SQLite: replays and pruning scan in seq
-- order from the position.

CREATE TABLE idempotency_keys (
    owner   TEXT   NOT NULL,
    key     TEXT   NOT NULL,
    op      TEXT   NOT NULL,
    result  TEXT   NOT NULL,
    created BIGINT NOT NULL,
    PRIMARY KEY (owner, key)
);

CREATE INDEX idempotency_created ON idempotency_keys (created);

CREATE TABLE helper_calls (
    session_id TEXT   NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    call_id    TEXT   NOT NULL,
    child_id   TEXT   NOT NULL,
    created    BIGINT NOT NULL,
    PRIMARY KEY (session_id, call_id)
);
