package events

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

func TestPublishStampsSeqAndTime(t *testing.T) {
	base := time.Date(2025, 3, 4, 5, 6, 7, 890, time.UTC)
	tick := 0
	h := New(Options{Now: func() time.Time {
		tick++
		return base.Add(time.Duration(tick) * time.Second)
	}})
	if h.Seq() != 0 {
		t.Fatalf("fresh hub Seq = %d, want 0", h.Seq())
	}
	for i := 1; i <= 3; i++ {
		ev := event("s", "o", "run.started")
		seq := h.Publish(ev)
		if seq != uint64(i) || ev.Seq != seq || h.Seq() != seq {
			t.Fatalf("publish %d: returned %d, ev.Seq %d, Seq() %d", i, seq, ev.Seq, h.Seq())
		}
		if want := base.Add(time.Duration(i) * time.Second); !ev.Time.AsTime().Equal(want) {
			t.Fatalf("publish %d: time %v, want %v", i, ev.Time.AsTime(), want)
		}
	}
}

func TestDefaults(t *testing.T) {
	h := New(Options{})
	last := publishN(h, DefaultRingSize+1, "s", "o")

	if _, mode := h.Subscribe(AllScope(), ptr(0)); mode != ModeSnapshot {
		t.Fatalf("after 0 with seq 1 evicted: mode %v, want snapshot", mode)
	}
	sub, mode := h.Subscribe(AllScope(), ptr(1))
	if mode != ModeReplay {
		t.Fatalf("after 1 with a full default ring: mode %v, want replay", mode)
	}
	wantSeqs(t, "replay of the whole ring", queued(sub), seqRange(2, last))

	live, _ := h.Subscribe(AllScope(), nil)
	publishN(h, DefaultQueueSize, "s", "o")
	if live.Err() != nil {
		t.Fatalf("a full default queue cut the subscriber: %v", live.Err())
	}
	publishN(h, 1, "s", "o")
	if !errors.Is(live.Err(), ErrLagged) {
		t.Fatalf("one past the default queue: Err %v, want ErrLagged", live.Err())
	}
}

func TestLaggedCountsEachCutOnce(t *testing.T) {
	h := New(Options{QueueSize: 2})
	slow, _ := h.Subscribe(OwnerScope("o"), nil)
	other, _ := h.Subscribe(OwnerScope("someone else"), nil)
	publishN(h, 2, "s", "o")
	if n := h.Lagged(); n != 0 {
		t.Fatalf("Lagged() = %d with full but uncut queues, want 0", n)
	}
	publishN(h, 3, "s", "o")
	if !errors.Is(slow.Err(), ErrLagged) || other.Err() != nil {
		t.Fatalf("slow Err %v, other Err %v: want only slow cut", slow.Err(), other.Err())
	}
	if n := h.Lagged(); n != 1 {
		t.Fatalf("Lagged() = %d after one cut and more events, want 1", n)
	}
	slow.Close()
	h.Shutdown()
	if n := h.Lagged(); n != 1 {
		t.Fatalf("Lagged() = %d after Close and Shutdown, want 1", n)
	}
}

func TestSeqStrictlyIncreasingUnderConcurrentPublishers(t *testing.T) {
	const publishers, each = 8, 500
	const total = publishers * each
	h := New(Options{QueueSize: total})
	sub, _ := h.Subscribe(AllScope(), nil)

	got := make([][]uint64, publishers)
	var wg sync.WaitGroup
	for p := range publishers {
		wg.Go(func() {
			for range each {
				ev := event("s", "o", "text.delta")
				seq := h.Publish(ev)
				if ev.Seq != seq {
					t.Errorf("returned seq %d, event carries %d", seq, ev.Seq)
				}
				got[p] = append(got[p], seq)
			}
		})
	}
	wg.Wait()

	var all []uint64
	for p, seqs := range got {
		if !slices.IsSorted(seqs) || len(slices.Compact(slices.Clone(seqs))) != len(seqs) {
			t.Fatalf("publisher %d saw seqs that do not strictly increase: %v", p, seqs)
		}
		all = append(all, seqs...)
	}
	slices.Sort(all)
	wantSeqs(t, "seqs handed out", all, seqRange(1, total))
	wantSeqs(t, "seqs delivered", queued(sub), seqRange(1, total))
}

