package server_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/tools/fakellm"
)

// chatty streams a long answer in small chunks: many events per run.
func chatty() fakellm.Rules {
	return fakellm.Rules{Default: &fakellm.Reply{
		Text:       "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen",
		ChunkSize:  3,
		ChunkDelay: "2ms",
	}}
}

// collect reads event frames until the run of session id stops, returning
// their positions in order.
func collect(t *testing.T, s *sseStream, id string) []events.Position {
	t.Helper()
	var seqs []events.Position
	for {
		f, ok := s.next(t)
		if !ok {
			t.Fatal("stream ended before run.stopped")
		}
		if f.id == "" || f.event == "snapshot" {
			continue
		}
		ev := f.eventOf(t)
		if f.id != events.PositionOf(ev).String() {
			t.Fatalf("frame id %q for an event at %v", f.id, events.PositionOf(ev))
		}
		seqs = append(seqs, events.PositionOf(ev))
		if ev.GetKind() == "run.stopped" && ev.GetSessionId() == id {
			return seqs
		}
	}
}

func TestSSEReconnectDeliversExactlyTheMissedEvents(t *testing.T) {
	for _, via := range []string{"Last-Event-ID", "after"} {
		t.Run(via, func(t *testing.T) {
			e := start(t, chatty())
			reference := e.openSSE("/v1/events")
			first := e.openSSE("/v1/events")

			id := e.create("boss", "talk").GetMeta().GetId()

			// The first client reads a few events, then drops.
			var lastSeen events.Position
			for n := 0; n < 5; {
				f, ok := first.next(t)
				if !ok {
					t.Fatal("stream ended")
				}
				if f.id == "" {
					continue
				}
				lastSeen = events.PositionOf(f.eventOf(t))
				n++
			}
			first.cancel()

			all := collect(t, reference, id)
			e.wait(id)

			path, header := "/v1/events", []string{"Last-Event-ID", lastSeen.String()}
			if via == "after" {
				path, header = "/v1/events?after="+lastSeen.String(), nil
			}
			again := e.openSSE(path, header...)
			if mode := again.header.Get("Agents-Replay"); mode != "replay" {
				t.Fatalf("Agents-Replay = %q, want replay", mode)
			}
			resumed := collect(t, again, id)

			var want []events.Position
			for _, p := range all {
				if lastSeen.Before(p) {
					want = append(want, p)
				}
			}
			if len(resumed) != len(want) {
				t.Fatalf("resumed %d events, want %d:\ngot  %v\nwant %v", len(resumed), len(want), resumed, want)
			}
			for i := range want {
				if resumed[i] != want[i] {
					t.Fatalf("event %d: seq %d, want %d (got %v)", i, resumed[i], want[i], resumed)
				}
			}
		})
	}
}

func TestSSEWithAnUnknownPositionStartsWithASnapshot(t *testing.T) {
	e := start(t, chatty())
	id := e.create("boss", "talk").GetMeta().GetId()
	e.wait(id)

	s := e.openSSE("/v1/events", "Last-Event-ID", "999999")
	if mode := s.header.Get("Agents-Replay"); mode != "snapshot" {
		t.Fatalf("Agents-Replay = %q, want snapshot", mode)
	}
	f, _ := s.next(t)
	if f.event != "snapshot" {
		t.Fatalf("first frame = %+v, want a snapshot", f)
	}
	snap := &agentsv1.Snapshot{}
	if err := apijson.Unmarshal([]byte(f.data), snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.GetSessions()) != 1 || snap.GetSessions()[0].GetId() != id {
		t.Errorf("snapshot sessions = %v, want the one session", snap.GetSessions())
	}
}

func TestSSEBadPositionIsInvalid(t *testing.T) {
	e := start(t, chatty())
	status, _, body := e.do(http.MethodGet, "/v1/events?after=ten", "")
	if status != http.StatusBadRequest {
		t.Fatalf("status = %d, want 400", status)
	}
	if code, _, _ := jsonError(t, body); code != "invalid_argument" {
		t.Errorf("code = %q", code)
	}
}

