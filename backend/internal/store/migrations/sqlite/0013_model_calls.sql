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
    at         INTEGER NOT NULL,
    owner      TEXT    NOT NULL,
    agent      TEXT    NOT NULL,
    model      TEXT    NOT NULL,
    session_id TEXT    NOT NULL,
    prompt     INTEGER NOT NULL,
    completion INTEGER NOT NULL,
    cost       INTEGER NOT NULL
) STRICT;

CREATE INDEX model_calls_owner_at ON model_calls (owner, at);
CREATE INDEX model_calls_at ON model_calls (at);

-- The calls made before: one row per stored answer and summary, at the
-- time its turn was stored.
INSERT INTO model_calls (at, owner, agent, model, session_id, prompt, completion, cost)
SELECT t.created, s.owner, s.agent,
       COALESCE(json_extract(t.payload, '$.llm.model'), json_extract(t.payload, '$.compaction.model'), ''),
       s.id,
       COALESCE(json_extract(t.payload, '$.llm.usage.prompt'), json_extract(t.payload, '$.compaction.usage.prompt'), 0),
       COALESCE(json_extract(t.payload, '$.llm.usage.completion'), json_extract(t.payload, '$.compaction.usage.completion'), 0),
       COALESCE(json_extract(t.payload, '$.llm.usage.cost'), json_extract(t.payload, '$.compaction.usage.cost'), 0)
FROM turns t JOIN sessions s ON s.id = t.session_id
WHERE json_extract(t.payload, '$.llm') IS NOT NULL
   OR json_extract(t.payload, '$.compaction.usage') IS NOT NULL;
