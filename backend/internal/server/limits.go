package server

import (
	"context"
	"net/http"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
)

// Limits bound what one request may ask of the server. Zero size fields
// take the defaults below; zero run limits mean no limit.
type Limits struct {
	// MaxBodyBytes bounds a request body (413 / resource_exhausted).
	MaxBodyBytes int64
	// MaxMessageBytes bounds the text of a message or of a call's answer.
	MaxMessageBytes int
	// MaxAttachmentBytes bounds each attachment of a message.
	MaxAttachmentBytes int
	// MaxRuns bounds the runs active on the server and MaxRunsPerOwner
	// those of one owner (429 / resource_exhausted); the kernel enforces
	// them on every run, whoever starts it.
	MaxRuns         int
	MaxRunsPerOwner int
}

// Default size limits.
const (
	DefaultMaxBodyBytes       = 16 << 20
	DefaultMaxMessageBytes    = 1 << 20
	DefaultMaxAttachmentBytes = 8 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if l.MaxMessageBytes <= 0 {
		l.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if l.MaxAttachmentBytes <= 0 {
		l.MaxAttachmentBytes = DefaultMaxAttachmentBytes
	}
	return l
}

// limitBodies refuses a body announced larger than the limit at once and
// cuts off one that turns out larger while it is read; the reader's error
// then becomes the same 413.
func (s *Server) limitBodies(next http.Handler) http.Handler {
	limit := s.limits.MaxBodyBytes
	refuse := s.refuser()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			refuse(w, r, errs.TooLarge(errs.CodeBodyTooLarge, "request body is larger than %d bytes", limit))
			return
		}
		if r.Body != http.NoBody {
			// A request without a body (a GET) has nothing to limit.
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		next.ServeHTTP(w, r)
	})
}

// admit checks a request message against the limits before its handler
// runs: its fields (see checkFields) and the message and attachment sizes.
// Run limits are the kernel's: it counts every run where it opens (see
// runner.Options.MaxRuns).
func (s *Server) admit(_ context.Context, req any) error {
	if m, ok := req.(proto.Message); ok {
		if err := checkFields(m.ProtoReflect()); err != nil {
			return err
		}
	}
	return s.checkSizes(req)
}

func (s *Server) checkSizes(req any) error {
	var texts []string
	var attachments []*agentsv1.Attachment
	if m, ok := req.(interface{ GetMessage() *agentsv1.Message }); ok {
		texts = append(texts, m.GetMessage().GetText())
		attachments = m.GetMessage().GetAttachments()
	}
	switch m := req.(type) {
	case *agentsv1.CompleteCallRequest:
		texts = append(texts, m.GetText(), m.GetError())
	case *agentsv1.SendMailRequest:
		texts = append(texts, m.GetBody().GetUserMessage().GetText(), m.GetBody().GetAgentMessage().GetText())
	case interface{ GetDefinition() string }:
		// An agent's definition is bounded as a message is.
		if n := len(m.GetDefinition()); n > s.limits.MaxMessageBytes {
			return errs.TooLarge(errs.CodeDefinitionTooLarge, "the agent's definition is %d bytes, more than the limit of %d", n, s.limits.MaxMessageBytes)
		}
	}
	for _, t := range texts {
		if len(t) > s.limits.MaxMessageBytes {
			return errs.TooLarge(errs.CodeMessageTooLarge, "message text is %d bytes, more than the limit of %d", len(t), s.limits.MaxMessageBytes)
		}
	}
	for _, a := range attachments {
		if len(a.GetData()) > s.limits.MaxAttachmentBytes {
			return errs.TooLarge(errs.CodeAttachmentTooLarge, "attachment %q is %d bytes, more than the limit of %d", a.GetName(), len(a.GetData()), s.limits.MaxAttachmentBytes)
		}
	}
	return nil
}

// admitInterceptor applies admit to every RPC.
type admitInterceptor struct{ s *Server }

var _ connect.Interceptor = admitInterceptor{}

func (i admitInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if err := i.s.admit(ctx, req.Any()); err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
}

func (i admitInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// WrapStreamingHandler checks the fields of each message a stream
// receives; the only stream, Subscribe, carries no message text and starts
// no run.
func (i admitInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		return next(ctx, checkedConn{conn})
	}
}

// checkedConn checks the fields of every message it receives.
type checkedConn struct{ connect.StreamingHandlerConn }

func (c checkedConn) Receive(msg any) error {
	if err := c.StreamingHandlerConn.Receive(msg); err != nil {
		return err
	}
	if m, ok := msg.(proto.Message); ok {
		return checkFields(m.ProtoReflect())
	}
	return nil
}
