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
    hour       BIGINT  NOT NULL,
    owner      TEXT    NOT NULL,
    agent      TEXT    NOT NULL,
    model      TEXT    NOT NULL,
    calls      BIGINT  NOT NULL,
    prompt     BIGINT  NOT NULL,
    completion BIGINT  NOT NULL,
    cost       BIGINT  NOT NULL,
    PRIMARY KEY (hour, owner, agent, model)
);

CREATE INDEX model_call_hours_owner ON model_call_hours (owner, hour);
