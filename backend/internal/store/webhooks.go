package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agents-os/agents/backend/internal/errs"
)

// Webhooks keeps the registered webhooks and the outbox of their
// deliveries (package webhooks decides what goes to whom and sends it).
//
// The outbox is filled from the event log by FanOut, which remembers
// how far it got in one cursor row: every event up to the cursor has its
// delivery rows, written in the transaction that moves the cursor, so an
// event is queued once per endpoint whichever server fans it out and
// whenever it stops. A pending delivery is claimed by one dispatcher at a
// time (ClaimDeliveries: a claim with an expiry, taken with SKIP LOCKED
// where several servers share the database), and only the claim's
// holder records its outcome (RecordAttempt), once: a delivery is marked
// delivered at most once.
type Webhooks interface {
	// CreateWebhook stores w, which is sent the events logged from now on
	// (it sets w.AfterSeq to the log's newest seq), and key, when set, in
	// the same transaction (see Store.Idempotent). A duplicate id, or a
	// key its owner recorded already, is errs.Conflict.
	CreateWebhook(ctx context.Context, w *Webhook, key *IdempotencyRecord) error
	// GetWebhook returns a webhook with its last delivery,
	// errs.NotFound (unknown_webhook) when there is none.
	GetWebhook(ctx context.Context, id string) (Webhook, error)
	// ListWebhooks returns an owner's webhooks ("": every owner's),
	// oldest first, each with its last delivery, in one query.
	ListWebhooks(ctx context.Context, owner string) ([]Webhook, error)
	// UpdateWebhook writes w's URL, events, description, enabled,
	// disabled reason, failing since and updated time; an unknown id is
	// errs.NotFound (unknown_webhook).
	UpdateWebhook(ctx context.Context, w Webhook) error
	// DeleteWebhook removes a webhook and its deliveries; an unknown id is
	// errs.NotFound (unknown_webhook).
	DeleteWebhook(ctx context.Context, id string) error
	// ListDeliveries returns up to limit deliveries of a webhook, newest
	// first, only those in status when it is not "".
	ListDeliveries(ctx context.Context, webhookID, status string, limit int) ([]Delivery, error)

	// FanOut reads up to limit events after the cursor and the enabled
	// webhooks, stores the deliveries plan makes of them (a delivery of
	// an event to an endpoint that has it already is skipped), and moves
	// the cursor past the events, in one transaction. It returns how
	// many events it read: fewer than limit says the log is read to its
	// end.
	FanOut(ctx context.Context, limit int, plan func(hooks []Webhook, evs []Event) []Delivery) (int, error)
	// NextDelivery returns when the next pending delivery of an enabled
	// webhook is due and free of any claim; zero when there is none.
	NextDelivery(ctx context.Context) (time.Time, error)
	// DueWebhooks returns the enabled webhooks that have a pending
	// delivery due at now and not claimed.
	DueWebhooks(ctx context.Context, now time.Time) ([]string, error)
	// ClaimDeliveries claims up to limit deliveries of a webhook due at
	// now and not claimed, oldest due first, under claim until until.
	ClaimDeliveries(ctx context.Context, webhookID, claim string, now, until time.Time, limit int) ([]Delivery, error)
	// RecordAttempt records the outcome of an attempt made under a claim
	// and the endpoint's run of failures; false when the claim no longer
	// holds (it expired and another took the delivery, or the delivery
	// was deleted), and nothing was written.
	RecordAttempt(ctx context.Context, a Attempt) (bool, error)
	// PruneDeliveries removes the deliveries that ended (delivered or
	// failed) before a time, and returns how many.
	PruneDeliveries(ctx context.Context, before time.Time) (int, error)
	// AbandonDeliveries fails, with reason, the pending deliveries of
	// disabled webhooks created before a time (whose retries would have
	// run out) and under no claim at now, and returns how many: no
	// attempt is made while a webhook is disabled, so they would wait
	// for ever. Like every ended delivery, PruneDeliveries removes them
	// in time. (A deleted webhook's deliveries go with it.)
	AbandonDeliveries(ctx context.Context, createdBefore, now time.Time, reason string) (int, error)
}

