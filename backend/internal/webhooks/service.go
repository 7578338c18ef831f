package webhooks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/store"
)

// Store is what the service keeps webhooks in: the webhooks, and the
// idempotency keys of the requests that created them.
type Store interface {
	store.Webhooks
	Idempotent(ctx context.Context, owner, key string) (store.IdempotencyRecord, error)
}

// Service is the operations on webhooks, for the server's handlers.
type Service struct {
	store  Store
	policy Policy
	now    func() time.Time
}

// NewService returns the operations over st, checking endpoints against
// p.
func NewService(st Store, p Policy) *Service {
	return &Service{store: st, policy: p, now: time.Now}
}

// Caller is who asks: an owner, and whether it is an admin (who sees
// every owner's webhooks and may register server-wide ones).
type Caller struct {
	Owner string
	Admin bool
}

// Create is a webhook to register.
type Create struct {
	URL         string
	Events      []string
	Secret      string
	ServerWide  bool
	Description string
	// Key, when set, makes a retry safe, as CreateSchedule's: the same
	// key from the same owner returns the webhook the first request
	// created, with its secret.
	Key string
}

// Update changes a webhook; nil fields stay as they are, and so do
// Events when empty.
type Update struct {
	Enabled     *bool
	URL         *string
	Events      []string
	Description *string
}

// maxDescription bounds a webhook's description.
const maxDescription = 1024

