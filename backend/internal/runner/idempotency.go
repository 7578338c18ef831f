package runner

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/store"
)

// Idempotency keys: a request that carries one is recorded in the same
// write as what it did, so a client that retries after a timeout gets the
// first answer back (the resource it created, as it is now) instead of a
// second turn or mail.

// The operations a key can belong to; a key reused for another operation
// is refused.
const (
	opCreate   = "create_session"
	opPost     = "post_message"
	opMail     = "send_mail"
	opComplete = "complete_call"
)

// IdempotencyTTL is how long a key is remembered.
const IdempotencyTTL = 24 * time.Hour

// MaxIdempotencyKey bounds a key's length.
const MaxIdempotencyKey = 200

// keyed is what a keyed request produced.
type keyed struct {
	SessionID string `json:"session_id,omitempty"`
	MailID    string `json:"mail_id,omitempty"`
	// Token is the deferred call a completion answered.
	Token string `json:"token,omitempty"`
	// Turns is the session's turn count when a post or mail was
	// accepted: where the answer to a post with wait starts.
	Turns int `json:"turns,omitempty"`
}

// errKeyReused refuses a key used again for a request of the same kind
// aimed at something else (another session, another call).
var errKeyReused = errs.Conflict("idempotency_key_reused", "the idempotency key was used for another request")

// idempotency returns the record to write with the request's change; nil
// without a key.
func (r *Runner) idempotency(owner, key, op string, k keyed) *store.IdempotencyRecord {
	if key == "" {
		return nil
	}
	b, _ := json.Marshal(k)
	return &store.IdempotencyRecord{Owner: owner, Key: key, Op: op, Result: string(b), Created: r.now()}
}

// replayed returns what an earlier request with the key produced, nil
// when the key is new (or empty).
func (r *Runner) replayed(ctx context.Context, owner, key, op string) (*keyed, error) {
	if key == "" {
		return nil, nil
	}
	if len(key) > MaxIdempotencyKey {
		return nil, errs.Invalid("invalid_argument", "idempotency key is longer than %d characters", MaxIdempotencyKey)
	}
	rec, err := r.store.Idempotent(ctx, owner, key)
	if errs.KindOf(err) == errs.KindNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if rec.Op != op {
		return nil, errs.Conflict("idempotency_key_reused", "the idempotency key was used for another kind of request (%s)", rec.Op)
	}
	var k keyed
	if err := json.Unmarshal([]byte(rec.Result), &k); err != nil {
		return nil, err
	}
	return &k, nil
}
