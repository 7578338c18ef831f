package server

import (
	"net/http"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/events/sse"
)

// sseRoute serves a subscription as Server-Sent Events: GET /v1/events
// (scope=owner|all) or, with perSession, GET /v1/sessions/{id}/events. A
// reconnecting client sends Last-Event-ID (or ?after=).
func (s *Server) sseRoute(perSession bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		after, err := sse.ParseAfter(r.Header.Get("Last-Event-ID"), q.Get("after"))
		if err != nil {
			s.writeError(w, r, errs.Invalid("invalid_argument", "%v", err))
			return
		}
		scope := agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_OWNER
		sessionID := ""
		switch {
		case perSession:
			scope = agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_SESSION
			sessionID = r.PathValue("id")
		case q.Get("scope") == "all":
			scope = agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_ALL
		case q.Get("scope") != "" && q.Get("scope") != "owner":
			s.writeError(w, r, errs.Invalid("invalid_argument", "scope %q: want owner or all", q.Get("scope")))
			return
		}
		sub, err := s.subscribe(r.Context(), scope, sessionID, after)
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
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		// Headers go out at once: a client must know the stream is open
		// before the first event.
		if err := rc.Flush(); err != nil {
			return
		}
		_ = s.pump(r.Context(), sub, sink{
			send:  func(item *agentsv1.SubscribeResponse) error { return s.writeSSE(w, item) },
			flush: rc.Flush,
		})
	}
}

// writeSSE writes one item; an event's frame is encoded once and shared
// by every subscriber (Hub.Frame).
func (s *Server) writeSSE(w http.ResponseWriter, item *agentsv1.SubscribeResponse) error {
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
