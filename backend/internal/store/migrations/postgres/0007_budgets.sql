-- Budgets: what a session tree and an owner may spend, what they spent,
-- and what the model calls in flight reserved.
--
-- Costs are US dollars in billionths (nanodollars), in integers, so sums
-- are exact.

-- The root of each session's tree: a tree spends one budget. A root
-- session's root_id is its own id. Sessions from before are given the
-- topmost ancestor still stored.
ALTER TABLE sessions ADD COLUMN root_id TEXT NOT NULL DEFAULT '';
-- The cost of the session's usage; NULL when no turn had a price.
ALTER TABLE sessions ADD COLUMN usage_cost BIGINT;

WITH RECURSIVE up (start, id, parent_id) AS (
    SELECT id, id, parent_id FROM sessions
    UNION ALL
    SELECT up.start, p.id, p.parent_id FROM up JOIN sessions p ON p.id = up.parent_id
)
UPDATE sessions SET root_id = (
    SELECT u.id FROM up u
    WHERE u.start = sessions.id
      AND NOT EXISTS (SELECT 1 FROM sessions q WHERE q.id = u.parent_id));

-- The budget of a session tree, kept with its root session. A NULL limit
-- does not apply.
CREATE TABLE tree_budgets (
    root_id TEXT    NOT NULL PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    tokens  BIGINT,
    cost    BIGINT,
    updated BIGINT NOT NULL
);

-- An owner's own budget; owners without one have the server's default.
CREATE TABLE owner_budgets (
    owner   TEXT    NOT NULL PRIMARY KEY,
    tokens  BIGINT,
    cost    BIGINT,
    period  TEXT    NOT NULL,
    updated BIGINT NOT NULL
);

-- What was spent: scope 'tree' (name = the root session's id, period
-- 'total') or 'owner' (name = the owner; periods 'total', 'day:YYYY-MM-DD'
-- and 'month:YYYY-MM', all three kept so a budget may change its period).
-- Rows only grow: deleting sessions does not give their spend back.
CREATE TABLE spend (
    scope  TEXT    NOT NULL,
    name   TEXT    NOT NULL,
    period TEXT    NOT NULL,
    tokens BIGINT NOT NULL DEFAULT 0,
    cost   BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (scope, name, period)
);

-- What a model call in flight holds of its tree's and owner's budgets: a
-- session has at most one call in flight, so one row per session. The
-- call's answer settles it (the spend is added, the row deleted in one
-- transaction); a row past its expiry, left by a server that stopped,
-- holds nothing.
CREATE TABLE reservations (
    session_id TEXT    NOT NULL PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    root_id    TEXT    NOT NULL,
    owner      TEXT    NOT NULL,
    tokens     BIGINT NOT NULL,
    cost       BIGINT NOT NULL,
    expires    BIGINT NOT NULL
);

CREATE INDEX reservations_root ON reservations (root_id);
CREATE INDEX reservations_owner ON reservations (owner);
