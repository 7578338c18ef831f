package runner_test

import (
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/session"
)

// Issue 21: a server killed mid-run and started again with its id finds
// its own leases still live. The first request for such a session loads
// it, and the run it was doing is taken up before the request is
// answered: a long poll waits for the run, not for a session that says
// running with no run.
func TestAServerRestartedWithItsIdTakesUpItsRunsBeforeItAnswers(t *testing.T) {
	t.Parallel()
	// Leases outlive the test: only the restarted server can take the
	// session, and only as their holder.
	f := newFleet(t, answer, time.Minute)
	first := f.start(t, "a")
	hold := first.model.HoldAfter(1)
	id := first.create(t, "bench", "hello")
	<-hold.Held()
	first.crash()
	hold.Release()

	again := f.start(t, "a")
	v := again.wait(t, id)
	if v.Meta.Status != session.StatusReady || len(v.Turns) != 2 || v.Turns[1].LLM.Text != "done" {
		t.Fatalf("after the restart: %s (%s) with %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
	}
	if n := userTurns(v.Turns, "hello"); n != 1 {
		t.Errorf("the user turn is stored %d times", n)
	}
}
