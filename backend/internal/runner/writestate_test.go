package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/session"
)

// inPhase builds a write state in each phase the way the actor reaches
// it, with e as the kept write where there is one.
func inPhase(t *testing.T, p writePhase, e *edit) *writeState {
	t.Helper()
	w := &writeState{}
	switch p {
	case inSync:
	case retrying:
		w.keep(e, nil)
	case inDoubt:
		w.suspect(&doubt{})
	case retryingInDoubt:
		w.keep(e, nil)
		w.suspect(&doubt{})
	case leaseLost:
		w.keep(e, nil)
		w.lose(errMoved)
	case gone:
		w.end(errGone)
	default:
		t.Fatalf("no phase %v", p)
	}
	if w.phase != p {
		t.Fatalf("built %v, want %v", w.phase, p)
	}
	return w
}

var (
	errMoved = errors.New("moved")
	errGone  = errors.New("gone")
)

var allPhases = []writePhase{inSync, retrying, inDoubt, retryingInDoubt, leaseLost, gone}

// Every test of the package, outside this file too, fails on an illegal
// transition where it happens.
func init() { strictWriteState = true }

func TestAnIllegalTransitionOutsideTestsGivesTheSessionUp(t *testing.T) {
	strictWriteState = false
	defer func() { strictWriteState = true }()
	var w writeState
	w.relive()
	w.caughtUp()
	if !w.gone() || w.err == nil || !strings.Contains(w.err.Error(), "catch up") {
		t.Fatalf("after an illegal transition: gone %v, err %v; want the session given up, saying why", w.gone(), w.err)
	}
}

// mustPanic runs fn and fails unless it panics naming the phase.
func mustPanic(t *testing.T, p writePhase, fn func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Fatalf("no panic in %v", p)
		}
		if msg, _ := r.(string); !strings.Contains(msg, p.String()) {
			t.Fatalf("panic %v does not name %v", r, p)
		}
	}()
	fn()
}

func TestWriteStateStartsInSync(t *testing.T) {
	var w writeState
	if w.phase != inSync || !w.holds() || !w.quiet() || w.retrying() || w.inDoubt() || w.gone() || w.lost() {
		t.Fatalf("zero write state is %v, not a quiet in sync", w.phase)
	}
	if w.refusal() != nil || w.writeRefusal() != nil {
		t.Fatalf("zero write state refuses: %v, %v", w.refusal(), w.writeRefusal())
	}
}

func TestWriteStateQueries(t *testing.T) {
	for _, p := range allPhases {
		t.Run(p.String(), func(t *testing.T) {
			w := inPhase(t, p, &edit{})
			held := p != leaseLost && p != gone
			if w.holds() != held {
				t.Errorf("holds = %v", w.holds())
			}
			if w.gone() != (p == gone) || w.lost() != (p == leaseLost) {
				t.Errorf("gone = %v, lost = %v", w.gone(), w.lost())
			}
			if got := w.retrying(); got != (p == retrying || p == retryingInDoubt || p == leaseLost) {
				t.Errorf("retrying = %v", got)
			}
			if got := w.inDoubt(); got != (p == inDoubt || p == retryingInDoubt) {
				t.Errorf("inDoubt = %v", got)
			}
			if w.quiet() != (p == inSync) {
				t.Errorf("quiet = %v", w.quiet())
			}
			// A command is refused only once the actor is gone; a write
			// once the lease is lost too, with where the session went.
			wantCmd, wantWrite := error(nil), error(nil)
			switch p {
			case leaseLost:
				wantWrite = errMoved
			case gone:
				wantCmd, wantWrite = errGone, errGone
			}
			if w.refusal() != wantCmd || w.writeRefusal() != wantWrite {
				t.Errorf("refusal = %v, writeRefusal = %v; want %v, %v", w.refusal(), w.writeRefusal(), wantCmd, wantWrite)
			}
		})
	}
}

func TestWriteStateKeep(t *testing.T) {
	want := map[writePhase]writePhase{inSync: retrying, inDoubt: retryingInDoubt, leaseLost: leaseLost, gone: gone}
	for from, to := range want {
		t.Run(from.String(), func(t *testing.T) {
			w := inPhase(t, from, &edit{})
			e := &edit{}
			ran := false
			w.keep(e, func() { ran = true })
			if w.phase != to {
				t.Fatalf("keep: %v → %v, want %v", from, w.phase, to)
			}
			if !w.holds() {
				return // nothing is kept once the session is not held
			}
			if w.pending != e || w.attempts != 1 {
				t.Fatalf("kept %p after %d attempts, want %p after 1", w.pending, w.attempts, e)
			}
			if then := w.caughtUp(); then == nil {
				t.Fatal("then is lost")
			} else if then(); !ran {
				t.Fatal("then is not the one kept")
			}
		})
	}
	for _, from := range []writePhase{retrying, retryingInDoubt} {
		t.Run(from.String()+"/second write", func(t *testing.T) {
			w := inPhase(t, from, &edit{})
			mustPanic(t, from, func() { w.keep(&edit{}, nil) })
		})
	}
	t.Run("the doubt about the kept write is resync's", func(t *testing.T) {
		w := &writeState{}
		e := &edit{}
		w.suspect(&doubt{e: e})
		w.keep(e, nil)
		if w.phase != retrying || w.inDoubt() {
			t.Fatalf("keep of the write in doubt: %v, doubt %v", w.phase, w.doubt)
		}
	})
}

