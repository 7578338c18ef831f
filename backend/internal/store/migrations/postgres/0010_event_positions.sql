-- Event positions without a lock on the commit path (docs/protocol.md,
-- "Several servers on one database").
--
-- Until now every transaction that appended events took one advisory
-- lock, held through its commit, so that seq order was commit order: the
-- whole cluster's writes went one at a time, each waiting for the one
-- before it to reach the disk. Now a transaction appends its events
-- without a position (seq NULL), recording its transaction id, and
-- commits with no lock. Positions are given after the commit, by
-- number_events, to the committed events in the order (txid, id), and
-- only to those whose transaction id is below the oldest transaction
-- still running: every transaction before them has ended, so no event can
-- later commit ahead of them. That order is fixed once an event is
-- eligible, so any server may number, the numbers are dense, and a
-- reader that has seen position n has seen every event up to n.

ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events ALTER COLUMN seq DROP DEFAULT;
ALTER TABLE events ALTER COLUMN seq DROP NOT NULL;
-- The order appends happened in, and the transaction that made them.
ALTER TABLE events ADD COLUMN id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY;
ALTER TABLE events ADD COLUMN txid XID8 NOT NULL DEFAULT pg_current_xact_id();
ALTER TABLE events ADD CONSTRAINT events_seq UNIQUE (seq);
-- The events waiting for a position, in the order they get one.
CREATE INDEX events_unnumbered ON events (txid, id) WHERE seq IS NULL;

-- The newest position given; one row. It starts past every seq the old
-- sequence gave out, even of events since deleted with their session.
CREATE TABLE event_positions (
    one  BOOLEAN NOT NULL PRIMARY KEY DEFAULT TRUE CHECK (one),
    last BIGINT  NOT NULL
);
INSERT INTO event_positions (last) SELECT GREATEST(
    COALESCE((SELECT MAX(seq) FROM events), 0),
    (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM events_seq_seq));
DROP SEQUENCE events_seq_seq;

-- event_horizon is the transaction id below which every transaction of
-- this database has ended: the oldest one still running here, or, with
-- none, the next to be given. Transactions of the server's other
-- databases are left out (the snapshot's xmin would count them, and one
-- long transaction of another application would hold every position
-- back); a running one is taken as this database's unless
-- pg_stat_activity shows it is another's.
CREATE FUNCTION event_horizon() RETURNS XID8
LANGUAGE plpgsql STABLE AS $$
DECLARE
    snap    pg_snapshot := pg_current_snapshot();
    horizon XID8;
BEGIN
    -- Most often no transaction runs, or those that do are this
    -- database's own: the activity of the others is read only when one
    -- runs, once (a hashed subplan), and from the function rather than
    -- the view pg_stat_activity, which joins two catalogs to it.
    SELECT MIN(x) INTO horizon FROM pg_snapshot_xip(snap) AS x
    WHERE CAST(CAST(x AS TEXT) AS BIGINT) % 4294967296 NOT IN (
        SELECT CAST(CAST(a.backend_xid AS TEXT) AS BIGINT)
        FROM pg_stat_get_activity(NULL) AS a
        WHERE a.backend_xid IS NOT NULL
          AND a.datid <> (SELECT d.oid FROM pg_database d WHERE d.datname = current_database()));
    RETURN COALESCE(horizon, pg_snapshot_xmax(snap));
END
$$;

-- number_events gives positions to the events that may have one (see
-- above and event_horizon), at most 10,000 a call, and returns the
-- positions of the events whose ids are in mine (NULL for one not yet
-- numbered). It notifies agents_events of the newest position it gave, as
-- appends did before.
--
-- Callers number one at a time (the row lock on event_positions); with
-- nothing to number it takes no lock. Its commit need not wait for the
-- disk: numbering is a function of the committed events alone, so if the
-- database loses its last numberings in a crash, numbering again gives
-- the same events the same positions.
--
-- Numbered events leave their unnumbered versions in events_unnumbered
-- until a vacuum. A bitmap scan would visit every one of them each time
-- (thousands under load: a millisecond a call); a plain index scan marks
-- them dead as it passes, so the next one skips them.
CREATE FUNCTION number_events(mine BIGINT[]) RETURNS TABLE (id BIGINT, seq BIGINT)
LANGUAGE plpgsql SET enable_bitmapscan = off AS $$
DECLARE
    base    BIGINT;
    horizon XID8;
    n       BIGINT;
BEGIN
    -- A commit that asks for its own events knows some wait; the
    -- sequencer's poll asks with none, and takes no lock when none does.
    IF cardinality(mine) > 0 OR EXISTS (SELECT 1 FROM events e WHERE e.seq IS NULL) THEN
        PERFORM set_config('synchronous_commit', 'off', true);
        SELECT p.last INTO base FROM event_positions p FOR UPDATE;
        -- Statements of their own after the lock, so that their
        -- snapshots hold what the numbering before this one gave.
        horizon := event_horizon();
        WITH next AS (
            SELECT e.id, row_number() OVER (ORDER BY e.txid, e.id) AS n
            FROM events e
            WHERE e.seq IS NULL AND e.txid < horizon
            ORDER BY e.txid, e.id
            LIMIT 10000
        )
        UPDATE events e SET seq = base + next.n FROM next WHERE e.id = next.id;
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 THEN
            UPDATE event_positions SET last = base + n;
            PERFORM pg_notify('agents_events', CAST(base + n AS TEXT));
        END IF;
    END IF;
    RETURN QUERY SELECT e.id, e.seq FROM events e WHERE e.id = ANY (mine);
END
$$;
