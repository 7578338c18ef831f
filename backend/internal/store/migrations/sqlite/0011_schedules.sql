-- Schedules and their firings.
--
-- spec is the schedule as the runner keeps it (JSON: timing, message,
-- budget, params, rules); the columns beside it are what the queries
-- select on. next_due is the next time the schedule fires, in
-- nanoseconds; 0 when it fires no more (paused, or a single time past).
CREATE TABLE schedules (
    id         TEXT    NOT NULL PRIMARY KEY,
    owner      TEXT    NOT NULL,
    agent      TEXT    NOT NULL DEFAULT '',
    session_id TEXT    NOT NULL DEFAULT '',
    spec       TEXT    NOT NULL,
    enabled    INTEGER NOT NULL,
    next_due   INTEGER NOT NULL DEFAULT 0,
    created    INTEGER NOT NULL,
    updated    INTEGER NOT NULL
) STRICT;

CREATE INDEX schedules_owner ON schedules (owner, created, id);
CREATE INDEX schedules_due ON schedules (next_due) WHERE next_due > 0;

-- One row per firing, keyed by the time it stands for: a schedule fires
-- at most once for each, on one server or several. session_id is the
-- session it started or posted to (not a foreign key: the session may
-- be deleted, the firing stays in the history); outcome is the status
-- the session's run left it in, '' until the run stopped.
CREATE TABLE schedule_firings (
    schedule_id    TEXT    NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
    fire_time      INTEGER NOT NULL,
    fired          INTEGER NOT NULL,
    status         TEXT    NOT NULL,
    session_id     TEXT    NOT NULL DEFAULT '',
    reason         TEXT    NOT NULL DEFAULT '',
    catch_up       INTEGER NOT NULL DEFAULT 0,
    manual         INTEGER NOT NULL DEFAULT 0,
    outcome        TEXT    NOT NULL DEFAULT '',
    outcome_reason TEXT    NOT NULL DEFAULT '',
    finished       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (schedule_id, fire_time)
) STRICT;

-- The firings whose run has not stopped yet, found by their session when
-- a run stops.
CREATE INDEX schedule_firings_open ON schedule_firings (session_id) WHERE finished = 0 AND session_id <> '';
