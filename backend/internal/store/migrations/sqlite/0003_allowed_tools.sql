-- The tools a client allowed for the rest of a session ("always allow"):
-- their calls run without waiting for approval. One name per line, in the
-- order they were allowed; tool names never hold a line break (model APIs
-- take letters, digits, "_" and "-").
ALTER TABLE sessions ADD COLUMN allowed_tools TEXT NOT NULL DEFAULT '';