// Webhook is a registered endpoint.
type Webhook struct {
	ID, Owner string
	// ServerWide webhooks are sent every owner's events.
	ServerWide bool
	URL        string
	// Events are the names it subscribes to.
	Events      []string
	Secret      string
	Description string
	Enabled     bool
	// DisabledReason says why the server disabled it.
	DisabledReason string
	// FailingSince is when its run of failed attempts began; zero while
	// the last attempt succeeded.
	FailingSince time.Time
	// AfterSeq is the log's newest seq when it was created.
	AfterSeq         uint64
	Created, Updated time.Time
	// Last is its newest delivery (the latest event's), without its
	// body; nil when it has none. GetWebhook and ListWebhooks read it;
	// UpdateWebhook ignores it.
	Last *Delivery
}

// Statuses of a delivery.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// Delivery is one event to deliver to one endpoint.
type Delivery struct {
	// ID is the webhook-id of every attempt.
	ID, WebhookID string
	Seq           uint64
	Kind          string
	SessionID     string
	// Body is the JSON sent.
	Body   []byte
	Status string
	// Attempts made, the last one's HTTP status (0: no answer) and error.
	Attempts       int
	LastStatusCode int
	LastError      string
	NextAttempt    time.Time
	// LastAttempt is when the outcome of its latest attempt was recorded;
	// zero until it is tried (and for attempts made before the time was
	// kept, unless they delivered it).
	LastAttempt time.Time
	Created     time.Time
	Delivered   time.Time
	// Claim names the claim it was read under (ClaimDeliveries).
	Claim string
}

// Attempt is the outcome of one attempt to deliver.
type Attempt struct {
	DeliveryID, WebhookID, Claim string
	// At is when the attempt ended, recorded as the delivery's last
	// attempt (and as its delivered time when it delivered).
	At time.Time
	// Delivered says the endpoint took it; else StatusCode (0: no answer)
	// and Error say why not.
	Delivered  bool
	StatusCode int
	Error      string
	// Next is when to try again; zero gives up (the delivery fails).
	Next time.Time
	// After a failure, the webhook is disabled with DisableReason when its
	// run of failures began at or before DisableIfFailingSince.
	DisableIfFailingSince time.Time
	DisableReason         string
}

func unknownWebhook(id string) *errs.Error {
	return errs.NotFound(errs.CodeUnknownWebhook, "unknown webhook %s", id)
}

type webhookRow struct {
	ID             string `db:"id"`
	Owner          string `db:"owner"`
	ServerWide     bool   `db:"server_wide"`
	URL            string `db:"url"`
	Events         string `db:"events"`
	Secret         string `db:"secret"`
	Description    string `db:"description"`
	Enabled        bool   `db:"enabled"`
	DisabledReason string `db:"disabled_reason"`
	FailingSince   int64  `db:"failing_since"`
	AfterSeq       int64  `db:"after_seq"`
	Created        int64  `db:"created"`
	Updated        int64  `db:"updated"`
}

const webhookColumns = `id, owner, server_wide, url, events, secret, description, enabled,
	disabled_reason, failing_since, after_seq, created, updated`

func (r webhookRow) webhook() (Webhook, error) {
	w := Webhook{
		ID: r.ID, Owner: r.Owner, ServerWide: r.ServerWide, URL: r.URL, Secret: r.Secret,
		Description: r.Description, Enabled: r.Enabled, DisabledReason: r.DisabledReason,
		FailingSince: fromNanos(r.FailingSince), AfterSeq: uint64(r.AfterSeq),
		Created: fromNanos(r.Created), Updated: fromNanos(r.Updated),
	}
	if err := json.Unmarshal([]byte(r.Events), &w.Events); err != nil {
		return Webhook{}, fmt.Errorf("webhook %s: events: %w", r.ID, err)
	}
	return w, nil
}

