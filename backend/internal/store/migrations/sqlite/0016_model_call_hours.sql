-- Usage over time, folded: the model calls older than the retention of
-- model_calls (serve's --model-call-retention) are summed per UTC hour,
-- owner, agent and model into this table, and deleted from model_calls in the
-- same transaction. A usage series adds the two: the hours folded here
-- and the calls still kept one by one (an hour the fold cut in two is in
-- both), so it reads the same before and after a fold, per hour or per
-- day.
--
-- hour is the hour's start in nanoseconds since the Unix epoch (UTC), as
-- model_calls.at; calls counts the calls folded, and prompt, completion
-- and cost are their sums.
CREATE TABLE model_call_hours (
    hour       INTEGER NOT NULL,
    owner      TEXT    NOT NULL,
    agent      TEXT    NOT NULL,
    model      TEXT    NOT NULL,
    calls      INTEGER NOT NULL,
    prompt     INTEGER NOT NULL,
    completion INTEGER NOT NULL,
    cost       INTEGER NOT NULL,
    PRIMARY KEY (hour, owner, agent, model)
) STRICT;

CREATE INDEX model_call_hours_owner ON model_call_hours (owner, hour);