// checkEvents refuses an empty list and names no webhook is sent; it
// returns the names without repeats, in the order of Names.
func checkEvents(names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "events: name at least one of %s", strings.Join(Names(), ", "))
	}
	for _, n := range names {
		if !slices.Contains(Names(), n) {
			return nil, errs.Invalid(errs.CodeInvalidArgument, "events: %q is not an event webhooks are sent; choose from %s", n, strings.Join(Names(), ", "))
		}
	}
	var out []string
	for _, n := range Names() {
		if slices.Contains(names, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

func checkDescription(d string) error {
	if len(d) > maxDescription {
		return errs.Invalid(errs.CodeInvalidArgument, "description is longer than %d bytes", maxDescription)
	}
	return nil
}

// Create registers a webhook and returns it with its secret, which is
// shown this once, and again to a retry with the request's key.
func (s *Service) Create(ctx context.Context, c Caller, req Create) (store.Webhook, string, error) {
	if req.ServerWide && !c.Admin {
		return store.Webhook{}, "", errs.PermissionDenied(errs.CodePermissionDenied, "a server-wide webhook needs an admin token")
	}
	hash := requestHash(req)
	if id, err := s.replayed(ctx, c.Owner, req.Key, hash); err != nil || id != "" {
		if err != nil {
			return store.Webhook{}, "", err
		}
		return s.created(ctx, id)
	}
	u, err := s.policy.CheckURL(ctx, req.URL)
	if err != nil {
		return store.Webhook{}, "", err
	}
	events, err := checkEvents(req.Events)
	if err != nil {
		return store.Webhook{}, "", err
	}
	if err := checkDescription(req.Description); err != nil {
		return store.Webhook{}, "", err
	}
	secret := NewSecret()
	if req.Secret != "" {
		if secret, err = checkSecret(req.Secret); err != nil {
			return store.Webhook{}, "", err
		}
	}
	now := s.now()
	w := store.Webhook{
		ID: "wh_" + randomHex(12), Owner: c.Owner, ServerWide: req.ServerWide, URL: u, Events: events,
		Secret: secret, Description: req.Description, Enabled: true, Created: now, Updated: now,
	}
	var key *store.IdempotencyRecord
	if req.Key != "" {
		result, _ := json.Marshal(keyed{WebhookID: w.ID, Request: hash})
		key = &store.IdempotencyRecord{Owner: c.Owner, Key: req.Key, Op: opCreate, Result: string(result), Created: now}
	}
	if err := s.store.CreateWebhook(ctx, &w, key); err != nil {
		if errs.KindOf(err) == errs.KindConflict && req.Key != "" {
			// The same key raced this request and won: answer as it did.
			if id, rerr := s.replayed(ctx, c.Owner, req.Key, hash); rerr == nil && id != "" {
				return s.created(ctx, id)
			}
		}
		return store.Webhook{}, "", err
	}
	return w, secret, nil
}

// Idempotency keys, as the runner keeps them for its creates: the key
// is recorded with the webhook it created and the hash of the request,
// in one transaction, and remembered as long as the runner's (a day).

// opCreate is the operation of a create's key; a key an owner used for
// another operation is refused.
const opCreate = "create_webhook"

// MaxKey bounds a key's length, as the runner's.
const MaxKey = 200

// keyed is what a keyed create recorded.
type keyed struct {
	WebhookID string `json:"webhook_id"`
	// Request is the hash of the request (requestHash).
	Request string `json:"request"`
}

// requestHash binds a key to one request: used again with another
// body, it is refused rather than answered with what the first did.
func requestHash(req Create) string {
	req.Key = ""
	h := sha256.New()
	h.Write([]byte(opCreate + "\n"))
	// A plain struct of strings and bools encodes without error.
	_ = json.NewEncoder(h).Encode(req)
	return hex.EncodeToString(h.Sum(nil))
}

// replayed returns the webhook an earlier create with the key made, ""
// when the key is new (or empty); idempotency_key_reused when the key
// belongs to another request.
func (s *Service) replayed(ctx context.Context, owner, key, hash string) (string, error) {
	if key == "" {
		return "", nil
	}
	if len(key) > MaxKey {
		return "", errs.Invalid(errs.CodeInvalidArgument, "idempotency key is longer than %d characters", MaxKey)
	}
	rec, err := s.store.Idempotent(ctx, owner, key)
	if errs.KindOf(err) == errs.KindNotFound {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if rec.Op != opCreate {
		return "", errs.Unprocessable(errs.CodeIdempotencyKeyReused, "the idempotency key was used for another kind of request (%s): a new request needs a new key", rec.Op)
	}
	var k keyed
	if err := json.Unmarshal([]byte(rec.Result), &k); err != nil {
		return "", err
	}
	if k.Request != hash {
		return "", errs.Unprocessable(errs.CodeIdempotencyKeyReused, "the idempotency key was used for another request: a new request needs a new key")
	}
	return k.WebhookID, nil
}

// created answers a retried create: the webhook as it is now, with its
// secret. One deleted since is unknown_webhook.
func (s *Service) created(ctx context.Context, id string) (store.Webhook, string, error) {
	w, err := s.store.GetWebhook(ctx, id)
	if err != nil {
		return store.Webhook{}, "", err
	}
	return w, w.Secret, nil
}

// List returns the caller's webhooks, every owner's with all (an
// admin's only).
func (s *Service) List(ctx context.Context, c Caller, all bool) ([]store.Webhook, error) {
	if all && !c.Admin {
		return nil, errs.PermissionDenied(errs.CodePermissionDenied, "every owner's webhooks need an admin token")
	}
	owner := c.Owner
	if all {
		owner = ""
	}
	return s.store.ListWebhooks(ctx, owner)
}

// Get returns a webhook the caller may see: its own, or any for an
// admin. Another owner's is unknown_webhook, as a missing one.
func (s *Service) Get(ctx context.Context, c Caller, id string) (store.Webhook, error) {
	if id == "" {
		return store.Webhook{}, errs.Invalid(errs.CodeInvalidArgument, "webhook_id is required")
	}
	w, err := s.store.GetWebhook(ctx, id)
	if err != nil {
		return store.Webhook{}, err
	}
	if w.Owner != c.Owner && !c.Admin {
		return store.Webhook{}, errs.NotFound(errs.CodeUnknownWebhook, "unknown webhook %s", id)
	}
	return w, nil
}

// Update changes a webhook. Enabling it clears what the server said
// when it disabled it, and starts the count of failing days again.
func (s *Service) Update(ctx context.Context, c Caller, id string, u Update) (store.Webhook, error) {
	w, err := s.Get(ctx, c, id)
	if err != nil {
		return store.Webhook{}, err
	}
	if u.URL != nil {
		if w.URL, err = s.policy.CheckURL(ctx, *u.URL); err != nil {
			return store.Webhook{}, err
		}
	}
	if len(u.Events) > 0 {
		if w.Events, err = checkEvents(u.Events); err != nil {
			return store.Webhook{}, err
		}
	}
	if u.Description != nil {
		if err := checkDescription(*u.Description); err != nil {
			return store.Webhook{}, err
		}
		w.Description = *u.Description
	}
	if u.Enabled != nil {
		if *u.Enabled && !w.Enabled {
			w.DisabledReason, w.FailingSince = "", time.Time{}
		}
		if !*u.Enabled {
			w.DisabledReason = ""
		}
		w.Enabled = *u.Enabled
	}
	w.Updated = s.now()
	if err := s.store.UpdateWebhook(ctx, w); err != nil {
		return store.Webhook{}, err
	}
	return w, nil
}

// Delete removes a webhook.
func (s *Service) Delete(ctx context.Context, c Caller, id string) error {
	if _, err := s.Get(ctx, c, id); err != nil {
		return err
	}
	return s.store.DeleteWebhook(ctx, id)
}

// Deliveries returns a webhook's delivery log, newest first.
func (s *Service) Deliveries(ctx context.Context, c Caller, id, status string, limit int) ([]store.Delivery, error) {
	if _, err := s.Get(ctx, c, id); err != nil {
		return nil, err
	}
	if limit < 0 || limit > store.MaxPageSize {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "limit must be from 0 (the default, %d) to %d, not %d", store.DefaultPageSize, store.MaxPageSize, limit)
	}
	return s.store.ListDeliveries(ctx, id, status, limit)
}