func TestWriteStateFollow(t *testing.T) {
	for _, from := range []writePhase{retrying, retryingInDoubt} {
		t.Run(from.String(), func(t *testing.T) {
			kept := &edit{meta: session.Meta{Status: session.StatusRunning}, events: []*agentsv1.Event{{SessionId: "kept"}}}
			w := inPhase(t, from, kept)
			end := &edit{meta: session.Meta{Status: session.StatusFailed, StatusReason: "why"}, events: []*agentsv1.Event{{SessionId: "end"}},
				mail: []session.Mail{{ID: "m"}}, notify: []watchNote{{}}}
			w.follow(end)
			if w.phase != from || w.pending != kept {
				t.Fatalf("follow changed the phase to %v or the kept write", w.phase)
			}
			if kept.meta.Status != session.StatusFailed || kept.meta.StatusReason != "why" {
				t.Errorf("kept status %v %q, want the end's", kept.meta.Status, kept.meta.StatusReason)
			}
			if len(kept.events) != 2 || kept.events[1].SessionId != "end" || len(kept.mail) != 1 || len(kept.notify) != 1 {
				t.Errorf("the end's events, mail and notes do not follow the kept write: %v", kept)
			}
		})
	}
	for _, from := range []writePhase{inSync, inDoubt, gone} {
		t.Run(from.String()+"/nothing kept", func(t *testing.T) {
			w := inPhase(t, from, nil)
			mustPanic(t, from, func() { w.follow(&edit{}) })
		})
	}
}

func TestWriteStateRefused(t *testing.T) {
	for _, from := range []writePhase{retrying, retryingInDoubt, leaseLost} {
		t.Run(from.String(), func(t *testing.T) {
			w := inPhase(t, from, &edit{})
			first := w.backoff()
			if n := w.refused(); n != 2 {
				t.Fatalf("attempts after a second failure = %d", n)
			}
			if w.phase != from {
				t.Fatalf("refused: %v → %v", from, w.phase)
			}
			if w.backoff() <= first {
				t.Errorf("back-off does not grow: %v then %v", first, w.backoff())
			}
		})
	}
	for _, from := range []writePhase{inSync, inDoubt, gone} {
		t.Run(from.String()+"/nothing kept", func(t *testing.T) {
			w := inPhase(t, from, nil)
			mustPanic(t, from, func() { w.refused() })
		})
	}
}

func TestWriteStateCaughtUpAndDrop(t *testing.T) {
	want := map[writePhase]writePhase{retrying: inSync, retryingInDoubt: inDoubt, leaseLost: leaseLost}
	for from, to := range want {
		t.Run("caughtUp/"+from.String(), func(t *testing.T) {
			w := inPhase(t, from, &edit{})
			w.refused()
			w.caughtUp()
			if w.phase != to || w.retrying() || w.attempts != 0 || w.then != nil {
				t.Fatalf("caughtUp: %v → %v (pending %v, attempts %d)", from, w.phase, w.pending, w.attempts)
			}
		})
	}
	for _, from := range []writePhase{inSync, inDoubt, gone} {
		t.Run("caughtUp/"+from.String()+"/nothing kept", func(t *testing.T) {
			w := inPhase(t, from, nil)
			mustPanic(t, from, func() { w.caughtUp() })
		})
	}
	want = map[writePhase]writePhase{inSync: inSync, retrying: inSync, inDoubt: inDoubt, retryingInDoubt: inDoubt, gone: gone}
	for from, to := range want {
		t.Run("drop/"+from.String(), func(t *testing.T) {
			w := inPhase(t, from, &edit{})
			w.drop()
			if w.phase != to || w.retrying() {
				t.Fatalf("drop: %v → %v", from, w.phase)
			}
		})
	}
}

