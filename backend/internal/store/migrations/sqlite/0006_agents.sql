-- Agents stored in the database, beside the agent files.
--
-- stored_agents has one row per slug ever stored; the row stays when the
-- agent is deleted (deleted is then when), so that the versions its
-- sessions ran stay listed and an agent created again under the slug
-- continues their numbering. version is the current version (the last
-- one of a deleted agent); created is when the current incarnation was
-- created.
CREATE TABLE stored_agents (
    slug    TEXT    NOT NULL PRIMARY KEY,
    version INTEGER NOT NULL,
    created INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0
) STRICT;

-- Every version of every stored agent, as it was written: the definition
-- is the agent file JSON text as the client gave it.
CREATE TABLE agent_versions (
    slug       TEXT    NOT NULL REFERENCES stored_agents (slug),
    version    INTEGER NOT NULL,
    definition TEXT    NOT NULL,
    author     TEXT    NOT NULL,
    created    INTEGER NOT NULL,
    PRIMARY KEY (slug, version)
) STRICT;

-- The version of its agent each session's latest step ran (0: a file
-- agent, or no step yet); each LLM turn's payload carries its own.
ALTER TABLE sessions ADD COLUMN agent_version INTEGER NOT NULL DEFAULT 0;
