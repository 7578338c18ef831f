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
}

// publicError is what a client may learn about err: internal errors are
// reduced to a fixed text so their details (paths, SQL) never leak.
func publicError(err error) (kind errs.Kind, code, message string, metadata map[string]string) {
	if e, ok := errs.As(err); ok && e.Kind != errs.KindInternal {
		return e.Kind, e.Code, e.Message, e.Metadata
	}
	if errors.Is(err, context.Canceled) {
		return errs.KindCanceled, "canceled", "request canceled", nil
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return errs.KindUnavailable, "deadline_exceeded", "deadline exceeded", nil
	}
	return errs.KindInternal, "internal", "internal error", nil
}

// connectError converts a domain error to a Connect error carrying an
// ErrorDetail with the machine code. Connect errors pass through unchanged
// (connect's own decoding errors already have the right code).
func connectError(err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce
	}
	kind, code, message, metadata := publicError(err)
	out := connect.NewError(kindTable[kind].code, errors.New(message))
	if detail, derr := connect.NewErrorDetail(&agentsv1.ErrorDetail{Code: code, Metadata: metadata}); derr == nil {
		out.AddDetail(detail)
	}
	return out
}

// httpStatus is the HTTP status of an error kind.
func httpStatus(kind errs.Kind) int { return kindTable[kind].status }

// logLevel says how loudly an error is logged: caller mistakes at INFO,
// server faults at ERROR.
func logLevel(err error) slog.Level {
	if err == nil {
		return slog.LevelInfo
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		switch ce.Code() {
		case connect.CodeInternal, connect.CodeUnknown, connect.CodeDataLoss:
			return slog.LevelError
		}
		return slog.LevelInfo
	}
	if errs.KindOf(err) == errs.KindInternal {
		return slog.LevelError
	}
	return slog.LevelInfo
}