func TestWriteStateNext(t *testing.T) {
	t.Run("in order, once", func(t *testing.T) {
		var w writeState
		var order []int
		w.queue(func() { order = append(order, 1) })
		w.queue(func() { order = append(order, 2) })
		if w.quiet() {
			t.Fatal("quiet with a continuation queued")
		}
		w.takeNext()()
		if len(order) != 2 || order[0] != 1 || order[1] != 2 {
			t.Fatalf("ran %v, want [1 2]", order)
		}
		if w.takeNext() != nil || !w.quiet() {
			t.Fatal("a continuation runs twice")
		}
	})
	for _, p := range []writePhase{leaseLost, gone} {
		t.Run(p.String(), func(t *testing.T) {
			w := &writeState{}
			w.queue(func() {})
			switch p {
			case leaseLost:
				w.lose(errMoved)
			case gone:
				w.end(errGone)
			}
			if w.takeNext() != nil {
				t.Fatalf("a continuation runs once %v", p)
			}
		})
	}
}

func TestWriteStateDoubt(t *testing.T) {
	want := map[writePhase]writePhase{inSync: inDoubt, retrying: retryingInDoubt, inDoubt: inDoubt, leaseLost: leaseLost, gone: gone}
	for from, to := range want {
		t.Run("suspect/"+from.String(), func(t *testing.T) {
			w := inPhase(t, from, &edit{})
			d := &doubt{}
			w.suspect(d)
			if w.phase != to {
				t.Fatalf("suspect: %v → %v, want %v", from, w.phase, to)
			}
			if w.holds() && w.doubt != d {
				t.Fatal("the newest write in doubt is not the one asked about")
			}
			if !w.holds() && w.doubtDue(time.Now()) != nil {
				t.Fatal("a session no longer held asks the store about a doubt")
			}
		})
	}
	t.Run("asked again after a pause", func(t *testing.T) {
		var w writeState
		now := time.Now()
		w.suspect(&doubt{after: now.Add(time.Second)})
		if w.doubtDue(now) != nil {
			t.Fatal("the store is asked before the pause is over")
		}
		if w.doubtDue(now.Add(time.Second)) == nil {
			t.Fatal("the store is not asked once the pause is over")
		}
	})
	want = map[writePhase]writePhase{inDoubt: inSync, retryingInDoubt: retrying}
	for from, to := range want {
		t.Run("resolved/"+from.String(), func(t *testing.T) {
			w := inPhase(t, from, &edit{})
			w.resolved()
			if w.phase != to || w.inDoubt() {
				t.Fatalf("resolved: %v → %v", from, w.phase)
			}
		})
	}
	for _, from := range []writePhase{inSync, retrying, gone} {
		t.Run("resolved/"+from.String()+"/no doubt", func(t *testing.T) {
			w := inPhase(t, from, &edit{})
			mustPanic(t, from, func() { w.resolved() })
		})
	}
}

func TestWriteStateLoseAndAbandon(t *testing.T) {
	for _, from := range []writePhase{inSync, retrying, inDoubt, retryingInDoubt} {
		t.Run(from.String(), func(t *testing.T) {
			w := inPhase(t, from, &edit{})
			w.queue(func() {})
			if !w.lose(errMoved) || w.phase != leaseLost {
				t.Fatalf("lose: %v → %v", from, w.phase)
			}
			if w.lose(errGone) || w.writeRefusal() != errMoved {
				t.Fatal("a second loss changes where the session went")
			}
			w.abandon()
			if w.phase != gone || w.refusal() != errMoved {
				t.Fatalf("abandon: %v, refusal %v", w.phase, w.refusal())
			}
			if w.retrying() || w.inDoubt() || w.next != nil {
				t.Fatal("abandon keeps what it must forget")
			}
		})
	}
	t.Run("gone stays gone", func(t *testing.T) {
		w := inPhase(t, gone, nil)
		if w.lose(errMoved) || w.phase != gone || w.refusal() != errGone {
			t.Fatalf("a gone actor lost a lease: %v, %v", w.phase, w.refusal())
		}
	})
	for _, from := range []writePhase{inSync, retrying, inDoubt, retryingInDoubt, gone} {
		t.Run("abandon/"+from.String(), func(t *testing.T) {
			w := inPhase(t, from, &edit{})
			mustPanic(t, from, func() { w.abandon() })
		})
	}
}

func TestWriteStateEnd(t *testing.T) {
	for _, from := range allPhases {
		t.Run(from.String(), func(t *testing.T) {
			w := inPhase(t, from, &edit{})
			w.queue(func() {})
			err := errors.New("closing")
			w.end(err)
			if w.phase != gone || w.refusal() != err || w.writeRefusal() != err {
				t.Fatalf("end: %v → %v, refusal %v", from, w.phase, w.refusal())
			}
			if w.retrying() || w.inDoubt() || w.takeNext() != nil {
				t.Fatal("a gone actor keeps a write or a continuation")
			}
		})
	}
}