// webhookWithLastRow is a webhook and its newest delivery, whose
// columns are all NULL when it has none (the LEFT JOIN of
// sqlWebhooksWithLast).
type webhookWithLastRow struct {
	webhookRow
	LastID         sql.NullString `db:"last_id"`
	LastSeq        sql.NullInt64  `db:"last_seq"`
	LastKind       sql.NullString `db:"last_kind"`
	LastSessionID  sql.NullString `db:"last_session_id"`
	LastStatus     sql.NullString `db:"last_status"`
	LastAttempts   sql.NullInt64  `db:"last_attempts"`
	LastStatusCode sql.NullInt64  `db:"last_status_code"`
	LastError      sql.NullString `db:"last_error"`
	LastNext       sql.NullInt64  `db:"last_next_attempt"`
	LastTried      sql.NullInt64  `db:"last_last_attempt"`
	LastCreated    sql.NullInt64  `db:"last_created"`
	LastDelivered  sql.NullInt64  `db:"last_delivered"`
}

// sqlWebhooksWithLast reads webhooks with their newest delivery: the
// subquery finds it by the (webhook_id, seq) index, one row per webhook,
// so a list costs one query however many webhooks it has (SQLite has no
// LATERAL join, hence the correlated subquery, which PostgreSQL plans as
// well). Callers add the WHERE and ORDER BY.
const sqlWebhooksWithLast = `SELECT w.id, w.owner, w.server_wide, w.url, w.events, w.secret, w.description, w.enabled,
	w.disabled_reason, w.failing_since, w.after_seq, w.created, w.updated,
	d.id AS last_id, d.seq AS last_seq, d.kind AS last_kind, d.session_id AS last_session_id,
	d.status AS last_status, d.attempts AS last_attempts, d.last_status_code AS last_status_code,
	d.last_error AS last_error, d.next_attempt AS last_next_attempt, d.last_attempt AS last_last_attempt,
	d.created AS last_created, d.delivered AS last_delivered
	FROM webhooks w LEFT JOIN webhook_deliveries d ON d.id = (
		SELECT l.id FROM webhook_deliveries l WHERE l.webhook_id = w.id ORDER BY l.seq DESC LIMIT 1)`

func (r webhookWithLastRow) webhook() (Webhook, error) {
	w, err := r.webhookRow.webhook()
	if err != nil || !r.LastID.Valid {
		return w, err
	}
	w.Last = &Delivery{
		ID: r.LastID.String, WebhookID: w.ID, Seq: uint64(r.LastSeq.Int64), Kind: r.LastKind.String,
		SessionID: r.LastSessionID.String, Status: r.LastStatus.String, Attempts: int(r.LastAttempts.Int64),
		LastStatusCode: int(r.LastStatusCode.Int64), LastError: r.LastError.String,
		NextAttempt: fromNanos(r.LastNext.Int64), LastAttempt: fromNanos(r.LastTried.Int64),
		Created: fromNanos(r.LastCreated.Int64), Delivered: fromNanos(r.LastDelivered.Int64),
	}
	return w, nil
}

func webhooksOf(rows []webhookRow) ([]Webhook, error) {
	out := make([]Webhook, len(rows))
	for i, r := range rows {
		w, err := r.webhook()
		if err != nil {
			return nil, err
		}
		out[i] = w
	}
	return out, nil
}

func eventsJSON(names []string) (string, error) {
	if names == nil {
		names = []string{}
	}
	b, err := json.Marshal(names)
	return string(b), err
}

