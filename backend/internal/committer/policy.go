package committer

import (
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
)

// ErrClosing is the outcome of a write the committer never took because
// it is closing: nothing of it was stored.
var ErrClosing = errs.Unavailable(errs.CodeShuttingDown, "the server is shutting down")

// Class is what a failed write means for the one who made it.
type Class int

// The classes of a failed write.
const (
	// None is the class of no error.
	None Class = iota
	// Transient failures (the database busy or locked past its timeout,
	// a connection lost, a disk full for now) may pass: the write is kept
	// and tried again with Backoff, so nothing it holds is lost.
	Transient
	// Permanent failures (a conflict with what another writer stored, a
	// session or call that is gone, a change the store cannot take) will
	// fail the same way however often they are tried: the writer reloads
	// what the store holds and settles from there, once.
	Permanent
	// Closing is a write that did not happen because the server is
	// stopping; the next start takes up what the store holds.
	Closing
	// Lost is a write refused because another server runs the session
	// now (its lease was taken over): the writer no longer owns the
	// session, so it writes nothing more of it, neither again nor to
	// settle it from the store, which is the new holder's business.
	Lost
)

// Classify says what a write's error means. The store's errors carry a
// kind (errs): unavailable is transient, a lease another server holds
// (lease_lost, or lease_held for a writer told so already) is lost,
// every other kind is permanent.
// An error without a kind is one the store could not place (a driver's
// I/O error, a connection reset): it is taken as transient, since
// retrying a write costs less than losing it.
func Classify(err error) Class {
	if err == nil {
		return None
	}
	switch errs.CodeOf(err) {
	case ErrClosing.Code:
		return Closing
	case errs.CodeLeaseLost, errs.CodeLeaseHeld:
		return Lost
	}
	e, typed := errs.As(err)
	if !typed || e.Kind == errs.KindUnavailable {
		return Transient
	}
	return Permanent
}

// Backoff bounds.
const (
	FirstBackoff = 25 * time.Millisecond
	MaxBackoff   = 2 * time.Second
)

// Backoff is how long to wait before trying a write again after its
// attempt-th failure (1 for the first): it doubles from FirstBackoff up
// to MaxBackoff, so a long lock costs a retry every two seconds, not a
// busy loop, and a short one is over in milliseconds.
func Backoff(attempt int) time.Duration {
	d := FirstBackoff
	for i := 1; i < attempt && d < MaxBackoff; i++ {
		d *= 2
	}
	return min(d, MaxBackoff)
}
