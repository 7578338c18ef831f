package server_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
)

// kindsFeed reads an SSE stream's events until until's kind comes (or n
// events with until empty), and returns them as "position kind".
func kindsFeed(t *testing.T, s *sseStream, until string, n int) []string {
	t.Helper()
	var got []string
	for {
		f, ok := s.next(t)
		if !ok {
			t.Fatalf("the stream ended after %v", got)
		}
		if f.id == "" || f.event == "snapshot" {
			continue
		}
		got = append(got, f.id+" "+f.event)
		if f.event == until || (until == "" && len(got) == n) {
			return got
		}
	}
}

// only keeps the items of feed of the given kinds.
func only(feed []string, kinds ...string) []string {
	return slices.DeleteFunc(slices.Clone(feed), func(item string) bool {
		_, kind, _ := strings.Cut(item, " ")
		return !slices.Contains(kinds, kind)
	})
}

// Subscribers with kinds, on both SSE routes and on Connect, get exactly
// the events of those kinds an unfiltered subscriber gets, in its order.
func TestSubscribersGetOnlyTheKindsTheyAskFor(t *testing.T) {
	t.Parallel()
	e := start(t, chatty())
	id := e.create("boss", "talk").GetMeta().GetId()
	e.wait(id)

	all := e.openSSE("/v1/events")
	stopped := e.openSSE("/v1/events?kinds=" + events.KindRunStopped + "," + events.KindSessionUpdated)
	text := e.openSSE("/v1/sessions/" + id + "/events?kinds=" + events.KindTextDelta)
	conn := e.subscribe(&agentsv1.SubscribeRequest{Kinds: []string{events.KindRunStopped, events.KindRunStarted}})
	if status, _, body := e.do(http.MethodPost, "/v1/sessions/"+id+"/messages", `{"text": "more"}`); status != http.StatusOK {
		t.Fatalf("post: %d %s", status, body)
	}

	want := kindsFeed(t, all, events.KindRunStopped, 0)
	if got, want := kindsFeed(t, stopped, events.KindRunStopped, 0), only(want, events.KindRunStopped, events.KindSessionUpdated); !slices.Equal(got, want) {
		t.Errorf("run.stopped,session.updated: got %q, want %q", got, want)
	}
	deltas := only(want, events.KindTextDelta)
	if len(deltas) == 0 {
		t.Fatalf("the answer streamed no text.delta: %q", want)
	}
	if got := kindsFeed(t, text, "", len(deltas)); !slices.Equal(got, deltas) {
		t.Errorf("text.delta of the session: got %q, want %q", got, deltas)
	}
	var got []string
	for len(got) == 0 || !strings.HasSuffix(got[len(got)-1], events.KindRunStopped) {
		ev := conn.next(t)
		got = append(got, events.PositionOf(ev).String()+" "+ev.GetKind())
	}
	if want := only(want, events.KindRunStopped, events.KindRunStarted); !slices.Equal(got, want) {
		t.Errorf("Connect, run.stopped and run.started: got %q, want %q", got, want)
	}
}

// A filtered subscriber that reconnects with the id of the last event it
// had gets every event of its kinds since, replayed, and none other.
func TestAFilteredReconnectReplaysItsKindsWithNoGap(t *testing.T) {
	t.Parallel()
	e := start(t, chatty())
	id := e.create("boss", "talk").GetMeta().GetId()
	e.wait(id)
	path := "/v1/events?kinds=" + events.KindRunStopped
	feed := e.openSSE(path)
	all := e.openSSE("/v1/events")
	prompt := func() {
		t.Helper()
		if status, _, body := e.do(http.MethodPost, "/v1/sessions/"+id+"/messages", `{"text": "more"}`); status != http.StatusOK {
			t.Fatalf("post: %d %s", status, body)
		}
		e.wait(id)
	}
	prompt()
	last := kindsFeed(t, feed, events.KindRunStopped, 0)
	feed.cancel()
	var want []string
	kindsFeed(t, all, events.KindRunStopped, 0)
	for range 2 {
		prompt()
		want = append(want, only(kindsFeed(t, all, events.KindRunStopped, 0), events.KindRunStopped)...)
	}
	lastID, _, _ := strings.Cut(last[len(last)-1], " ")

	again := e.openSSE(path, "Last-Event-ID", lastID)
	if mode := again.header.Get("Agents-Replay"); mode != "replay" {
		t.Fatalf("Agents-Replay: %q, want replay", mode)
	}
	if got := kindsFeed(t, again, "", len(want)); !slices.Equal(got, want) {
		t.Errorf("replayed %q, want %q", got, want)
	}

	p, err := events.ParsePosition(lastID)
	if err != nil {
		t.Fatal(err)
	}
	conn := e.subscribe(&agentsv1.SubscribeRequest{After: &p.Seq, AfterDelta: p.Delta, Kinds: []string{events.KindRunStopped}})
	if conn.mode != "replay" {
		t.Fatalf("Connect: Agents-Replay %q, want replay", conn.mode)
	}
	for i := range want {
		ev := conn.next(t)
		if got := events.PositionOf(ev).String() + " " + ev.GetKind(); got != want[i] {
			t.Errorf("Connect replay, event %d: %q, want %q", i, got, want[i])
		}
	}
}

// A kind the server does not know is refused, naming it and listing the
// kinds, on both SSE routes and on Connect.
func TestAnUnknownKindIsRefused(t *testing.T) {
	t.Parallel()
	e := start(t, chatty())
	id := e.create("boss", "talk").GetMeta().GetId()
	e.wait(id)
	for _, path := range []string{"/v1/events?kinds=run.stopped,run.stoped", "/v1/sessions/" + id + "/events?kinds=run.stoped"} {
		status, _, body := e.do(http.MethodGet, path, "")
		code, _, msg := jsonError(t, body)
		if status != http.StatusBadRequest || code != "invalid_argument" || !strings.Contains(msg, `"run.stoped"`) || !strings.Contains(msg, events.KindSessionFailed) {
			t.Errorf("GET %s: %d %s, want 400 invalid_argument naming run.stoped and listing the kinds", path, status, body)
		}
	}
	long := strings.Repeat("x", 1000)
	if status, _, body := e.do(http.MethodGet, "/v1/events?kinds="+long, ""); status != http.StatusBadRequest || strings.Contains(string(body), long) {
		t.Errorf("a kind of 1,000 characters: %d %.200s, want 400 not quoting it", status, body)
	}
	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	stream, err := e.events.Subscribe(ctx, connect.NewRequest(&agentsv1.SubscribeRequest{Kinds: []string{"run.stoped"}}))
	if err == nil {
		for stream.Receive() {
		}
		err = stream.Err()
	}
	if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), `"run.stoped"`) {
		t.Errorf("Connect: %v, want invalid_argument naming run.stoped", err)
	}
}
