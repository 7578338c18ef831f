package server

import (
	"io"
	"net/http"
	"strings"
	"sync"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/events/sse"
)

// sseRoute serves a subscription as Server-Sent Events: GET /v1/events
// (scope=owner, owner:NAME or all, or session_id) or, with perSession,
// GET /v1/sessions/{id}/events, narrowed to some kinds by kinds=. A
// reconnecting client sends Last-Event-ID (or ?after=).
func (s *Server) sseRoute(perSession bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		after, err := sse.ParseAfter(r.Header.Get("Last-Event-ID"), q.Get("after"))
		if err != nil {
			s.writeError(w, r, errs.Invalid(errs.CodeInvalidArgument, "%v", err))
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
			s.writeError(w, r, errs.Invalid(errs.CodeInvalidArgument, "scope %q: want owner, owner:NAME or all", q.Get("scope")))
			return
		}
		sub, err := s.subscribe(r.Context(), scope, sessionID, of, sse.ParseKinds(q["kinds"]), after)
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
		// A batch is gathered in one buffer, taken from a pool while it is
		// written: an idle subscriber holds none.
		var batch *[]byte
		// queued writes a long batch out in pieces of about
		// maxBatchBytes: what a subscriber holds stays small.
		queued := func() error {
			if len(*batch) < maxBatchBytes {
				return nil
			}
			_, err := w.Write(*batch)
			*batch = (*batch)[:0]
			return err
		}
		_ = s.pump(r.Context(), sub, sink{
			send: func(item *agentsv1.SubscribeResponse) error {
				if batch == nil {
					batch = getBatch()
				}
				if err := s.appendSSE(batch, item); err != nil {
					return err
				}
				return queued()
			},
			sendEvent: func(ev *agentsv1.Event) error {
				b, err := s.hub.Frame(ev, events.EncodingSSE, sse.EventFrame)
				if err != nil {
					return err
				}
				if batch == nil {
					batch = getBatch()
				}
				*batch = append(*batch, b...)
				return queued()
			},
			flush: func() error {
				if batch == nil {
					return rc.Flush()
				}
				_, err := w.Write(*batch)
				putBatch(batch)
				batch = nil
				if err != nil {
					return err
				}
				return rc.Flush()
			},
		})
		if batch != nil {
			putBatch(batch)
		}
	}
}

// A batch is written once it holds maxBatchBytes; its buffer has room
// for one more frame of up to 4 KiB past that, and one that grew beyond
// maxPooledBatch (a larger frame) is not kept.
const (
	maxBatchBytes  = 16 << 10
	maxPooledBatch = 64 << 10
)

var batches = sync.Pool{New: func() any { b := make([]byte, 0, maxBatchBytes+4<<10); return &b }}

func getBatch() *[]byte { return batches.Get().(*[]byte) }

func putBatch(b *[]byte) {
	if cap(*b) > maxPooledBatch {
		return
	}
	*b = (*b)[:0]
	batches.Put(b)
}

// appendSSE appends one item's frame to a batch.
func (s *Server) appendSSE(batch *[]byte, item *agentsv1.SubscribeResponse) error {
	if ev, ok := item.GetItem().(*agentsv1.SubscribeResponse_Event); ok {
		b, err := s.hub.Frame(ev.Event, events.EncodingSSE, sse.EventFrame)
		if err != nil {
			return err
		}
		*batch = append(*batch, b...)
		return nil
	}
	return s.writeSSE((*appender)(batch), item)
}

// appender is an io.Writer appending to a batch.
type appender []byte

func (a *appender) Write(p []byte) (int, error) {
	*a = append(*a, p...)
	return len(p), nil
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
