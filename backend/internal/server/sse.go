package server

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"

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
		out := &sseBatch{to: w, flush: rc.Flush}
		if conn, ok := r.Context().Value(connKey{}).(net.Conn); ok && r.Method == http.MethodGet && r.ProtoMajor == 1 && r.ProtoAtLeast(1, 1) {
			// The reply is the connection's from here to its end: no
			// chunks, nothing left in the response's buffers, which
			// would only copy each batch twice more on its way.
			out.to, out.flush = conn, nil
		}
		_ = s.pump(r.Context(), sub, sink{
			send:      func(item *agentsv1.SubscribeResponse) error { return s.queueItem(out, item) },
			sendEvent: func(ev *agentsv1.Event) error { return s.queueEvent(out, ev) },
			flush:     out.write,
		})
		out.drop()
	}
}

// connKey holds the connection a request came on (ConnContext).
type connKey struct{}

// ConnContext is the http.Server ConnContext the server's handlers want:
// with it, an event stream over HTTP/1.1 writes its batches to the
// connection itself, after net/http wrote and flushed the headers, in one
// system call each without copying the frames. Serve with it only where
// nothing between the handler and the connection changes the bytes of a
// reply (no compressing middleware, say).
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// A batch is written once it holds maxBatchBytes.
const maxBatchBytes = 16 << 10

// sseBatch gathers the frames of a batch, the hub's shared bytes as they
// are, and writes them in one call: to the connection, a single writev,
// or to the response, which then flushes.
type sseBatch struct {
	to     io.Writer
	flush  func() error // nil when to is the connection
	frames net.Buffers
	size   int
}

// add queues a frame, and writes the batch once it is long: what a
// subscriber holds stays small.
func (b *sseBatch) add(frame []byte) error {
	b.frames = append(b.frames, frame)
	if b.size += len(frame); b.size < maxBatchBytes {
		return nil
	}
	return b.send()
}

// send writes what is queued.
func (b *sseBatch) send() error {
	if len(b.frames) == 0 {
		return nil
	}
	bufs := b.frames // WriteTo consumes what it is given
	_, err := bufs.WriteTo(b.to)
	b.drop()
	return err
}

// write puts what is queued on the wire.
func (b *sseBatch) write() error {
	if err := b.send(); err != nil || b.flush == nil {
		return err
	}
	return b.flush()
}

// drop forgets what is queued, holding on to no frame.
func (b *sseBatch) drop() {
	clear(b.frames[:cap(b.frames)])
	b.frames, b.size = b.frames[:0], 0
}

// queueEvent queues an event's frame.
func (s *Server) queueEvent(out *sseBatch, ev *agentsv1.Event) error {
	b, err := s.hub.Frame(ev, events.EncodingSSE, sse.EventFrame)
	if err != nil {
		return err
	}
	return out.add(b)
}

// queueItem queues one item; an event's frame is encoded once and shared
// by every subscriber (Hub.Frame).
func (s *Server) queueItem(out *sseBatch, item *agentsv1.SubscribeResponse) error {
	var b bytes.Buffer
	var err error
	switch it := item.GetItem().(type) {
	case *agentsv1.SubscribeResponse_Event:
		return s.queueEvent(out, it.Event)
	case *agentsv1.SubscribeResponse_Snapshot:
		err = sse.WriteSnapshot(&b, it.Snapshot)
	case *agentsv1.SubscribeResponse_Lagged:
		err = sse.WriteLagged(&b, it.Lagged)
	default:
		err = sse.WriteComment(&b, "ping")
	}
	if err != nil {
		return err
	}
	return out.add(b.Bytes())
}