// CreateWebhook implements Webhooks.
func (s *SQL) CreateWebhook(ctx context.Context, w *Webhook, key *IdempotencyRecord) error {
	events, err := eventsJSON(w.Events)
	if err != nil {
		return err
	}
	return WithTx(ctx, s.write, func(tx *sqlx.Tx) error {
		var newest int64
		if err := tx.GetContext(ctx, &newest, `SELECT COALESCE(MAX(seq), 0) FROM events`); err != nil {
			return s.translate(err, nil, "read the newest event")
		}
		// The fan-out starts with the first webhook: nothing before it
		// is sent to any.
		if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO webhook_cursor (id, seq) VALUES (1, ?) ON CONFLICT (id) DO NOTHING`), newest); err != nil {
			return s.translate(err, nil, "start the webhook cursor")
		}
		_, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO webhooks (`+webhookColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			w.ID, w.Owner, w.ServerWide, w.URL, events, w.Secret, w.Description, w.Enabled,
			w.DisabledReason, nanos(w.FailingSince), newest, nanos(w.Created), nanos(w.Updated))
		if err != nil {
			return s.translate(err, nil, "create webhook %s", w.ID)
		}
		if key != nil {
			if _, err := tx.ExecContext(ctx, tx.Rebind(sqlPutIdempotency), key.Owner, key.Key, key.Op, key.Result, nanos(key.Created)); err != nil {
				return s.translate(err, nil, "record idempotency key")
			}
		}
		w.AfterSeq = uint64(newest)
		return nil
	})
}

// GetWebhook implements Webhooks.
func (s *SQL) GetWebhook(ctx context.Context, id string) (Webhook, error) {
	var r webhookWithLastRow
	if err := s.read.GetContext(ctx, &r, s.read.Rebind(sqlWebhooksWithLast+` WHERE w.id = ?`), id); err != nil {
		return Webhook{}, s.translate(err, unknownWebhook(id), "read webhook %s", id)
	}
	return r.webhook()
}

// ListWebhooks implements Webhooks.
func (s *SQL) ListWebhooks(ctx context.Context, owner string) ([]Webhook, error) {
	var rows []webhookWithLastRow
	var err error
	if owner == "" {
		err = s.read.SelectContext(ctx, &rows, sqlWebhooksWithLast+` ORDER BY w.created, w.id`)
	} else {
		err = s.read.SelectContext(ctx, &rows, s.read.Rebind(sqlWebhooksWithLast+` WHERE w.owner = ? ORDER BY w.created, w.id`), owner)
	}
	if err != nil {
		return nil, s.translate(err, nil, "list webhooks")
	}
	out := make([]Webhook, len(rows))
	for i, r := range rows {
		if out[i], err = r.webhook(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// UpdateWebhook implements Webhooks.
func (s *SQL) UpdateWebhook(ctx context.Context, w Webhook) error {
	events, err := eventsJSON(w.Events)
	if err != nil {
		return err
	}
	res, err := s.write.ExecContext(ctx, s.write.Rebind(`UPDATE webhooks SET url = ?, events = ?, description = ?,
		enabled = ?, disabled_reason = ?, failing_since = ?, updated = ? WHERE id = ?`),
		w.URL, events, w.Description, w.Enabled, w.DisabledReason, nanos(w.FailingSince), nanos(w.Updated), w.ID)
	return s.oneRow(res, err, unknownWebhook(w.ID), "update webhook %s", w.ID)
}

// DeleteWebhook implements Webhooks. The deliveries go first, in the
// same transaction, rather than by the foreign key's cascade alone,
// which an SQLite connection without foreign keys would not run.
func (s *SQL) DeleteWebhook(ctx context.Context, id string) error {
	return WithTx(ctx, s.write, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM webhook_deliveries WHERE webhook_id = ?`), id); err != nil {
			return s.translate(err, nil, "delete the deliveries of webhook %s", id)
		}
		res, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM webhooks WHERE id = ?`), id)
		return s.oneRow(res, err, unknownWebhook(id), "delete webhook %s", id)
	})
}

