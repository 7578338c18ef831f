package cluster

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/store"
)

// memLog is an event log in memory that a test appends to as other
// servers would.
type memLog struct {
	mu   sync.Mutex
	rows []store.Event
	fail error
	// unnumbered are committed events still without a position, given
	// one by NumberEvents unless holdBack (a transaction before theirs
	// still running).
	unnumbered []*agentsv1.Event
	holdBack   bool
}

// appendUnnumbered commits events whose position numbering gives later.
func (l *memLog) appendUnnumbered(evs ...*agentsv1.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unnumbered = append(l.unnumbered, evs...)
}

func (l *memLog) setHoldBack(hold bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holdBack = hold
}

func (l *memLog) NumberEvents(context.Context) (bool, error) {
	l.mu.Lock()
	if l.fail != nil {
		l.mu.Unlock()
		return true, l.fail
	}
	if l.holdBack {
		l.mu.Unlock()
		return len(l.unnumbered) > 0, nil
	}
	evs := l.unnumbered
	l.unnumbered = nil
	next := uint64(0)
	if len(l.rows) > 0 {
		next = l.rows[len(l.rows)-1].Seq
	}
	l.mu.Unlock()
	for _, ev := range evs {
		next++
		ev.Seq = next
		l.append(ev)
	}
	return false, nil
}

func (l *memLog) append(evs ...*agentsv1.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ev := range evs {
		body, _ := proto.Marshal(ev)
		l.rows = append(l.rows, store.Event{Seq: ev.Seq, SessionID: ev.SessionId, Kind: ev.Kind, Body: body})
	}
}

func (l *memLog) setFail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fail = err
}

func (l *memLog) EventsAfter(_ context.Context, _ store.EventFilter, after uint64, limit int) ([]store.Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return nil, l.fail
	}
	var out []store.Event
	for _, r := range l.rows {
		if r.Seq > after && len(out) < limit {
			out = append(out, r)
		}
	}
	return out, nil
}

func (l *memLog) EventBounds(context.Context) (uint64, uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.rows) == 0 {
		return 0, 0, nil
	}
	return l.rows[0].Seq, l.rows[len(l.rows)-1].Seq, nil
}

func (l *memLog) PruneEvents(context.Context, time.Time, int) (int, error) { return 0, nil }

func logged(seq uint64) *agentsv1.Event {
	return &agentsv1.Event{Seq: seq, SessionId: "s", Owner: "o", Kind: "session.updated"}
}

func body(ev *agentsv1.Event) []byte {
	b, _ := proto.Marshal(ev)
	return b
}

// seqTest is a hub with a sequencer on a log in memory, and a subscriber
// of everything.
type seqTest struct {
	log *memLog
	bus *MemoryBus
	hub *events.Hub
	seq *Sequencer
	sub *events.Subscription
}

func newSeqTest(t *testing.T, start uint64, poll time.Duration) *seqTest {
	t.Helper()
	st := &seqTest{log: &memLog{}, bus: NewMemoryBus(), hub: events.New(events.Options{})}
	st.hub.Start(start)
	st.sub, _ = st.hub.Subscribe(events.AllScope(), nil)
	st.seq = NewSequencer(st.hub, st.log, st.bus, SequencerOptions{Poll: poll})
	t.Cleanup(func() {
		st.seq.Close()
		st.bus.Close()
		st.hub.Shutdown()
	})
	return st
}

// want waits until the subscriber got the seqs in want, in that order,
// and fails on anything else. It runs in a synctest bubble, whose clock
// moves only when every goroutine waits: the deadline costs no time, and
// "nothing else" is known, not guessed from a pause.
func (st *seqTest) want(t *testing.T, want ...uint64) {
	t.Helper()
	var got []uint64
	deadline := time.After(5 * time.Second)
	for len(got) < len(want) {
		select {
		case ev := <-st.sub.C():
			got = append(got, ev.Seq)
		case <-deadline:
			t.Fatalf("subscriber got seqs %v after 5s, want %v", got, want)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("subscriber got seqs %v, want %v", got, want)
	}
	// Once every goroutine of the test's bubble waits, nothing more is
	// on the way.
	synctest.Wait()
	select {
	case ev := <-st.sub.C():
		t.Fatalf("subscriber got seq %d after %v", ev.Seq, want)
	default:
	}
}

const noPoll = time.Hour

func TestSequencerPublishesAGapFromTheLogBeforeALocalCommit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := newSeqTest(t, 10, noPoll)
		st.want(t) // the start's read found nothing
		// Two other servers committed 11 and 12; 13 is this server's.
		st.log.append(logged(11), logged(12), logged(13))
		ev := logged(13)
		if err := st.seq.Committed(ev, body(ev)); err != nil {
			t.Fatal(err)
		}
		st.want(t, 11, 12, 13)
	})
}

func TestSequencerSkipsALocalCommitTheLogAlreadyGave(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := newSeqTest(t, 0, noPoll)
		st.log.append(logged(1), logged(2))
		if err := st.bus.Notify(context.Background(), ChannelEvents, "2"); err != nil {
			t.Fatal(err)
		}
		st.want(t, 1, 2)
		for _, seq := range []uint64{1, 2} {
			ev := logged(seq)
			if err := st.seq.Committed(ev, body(ev)); err != nil {
				t.Fatal(err)
			}
		}
		st.want(t)
	})
}