func TestSubscribeModes(t *testing.T) {
	// Ring of 4 after 10 events: it holds 7..10.
	tests := []struct {
		name     string
		after    *uint64
		mode     Mode
		backlog  []uint64
		lastSeq  uint64
		snapshot uint64
	}{
		{"nil is live", nil, ModeLive, nil, 10, 10},
		{"current seq replays nothing", ptr(10), ModeReplay, nil, 10, 10},
		{"inside the ring", ptr(8), ModeReplay, []uint64{9, 10}, 10, 10},
		{"oldest boundary", ptr(6), ModeReplay, []uint64{7, 8, 9, 10}, 10, 10},
		{"one too old", ptr(5), ModeSnapshot, nil, 10, 10},
		{"zero, long evicted", ptr(0), ModeSnapshot, nil, 10, 10},
		{"future seq", ptr(11), ModeSnapshot, nil, 10, 10},
		{"far future seq", ptr(^uint64(0)), ModeSnapshot, nil, 10, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(Options{RingSize: 4})
			publishN(h, 10, "s", "o")
			sub, mode := h.Subscribe(AllScope(), tt.after)
			if mode != tt.mode || sub.Mode() != tt.mode {
				t.Fatalf("mode %v (sub says %v), want %v", mode, sub.Mode(), tt.mode)
			}
			if sub.SnapshotSeq() != tt.snapshot {
				t.Fatalf("SnapshotSeq %d, want %d", sub.SnapshotSeq(), tt.snapshot)
			}
			if sub.LastSeq() != tt.lastSeq {
				t.Fatalf("LastSeq %d, want %d", sub.LastSeq(), tt.lastSeq)
			}
			wantSeqs(t, "backlog", queued(sub), tt.backlog)
			h.Publish(event("s", "o", "text.delta"))
			wantSeqs(t, "live", queued(sub), []uint64{11})
		})
	}
}

func TestSubscribeModesOnShortHistory(t *testing.T) {
	tests := []struct {
		name      string
		published int
		after     uint64
		mode      Mode
		backlog   []uint64
	}{
		{"empty hub, after 0", 0, 0, ModeReplay, nil},
		{"empty hub, after 1", 0, 1, ModeSnapshot, nil},
		{"ring not full, after 0", 5, 0, ModeReplay, seqRange(1, 5)},
		{"ring exactly full, after 0", 8, 0, ModeReplay, seqRange(1, 8)},
		{"ring wrapped once, after 0", 9, 0, ModeSnapshot, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(Options{RingSize: 8})
			publishN(h, tt.published, "s", "o")
			sub, mode := h.Subscribe(AllScope(), ptr(tt.after))
			if mode != tt.mode {
				t.Fatalf("mode %v, want %v", mode, tt.mode)
			}
			wantSeqs(t, "backlog", queued(sub), tt.backlog)
		})
	}
}

func TestReplayIsNotChargedToTheQueue(t *testing.T) {
	h := New(Options{RingSize: 16, QueueSize: 2})
	publishN(h, 10, "s", "o")
	sub, _ := h.Subscribe(AllScope(), ptr(0))
	publishN(h, 2, "s", "o")
	if sub.Err() != nil {
		t.Fatalf("10 replayed + 2 live with a queue of 2: Err %v, want live", sub.Err())
	}
	publishN(h, 1, "s", "o")
	if lagged, last := sub.Lagged(); !lagged || last.Seq != 12 {
		t.Fatalf("Lagged() = %v, %d; want true, 12", lagged, last)
	}
	wantSeqs(t, "queued before the cut", queued(sub), seqRange(1, 12))
	if !isClosed(sub) {
		t.Fatal("channel not closed after the cut")
	}
}

func TestLastSeqIsThePosition(t *testing.T) {
	h := New(Options{})
	h.Publish(event("a", "o", "text.delta")) // 1
	h.Publish(event("b", "o", "text.delta")) // 2
	sub, _ := h.Subscribe(SessionScope("a"), ptr(0))
	if sub.LastSeq() != 2 {
		t.Fatalf("after replay LastSeq = %d, want 2 (everything of a up to 2 is queued)", sub.LastSeq())
	}
	h.Publish(event("b", "o", "text.delta")) // 3
	if sub.LastSeq() != 2 {
		t.Fatalf("after another session's event LastSeq = %d, want 2", sub.LastSeq())
	}
	h.Publish(event("a", "o", "text.delta")) // 4
	if sub.LastSeq() != 4 {
		t.Fatalf("after a live event LastSeq = %d, want 4", sub.LastSeq())
	}
	wantSeqs(t, "delivered", queued(sub), []uint64{1, 4})
}

// An event whose seq is not above the newest one published came out of
// order: the publisher's commits and publications disagree. The hub
// refuses it loudly instead of renumbering it, which would give it a
// position the log does not have.
func TestPublishEncodedRefusesAnOutOfOrderSeq(t *testing.T) {
	h := New(Options{})
	h.Start(4)
	live, _ := h.Subscribe(AllScope(), nil)
	if _, err := h.PublishEncoded(&agentsv1.Event{Seq: 5, SessionId: "s", Kind: "x"}, nil); err != nil {
		t.Fatalf("seq 5 after 4: %v", err)
	}
	for _, seq := range []uint64{5, 3} {
		got, err := h.PublishEncoded(&agentsv1.Event{Seq: seq, SessionId: "s", Kind: "x"}, nil)
		if !errors.Is(err, ErrOutOfOrder) {
			t.Errorf("seq %d after 5: returned %d, %v; want ErrOutOfOrder", seq, got, err)
		}
	}
	if h.Seq() != 5 {
		t.Errorf("Seq() = %d after refused events, want 5", h.Seq())
	}
	wantSeqs(t, "live events", queued(live), []uint64{5})
}
