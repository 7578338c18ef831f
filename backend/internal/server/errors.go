package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
)

// kindTable is the one place that maps an error kind to a Connect code and
// an HTTP status.
var kindTable = map[errs.Kind]struct {
	code   connect.Code
	status int
}{
	errs.KindInternal:           {connect.CodeInternal, http.StatusInternalServerError},
	errs.KindNotFound:           {connect.CodeNotFound, http.StatusNotFound},
	errs.KindInvalid:            {connect.CodeInvalidArgument, http.StatusBadRequest},
	errs.KindConflict:           {connect.CodeAlreadyExists, http.StatusConflict},
	errs.KindFailedPrecondition: {connect.CodeFailedPrecondition, http.StatusPreconditionFailed},
	errs.KindPermissionDenied:   {connect.CodePermissionDenied, http.StatusForbidden},
	errs.KindUnauthenticated:    {connect.CodeUnauthenticated, http.StatusUnauthorized},
	errs.KindUnavailable:        {connect.CodeUnavailable, http.StatusServiceUnavailable},
	errs.KindResourceExhausted:  {connect.CodeResourceExhausted, http.StatusTooManyRequests},
	errs.KindUnimplemented:      {connect.CodeUnimplemented, http.StatusNotImplemented},
	errs.KindCanceled:           {connect.CodeCanceled, 499},
	errs.KindTooLarge:           {connect.CodeResourceExhausted, http.StatusRequestEntityTooLarge},
	errs.KindUnprocessable:      {connect.CodeInvalidArgument, http.StatusUnprocessableEntity},
	errs.KindAborted:            {connect.CodeAborted, http.StatusConflict},
}

// The outcomes of a request whose own context ended, which are no kind of
// domain error: the client cancelled it, or the deadline it set
// (Connect-Timeout-Ms, grpc-timeout) passed. Their statuses are the
// Connect protocol's.
var (
	canceledRow = kindTable[errs.KindCanceled]
	deadlineRow = struct {
		code   connect.Code
		status int
	}{connect.CodeDeadlineExceeded, http.StatusGatewayTimeout}
)

// wireError is what a client may learn about an error.
type wireError struct {
	code   connect.Code
	status int
	// reason is the stable machine code.
	reason   string
	message  string
	metadata map[string]string
}

// publicError is what a client may learn about err, the failure of a
// request whose context is ctx: internal errors are reduced to a fixed
// text so their details (paths, SQL) never leak. When the request's own
// context has ended, the failure is that ending, whatever error the work
// it cut short returned (a driver's "interrupted", say): the client's
// doing, not the server's. A context error that is not the request's is a
// timeout or shutdown on the server's side: unavailable.
func publicError(ctx context.Context, err error) wireError {
	if e, ok := errs.As(err); ok && e.Kind != errs.KindInternal {
		row := kindTable[e.Kind]
		return wireError{code: row.code, status: row.status, reason: e.Code, message: e.Message, metadata: e.Metadata}
	}
	switch cause := ctx.Err(); {
	case errors.Is(cause, context.Canceled):
		return wireError{code: canceledRow.code, status: canceledRow.status, reason: errs.CodeCanceled, message: "request canceled"}
	case errors.Is(cause, context.DeadlineExceeded):
		return wireError{code: deadlineRow.code, status: deadlineRow.status, reason: errs.CodeDeadlineExceeded, message: "deadline exceeded"}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		row := kindTable[errs.KindUnavailable]
		return wireError{code: row.code, status: row.status, reason: errs.CodeUnavailable, message: "the server cut the request short; try again"}
	}
	row := kindTable[errs.KindInternal]
	return wireError{code: row.code, status: row.status, reason: errs.CodeInternal, message: "internal error"}
}

// connectError converts a domain error to a Connect error carrying an
// ErrorDetail with the machine code. Connect errors pass through unchanged
// (connect's own decoding errors already have the right code).
func connectError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce
	}
	w := publicError(ctx, err)
	out := connect.NewError(w.code, errors.New(w.message))
	if detail, derr := connect.NewErrorDetail(&agentsv1.ErrorDetail{Code: w.reason, Metadata: w.metadata}); derr == nil {
		out.AddDetail(detail)
	}
	return out
}

// levelOf says how loudly an outcome is logged: server faults at ERROR,
// everything else, the callers' mistakes and choices, at INFO.
func levelOf(code connect.Code) slog.Level {
	switch code {
	case connect.CodeInternal, connect.CodeUnknown, connect.CodeUnavailable, connect.CodeDataLoss:
		return slog.LevelError
	}
	return slog.LevelInfo
}
