package events

import (
	"slices"
	"testing"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

func event(session, owner, kind string) *agentsv1.Event {
	return &agentsv1.Event{SessionId: session, Owner: owner, Kind: kind}
}

func ptr(n uint64) *uint64 { return &n }

// queued takes every event currently queued on sub without waiting. Publish
// queues synchronously, so once publishers have returned this is exactly
// what the subscriber has been given.
func queued(sub *Subscription) []uint64 {
	var out []uint64
	for {
		select {
		case ev, ok := <-sub.C():
			if !ok {
				return out
			}
			out = append(out, ev.Seq)
		default:
			return out
		}
	}
}

// isClosed reports whether sub's channel is closed with nothing queued.
func isClosed(sub *Subscription) bool {
	select {
	case _, ok := <-sub.C():
		return !ok
	default:
		return false
	}
}

func seqRange(from, to uint64) []uint64 {
	var out []uint64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

func wantSeqs(t *testing.T, what string, got, want []uint64) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got seqs %v, want %v", what, got, want)
	}
}

// publishN publishes n events of one session and owner, returning the last
// seq.
func publishN(h *Hub, n int, session, owner string) uint64 {
	var seq uint64
	for range n {
		seq = h.Publish(event(session, owner, "text.delta"))
	}
	return seq
}

// deltaAt is the position of h's delta number n, published at seq.
func deltaAt(h *Hub, seq, n uint64) Position {
	return Position{Seq: seq, Delta: h.delta&^counterMask | n}
}
