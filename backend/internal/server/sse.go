package server

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/events/sse"
)

// sseRoute serves a subscription as Server-Sent Events: GET /v1/events
// (scope=owner, owner:NAME or all, or session_id) or, with perSession,
// GET /v1/sessions/{id}/events. A reconnecting client sends Last-Event-ID
// (or ?after=).
func (s *Server) sseRoute(perSession bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		after, err := sse.ParseAfter(r.Header.Get("Last-Event-ID"), q.Get("after"))
		if err != nil {
			s.writeError(w, r, errs.Invalid("invalid_argument", "%v", err))
			return
		}
		scope := agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_UNSPECIFIED
		sessionID, of := q.Get("session_id"), ""
		name, ownerScope := strings.CutPrefix(q.Get("scope"), "owner:")
		switch {
		case perSession:
			scope = agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_SESSION
			sessionID = r.PathValue("id")
		case q.Get("scope") == "owner":
			scope = agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_OWNER
		case q.Get("scope") == "all":
			scope = agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_ALL
		case ownerScope && name != "":
			scope = agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_OWNER
			of = name
		case q.Get("scope") != "":
			s.writeError(w, r, errs.Invalid("invalid_argument", "scope %q: want owner, owner:NAME or all", q.Get("scope")))
			return
		}
		sub, err := s.subscribe(r.Context(), scope, sessionID, of, after)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		defer sub.Close()

		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		h.Set(replayHeader, sub.Mode().String())
		if r.ProtoMajor == 1 && r.ProtoAtLeast(1, 1) {
			// No chunked encoding: the stream ends with the connection
			// (net/http closes it after the reply, as the SSE
			// specification suggests), and a batch reaches the socket in
			// one write instead of in chunks of the response's and the
			// connection's small buffers.
			h.Set("Transfer-Encoding", "identity")
		}
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		// Headers go out at once: a client must know the stream is open
		// before the first event.
		if err := rc.Flush(); err != nil {
			return
		}
		// The events of a round are gathered, then written in one piece
		// that every subscriber of the round with the same events shares
		// (s.batches).
		var evs []*agentsv1.Event
		writeEvents := func() error {
			if len(evs) == 0 {
				return nil
			}
			b, err := s.batches.bytes(s.hub, evs)
			clear(evs)
			evs = evs[:0]
			if err != nil {
				return err
			}
			_, err = w.Write(b)
			return err
		}
		_ = s.pump(r.Context(), sub, sink{
			send: func(item *agentsv1.SubscribeResponse) error {
				if err := writeEvents(); err != nil {
					return err
				}
				return s.writeSSE(w, item)
			},
			sendEvent: func(ev *agentsv1.Event) error {
				evs = append(evs, ev)
				return nil
			},
			flush: func() error {
				if err := writeEvents(); err != nil {
					return err
				}
				return rc.Flush()
			},
		})
	}
}

// sseBatches keeps the SSE encodings of the newest batches written, so
// the subscribers that write the same events in a round (those of one
// scope, see rounds) share one: the events are shared (the hub gives
// every subscriber the same pointers), so a batch is known by them.
// What it keeps is bounded by count and by bytes.
type sseBatches struct {
	mu     sync.Mutex
	recent [16]*sseBatch
	next   int
	size   int
}

type sseBatch struct {
	evs   []*agentsv1.Event
	bytes []byte
}

// maxSharedBytes bounds the bytes of the batches kept.
const maxSharedBytes = 1 << 20

// find returns the bytes kept for evs, nil when none are.
func (c *sseBatches) find(evs []*agentsv1.Event) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.recent {
		if b != nil && len(b.evs) == len(evs) && b.evs[0] == evs[0] && slices.Equal(b.evs, evs) {
			return b.bytes
		}
	}
	return nil
}

// bytes returns the frames of evs, one after the other. The bytes are
// shared: nobody may modify them.
func (c *sseBatches) bytes(hub *events.Hub, evs []*agentsv1.Event) ([]byte, error) {
	if b := c.find(evs); b != nil {
		return b, nil
	}
	frames := make([][]byte, len(evs))
	size := 0
	for i, ev := range evs {
		f, err := hub.Frame(ev, events.EncodingSSE, sse.EventFrame)
		if err != nil {
			return nil, err
		}
		frames[i] = f
		size += len(f)
	}
	if len(frames) == 1 {
		return frames[0], nil
	}
	out := make([]byte, 0, size)
	for _, f := range frames {
		out = append(out, f...)
	}
	if size <= maxSharedBytes {
		b := &sseBatch{evs: slices.Clone(evs), bytes: out}
		c.mu.Lock()
		// The oldest go first, until the new one fits.
		for i := c.next; c.size+size > maxSharedBytes; i = (i + 1) % len(c.recent) {
			if old := c.recent[i]; old != nil {
				c.size -= len(old.bytes)
				c.recent[i] = nil
			}
		}
		if old := c.recent[c.next]; old != nil {
			c.size -= len(old.bytes)
		}
		c.recent[c.next] = b
		c.size += size
		c.next = (c.next + 1) % len(c.recent)
		c.mu.Unlock()
	}
	return out, nil
}

// writeSSE writes one item; an event's frame is encoded once and shared
// by every subscriber (Hub.Frame).
func (s *Server) writeSSE(w io.Writer, item *agentsv1.SubscribeResponse) error {
	switch it := item.GetItem().(type) {
	case *agentsv1.SubscribeResponse_Event:
		b, err := s.hub.Frame(it.Event, events.EncodingSSE, sse.EventFrame)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case *agentsv1.SubscribeResponse_Snapshot:
		return sse.WriteSnapshot(w, it.Snapshot)
	case *agentsv1.SubscribeResponse_Lagged:
		return sse.WriteLagged(w, it.Lagged)
	default:
		return sse.WriteComment(w, "ping")
	}
}
