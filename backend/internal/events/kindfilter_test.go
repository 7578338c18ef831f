package events

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// scopeOnlyLog is a Log that selects by scope only, as the store does: the
// hub sifts the kinds of what it reads.
type scopeOnlyLog struct{ memLog }

func (l *scopeOnlyLog) After(ctx context.Context, scope Scope, seq uint64, limit int) ([]*agentsv1.Event, error) {
	scope.kinds = 0
	return l.memLog.After(ctx, scope, seq, limit)
}

func ofKinds(t *testing.T, scope Scope, kinds ...string) Scope {
	t.Helper()
	s, err := scope.OfKinds(kinds...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// kindsOf drains what sub has queued as "seq:kind" items.
func kindsOf(sub *Subscription) string {
	var out []string
	for {
		select {
		case ev, ok := <-sub.C():
			if !ok {
				return strings.Join(out, " ")
			}
			out = append(out, fmt.Sprintf("%d:%s", ev.GetSeq(), ev.GetKind()))
		default:
			return strings.Join(out, " ")
		}
	}
}

func TestAnUnknownKindIsRefusedByName(t *testing.T) {
	_, err := AllScope().OfKinds(KindRunStopped, "run.stoped")
	if !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("err = %v, want ErrUnknownKind", err)
	}
	for _, want := range []string{`"run.stoped"`, KindRunStopped, KindSessionFailed, KindTextDelta} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %s", err, want)
		}
	}
	if s, err := AllScope().OfKinds(); err != nil || s != AllScope() {
		t.Errorf("no kinds: %v, %v; want the scope as it was", s, err)
	}
	if got := ofKinds(t, OwnerScope("o"), KindSessionUpdated, KindRunStopped).String(); got != "owner:o kinds=session.updated,run.stopped" {
		t.Errorf("String() = %q", got)
	}
}

// A subscriber gets the events of its kinds only, in order, logged and
// deltas alike; the others never reach its queue, so however many of
// them come it is not cut as lagged.
func TestASubscriberGetsOnlyItsKindsAndNoneOtherIsQueued(t *testing.T) {
	h := New(Options{QueueSize: 8})
	stopped := ofKinds(t, OwnerScope("o"), KindRunStopped, KindSessionFailed)
	text := ofKinds(t, SessionScope("s"), KindTextDelta)
	subStopped, _ := h.Subscribe(stopped, nil)
	subText, _ := h.Subscribe(text, nil)
	var want []string
	for i := range 100 {
		h.Publish(event("s", "o", KindSessionUpdated))
		h.PublishDelta(delta("s", "o", fmt.Sprint(i)))
		if i%25 == 0 {
			seq := h.Publish(event("s", "o", KindRunStopped))
			want = append(want, fmt.Sprintf("%d:%s", seq, KindRunStopped))
			h.Publish(event("s", "other", KindRunStopped)) // another owner's
		}
	}
	seq := h.Publish(event("t", "o", KindSessionFailed))
	want = append(want, fmt.Sprintf("%d:%s", seq, KindSessionFailed))
	h.Publish(&agentsv1.Event{SessionId: "s", Owner: "o"}) // no kind
	if got := kindsOf(subStopped); got != strings.Join(want, " ") {
		t.Errorf("run.stopped and session.failed: got %q, want %q", got, strings.Join(want, " "))
	}
	if subStopped.Err() != nil || h.Lagged() != 1 {
		t.Errorf("the filtered subscriber: %v; lagged cuts %d, want only the text.delta one's (its queue holds 8 of 100)", subStopped.Err(), h.Lagged())
	}
	if lagged, _ := subText.Lagged(); !lagged {
		t.Errorf("the text.delta subscriber was not cut: it was offered every delta")
	}
}