func TestConnectSubscribeReplaysAfterASeq(t *testing.T) {
	e := start(t, chatty())
	id := e.create("boss", "talk").GetMeta().GetId()
	e.wait(id)

	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	after := uint64(2)
	stream, err := e.events.Subscribe(ctx, connect.NewRequest(&agentsv1.SubscribeRequest{
		Scope: agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_SESSION, SessionId: id, After: &after,
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	next := events.Position{Seq: after}
	for stream.Receive() {
		if mode := stream.ResponseHeader().Get("Agents-Replay"); mode != "replay" {
			t.Fatalf("Agents-Replay = %q, want replay", mode)
		}
		ev := stream.Msg().GetEvent()
		if ev == nil {
			continue
		}
		if !next.Before(events.PositionOf(ev)) {
			t.Fatalf("position %v after %v: not strictly increasing", events.PositionOf(ev), next)
		}
		next = events.PositionOf(ev)
		if ev.GetSessionId() != id {
			t.Fatalf("event of session %s on a session-scoped stream", ev.GetSessionId())
		}
		if ev.GetKind() == "run.stopped" {
			return
		}
	}
	t.Fatalf("stream ended without run.stopped: %v", stream.Err())
}

func TestSubscribeToAnUnknownSessionIsNotFound(t *testing.T) {
	e := start(t, chatty())
	stream, err := e.events.Subscribe(ctxFor(t), connect.NewRequest(&agentsv1.SubscribeRequest{
		Scope: agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_SESSION, SessionId: "nope",
	}))
	if err == nil {
		for stream.Receive() {
		}
		err = stream.Err()
	}
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeNotFound {
		t.Fatalf("err = %v, want not_found", err)
	}
}

// A subscription that names a session but no scope follows that session
// alone, on Connect and on SSE: a session_id implies the session scope.
// With another scope, it is refused rather than ignored.
func TestASessionIDWithoutAScopeFollowsThatSession(t *testing.T) {
	e := start(t, chatty())
	a := e.create("boss", "talk").GetMeta().GetId()
	e.wait(a)

	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	stream, err := e.events.Subscribe(ctx, connect.NewRequest(&agentsv1.SubscribeRequest{SessionId: a}))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	feed := e.openSSE("/v1/events?session_id=" + a)

	b := e.create("boss", "talk").GetMeta().GetId()
	e.wait(b)
	if status, _, body := e.do(http.MethodPost, "/v1/sessions/"+a+"/messages", `{"text": "more"}`); status != http.StatusOK {
		t.Fatalf("post to a: %d %s", status, body)
	}

	for stream.Receive() {
		ev := stream.Msg().GetEvent()
		if ev == nil {
			continue
		}
		if ev.GetSessionId() != a {
			t.Fatalf("Connect: an event of session %s on a stream of session %s", ev.GetSessionId(), a)
		}
		if ev.GetKind() == "run.stopped" {
			break
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	for {
		f, ok := feed.next(t)
		if !ok {
			t.Fatal("SSE: the stream ended before run.stopped")
		}
		if f.id == "" {
			continue
		}
		ev := f.eventOf(t)
		if ev.GetSessionId() != a {
			t.Fatalf("SSE: an event of session %s on a stream of session %s", ev.GetSessionId(), a)
		}
		if ev.GetKind() == "run.stopped" {
			break
		}
	}

	for _, scope := range []agentsv1.SubscribeScope{agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_OWNER, agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_ALL} {
		stream, err := e.events.Subscribe(ctxFor(t), connect.NewRequest(&agentsv1.SubscribeRequest{Scope: scope, SessionId: a}))
		if err == nil {
			for stream.Receive() {
			}
			err = stream.Err()
		}
		if connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("Connect, %v with a session_id: %v, want invalid_argument", scope, err)
		}
	}
	for _, scope := range []string{"owner", "all"} {
		status, _, body := e.do(http.MethodGet, "/v1/events?scope="+scope+"&session_id="+a, "")
		if code, _, _ := jsonError(t, body); status != http.StatusBadRequest || code != "invalid_argument" {
			t.Errorf("SSE, scope=%s with a session_id: %d %s, want 400 invalid_argument", scope, status, body)
		}
	}
}

// The deltas of every session share one ring. A client that saw the first
// delta of session a's answer, then lost its stream while session b
// streamed enough to push the rest of a's deltas out, gets a snapshot when
// it comes back: a replay would skip the middle of the answer.
func TestAResumeAfterDeltasPushedOutByAnotherSessionGetsASnapshot(t *testing.T) {
	e := start(t, fakellm.Rules{
		Rules: []fakellm.Rule{{Match: fakellm.Match{UserContains: "at length"}, Reply: fakellm.Reply{
			Text: strings.Repeat("ab", events.DefaultDeltaRingSize), ChunkSize: 2,
		}}},
		Default: &fakellm.Reply{Text: "one two three four five six", ChunkSize: 3},
	})
	feed := e.openSSE("/v1/events")
	a := e.create("boss", "talk").GetMeta().GetId()
	var seen events.Position
	for seen == (events.Position{}) {
		f, ok := feed.next(t)
		if !ok {
			t.Fatal("stream ended before a's first delta")
		}
		if f.event == "text.delta" && f.eventOf(t).GetSessionId() == a {
			seen = events.PositionOf(f.eventOf(t))
		}
	}
	feed.cancel()
	e.wait(a)
	e.wait(e.create("boss", "talk at length").GetMeta().GetId())

	s := e.openSSE("/v1/sessions/"+a+"/events", "Last-Event-ID", seen.String())
	if mode := s.header.Get("Agents-Replay"); mode != "snapshot" {
		var got []string
		for {
			f, _ := s.next(t)
			if f.event == "text.delta" {
				got = append(got, f.eventOf(t).GetTextDelta().GetText())
			}
			if f.event == "run.stopped" {
				break
			}
		}
		t.Fatalf("Agents-Replay = %q after %v, replaying deltas %q; want snapshot", mode, seen, got)
	}
	if f, _ := s.next(t); f.event != "snapshot" {
		t.Fatalf("first frame = %+v, want the snapshot", f)
	}
}
