-- The schema the migrations in ../migrations/sqlite make: a new database
-- is made from it at once. Written by TestNewDatabaseSchemaIsTheMigrations;
-- after adding a migration run: go test ./backend/internal/store -run TestNewDatabaseSchemaIsTheMigrations -update

CREATE TABLE sessions (
    id               TEXT    NOT NULL PRIMARY KEY,
    agent            TEXT    NOT NULL,
    owner            TEXT    NOT NULL,
    title            TEXT    NOT NULL DEFAULT '',
    status           TEXT    NOT NULL,
    status_reason    TEXT    NOT NULL DEFAULT '',
    -- parent_id and forked_from are '' when absent. They are not foreign
    -- keys: a child outlives its parent when the parent alone is deleted,
    -- and a fork outlives its source.
    parent_id        TEXT    NOT NULL DEFAULT '',
    forked_from      TEXT    NOT NULL DEFAULT '',
    turn_count       INTEGER NOT NULL DEFAULT 0,
    usage_prompt     INTEGER NOT NULL DEFAULT 0,
    usage_completion INTEGER NOT NULL DEFAULT 0,
    usage_cached     INTEGER NOT NULL DEFAULT 0,
    usage_reasoning  INTEGER NOT NULL DEFAULT 0,
    depth            INTEGER NOT NULL DEFAULT 0,
    created          INTEGER NOT NULL,
    updated          INTEGER NOT NULL
, allowed_tools TEXT NOT NULL DEFAULT '', agent_version INTEGER NOT NULL DEFAULT 0, root_id TEXT NOT NULL DEFAULT '', usage_cost INTEGER, agent_generation INTEGER NOT NULL DEFAULT 0, agent_pin INTEGER NOT NULL DEFAULT 0) STRICT;

CREATE INDEX sessions_created ON sessions (created DESC, id DESC);

CREATE INDEX sessions_owner_created ON sessions (owner, created DESC, id DESC);

CREATE INDEX sessions_parent ON sessions (parent_id, created, id);

CREATE INDEX sessions_status ON sessions (status);

CREATE TABLE turns (
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    idx        INTEGER NOT NULL,
    created    INTEGER NOT NULL,
    payload    TEXT    NOT NULL,
    PRIMARY KEY (session_id, idx)
) STRICT;

CREATE TABLE mail (
    seq         INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    id          TEXT    NOT NULL UNIQUE,
    session_id  TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    sender_kind TEXT    NOT NULL,
    sender_name TEXT    NOT NULL,
    priority    TEXT    NOT NULL,
    body        TEXT    NOT NULL,
    created     INTEGER NOT NULL,
    delivered   INTEGER
) STRICT;

CREATE INDEX mail_session ON mail (session_id, seq);

CREATE INDEX mail_pending ON mail (session_id, seq) WHERE delivered IS NULL;

CREATE TABLE deferred_calls (
    seq        INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    token      TEXT    NOT NULL UNIQUE,
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    round      INTEGER NOT NULL,
    tool_call  TEXT    NOT NULL,
    reason     TEXT    NOT NULL DEFAULT '',
    created    INTEGER NOT NULL,
    result     TEXT,
    completed  INTEGER
, resume INTEGER NOT NULL DEFAULT 0) STRICT;

CREATE INDEX deferred_session ON deferred_calls (session_id, round, seq);

CREATE INDEX deferred_pending ON deferred_calls (session_id, seq) WHERE completed IS NULL;

CREATE TABLE watches (
    watcher_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    target_id  TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    expires    INTEGER NOT NULL,
    PRIMARY KEY (watcher_id, target_id)
) STRICT;

CREATE INDEX watches_target ON watches (target_id);

CREATE INDEX watches_expires ON watches (expires);

CREATE TABLE run_leases (
    session_id TEXT    NOT NULL PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    holder     TEXT    NOT NULL,
    expires    INTEGER NOT NULL
, epoch INTEGER NOT NULL DEFAULT 0) STRICT;

CREATE TABLE idempotency_keys (
    owner   TEXT    NOT NULL,
    key     TEXT    NOT NULL,
    op      TEXT    NOT NULL,
    result  TEXT    NOT NULL,
    created INTEGER NOT NULL,
    PRIMARY KEY (owner, key)
) STRICT;

CREATE INDEX idempotency_created ON idempotency_keys (created);

CREATE TABLE helper_calls (
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    call_id    TEXT    NOT NULL,
    child_id   TEXT    NOT NULL,
    created    INTEGER NOT NULL,
    PRIMARY KEY (session_id, call_id)
) STRICT;

CREATE INDEX run_leases_holder ON run_leases (holder);

CREATE TABLE commands (
    id         TEXT   NOT NULL PRIMARY KEY,
    session_id TEXT   NOT NULL,
    owner      TEXT   NOT NULL,
    kind       TEXT   NOT NULL,
    body       TEXT   NOT NULL,
    created    INTEGER NOT NULL,
    result     TEXT,
    done       INTEGER
) STRICT;

CREATE INDEX commands_pending ON commands (session_id, created) WHERE done IS NULL;

CREATE INDEX commands_created ON commands (created);

CREATE TABLE stored_agents (
    slug    TEXT    NOT NULL PRIMARY KEY,
    version INTEGER NOT NULL,
    created INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0
, generation INTEGER NOT NULL DEFAULT 1) STRICT;