type deliveryRow struct {
	ID             string `db:"id"`
	WebhookID      string `db:"webhook_id"`
	Seq            int64  `db:"seq"`
	Kind           string `db:"kind"`
	SessionID      string `db:"session_id"`
	Body           []byte `db:"body"`
	Status         string `db:"status"`
	Attempts       int    `db:"attempts"`
	LastStatusCode int    `db:"last_status_code"`
	LastError      string `db:"last_error"`
	NextAttempt    int64  `db:"next_attempt"`
	LastAttempt    int64  `db:"last_attempt"`
	Claim          string `db:"claim"`
	Created        int64  `db:"created"`
	Delivered      int64  `db:"delivered"`
}

const deliveryColumns = `id, webhook_id, seq, kind, session_id, body, status, attempts,
	last_status_code, last_error, next_attempt, last_attempt, claim, created, delivered`

func deliveriesOf(rows []deliveryRow) []Delivery {
	out := make([]Delivery, len(rows))
	for i, r := range rows {
		out[i] = Delivery{
			ID: r.ID, WebhookID: r.WebhookID, Seq: uint64(r.Seq), Kind: r.Kind, SessionID: r.SessionID,
			Body: r.Body, Status: r.Status, Attempts: r.Attempts, LastStatusCode: r.LastStatusCode,
			LastError: r.LastError, NextAttempt: fromNanos(r.NextAttempt), LastAttempt: fromNanos(r.LastAttempt), Claim: r.Claim,
			Created: fromNanos(r.Created), Delivered: fromNanos(r.Delivered),
		}
	}
	return out
}

// ListDeliveries implements Webhooks.
func (s *SQL) ListDeliveries(ctx context.Context, webhookID, status string, limit int) ([]Delivery, error) {
	if limit <= 0 {
		limit = DefaultPageSize
	}
	var rows []deliveryRow
	var err error
	if status == "" {
		err = s.read.SelectContext(ctx, &rows, s.read.Rebind(`SELECT `+deliveryColumns+` FROM webhook_deliveries
			WHERE webhook_id = ? ORDER BY seq DESC LIMIT ?`), webhookID, limit)
	} else {
		err = s.read.SelectContext(ctx, &rows, s.read.Rebind(`SELECT `+deliveryColumns+` FROM webhook_deliveries
			WHERE webhook_id = ? AND status = ? ORDER BY seq DESC LIMIT ?`), webhookID, status, limit)
	}
	if err != nil {
		return nil, s.translate(err, nil, "list the deliveries of webhook %s", webhookID)
	}
	return deliveriesOf(rows), nil
}

