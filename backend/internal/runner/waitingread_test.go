package runner_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/tools/fakellm"
)

// Waiting reads of a running session, some giving up before the run
// ends and some not, each get the session: the patient ones as the run
// left it, the others as it was when they gave up.
func TestWaitingReadsOfARunGetTheSession(t *testing.T) {
	t.Parallel()
	k := newKernel(t, onSQLite, fakellm.Rules{Default: &fakellm.Reply{InitialDelay: "300ms", Text: "done"}})
	id := k.create(t, "hello")
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 8 {
		timeout := time.Minute
		if i%2 == 1 {
			timeout = time.Millisecond
		}
		wg.Go(func() {
			v, err := k.run.GetSession(ctx, "me", id, true, timeout)
			if err != nil {
				t.Errorf("read %d: %v", i, err)
				return
			}
			if timeout == time.Minute && (v.Meta.Status != session.StatusReady || lastText(v) != "done") {
				t.Errorf("read %d: %s with %d turns, want the run's end", i, v.Meta.Status, len(v.Turns))
			}
			if len(v.Turns) == 0 {
				t.Errorf("read %d: no turns", i)
			}
		})
	}
	wg.Wait()
}
