package server_test

import (
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/eventually"

	"github.com/agents-os/agents/backend/internal/runner"
)

// An idle session stays loaded until its idle eviction but keeps no
// goroutine: sessions touched once cost their state, not a goroutine each,
// and the runtime does not grow a goroutine descriptor per session touched.
// A parked session answers and runs again at once. Not parallel: other
// tests' sessions would count.
func TestIdleSessionsStayLoadedWithoutAGoroutine(t *testing.T) {
	e := start(t, answerRules(), withMetrics(), withRunner(func(o *runner.Options) { o.IdleEvict = time.Minute }))
	const n = 40
	ids := make([]string, n)
	for i := range ids {
		ids[i] = e.create("helper", "hello").GetMeta().GetId()
		e.wait(ids[i])
	}
	eventually.That(t, "the idle sessions' goroutines end", func() bool { return actorGoroutines() == 0 })
	if live := e.runner.LiveSessions(); live != n {
		t.Fatalf("%d sessions loaded, want all %d: parked is not evicted", live, n)
	}
	if _, _, body := e.do(http.MethodGet, "/metrics", ""); !strings.Contains(string(body), "\nagents_sessions_loaded 40\n") || !strings.Contains(string(body), "\nagents_runs_active 0\n") {
		t.Errorf("/metrics does not count 40 sessions loaded and no run active:\n%s", body)
	}

	// A parked session takes a message and answers it.
	e.post(ids[0], "again")
	s := e.wait(ids[0])
	if got := s.GetTurns()[len(s.GetTurns())-1].GetLlm().GetText(); got != "answer: again" {
		t.Fatalf("the parked session answered %q", got)
	}
	if live := e.runner.LiveSessions(); live != n {
		t.Fatalf("%d sessions loaded after the post, want %d", live, n)
	}
}

// actorGoroutines counts the goroutines running a session's actor.
func actorGoroutines() int {
	buf := make([]byte, 1<<22)
	n := 0
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "runner.(*actor).") {
			n++
		}
	}
	return n
}

// A parked session is still evicted once idle for IdleEvict.
func TestParkedSessionsAreEvictedOnTime(t *testing.T) {
	t.Parallel()
	e := start(t, answerRules(), withRunner(func(o *runner.Options) { o.IdleEvict = 400 * time.Millisecond }))
	id := e.create("helper", "hello").GetMeta().GetId()
	e.wait(id)
	eventually.That(t, "the parked session is evicted", func() bool { return e.runner.LiveSessions() == 0 })
	e.post(id, "again")
	if s := e.wait(id); len(s.GetTurns()) != 4 {
		t.Fatalf("%d turns after the eviction, want 4", len(s.GetTurns()))
	}
}
