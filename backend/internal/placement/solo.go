package placement

import (
	"context"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// Solo is the placement of a server alone on its database (SQLite): it
// holds every session, loaded or not, so no write needs a fence, no
// operation is forwarded and no session is ever lost.
type Solo struct {
	k Kernel
}

var _ Placement = (*Solo)(nil)

func (s *Solo) Start(_ context.Context, k Kernel) { s.k = k }

// Recover takes every session up as a restart does.
func (s *Solo) Recover(ctx context.Context) error { return s.k.RecoverAll(ctx) }

// Hold holds every session without a fence: the restart recovered them
// all, and the watch index has every one's (Kernel.RecoverAll).
func (*Solo) Hold(context.Context, string) (*Hold, error) { return &Hold{}, nil }

func (*Solo) Loaded(*Hold)              {}
func (*Solo) Release(string)            {}
func (*Solo) Deleted(*Hold)             {}
func (*Solo) Lost(string, *Hold)        {}
func (*Solo) MailStored([]session.Mail) {}

// Moved is never asked of Solo, which loses no session; it answers as
// a placement that did would.
func (*Solo) Moved(_ context.Context, id string) error {
	return errs.Conflict(errs.CodeLeaseHeld, "session %s is run by another server", id)
}

func (*Solo) Elsewhere(context.Context, string) bool { return false }

func (*Solo) Run(_ context.Context, _ Command, local func() error, _ any) (bool, error) {
	return false, local()
}

func (*Solo) Holding(_ context.Context, _ string, fn func() error) error { return fn() }

func (*Solo) StoredAgentsChanged(context.Context) error { return nil }

func (*Solo) Drain(context.Context)                 {}
func (*Solo) HandOver(context.Context, *Hold, bool) {}
func (*Solo) Drained(context.Context)               {}
func (*Solo) Stop()                                 {}
func (*Solo) Close(context.Context)                 {}
func (*Solo) Prune(context.Context, time.Time)      {}
