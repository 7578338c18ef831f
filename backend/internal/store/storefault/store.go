package storefault

import (
	"context"
	"time"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// Store is a store.Store whose writes (and, when slowed, reads) pass
// through Faults first. Close always goes through: a refused close would
// only leak the database.
type Store struct {
	store.Store
	f *Faults
}

var _ store.Store = (*Store)(nil)

// Wrap returns s with the switches f.
func Wrap(s store.Store, f *Faults) *Store { return &Store{Store: s, f: f} }

// Unwrap returns the wrapped store.
func (s *Store) Unwrap() store.Store { return s.Store }

// Writes.

func (s *Store) Commit(ctx context.Context, c *store.Change) error {
	if err := s.f.write(ctx, c); err != nil {
		return err
	}
	return s.Store.Commit(ctx, c)
}

// CommitAll decides each change on its own, as Commit does, and commits
// the ones it lets through together.
func (s *Store) CommitAll(ctx context.Context, changes []*store.Change) []error {
	out := make([]error, len(changes))
	var through []*store.Change
	var at []int
	for i, c := range changes {
		if out[i] = s.f.write(ctx, c); out[i] == nil {
			through = append(through, c)
			at = append(at, i)
		}
	}
	if len(through) > 0 {
		for j, err := range s.Store.CommitAll(ctx, through) {
			out[at[j]] = err
		}
	}
	return out
}

func (s *Store) CreateSession(ctx context.Context, meta session.Meta, turns []session.Turn) error {
	if err := s.f.write(ctx, nil); err != nil {
		return err
	}
	return s.Store.CreateSession(ctx, meta, turns)
}

func (s *Store) UpdateMeta(ctx context.Context, meta session.Meta) error {
	if err := s.f.write(ctx, nil); err != nil {
		return err
	}
	return s.Store.UpdateMeta(ctx, meta)
}

func (s *Store) CommitStep(ctx context.Context, c store.StepCommit) error {
	if err := s.f.write(ctx, nil); err != nil {
		return err
	}
	return s.Store.CommitStep(ctx, c)
}

func (s *Store) DeleteSessions(ctx context.Context, ids ...string) (int, error) {
	if err := s.f.write(ctx, nil); err != nil {
		return 0, err
	}
	return s.Store.DeleteSessions(ctx, ids...)
}

func (s *Store) AddMail(ctx context.Context, m session.Mail) error {
	if err := s.f.write(ctx, nil); err != nil {
		return err
	}
	return s.Store.AddMail(ctx, m)
}

func (s *Store) MarkDelivered(ctx context.Context, ids []string, at time.Time) ([]string, error) {
	if err := s.f.write(ctx, nil); err != nil {
		return nil, err
	}
	return s.Store.MarkDelivered(ctx, ids, at)
}

func (s *Store) CompleteDeferred(ctx context.Context, token string, result session.ToolResult, at time.Time) (session.DeferredCall, error) {
	if err := s.f.write(ctx, nil); err != nil {
		return session.DeferredCall{}, err
	}
	return s.Store.CompleteDeferred(ctx, token, result, at)
}

func (s *Store) PutWatch(ctx context.Context, w session.Watch) error {
	if err := s.f.write(ctx, nil); err != nil {
		return err
	}
	return s.Store.PutWatch(ctx, w)
}

func (s *Store) DeleteWatch(ctx context.Context, watcherID, targetID string) error {
	if err := s.f.write(ctx, nil); err != nil {
		return err
	}
	return s.Store.DeleteWatch(ctx, watcherID, targetID)
}

func (s *Store) DeleteExpiredWatches(ctx context.Context, now time.Time) (int, error) {
	if err := s.f.write(ctx, nil); err != nil {
		return 0, err
	}
	return s.Store.DeleteExpiredWatches(ctx, now)
}

func (s *Store) AcquireLease(ctx context.Context, sessionID, holder string, now time.Time, ttl time.Duration) (store.Lease, error) {
	if err := s.f.write(ctx, nil); err != nil {
		return store.Lease{}, err
	}
	return s.Store.AcquireLease(ctx, sessionID, holder, now, ttl)
}

func (s *Store) RenewLeases(ctx context.Context, holder string, leases []store.Lease, now time.Time, ttl time.Duration) ([]string, error) {
	if err := s.f.write(ctx, nil); err != nil {
		return nil, err
	}
	return s.Store.RenewLeases(ctx, holder, leases, now, ttl)
}

func (s *Store) ReleaseLease(ctx context.Context, sessionID, holder string, epoch int64) error {
	if err := s.f.write(ctx, nil); err != nil {
		return err
	}
	return s.Store.ReleaseLease(ctx, sessionID, holder, epoch)
}

func (s *Store) AddCommand(ctx context.Context, c store.Command) error {
	if err := s.f.write(ctx, nil); err != nil {
		return err
	}
	return s.Store.AddCommand(ctx, c)
}

func (s *Store) FinishCommand(ctx context.Context, id, result string, at time.Time) (bool, error) {
	if err := s.f.write(ctx, nil); err != nil {
		return false, err
	}
	return s.Store.FinishCommand(ctx, id, result, at)
}

func (s *Store) FinishCommandAndNotify(ctx context.Context, id, result string, at time.Time, won, lost store.Notification) (bool, error) {
	if err := s.f.write(ctx, nil); err != nil {
		return false, err
	}
	return s.Store.FinishCommandAndNotify(ctx, id, result, at, won, lost)
}

func (s *Store) PruneCommands(ctx context.Context, before time.Time) (int, error) {
	if err := s.f.write(ctx, nil); err != nil {
		return 0, err
	}
	return s.Store.PruneCommands(ctx, before)
}

func (s *Store) PruneEvents(ctx context.Context, before time.Time, keep int) (int, error) {
	if err := s.f.write(ctx, nil); err != nil {
		return 0, err
	}
	return s.Store.PruneEvents(ctx, before, keep)
}

func (s *Store) PruneIdempotency(ctx context.Context, before time.Time) (int, error) {
	if err := s.f.write(ctx, nil); err != nil {
		return 0, err
	}
	return s.Store.PruneIdempotency(ctx, before)
}

// Reads.

func (s *Store) GetMeta(ctx context.Context, id string) (session.Meta, error) {
	if err := s.f.read(ctx); err != nil {
		return session.Meta{}, err
	}
	return s.Store.GetMeta(ctx, id)
}

func (s *Store) LoadSession(ctx context.Context, id string) (session.Meta, []session.Turn, error) {
	if err := s.f.read(ctx); err != nil {
		return session.Meta{}, nil, err
	}
	return s.Store.LoadSession(ctx, id)
}

func (s *Store) LoadTurns(ctx context.Context, id string, from, to int) ([]session.Turn, error) {
	if err := s.f.read(ctx); err != nil {
		return nil, err
	}
	return s.Store.LoadTurns(ctx, id, from, to)
}

func (s *Store) ListSessions(ctx context.Context, f store.ListFilter) ([]session.Meta, string, error) {
	if err := s.f.read(ctx); err != nil {
		return nil, "", err
	}
	return s.Store.ListSessions(ctx, f)
}

func (s *Store) PendingMail(ctx context.Context, sessionID string) ([]session.Mail, error) {
	if err := s.f.read(ctx); err != nil {
		return nil, err
	}
	return s.Store.PendingMail(ctx, sessionID)
}

func (s *Store) EventsAfter(ctx context.Context, f store.EventFilter, after uint64, limit int) ([]store.Event, error) {
	if err := s.f.read(ctx); err != nil {
		return nil, err
	}
	return s.Store.EventsAfter(ctx, f, after, limit)
}
