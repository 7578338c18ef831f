package sqlite

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// TestOneConnection runs commits and reads at once on an in-memory store,
// where reads and writes share the database's only connection: the case
// in which preparing a statement on the pool from inside a transaction
// would wait forever for the connection the transaction holds. Commits
// take every path: one and several turns, mail and deferred calls, so both
// the prepared one-row statements and the multi-row ones run in a
// transaction.
func TestOneConnection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Open(ctx, Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	const sessions, steps = 4, 10
	created := time.Unix(1, 0).UTC()
	var wg sync.WaitGroup
	errc := make(chan error, 2*sessions)
	for i := range sessions {
		id := fmt.Sprintf("s%d", i)
		meta := session.Meta{ID: id, Agent: "a", Owner: "o", Status: session.StatusRunning, Created: created, Updated: created}
		if err := s.CreateSession(ctx, meta, nil); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { errc <- commitSteps(ctx, s, meta, steps) })
		wg.Go(func() { errc <- readSteps(ctx, s, id, steps) })
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range sessions {
		id := fmt.Sprintf("s%d", i)
		meta, turns, err := s.LoadSession(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		// Step j appends 1 + j%2 turns.
		want := steps/2*1 + steps/2*2
		if meta.TurnCount != want || len(turns) != want || meta.PendingMail != 0 || meta.PendingCalls != steps/2*3 {
			t.Errorf("%s: %d turns (%d loaded), %d pending mail, %d pending calls; want %d turns, no mail, %d calls",
				id, meta.TurnCount, len(turns), meta.PendingMail, meta.PendingCalls, want, steps/2*3)
		}
	}
}

// commitSteps commits steps steps to the session of meta. Even steps
// append one turn and fold one mail; odd ones append two, fold two mails
// and store three deferred calls.
func commitSteps(ctx context.Context, s *Store, meta session.Meta, steps int) error {
	for j := range steps {
		n := 1 + j%2
		var turns []session.Turn
		var mail []string
		var calls []session.DeferredCall
		for k := range n {
			turns = append(turns, session.Turn{Index: meta.TurnCount + k, Created: meta.Updated,
				User: &session.UserTurn{Text: fmt.Sprintf("step %d turn %d", j, k)}})
			m := session.Mail{ID: fmt.Sprintf("%s-m%d-%d", meta.ID, j, k), SessionID: meta.ID,
				Sender: session.Sender{Kind: session.SenderUser, Name: "u"}, Priority: session.PriorityNormal,
				Body: session.MailBody{Kind: session.MailUserMessage, Text: "hi"}, Created: meta.Updated}
			if err := s.AddMail(ctx, m); err != nil {
				return err
			}
			mail = append(mail, m.ID)
		}
		if n > 1 {
			for k := range 3 {
				calls = append(calls, session.DeferredCall{Token: fmt.Sprintf("%s-t%d-%d", meta.ID, j, k), SessionID: meta.ID,
					Call: session.ToolCall{ID: fmt.Sprintf("c%d", k), Name: "ask"}, Round: meta.TurnCount, Created: meta.Updated})
			}
		}
		meta.TurnCount += n
		meta.Updated = meta.Updated.Add(time.Second)
		if err := s.CommitStep(ctx, store.StepCommit{Meta: meta, NewTurns: turns, DeliveredMail: mail, NewDeferred: calls}); err != nil {
			return fmt.Errorf("commit step %d of %s: %w", j, meta.ID, err)
		}
	}
	return nil
}

// readSteps reads a session through every prepared read the runner uses.
func readSteps(ctx context.Context, s *Store, id string, steps int) error {
	for range steps {
		if _, err := s.GetMeta(ctx, id); err != nil {
			return err
		}
		if _, _, err := s.LoadSession(ctx, id); err != nil {
			return err
		}
		if _, err := s.Children(ctx, id); err != nil {
			return err
		}
		if _, err := s.PendingMail(ctx, id); err != nil {
			return err
		}
		if _, err := s.PendingDeferred(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// TestPrepareNeedsSchema checks that SQL that does not match the schema
// fails CheckStatements, saying which statement could not be prepared.
func TestPrepareNeedsSchema(t *testing.T) {
	ctx := context.Background()
	db, err := sqlx.Open("sqlite", Memory)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	s := store.NewSQL(ctx, db, db, dialect())
	defer s.Close()
	if err := s.CheckStatements(ctx); err == nil {
		t.Fatal("the statements were prepared on a database without its schema")
	} else if !strings.Contains(err.Error(), "prepare INSERT INTO sessions") {
		t.Errorf("error %q does not say what failed", err)
	}
}

// TestClosed checks that a closed store answers with errors, not panics or
// hangs, now that its statements are closed with it.
func TestClosed(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Memory)
	if err != nil {
		t.Fatal(err)
	}
	created := time.Unix(1, 0).UTC()
	meta := session.Meta{ID: "s1", Agent: "a", Owner: "o", Status: session.StatusReady, Created: created, Updated: created}
	if err := s.CreateSession(ctx, meta, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if _, err := s.GetMeta(ctx, "s1"); err == nil {
		t.Error("GetMeta on a closed store succeeded")
	}
	if err := s.UpdateMeta(ctx, meta); err == nil {
		t.Error("UpdateMeta on a closed store succeeded")
	}
	meta.TurnCount = 1
	turns := []session.Turn{{Index: 0, Created: created, User: &session.UserTurn{Text: "hi"}}}
	if err := s.CommitStep(ctx, store.StepCommit{Meta: meta, NewTurns: turns}); err == nil {
		t.Error("CommitStep on a closed store succeeded")
	}
}
