//go:build unix

package main

import (
	"strconv"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events/sse"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// TestReconnectAcrossARestartReplaysTheLogAfterItsPosition follows a
// client of GET /v1/events that read up to position N, lost the server to
// a SIGKILL, and reconnects to the restarted server with Last-Event-ID N.
// It must be told `replay` and get exactly the logged events after N (as
// an independent reading of the whole log has them: those the first
// server sent after N and those of the second), then live ones with no
// gap and no duplicate. A position beyond the log gets `snapshot`.
func TestReconnectAcrossARestartReplaysTheLogAfterItsPosition(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as a child process")
	}
	t.Parallel()
	eachStore(t, func(t *testing.T, dir, db string) {
		bin := buildAgents(t)
		model := fakellmtest.Start(t, fakellm.Rules{
			Rules: []fakellm.Rule{{Name: "read", Match: fakellm.Match{SystemContains: slowPrompt}, Reply: fakellm.Reply{
				Text: "read: {{last_user}}", ChunkSize: 4,
			}}},
			Default: &fakellm.Reply{Error: &fakellm.HTTPError{Status: 500, Message: "fakellm: unexpected request"}},
		})

		first := startServe(t, bin, dir, db, model.URL())
		live := openSSE(t, first.url+"/v1/events", "")
		a := first.create(t, "slow", "alpha")
		before := logged(live.until(t, "alpha's run.stopped", runStopped(a)))
		// The client got as far as the start of alpha's run; what followed is
		// lost with the server.
		n := runStarted(t, before)
		last := before[n].id
		first.kill(t)
		live.close()

		second := startServe(t, bin, dir, db, model.URL())
		b := second.create(t, "slow", "beta")
		second.waitIdle(t, b)

		whole := readLog(t, second.url, "0", runStopped(b))
		// Positions kept their meaning across the restart: the log holds what
		// the first server sent, at the same positions.
		byID := map[string]sseFrame{}
		for _, f := range whole {
			byID[f.id] = f
		}
		for _, f := range before {
			if byID[f.id] != f {
				t.Errorf("the first server sent %+v; the log after the restart has %+v at that position", f, byID[f.id])
			}
		}
		var want []sseFrame
		sessions := map[string]int{}
		for _, f := range whole {
			if before[n].pos(t).Before(f.pos(t)) {
				want = append(want, f)
				sessions[f.decode(t).GetSessionId()]++
			}
		}
		if sessions[a] == 0 || sessions[b] == 0 {
			t.Fatalf("the log after %s = %v, want events of alpha (first server) and of beta (second)", last, kinds(want))
		}

		again := openSSE(t, second.url+"/v1/events", last)
		if got := again.header.Get("Agents-Replay"); got != "replay" {
			t.Fatalf("reconnect after %s: Agents-Replay = %q, want replay", last, got)
		}
		frames := again.until(t, "beta's run.stopped", runStopped(b))
		checkIncreasing(t, last, frames)
		checkSame(t, "replay after "+last, logged(frames), want)

		// Then live events: another run of beta, exactly as the log has it.
		if _, err := second.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{
			SessionId: b, Message: &agentsv1.Message{Text: "gamma"},
		})); err != nil {
			t.Fatalf("post gamma: %v", err)
		}
		end := frames[len(frames)-1].id
		more := again.until(t, "beta's second run.stopped", runStopped(b))
		checkIncreasing(t, end, more)
		checkSame(t, "live after "+end, logged(more), readLog(t, second.url, end, runStopped(b)))
		if !hasKind(more, "run.started") || !hasKind(more, "text.delta") {
			t.Errorf("live events after the replay = %v, want beta's second run with its deltas", kinds(more))
		}

		// A position beyond anything stored cannot be placed: snapshot.
		top := more[len(more)-1].pos(t).Seq
		far := openSSE(t, second.url+"/v1/events", strconv.FormatUint(top+1000, 10))
		if got := far.header.Get("Agents-Replay"); got != "snapshot" {
			t.Errorf("Last-Event-ID beyond the log: Agents-Replay = %q, want snapshot", got)
		}
		if f := far.next(t, "the snapshot"); f.event != sse.SnapshotEvent {
			t.Errorf("first frame after a position beyond the log = %+v, want a snapshot", f)
		}
	})
}

// readLog reads GET /v1/events?after=after up to the event stop matches
// and returns its logged events; it fails unless the server replays.
func readLog(t *testing.T, url, after string, stop func(*agentsv1.Event) bool) []sseFrame {
	t.Helper()
	s := openSSE(t, url+"/v1/events?after="+after, "")
	defer s.close()
	if got := s.header.Get("Agents-Replay"); got != "replay" {
		t.Fatalf("GET /v1/events?after=%s: Agents-Replay = %q, want replay", after, got)
	}
	return logged(s.until(t, "the end of the log reading", stop))
}

// logged keeps the frames of logged events.
func logged(frames []sseFrame) []sseFrame {
	var out []sseFrame
	for _, f := range frames {
		if f.logged() {
			out = append(out, f)
		}
	}
	return out
}

// checkIncreasing fails unless every frame comes after the position from
// and after the frame before it: no duplicate, nothing out of order.
func checkIncreasing(t *testing.T, from string, frames []sseFrame) {
	t.Helper()
	prev := sseFrame{id: from}.pos(t)
	for _, f := range frames {
		p := f.pos(t)
		if !prev.Before(p) {
			t.Fatalf("frame %s (%s) does not come after %s", f.id, f.event, prev)
		}
		prev = p
	}
}

// checkSame fails unless got and want are the same frames, byte for byte.
func checkSame(t *testing.T, what string, got, want []sseFrame) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d logged events %v, want %d %v", what, len(got), ids(got), len(want), ids(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: event %d = %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

func hasKind(frames []sseFrame, kind string) bool {
	for _, f := range frames {
		if f.event == kind {
			return true
		}
	}
	return false
}

// runStarted returns the index of alpha's run.started among its logged
// events: a subscriber that got as far as there has the rest of the run
// still to come.
func runStarted(t *testing.T, before []sseFrame) int {
	t.Helper()
	for i, f := range before {
		if f.event == "run.started" {
			if i == len(before)-1 {
				break
			}
			return i
		}
	}
	t.Fatalf("logged events of alpha's run = %v, want a run.started followed by more", kinds(before))
	return 0
}

func kinds(frames []sseFrame) []string {
	out := make([]string, len(frames))
	for i, f := range frames {
		out[i] = f.id + " " + f.event
	}
	return out
}

func ids(frames []sseFrame) []string {
	out := make([]string, len(frames))
	for i, f := range frames {
		out[i] = f.id
	}
	return out
}
