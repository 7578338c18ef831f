package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// commitDeferred stores calls through a step, the way the runner does.
func commitDeferred(t *testing.T, s store.Store, sessionID string, calls ...session.DeferredCall) {
	t.Helper()
	meta := mustGet(t, s, sessionID)
	meta.Status = session.StatusWaiting
	noErr(t, s.CommitStep(context.Background(), store.StepCommit{Meta: meta, NewDeferred: calls}), "commit deferred")
}

func testDeferred(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	mustCreate(t, s, newMeta("s1", "alice", at(0)))
	calls := []session.DeferredCall{newDeferred("t3", "s1", 1), newDeferred("t1", "s1", 1), newDeferred("t2", "s1", 1)}
	calls[1].Reason = "needs approval"
	commitDeferred(t, s, "s1", calls...)

	got, err := s.GetDeferred(ctx, "t1")
	noErr(t, err, "get")
	equal(t, "call", got, calls[1])
	equal(t, "pending count", mustGet(t, s, "s1").PendingCalls, 3)

	result := session.ToolResult{CallID: "call-t1", Name: "approve", Text: "yes", Status: session.ResultOK, Duration: time.Second}
	done, err := s.CompleteDeferred(ctx, "t1", result, at(time.Hour))
	noErr(t, err, "complete")
	want := calls[1]
	want.Result = &result
	equal(t, "completed call", done, want)
	got, err = s.GetDeferred(ctx, "t1")
	noErr(t, err, "get completed")
	equal(t, "stored completed call", got, want)

	_, err = s.CompleteDeferred(ctx, "t1", session.ToolResult{CallID: "call-t1", Text: "no", Status: session.ResultError}, at(2*time.Hour))
	wantErr(t, err, errs.KindFailedPrecondition, errs.CodeCallCompleted)
	got, err = s.GetDeferred(ctx, "t1")
	noErr(t, err, "get after second answer")
	equal(t, "first answer kept", got, want)

	_, err = s.CompleteDeferred(ctx, "nope", result, at(time.Hour))
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownToken)
	_, err = s.GetDeferred(ctx, "nope")
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownToken)

	pending, err := s.PendingDeferred(ctx, "s1")
	noErr(t, err, "pending")
	equal(t, "pending, in stored order", tokens(pending), []string{"t3", "t2"})
	equal(t, "pending count", mustGet(t, s, "s1").PendingCalls, 2)

	// Rows the server answers itself are pending, but no client's to
	// answer: the count leaves them out.
	served := []session.DeferredCall{newDeferred("t4", "s1", 7), newDeferred("t5", "s1", 7)}
	served[0].Reason, served[1].Reason = store.ReasonAttached, store.ReasonApproved
	commitDeferred(t, s, "s1", served...)
	pending, err = s.PendingDeferred(ctx, "s1")
	noErr(t, err, "pending with rows the server answers")
	equal(t, "pending with rows the server answers", tokens(pending), []string{"t3", "t2", "t4", "t5"})
	equal(t, "pending count without them", mustGet(t, s, "s1").PendingCalls, 2)
	for _, token := range []string{"t4", "t5"} {
		_, err = s.CompleteDeferred(ctx, token, result, at(time.Hour))
		noErr(t, err, "complete %s", token)
	}

	round, err := s.DeferredRound(ctx, "s1", 1)
	noErr(t, err, "round")
	equal(t, "round", round, []session.DeferredCall{calls[0], want, calls[2]})
	round, err = s.DeferredRound(ctx, "s1", 2)
	noErr(t, err, "other round")
	equal(t, "other round", tokens(round), []string{})

	// An answer that asks the run to go on says so in its row, for the
	// round rebuilt after a restart.
	resumed := session.ToolResult{CallID: "call-t3", Text: "go on", Status: session.ResultOK}
	noErr(t, s.Commit(ctx, &store.Change{Completed: []store.Completion{{Token: "t3", Result: resumed, At: at(time.Hour), Resume: true}}}), "complete with resume")
	round, err = s.DeferredRound(ctx, "s1", 1)
	noErr(t, err, "round after resume")
	equal(t, "resume of each call", []bool{round[0].Resume, round[1].Resume, round[2].Resume}, []bool{true, false, false})
}

// testCompleteDeferredRace has several clients answer one call at once:
// exactly one answer may be taken.
func testCompleteDeferredRace(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	mustCreate(t, s, newMeta("s1", "alice", at(0)))
	commitDeferred(t, s, "s1", newDeferred("tok", "s1", 1))

	const clients = 8
	texts := make(chan string, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			text := string(rune('a' + i))
			_, err := s.CompleteDeferred(ctx, "tok", session.ToolResult{CallID: "call-tok", Text: text, Status: session.ResultOK}, at(time.Hour))
			if err == nil {
				texts <- text
				return
			}
			if errs.CodeOf(err) != errs.CodeCallCompleted {
				t.Errorf("complete: %v", err)
			}
		})
	}
	wg.Wait()
	close(texts)
	var winners []string
	for text := range texts {
		winners = append(winners, text)
	}
	if len(winners) != 1 {
		t.Fatalf("%d answers taken, want 1", len(winners))
	}
	got, err := s.GetDeferred(ctx, "tok")
	noErr(t, err, "get")
	equal(t, "stored answer", got.Result.Text, winners[0])
}
