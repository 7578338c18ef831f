package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	opSchedule = "create_schedule"
)

// IdempotencyTTL is how long a key is remembered.
const IdempotencyTTL = 24 * time.Hour

// MaxIdempotencyKey bounds a key's length.
const MaxIdempotencyKey = 200

// keyed is what a keyed request produced.
type keyed struct {
	SessionID string `json:"session_id,omitempty"`
	MailID    string `json:"mail_id,omitempty"`
	// ScheduleID is the schedule a create made.
	ScheduleID string `json:"schedule_id,omitempty"`
	// Token is the deferred call a completion answered.
	Token string `json:"token,omitempty"`
	// Turns is the session's turn count when a post or mail was
	// accepted: where the answer to a post with wait starts.
	Turns int `json:"turns,omitempty"`
	// Request is the hash of the request the key was first used with
	// (see keyFor); empty in records written before keys were bound to
	// their request.
	Request string `json:"request,omitempty"`
}

// keyedRequest is a request that carries an idempotency key: the key,
// its operation and the hash of what the request asks.
type keyedRequest struct {
	key, op, hash string
}

// keyFor binds key to one request of op: what it asks is its target and
// its body, hashed, so that the key used again with anything else is
// refused instead of answered with what the first request did. Params
// stay out of it: they are secrets, which the store never holds, not
// even as a hash that a guess could be checked against.
func keyFor(key, op string, what any) keyedRequest {
	if key == "" {
		return keyedRequest{}
	}
	h := sha256.New()
	h.Write([]byte(op + "\n"))
	// The values hashed are plain structs of strings, numbers and bytes,
	// which encode without error.
	_ = json.NewEncoder(h).Encode(what)
	return keyedRequest{key: key, op: op, hash: hex.EncodeToString(h.Sum(nil))}
}

// errKeyReused refuses a key used again for another request: another
// kind, another target or another body. 422, as the IETF draft on the
// Idempotency-Key header and Stripe answer it: the request is well
// formed, but the key names another one, and no retry of it can succeed.
var errKeyReused = errs.Unprocessable(errs.CodeIdempotencyKeyReused, "the idempotency key was used for another request: a new request needs a new key")

// idempotency returns the record to write with the request's change; nil
// without a key.
func (r *Runner) idempotency(owner string, req keyedRequest, k keyed) *store.IdempotencyRecord {
	if req.key == "" {
		return nil
	}
	k.Request = req.hash
	b, _ := json.Marshal(k)
	return &store.IdempotencyRecord{Owner: owner, Key: req.key, Op: req.op, Result: string(b), Created: r.now()}
}

// replayed returns what an earlier request with the key produced, nil
// when the key is new (or empty); errKeyReused when the key belongs to
// another request.
func (r *Runner) replayed(ctx context.Context, owner string, req keyedRequest) (*keyed, error) {
	if req.key == "" {
		return nil, nil
	}
	if len(req.key) > MaxIdempotencyKey {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "idempotency key is longer than %d characters", MaxIdempotencyKey)
	}
	rec, err := r.store.Idempotent(ctx, owner, req.key)
	if errs.KindOf(err) == errs.KindNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if rec.Op != req.op {
		return nil, errs.Unprocessable(errs.CodeIdempotencyKeyReused, "the idempotency key was used for another kind of request (%s): a new request needs a new key", rec.Op)
	}
	var k keyed
	if err := json.Unmarshal([]byte(rec.Result), &k); err != nil {
		return nil, err
	}
	if k.Request != "" && k.Request != req.hash {
		return nil, errKeyReused
	}
	return &k, nil
}
