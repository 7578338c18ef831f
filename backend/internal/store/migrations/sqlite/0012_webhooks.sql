-- Webhooks: endpoints that are sent chosen events, and the outbox of
-- their deliveries.

-- A registered endpoint. owner is the owner that registered it;
-- server_wide ones (an admin's) are sent every owner's events. events is
-- a JSON array of the names it subscribes to. after_seq is the event
-- log's newest seq when it was registered: it is sent only what comes
-- after. A webhook the server disabled for failing has enabled 0 and
-- disabled_reason set; failing_since is when the run of failures began
-- (0 while the last attempt succeeded).
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

-- One event to deliver to one endpoint, keyed by both: id is the
-- webhook-id header of every attempt. body is the JSON sent, kept so
-- retries send the same bytes after the event log is pruned. status is
-- pending, delivered or failed (given up). A pending row is claimed by
-- one dispatcher at a time: claim names the claim and claim_expires ends
-- it, so a dispatcher that died releases its rows, and only the claim's
-- holder may record the attempt's outcome.
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
    delivered        INTEGER NOT NULL DEFAULT 0,
    UNIQUE (webhook_id, seq)
) STRICT;

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt);
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, created);

-- How far the event log was fanned out to the webhooks: every event up
-- to seq has its delivery rows. One row, made with the first webhook.
CREATE TABLE webhook_cursor (
    id  INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL
) STRICT;