CREATE TABLE agent_versions (
    slug       TEXT    NOT NULL REFERENCES stored_agents (slug),
    version    INTEGER NOT NULL,
    definition TEXT    NOT NULL,
    author     TEXT    NOT NULL,
    created    INTEGER NOT NULL, restored_from INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (slug, version)
) STRICT;

CREATE TABLE tree_budgets (
    root_id TEXT    NOT NULL PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    tokens  INTEGER,
    cost    INTEGER,
    updated INTEGER NOT NULL
, auto_resume INTEGER NOT NULL DEFAULT 0) STRICT;

CREATE TABLE owner_budgets (
    owner   TEXT    NOT NULL PRIMARY KEY,
    tokens  INTEGER,
    cost    INTEGER,
    period  TEXT    NOT NULL,
    updated INTEGER NOT NULL
, auto_resume INTEGER NOT NULL DEFAULT 0) STRICT;

CREATE TABLE spend (
    scope  TEXT    NOT NULL,
    name   TEXT    NOT NULL,
    period TEXT    NOT NULL,
    tokens INTEGER NOT NULL DEFAULT 0,
    cost   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (scope, name, period)
) STRICT;

CREATE TABLE reservations (
    session_id TEXT    NOT NULL PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    root_id    TEXT    NOT NULL,
    owner      TEXT    NOT NULL,
    tokens     INTEGER NOT NULL,
    cost       INTEGER NOT NULL,
    expires    INTEGER NOT NULL
) STRICT;

CREATE INDEX reservations_root ON reservations (root_id);

CREATE INDEX reservations_owner ON reservations (owner);

CREATE TABLE schedules (
    id         TEXT    NOT NULL PRIMARY KEY,
    owner      TEXT    NOT NULL,
    agent      TEXT    NOT NULL DEFAULT '',
    session_id TEXT    NOT NULL DEFAULT '',
    spec       TEXT    NOT NULL,
    enabled    INTEGER NOT NULL,
    next_due   INTEGER NOT NULL DEFAULT 0,
    created    INTEGER NOT NULL,
    updated    INTEGER NOT NULL
) STRICT;

CREATE INDEX schedules_owner ON schedules (owner, created, id);

CREATE INDEX schedules_due ON schedules (next_due) WHERE next_due > 0;

CREATE TABLE schedule_firings (
    schedule_id    TEXT    NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
    fire_time      INTEGER NOT NULL,
    fired          INTEGER NOT NULL,
    status         TEXT    NOT NULL,
    session_id     TEXT    NOT NULL DEFAULT '',
    reason         TEXT    NOT NULL DEFAULT '',
    catch_up       INTEGER NOT NULL DEFAULT 0,
    manual         INTEGER NOT NULL DEFAULT 0,
    outcome        TEXT    NOT NULL DEFAULT '',
    outcome_reason TEXT    NOT NULL DEFAULT '',
    finished       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (schedule_id, fire_time)
) STRICT;

CREATE INDEX schedule_firings_open ON schedule_firings (session_id) WHERE finished = 0 AND session_id <> '';

CREATE TABLE webhooks (
    id              TEXT    NOT NULL PRIMARY KEY,
    owner           TEXT    NOT NULL,
    server_wide     INTEGER NOT NULL DEFAULT 0,
    url             TEXT    NOT NULL,
    events          TEXT    NOT NULL,
    secret          TEXT    NOT NULL,
    description     TEXT    NOT NULL DEFAULT '',
    enabled         INTEGER NOT NULL DEFAULT 1,
    disabled_reason TEXT    NOT NULL DEFAULT '',
    failing_since   INTEGER NOT NULL DEFAULT 0,
    after_seq       INTEGER NOT NULL,
    created         INTEGER NOT NULL,
    updated         INTEGER NOT NULL
) STRICT;

CREATE INDEX webhooks_owner ON webhooks (owner);

CREATE TABLE webhook_deliveries (
    id               TEXT    NOT NULL PRIMARY KEY,
    webhook_id       TEXT    NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    seq              INTEGER NOT NULL,
    kind             TEXT    NOT NULL,
    session_id       TEXT    NOT NULL,
    body             BLOB    NOT NULL,
    status           TEXT    NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    last_status_code INTEGER NOT NULL DEFAULT 0,
    last_error       TEXT    NOT NULL DEFAULT '',
    next_attempt     INTEGER NOT NULL,
    claim            TEXT    NOT NULL DEFAULT '',
    claim_expires    INTEGER NOT NULL DEFAULT 0,
    created          INTEGER NOT NULL,
    delivered        INTEGER NOT NULL DEFAULT 0, last_attempt INTEGER NOT NULL DEFAULT 0,
    UNIQUE (webhook_id, seq)
) STRICT;

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt);

CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, created);

CREATE TABLE webhook_cursor (
    id  INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL
) STRICT;

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

CREATE TABLE "events" (
    seq        INTEGER NOT NULL PRIMARY KEY,
    session_id TEXT    NOT NULL DEFAULT '',
    owner      TEXT    NOT NULL DEFAULT '',
    kind       TEXT    NOT NULL,
    time       INTEGER NOT NULL,
    -- The event as protobuf binary (seq left out: it is the column).
    body       BLOB    NOT NULL
) STRICT;

CREATE INDEX schedules_session ON schedules (session_id);

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
