package runner

import (
	"fmt"
	"time"

	"github.com/agents-os/agents/backend/internal/committer"
)

// writePhase is where an actor's session stands with the store.
type writePhase uint8

const (
	// inSync: memory is what the store has, and writes go through.
	inSync writePhase = iota
	// retrying: a write of a run that the store refused for now is kept,
	// and written again with back-off before any other write (see
	// resync); the run goes on once it is stored.
	retrying
	// inDoubt: a write failed with the connection lost and whether it
	// landed is not known: memory may not be what the store has, so
	// nothing is written on it until the store says (see settleDoubt);
	// reads answer from memory.
	inDoubt
	// retryingInDoubt is both: a kept write waits, and a write (the
	// kept one or a client's) is in doubt. The doubt is settled first.
	retryingInDoubt
	// leaseLost: another server took the session over. The command in
	// hand ends, nothing is written any more, and the actor then lets
	// the session go (abandon) without writing.
	leaseLost
	// gone: the actor holds no session: it failed to load, was deleted,
	// lost its lease, gave it up, or the runner closes. Every command is
	// answered with why, and nothing is written.
	gone
)

func (p writePhase) String() string {
	switch p {
	case inSync:
		return "in sync"
	case retrying:
		return "retrying"
	case inDoubt:
		return "in doubt"
	case retryingInDoubt:
		return "retrying in doubt"
	case leaseLost:
		return "lease lost"
	case gone:
		return "gone"
	}
	return fmt.Sprintf("writePhase(%d)", uint8(p))
}

// writeState is the actor's write state: one phase, with what each phase
// keeps, changed only through the transitions below. The actor asks it
// whether a write may go and what waits, instead of reading fields
// that must agree with one another.
//
// The four phases of a held session (in sync, retrying, in doubt, both)
// follow from what is kept: a write to retry, a write in doubt. Lease
// lost and gone are ends: late reports of calls find them and change
// nothing.
type writeState struct {
	phase writePhase
	// pending is the kept write (retrying); then goes on with the run
	// once it is stored, and attempts counts its failed writes.
	pending  *edit
	then     func()
	attempts int
	// doubt is the write in doubt.
	doubt *doubt
	// next runs once the command in hand is done: what waited for a kept
	// write that is now stored must not run in the middle of a command.
	next func()
	// err is what a write is told once the lease is lost, and what a
	// command is told once the actor is gone.
	err error
}

// doubt is a write whose outcome is not known: e is the edit, when it is
// one, and landed asks the store whether it landed, told false while the
// store cannot be asked.
type doubt struct {
	e      *edit
	landed func() (landed, told bool)
	// after is when the store is asked again, once it could not be.
	after time.Time
}

// holds reports whether the actor still holds its session: neither its
// lease lost nor gone.
func (w *writeState) holds() bool { return w.phase != leaseLost && w.phase != gone }

// gone reports whether the actor holds no session any more.
func (w *writeState) gone() bool { return w.phase == gone }

// lost reports whether the lease was lost and the actor has yet to let
// the session go (abandon).
func (w *writeState) lost() bool { return w.phase == leaseLost }

// retrying reports whether a kept write waits to be written again.
func (w *writeState) retrying() bool { return w.pending != nil }

// inDoubt reports whether a write's outcome is not known.
func (w *writeState) inDoubt() bool { return w.doubt != nil }

// quiet reports whether the session is in sync with nothing waiting to
// run: it can be handed to another server as it is.
func (w *writeState) quiet() bool { return w.phase == inSync && w.next == nil }

// refusal is the error a command is answered with before it runs: nil
// while the actor holds its session or lost its lease (the command may
// still read; its writes are refused).
func (w *writeState) refusal() error {
	if w.phase == gone {
		return w.err
	}
	return nil
}

// writeRefusal is the error a write is refused with before it reaches
// the store: the lease is lost, or the actor gone.
func (w *writeState) writeRefusal() error {
	if w.holds() {
		return nil
	}
	return w.err
}

// backoff is how long the kept write waits before it is tried again.
func (w *writeState) backoff() time.Duration { return committer.Backoff(w.attempts) }

// keep makes e, a write the store refused for now, the kept write, with
// then to go on once it is stored. A doubt about e itself is resync's to
// settle: it asks the store first. There is one kept write at a time: a
// second would be written before the first, out of order; the caller
// fails the run instead. Once the session is no longer held, nothing is
// kept.
func (w *writeState) keep(e *edit, then func()) {
	if !w.holds() {
		return
	}
	if w.pending != nil {
		w.illegal("keep a second write")
	}
	w.pending, w.then, w.attempts = e, then, 1
	if w.doubt != nil && w.doubt.e == e {
		w.doubt = nil
	}
	w.relive()
}

