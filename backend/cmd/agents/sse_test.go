//go:build unix

package main

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/events/sse"
)

// sseFrame is one server-sent-events frame as it came over the wire.
type sseFrame struct {
	id, event, data string
}

// pos is the frame's position, parsed from its id.
func (f sseFrame) pos(t *testing.T) events.Position {
	t.Helper()
	p, err := events.ParsePosition(f.id)
	if err != nil {
		t.Fatalf("frame %+v: %v", f, err)
	}
	return p
}

// logged reports whether the frame is an event of the durable log: any
// event but a text or thinking delta, whose id is a bare seq.
func (f sseFrame) logged() bool {
	return f.event != "" && f.event != sse.SnapshotEvent && f.event != sse.LaggedEvent &&
		!strings.HasSuffix(f.event, ".delta") && !strings.Contains(f.id, ".")
}

// decode returns the frame's event; it fails the test for a frame that is
// not an event.
func (f sseFrame) decode(t *testing.T) *agentsv1.Event {
	t.Helper()
	ev := &agentsv1.Event{}
	if err := apijson.Unmarshal([]byte(f.data), ev); err != nil || ev.GetKind() != f.event {
		t.Fatalf("frame %+v is not an event: %v", f, err)
	}
	return ev
}

// sseStream reads one SSE response, frame by frame.
type sseStream struct {
	header http.Header
	frames chan sseFrame
	cancel context.CancelFunc
}

// openSSE GETs an SSE route (url is the whole URL), sending lastEventID
// as Last-Event-ID when it is set.
func openSSE(t *testing.T, url, lastEventID string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET %s: %v", url, err)
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		cancel()
		t.Fatalf("GET %s: status %d", url, res.StatusCode)
	}
	s := &sseStream{header: res.Header, frames: make(chan sseFrame, 4096), cancel: cancel}
	t.Cleanup(s.close)
	go func() {
		defer close(s.frames)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var f sseFrame
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if f != (sseFrame{}) {
					select {
					case s.frames <- f:
					case <-ctx.Done():
						return
					}
				}
				f = sseFrame{}
			case strings.HasPrefix(line, ":"):
				// a comment: the heartbeat
			case strings.HasPrefix(line, "id: "):
				f.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				f.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				f.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return s
}

func (s *sseStream) close() { s.cancel() }

// next returns the next frame.
func (s *sseStream) next(t *testing.T, what string) sseFrame {
	t.Helper()
	select {
	case f, ok := <-s.frames:
		if !ok {
			t.Fatalf("event stream ended before %s", what)
		}
		return f
	case <-time.After(60 * time.Second):
		t.Fatalf("no frame within 60s while waiting for %s", what)
	}
	panic("unreachable")
}

// until reads frames up to and including the first event that match
// accepts, and returns them all.
func (s *sseStream) until(t *testing.T, what string, match func(*agentsv1.Event) bool) []sseFrame {
	t.Helper()
	var frames []sseFrame
	for {
		f := s.next(t, what)
		frames = append(frames, f)
		if f.event != "" && f.event != sse.SnapshotEvent && f.event != sse.LaggedEvent && match(f.decode(t)) {
			return frames
		}
	}
}

// runStopped matches the end of a run of session id.
func runStopped(id string) func(*agentsv1.Event) bool {
	return func(ev *agentsv1.Event) bool {
		return ev.GetSessionId() == id && ev.GetKind() == "run.stopped"
	}
}
