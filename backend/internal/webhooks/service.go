package webhooks

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/store"
)

// Service is the operations on webhooks, for the server's handlers.
type Service struct {
	store  store.Webhooks
	policy Policy
	now    func() time.Time
}

// NewService returns the operations over st, checking endpoints against
// p.
func NewService(st store.Webhooks, p Policy) *Service {
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
// shown this once.
func (s *Service) Create(ctx context.Context, c Caller, req Create) (store.Webhook, string, error) {
	if req.ServerWide && !c.Admin {
		return store.Webhook{}, "", errs.PermissionDenied(errs.CodePermissionDenied, "a server-wide webhook needs an admin token")
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
	if err := s.store.CreateWebhook(ctx, &w); err != nil {
		return store.Webhook{}, "", err
	}
	return w, secret, nil
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
