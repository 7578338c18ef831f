package storefault_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/backend/internal/store/postgres"
	"github.com/agents-os/agents/backend/internal/store/sqlite"
	"github.com/agents-os/agents/backend/internal/store/storefault"
)

// databases are the stores the switches are tried on: every dialect.
func databases() []struct {
	name string
	open func(t *testing.T) store.Store
} {
	return []struct {
		name string
		open func(t *testing.T) store.Store
	}{
		{"sqlite", func(t *testing.T) store.Store {
			db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "faults.db"))
			if err != nil {
				t.Fatal(err)
			}
			return db
		}},
		{"postgres", func(t *testing.T) store.Store {
			db, err := postgres.Open(context.Background(), pgtest.DSN(t), postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return db
		}},
	}
}

// onEach runs test on a wrapped store of each dialect.
func onEach(t *testing.T, test func(t *testing.T, s *storefault.Store, f *storefault.Faults)) {
	for _, d := range databases() {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			db := d.open(t)
			t.Cleanup(func() { _ = db.Close() })
			f := &storefault.Faults{}
			test(t, storefault.Wrap(db, f), f)
		})
	}
}

func meta(id string, status session.Status) session.Meta {
	now := time.Unix(1700000000, 0).UTC()
	return session.Meta{ID: id, Agent: "a", Owner: "o", Status: status, Created: now, Updated: now}
}

func create(id string) *store.Change {
	m := meta(id, session.StatusReady)
	return &store.Change{Create: true, Meta: &m, Events: []store.Event{{SessionID: id, Kind: "session.created", Time: m.Created, Body: []byte{}}}}
}

func TestRefuseWritesCountsDownThenLetsWritesThrough(t *testing.T) {
	onEach(t, func(t *testing.T, s *storefault.Store, f *storefault.Faults) {
		ctx := context.Background()
		f.RefuseWrites(2)
		for i := range 2 {
			if err := s.Commit(ctx, create("s1")); !errors.Is(err, storefault.ErrRefused) {
				t.Fatalf("write %d: err = %v, want refused", i, err)
			}
		}
		if _, err := s.GetMeta(ctx, "s1"); err == nil {
			t.Fatal("a refused commit reached the database")
		}
		if err := s.Commit(ctx, create("s1")); err != nil {
			t.Fatalf("third write: %v", err)
		}
		if got := f.Refused(); got != 2 {
			t.Errorf("Refused = %d, want 2", got)
		}
	})
}

func TestRefuseCommitsRefusesOnlyTheMatchingOnesUntilCleared(t *testing.T) {
	onEach(t, func(t *testing.T, s *storefault.Store, f *storefault.Faults) {
		ctx := context.Background()
		if err := s.Commit(ctx, create("s1")); err != nil {
			t.Fatal(err)
		}
		f.RefuseCommits(storefault.Always, storefault.WithStatus(session.StatusFailed))
		failed := meta("s1", session.StatusFailed)
		for range 3 {
			if err := s.Commit(ctx, &store.Change{Meta: &failed}); !errors.Is(err, storefault.ErrRefused) {
				t.Fatalf("commit of status failed: err = %v, want refused", err)
			}
		}
		running := meta("s1", session.StatusRunning)
		if err := s.Commit(ctx, &store.Change{Meta: &running}); err != nil {
			t.Fatalf("a commit the rule does not match: %v", err)
		}
		if err := s.AddMail(ctx, session.Mail{ID: "m1", SessionID: "s1", Sender: session.Sender{Kind: session.SenderUser, Name: "o"},
			Priority: session.PriorityNormal, Body: session.MailBody{Kind: session.MailUserMessage, Text: "hi"}, Created: failed.Created}); err != nil {
			t.Fatalf("a write that is not a commit: %v", err)
		}
		f.Clear()
		if err := s.Commit(ctx, &store.Change{Meta: &failed}); err != nil {
			t.Fatalf("after Clear: %v", err)
		}
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if err := f.WaitRefused(ctx, 3); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSlowWritesWaitAndGiveUpWithTheirContext(t *testing.T) {
	onEach(t, func(t *testing.T, s *storefault.Store, f *storefault.Faults) {
		f.SlowWrites(time.Hour)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if err := s.Commit(ctx, create("s1")); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the context's deadline", err)
		}
		f.SlowWrites(0)
		if err := s.Commit(context.Background(), create("s1")); err != nil {
			t.Fatal(err)
		}
	})
}
