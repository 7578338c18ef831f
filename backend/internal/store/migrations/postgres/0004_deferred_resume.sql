-- Whether the answer in result asked the run to go on (resume) once every
-- call of its round is answered: the intent outlives an eviction and a
-- restart, so a later answer given without it still continues the round.
ALTER TABLE deferred_calls ADD COLUMN resume BOOLEAN NOT NULL DEFAULT FALSE;
