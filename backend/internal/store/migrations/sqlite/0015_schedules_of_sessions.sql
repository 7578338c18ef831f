-- A schedule that posts to a session is deleted with it, in the same
-- transaction: the schedules are found by the session. The schedules an
-- older server left behind when it deleted their session go now, with
-- their firings (first: SQLite's foreign keys may be off); their next
-- firings could only fail.
CREATE INDEX schedules_session ON schedules (session_id);

DELETE FROM schedule_firings WHERE schedule_id IN (
    SELECT id FROM schedules WHERE session_id <> '' AND session_id NOT IN (SELECT id FROM sessions));
DELETE FROM schedules WHERE session_id <> '' AND session_id NOT IN (SELECT id FROM sessions);
