// Package errs defines the kinds of error the server reports. Domain code
// returns them with a stable machine code; the server alone maps a kind to a
// Connect code and an HTTP status. Anything that is not an *Error is internal:
// clients see "internal error" and the log gets the whole text.
package errs

import (
	"errors"
	"fmt"
)

// Kind classifies an error by what the caller can do about it.
type Kind int

// The kinds, one per way a request can fail.
const (
	KindInternal Kind = iota
	KindNotFound
	KindInvalid
	KindConflict
	KindFailedPrecondition
	KindPermissionDenied
	KindUnauthenticated
	KindUnavailable
	KindResourceExhausted
	KindUnimplemented
	KindCanceled
	// KindTooLarge is a request or a part of it over a size limit: the
	// caller must send less (unlike KindResourceExhausted, waiting does not
	// help).
	KindTooLarge
	// KindUnprocessable is a well-formed request that contradicts what the
	// server holds for it (an idempotency key first used for another
	// request): the caller must change it; sent again as it is, it fails
	// again.
	KindUnprocessable
	// KindAborted is a write refused because what it was based on changed
	// meanwhile (an expected version that is no longer the current one):
	// the caller reads again and retries.
	KindAborted
)

// Error is a classified error with a stable machine code such as
// CodeUnknownSession (codes.go). Message is safe to show to clients.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	// Metadata carries extra machine-readable facts (missing params, …).
	Metadata map[string]string
	// Err is the cause, kept for logs and errors.Is; never shown to clients.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// With returns a copy of e carrying one more metadata entry.
func (e *Error) With(key, value string) *Error {
	c := *e
	c.Metadata = make(map[string]string, len(e.Metadata)+1)
	for k, v := range e.Metadata {
		c.Metadata[k] = v
	}
	c.Metadata[key] = value
	return &c
}

func newf(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotFound reports a missing thing (unknown_session, unknown_agent, …).
func NotFound(code, format string, args ...any) *Error {
	return newf(KindNotFound, code, format, args...)
}

// Invalid reports bad input.
func Invalid(code, format string, args ...any) *Error {
	return newf(KindInvalid, code, format, args...)
}

// Conflict reports a clash with existing state (session_exists, …).
func Conflict(code, format string, args ...any) *Error {
	return newf(KindConflict, code, format, args...)
}

// FailedPrecondition reports an operation the current state refuses.
func FailedPrecondition(code, format string, args ...any) *Error {
	return newf(KindFailedPrecondition, code, format, args...)
}

// PermissionDenied reports an authenticated caller lacking a right.
func PermissionDenied(code, format string, args ...any) *Error {
	return newf(KindPermissionDenied, code, format, args...)
}

// Unauthenticated reports a missing or wrong credential.
func Unauthenticated(code, format string, args ...any) *Error {
	return newf(KindUnauthenticated, code, format, args...)
}

// Unavailable reports a dependency that cannot be reached right now.
func Unavailable(code, format string, args ...any) *Error {
	return newf(KindUnavailable, code, format, args...)
}

// ResourceExhausted reports a limit that was hit.
func ResourceExhausted(code, format string, args ...any) *Error {
	return newf(KindResourceExhausted, code, format, args...)
}

// TooLarge reports a request body, message or attachment over its size
// limit.
func TooLarge(code, format string, args ...any) *Error {
	return newf(KindTooLarge, code, format, args...)
}

// Unprocessable reports a well-formed request the server cannot take as
// it is.
func Unprocessable(code, format string, args ...any) *Error {
	return newf(KindUnprocessable, code, format, args...)
}

// Unimplemented reports an operation this server does not offer yet.
func Unimplemented(code, format string, args ...any) *Error {
	return newf(KindUnimplemented, code, format, args...)
}

// Aborted reports a write that lost a race with another (version_mismatch).
func Aborted(code, format string, args ...any) *Error {
	return newf(KindAborted, code, format, args...)
}

// Canceled reports an operation stopped by its caller.
func Canceled(code, format string, args ...any) *Error {
	return newf(KindCanceled, code, format, args...)
}

// As returns the classified error inside err, if any.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// KindOf returns the kind of err; unclassified errors are internal.
func KindOf(err error) Kind {
	if e, ok := As(err); ok {
		return e.Kind
	}
	return KindInternal
}

// CodeOf returns the machine code of err; unclassified errors are
// CodeInternal.
func CodeOf(err error) string {
	if e, ok := As(err); ok {
		return e.Code
	}
	return CodeInternal
}
