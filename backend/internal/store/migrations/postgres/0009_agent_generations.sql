-- Stored agents' generations, restored versions and pinned sessions.
--
-- A stored agent's generation is the version it was created at: an agent
-- deleted and created again under its slug starts a new one, so that the
-- sessions of the old agent are not run by the new. Agents from before
-- are given the version written when their current life began.
ALTER TABLE stored_agents ADD COLUMN generation BIGINT NOT NULL DEFAULT 1;
UPDATE stored_agents SET generation = COALESCE((
    SELECT MIN(v.version) FROM agent_versions v
    WHERE v.slug = stored_agents.slug AND v.created >= stored_agents.created
), 1);

-- The version a version restored (a rollback), 0 for a create or update.
ALTER TABLE agent_versions ADD COLUMN restored_from BIGINT NOT NULL DEFAULT 0;

-- The generation of its stored agent a session was created with (0: a
-- file agent), and the version it is pinned to (0: it follows the
-- latest). A session from before is given the generation of the agent's
-- life it was created in: the current one's, or, created before it, 1
-- (a life before, whose first version is not recorded), so that it does
-- not run an agent created again under its slug since.
ALTER TABLE sessions ADD COLUMN agent_generation BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN agent_pin BIGINT NOT NULL DEFAULT 0;
UPDATE sessions SET agent_generation = (
    SELECT CASE WHEN sessions.created >= a.created THEN a.generation ELSE 1 END
    FROM stored_agents a WHERE a.slug = sessions.agent
)
WHERE agent IN (SELECT slug FROM stored_agents);