// follow adds to the kept write what e, the end of a run, changes: its
// status, events and mail are written with it.
func (w *writeState) follow(e *edit) {
	if w.pending == nil {
		w.illegal("follow no kept write")
	}
	w.pending.meta.Status, w.pending.meta.StatusReason = e.meta.Status, e.meta.StatusReason
	w.pending.events = append(w.pending.events, e.events...)
	w.pending.mail = append(w.pending.mail, e.mail...)
	w.pending.notify = append(w.pending.notify, e.notify...)
}

// refused counts a failed attempt at the kept write, and returns the
// count.
func (w *writeState) refused() int {
	if w.pending == nil {
		w.illegal("refuse no kept write")
	}
	w.attempts++
	return w.attempts
}

// caughtUp says the kept write is stored, and returns what waited for
// it.
func (w *writeState) caughtUp() (then func()) {
	if w.pending == nil {
		w.illegal("catch up with no kept write")
	}
	then = w.then
	w.pending, w.then, w.attempts = nil, nil, 0
	w.relive()
	return then
}

// drop forgets the kept write, if any: the session is read again from
// the store, which is the truth.
func (w *writeState) drop() {
	w.pending, w.then, w.attempts = nil, nil, 0
	w.relive()
}

// queue has fn run once the command in hand is done, after anything
// queued before it.
func (w *writeState) queue(fn func()) {
	if prev := w.next; prev != nil {
		w.next = func() { prev(); fn() }
		return
	}
	w.next = fn
}

// takeNext returns what is queued to run now, and forgets it: nothing
// once the session is no longer held.
func (w *writeState) takeNext() func() {
	if !w.holds() {
		return nil
	}
	fn := w.next
	w.next = nil
	return fn
}

// suspect puts a write in doubt, in place of any other: the newest
// write is the one memory may lack.
func (w *writeState) suspect(d *doubt) {
	if !w.holds() {
		return
	}
	w.doubt = d
	w.relive()
}

// doubtDue returns the write in doubt when the store is to be asked
// about it at now; nil when none is, or the session is no longer held.
func (w *writeState) doubtDue(now time.Time) *doubt {
	if w.doubt == nil || !w.holds() || now.Before(w.doubt.after) {
		return nil
	}
	return w.doubt
}

// resolved says the store told how the write in doubt went.
func (w *writeState) resolved() {
	if w.doubt == nil || !w.holds() {
		w.illegal("resolve no doubt")
	}
	w.doubt = nil
	w.relive()
}

// lose says another server took the session over; moved says where it
// runs now. It reports whether the lease was held until now.
func (w *writeState) lose(moved error) bool {
	if !w.holds() {
		return false
	}
	w.phase, w.err = leaseLost, moved
	return true
}

// abandon lets go, writing nothing, a session whose lease was lost: what
// was kept or queued is forgotten, and commands are told where it runs.
func (w *writeState) abandon() {
	if w.phase != leaseLost {
		w.illegal("abandon a held session")
	}
	w.end(w.err)
}

// end makes the actor gone, with err for whoever asks: the session did
// not load, was deleted, or is given up (letGo, shutdown).
func (w *writeState) end(err error) {
	*w = writeState{phase: gone, err: err}
}

// relive sets the phase of a held session from what it keeps.
func (w *writeState) relive() {
	if !w.holds() {
		return
	}
	switch {
	case w.pending != nil && w.doubt != nil:
		w.phase = retryingInDoubt
	case w.pending != nil:
		w.phase = retrying
	case w.doubt != nil:
		w.phase = inDoubt
	default:
		w.phase = inSync
	}
}

// strictWriteState makes an illegal transition panic, so a test that
// makes one fails where it happens.
var strictWriteState = false

// illegal handles a transition no caller may make: the write state would
// no longer say what the store has. A server does not stop every
// session for one: it gives this one up, so its next use reads it again
// from the store, which still says what is true.
func (w *writeState) illegal(what string) {
	msg := fmt.Sprintf("write state: cannot %s while %s", what, w.phase)
	if strictWriteState {
		panic(msg)
	}
	w.end(fmt.Errorf("%s; the session is read again from the store on its next use", msg))
}