// A seq a rolled-back transaction burned is never in the log: the event
// after it is published at once.
func TestSequencerNeverWaitsForABurnedSeq(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := newSeqTest(t, 0, noPoll)
		st.log.append(logged(1), logged(3))
		for _, seq := range []uint64{1, 3} {
			ev := logged(seq)
			if err := st.seq.Committed(ev, body(ev)); err != nil {
				t.Fatal(err)
			}
		}
		st.want(t, 1, 3)
	})
}

// Other servers' events reach the hub on a notification, after a
// reconnect and on the poll; a notification of what is published reads
// nothing.
func TestSequencerFollowsTheLog(t *testing.T) {
	t.Parallel()
	t.Run("on a notification", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			st := newSeqTest(t, 0, noPoll)
			st.log.append(logged(1), logged(2))
			if err := st.bus.Notify(context.Background(), ChannelEvents, "2"); err != nil {
				t.Fatal(err)
			}
			st.want(t, 1, 2)
			// A notification of a seq already published does not read: one
			// in the log behind the sequencer's back stays unpublished.
			st.log.append(logged(3))
			if err := st.bus.Notify(context.Background(), ChannelEvents, "2"); err != nil {
				t.Fatal(err)
			}
			st.want(t)
		})
	})
	t.Run("after a reconnect", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			st := newSeqTest(t, 0, noPoll)
			st.log.append(logged(1))
			st.bus.Reconnect()
			st.want(t, 1)
		})
	})
	t.Run("on the poll", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			st := newSeqTest(t, 0, 10*time.Millisecond)
			st.log.append(logged(1), logged(2))
			st.want(t, 1, 2)
		})
	})
	t.Run("in batches", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			st := newSeqTest(t, 0, noPoll)
			var want []uint64
			for seq := uint64(1); seq <= 2*readBatch+7; seq++ {
				st.log.append(logged(seq))
				want = append(want, seq)
			}
			ev := logged(uint64(len(want) + 1))
			st.log.append(ev)
			want = append(want, ev.Seq)
			if err := st.seq.Committed(ev, body(ev)); err != nil {
				t.Fatal(err)
			}
			st.want(t, want...)
		})
	})
}

// A local commit whose gap cannot be read is not published ahead of it:
// the follower publishes both, in order, once the log reads again.
func TestSequencerLeavesALocalCommitToTheFollowerWhenTheLogFails(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := newSeqTest(t, 0, 10*time.Millisecond)
		st.want(t)
		// The log fails first: appended before, the follower's poll could
		// read both events and leave Committed nothing to do.
		st.log.setFail(errors.New("connection lost"))
		st.log.append(logged(1), logged(2))
		ev := logged(2)
		if err := st.seq.Committed(ev, body(ev)); err == nil {
			t.Fatal("Committed with a gap the log cannot read: no error")
		}
		st.want(t)
		st.log.setFail(nil)
		st.want(t, 1, 2)
	})
}

// The lag is how long the newest event read from the log (another
// server's) took from its time to this server's hub; this server's own
// commits do not count.
func TestSequencerReportsTheLagOfTheOtherServersEvents(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := newSeqTest(t, 0, noPoll)
		if got := st.seq.Lag(); got != 0 {
			t.Fatalf("lag before any event = %v, want 0", got)
		}
		ev := logged(1)
		st.log.mu.Lock()
		st.log.rows = append(st.log.rows, store.Event{Seq: 1, SessionID: ev.SessionId, Kind: ev.Kind, Time: time.Now().Add(-3 * time.Second), Body: body(ev)})
		st.log.mu.Unlock()
		if err := st.bus.Notify(context.Background(), ChannelEvents, "1"); err != nil {
			t.Fatal(err)
		}
		st.want(t, 1)
		if got := st.seq.Lag(); got < 3*time.Second || got > time.Minute {
			t.Fatalf("lag after an event 3s old = %v, want 3s and a little", got)
		}
		own := logged(2)
		st.log.append(own)
		if err := st.seq.Committed(own, body(own)); err != nil {
			t.Fatal(err)
		}
		st.want(t, 2)
		if got := st.seq.Lag(); got < 3*time.Second {
			t.Fatalf("lag after a commit of this server = %v, want the other server's still", got)
		}
	})
}

// A commit that could not wait for its events' positions hands them over
// with seq 0: the sequencer numbers until they have one (a transaction
// before theirs held them back), then publishes them from the log, in
// order, with no poll or notification to wake it.
func TestSequencerPublishesALocalCommitWithoutAPositionOnceItHasOne(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := newSeqTest(t, 0, noPoll)
		st.want(t)
		st.log.setHoldBack(true)
		a, b := logged(0), logged(0)
		st.log.appendUnnumbered(a, b)
		for _, ev := range []*agentsv1.Event{logged(0), logged(0)} {
			if err := st.seq.Committed(ev, body(ev)); err != nil {
				t.Fatal(err)
			}
		}
		st.want(t) // held back: nothing yet
		st.log.setHoldBack(false)
		st.want(t, 1, 2)
	})
}