// A reconnect with the last position a filtered subscriber had replays
// every event of its kinds after it, from the ring and from the log, the
// log read by scope only: nothing of its kinds is missed, nothing else
// comes.
func TestAFilteredReplayHasEveryEventOfItsKinds(t *testing.T) {
	for _, tt := range []struct {
		name string
		ring int
	}{{"from the ring", 0}, {"from the log", 4}} {
		t.Run(tt.name, func(t *testing.T) {
			log := &scopeOnlyLog{}
			h := New(Options{Log: log, RingSize: tt.ring})
			h.Start(0)
			publish := func(kind string) uint64 {
				ev := &agentsv1.Event{Seq: h.Seq() + 1, SessionId: "s", Owner: "o", Kind: kind}
				log.evs = append(log.evs, ev)
				return h.Publish(ev)
			}
			scope := ofKinds(t, OwnerScope("o"), KindRunStopped)
			first := publish(KindRunStopped)
			var want []string
			for range 5 {
				publish(KindRunStarted)
				publish(KindSessionUpdated)
				want = append(want, fmt.Sprintf("%d:%s", publish(KindRunStopped), KindRunStopped))
			}
			h.PublishDelta(delta("s", "o", "x"))
			publish(KindSessionUpdated)
			sub := subscribeAt(t, h, scope, Position{Seq: first})
			if sub.Mode() != ModeReplay {
				t.Fatalf("mode %v, want replay", sub.Mode())
			}
			want = append(want, fmt.Sprintf("%d:%s", publish(KindRunStopped), KindRunStopped))
			publish(KindSessionUpdated)
			if got := kindsOf(sub); got != strings.Join(want, " ") {
				t.Errorf("got %q, want %q", got, strings.Join(want, " "))
			}
		})
	}
}

// A filter without deltas is not turned to a snapshot by deltas it would
// not get having been pushed out; one with deltas still is.
func TestALostDeltaGivesASnapshotOnlyToAFilterThatTakesDeltas(t *testing.T) {
	h := New(Options{})
	h.Publish(event("a", "o", KindRunStarted))
	seen := h.PublishDelta(delta("a", "o", "A"))
	h.PublishDelta(delta("a", "o", "B"))
	for range DefaultDeltaRingSize {
		h.PublishDelta(delta("b", "o", "x"))
	}
	seq := h.Publish(event("a", "o", KindRunStopped))

	if sub := subscribeAt(t, h, ofKinds(t, OwnerScope("o"), KindTextDelta, KindRunStopped), seen); sub.Mode() != ModeSnapshot {
		t.Errorf("text.delta and run.stopped: mode %v, want snapshot (B was pushed out)", sub.Mode())
	}
	sub := subscribeAt(t, h, ofKinds(t, OwnerScope("o"), KindRunStopped), seen)
	if sub.Mode() != ModeReplay {
		t.Fatalf("run.stopped only: mode %v, want replay", sub.Mode())
	}
	if got, want := kindsOf(sub), fmt.Sprintf("%d:%s", seq, KindRunStopped); got != want {
		t.Errorf("replayed %q, want %q", got, want)
	}
}

// A subscription that holds a session's deltas back until its next logged
// event (a position of another server) lets them through after that event
// even when its kinds leave the event out.
func TestHeldDeltasOpenOnALoggedEventOfAnotherKind(t *testing.T) {
	ts := newTwoServers(Options{})
	ts.logged("s", KindSessionUpdated)
	last := ts.a.PublishDelta(delta("s", "o", "seen"))
	ts.b.PublishDelta(delta("s", "o", "seen"))
	sub := subscribeAt(t, ts.b, ofKinds(t, OwnerScope("o"), KindTextDelta), last)
	ts.b.PublishDelta(delta("s", "o", "late")) // the client may have had it
	if got := items(sub); got != "" {
		t.Fatalf("before the session's next logged event: %q, want nothing", got)
	}
	ts.logged("s", KindSessionUpdated)
	ts.b.PublishDelta(delta("s", "o", "next"))
	if got := items(sub); got != "next" {
		t.Errorf("after it: %q, want the next delta only", got)
	}
}

// The index offers each subscriber exactly what its scope, kinds
// included, matches.
func TestIndexAgreesWithMatchesOfKinds(t *testing.T) {
	h := New(Options{QueueSize: 1000})
	kinds := []string{KindRunStopped, KindSessionUpdated, KindTextDelta, KindAgentsChanged}
	type tracked struct {
		sub  *Subscription
		want []uint64
	}
	var subs []*tracked
	for i, scope := range []Scope{AllScope(), OwnerScope("o"), SessionScope("s")} {
		for j := range kinds {
			sub, _ := h.Subscribe(ofKinds(t, scope, kinds[j], kinds[(i+j+1)%len(kinds)]), nil)
			subs = append(subs, &tracked{sub: sub})
		}
		sub, _ := h.Subscribe(scope, nil)
		subs = append(subs, &tracked{sub: sub})
	}
	for i := range 200 {
		ev := event([]string{"s", "t", ""}[i%3], []string{"o", "p", ""}[i%5%3], append(kinds, "", KindRunStarted)[i%6])
		seq := h.Publish(ev)
		for _, tr := range subs {
			if tr.sub.Scope().Matches(ev) {
				tr.want = append(tr.want, seq)
			}
		}
	}
	for _, tr := range subs {
		wantSeqs(t, tr.sub.Scope().String(), queued(tr.sub), tr.want)
	}
}