// FanOut implements Webhooks. The cursor row is locked for the
// transaction, so two servers fanning out at once take turns, and the
// second starts where the first stopped. Whether there is anything to
// do is read first, outside any transaction: the writer (SQLite's one
// connection, which every run's commits use) is taken only for events
// that some enabled webhook has not been offered.
func (s *SQL) FanOut(ctx context.Context, limit int, plan func(hooks []Webhook, evs []Event) []Delivery) (int, error) {
	var behind []bool
	if err := s.read.SelectContext(ctx, &behind, `SELECT EXISTS (SELECT 1 FROM events e WHERE e.seq > c.seq)
		FROM webhook_cursor c WHERE EXISTS (SELECT 1 FROM webhooks WHERE enabled)`); err != nil {
		return 0, s.translate(err, nil, "look for events to queue for webhooks")
	}
	if len(behind) == 0 || !behind[0] {
		return 0, nil
	}
	read := 0
	err := WithTx(ctx, s.write, func(tx *sqlx.Tx) error {
		var cursor int64
		err := tx.GetContext(ctx, &cursor, `SELECT seq FROM webhook_cursor WHERE id = 1`+s.dialect.RowLock)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // no webhook was ever created
		}
		if err != nil {
			return s.translate(err, nil, "read the webhook cursor")
		}
		var rows []eventRow
		if err := tx.SelectContext(ctx, &rows, tx.Rebind(sqlEventsAll), cursor, limit); err != nil {
			return s.translate(err, nil, "read events after %d", cursor)
		}
		read = len(rows)
		if len(rows) == 0 {
			return nil
		}
		var hooks []webhookRow
		if err := tx.SelectContext(ctx, &hooks, `SELECT `+webhookColumns+` FROM webhooks WHERE enabled ORDER BY id`); err != nil {
			return s.translate(err, nil, "read the enabled webhooks")
		}
		hs, err := webhooksOf(hooks)
		if err != nil {
			return err
		}
		evs := make([]Event, len(rows))
		for i, r := range rows {
			evs[i] = Event{Seq: uint64(r.Seq), SessionID: r.SessionID, Owner: r.Owner, Kind: r.Kind, Time: fromNanos(r.Time), Body: r.Body}
		}
		insert := tx.Rebind(`INSERT INTO webhook_deliveries (id, webhook_id, seq, kind, session_id, body, status, next_attempt, created)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (webhook_id, seq) DO NOTHING`)
		for _, d := range plan(hs, evs) {
			if _, err := tx.ExecContext(ctx, insert, d.ID, d.WebhookID, int64(d.Seq), d.Kind, d.SessionID, d.Body,
				DeliveryPending, nanos(d.NextAttempt), nanos(d.Created)); err != nil {
				return s.translate(err, nil, "queue event %d for webhook %s", d.Seq, d.WebhookID)
			}
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE webhook_cursor SET seq = ? WHERE id = 1`), rows[len(rows)-1].Seq); err != nil {
			return s.translate(err, nil, "move the webhook cursor")
		}
		return nil
	})
	return read, err
}

// NextDelivery implements Webhooks.
func (s *SQL) NextDelivery(ctx context.Context) (time.Time, error) {
	var next sql.NullInt64
	err := s.read.GetContext(ctx, &next, s.read.Rebind(`SELECT MIN(CASE WHEN d.claim_expires > d.next_attempt THEN d.claim_expires ELSE d.next_attempt END)
		FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
		WHERE w.enabled AND d.status = ?`), DeliveryPending)
	if err != nil {
		return time.Time{}, s.translate(err, nil, "find the next webhook delivery")
	}
	if !next.Valid {
		return time.Time{}, nil
	}
	return fromNanos(next.Int64), nil
}

// DueWebhooks implements Webhooks.
func (s *SQL) DueWebhooks(ctx context.Context, now time.Time) ([]string, error) {
	var ids []string
	err := s.read.SelectContext(ctx, &ids, s.read.Rebind(`SELECT DISTINCT d.webhook_id FROM webhook_deliveries d
		JOIN webhooks w ON w.id = d.webhook_id
		WHERE w.enabled AND d.status = ? AND d.next_attempt <= ? AND d.claim_expires <= ?`),
		DeliveryPending, nanos(now), nanos(now))
	if err != nil {
		return nil, s.translate(err, nil, "find webhooks with deliveries due")
	}
	return ids, nil
}

// ClaimDeliveries implements Webhooks.
func (s *SQL) ClaimDeliveries(ctx context.Context, webhookID, claim string, now, until time.Time, limit int) ([]Delivery, error) {
	var rows []deliveryRow
	err := WithTx(ctx, s.write, func(tx *sqlx.Tx) error {
		var ids []string
		if err := tx.SelectContext(ctx, &ids, tx.Rebind(`SELECT id FROM webhook_deliveries
			WHERE webhook_id = ? AND status = ? AND next_attempt <= ? AND claim_expires <= ?
			ORDER BY next_attempt, seq LIMIT ?`+s.dialect.SkipLocked),
			webhookID, DeliveryPending, nanos(now), nanos(now), limit); err != nil {
			return s.translate(err, nil, "find deliveries due for webhook %s", webhookID)
		}
		if len(ids) == 0 {
			return nil
		}
		q, args, err := sqlx.In(`UPDATE webhook_deliveries SET claim = ?, claim_expires = ? WHERE id IN (?)`, claim, nanos(until), ids)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(q), args...); err != nil {
			return s.translate(err, nil, "claim deliveries of webhook %s", webhookID)
		}
		q, args, err = sqlx.In(`SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE id IN (?) ORDER BY next_attempt, seq`, ids)
		if err != nil {
			return err
		}
		if err := tx.SelectContext(ctx, &rows, tx.Rebind(q), args...); err != nil {
			return s.translate(err, nil, "read claimed deliveries of webhook %s", webhookID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return deliveriesOf(rows), nil
}

// RecordAttempt implements Webhooks.
func (s *SQL) RecordAttempt(ctx context.Context, a Attempt) (bool, error) {
	status, delivered, next := DeliveryPending, int64(0), nanos(a.Next)
	switch {
	case a.Delivered:
		status, delivered, next = DeliveryDelivered, nanos(a.At), 0
	case a.Next.IsZero():
		status = DeliveryFailed
	}
	held := false
	err := WithTx(ctx, s.write, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1,
			last_status_code = ?, last_error = ?, next_attempt = ?, last_attempt = ?, delivered = ?, claim = '', claim_expires = 0
			WHERE id = ? AND claim = ? AND status = ?`),
			status, a.StatusCode, a.Error, next, nanos(a.At), delivered, a.DeliveryID, a.Claim, DeliveryPending)
		if err != nil {
			return s.translate(err, nil, "record an attempt of delivery %s", a.DeliveryID)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		held = true
		if a.Delivered {
			_, err = tx.ExecContext(ctx, tx.Rebind(`UPDATE webhooks SET failing_since = 0 WHERE id = ? AND failing_since <> 0`), a.WebhookID)
			return s.translate(err, nil, "record webhook %s answering", a.WebhookID)
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE webhooks SET failing_since = ? WHERE id = ? AND failing_since = 0`),
			nanos(a.At), a.WebhookID); err != nil {
			return s.translate(err, nil, "record webhook %s failing", a.WebhookID)
		}
		if a.DisableIfFailingSince.IsZero() {
			return nil
		}
		_, err = tx.ExecContext(ctx, tx.Rebind(`UPDATE webhooks SET enabled = FALSE, disabled_reason = ?, updated = ?
			WHERE id = ? AND enabled AND failing_since <> 0 AND failing_since <= ?`),
			a.DisableReason, nanos(a.At), a.WebhookID, nanos(a.DisableIfFailingSince))
		return s.translate(err, nil, "disable webhook %s", a.WebhookID)
	})
	return held && err == nil, err
}

// PruneDeliveries implements Webhooks.
func (s *SQL) PruneDeliveries(ctx context.Context, before time.Time) (int, error) {
	res, err := s.write.ExecContext(ctx, s.write.Rebind(`DELETE FROM webhook_deliveries WHERE status <> ? AND created < ?`),
		DeliveryPending, nanos(before))
	if err != nil {
		return 0, s.translate(err, nil, "prune webhook deliveries")
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// AbandonDeliveries implements Webhooks.
func (s *SQL) AbandonDeliveries(ctx context.Context, createdBefore, now time.Time, reason string) (int, error) {
	res, err := s.write.ExecContext(ctx, s.write.Rebind(`UPDATE webhook_deliveries
		SET status = ?, last_error = ?, next_attempt = 0, claim = '', claim_expires = 0
		WHERE status = ? AND created < ? AND claim_expires <= ?
		AND webhook_id IN (SELECT id FROM webhooks WHERE NOT enabled)`),
		DeliveryFailed, reason, DeliveryPending, nanos(createdBefore), nanos(now))
	if err != nil {
		return 0, s.translate(err, nil, "abandon the deliveries of disabled webhooks")
	}
	n, err := res.RowsAffected()
	return int(n), err
}
