-- Usage over time: one row per model call (answers and conversation
-- summaries), written with the call's spend, for the owner's usage series
-- (GetOwnerUsage with a bucket). The spend table keeps running sums per
-- period; this keeps when, by whom and with which agent and model, so a
-- series can be summed per hour or day and broken down. Like spend, rows
-- only grow: deleting a session does not give its spend back.
--
-- at is the call's time in nanoseconds since the Unix epoch (UTC), so a
-- bucket is at minus at modulo its length in both dialects. cost is in
-- nanodollars; a call of a model without a price costs 0.
CREATE TABLE model_calls (
    at         BIGINT NOT NULL,
    owner      TEXT   NOT NULL,
    agent      TEXT   NOT NULL,
    model      TEXT   NOT NULL,
    session_id TEXT   NOT NULL,
    prompt     BIGINT NOT NULL,
    completion BIGINT NOT NULL,
    cost       BIGINT NOT NULL
);

CREATE INDEX model_calls_owner_at ON model_calls (owner, at);
CREATE INDEX model_calls_at ON model_calls (at);

-- The calls made before: one row per stored answer and summary, at the
-- time its turn was stored.
INSERT INTO model_calls (at, owner, agent, model, session_id, prompt, completion, cost)
SELECT t.created, s.owner, s.agent,
       COALESCE(t.payload::jsonb #>> '{llm,model}', t.payload::jsonb #>> '{compaction,model}', ''),
       s.id,
       COALESCE((t.payload::jsonb #>> '{llm,usage,prompt}')::BIGINT, (t.payload::jsonb #>> '{compaction,usage,prompt}')::BIGINT, 0),
       COALESCE((t.payload::jsonb #>> '{llm,usage,completion}')::BIGINT, (t.payload::jsonb #>> '{compaction,usage,completion}')::BIGINT, 0),
       COALESCE((t.payload::jsonb #>> '{llm,usage,cost}')::BIGINT, (t.payload::jsonb #>> '{compaction,usage,cost}')::BIGINT, 0)
FROM turns t JOIN sessions s ON s.id = t.session_id
WHERE t.payload::jsonb -> 'llm' IS NOT NULL OR t.payload::jsonb #> '{compaction,usage}' IS NOT NULL;
