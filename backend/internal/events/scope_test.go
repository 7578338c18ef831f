package events

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestScopes(t *testing.T) {
	// Published in this order, so event i gets seq i+1.
	events := []struct{ session, owner, kind string }{
		{"A", "alice", "session.created"}, // 1
		{"B", "alice", "session.created"}, // 2
		{"C", "bob", "session.created"},   // 3
		{"", "", "agents.changed"},        // 4: server-wide
		{"A", "alice", "subcall.started"}, // 5: stamped with the parent A
		{"D", "alice", "run.started"},     // 6: the child's own event
		{"", "alice", "mail.rejected"},    // 7: owner but no session
		{"E", "", "run.started"},          // 8: session but no owner
	}
	tests := []struct {
		scope Scope
		want  []uint64
	}{
		{SessionScope("A"), []uint64{1, 5}},
		{SessionScope("D"), []uint64{6}},
		{SessionScope("E"), []uint64{8}},
		{SessionScope("nope"), nil},
		{SessionScope(""), nil},
		{OwnerScope("alice"), []uint64{1, 2, 4, 5, 6, 7}},
		{OwnerScope("bob"), []uint64{3, 4}},
		{OwnerScope("carol"), []uint64{4}},
		{OwnerScope(""), []uint64{4}},
		{AllScope(), seqRange(1, 8)},
		{Scope{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.scope.String(), func(t *testing.T) {
			h := New(Options{})
			live, _ := h.Subscribe(tt.scope, nil)
			var matched []uint64
			for _, e := range events {
				ev := event(e.session, e.owner, e.kind)
				seq := h.Publish(ev)
				if tt.scope.Matches(ev) {
					matched = append(matched, seq)
				}
			}
			replay, mode := h.Subscribe(tt.scope, ptr(0))
			if mode != ModeReplay {
				t.Fatalf("replay from 0: mode %v", mode)
			}
			wantSeqs(t, "Matches", matched, tt.want)
			wantSeqs(t, "live delivery", queued(live), tt.want)
			wantSeqs(t, "replayed delivery", queued(replay), tt.want)
		})
	}
}

func TestScopeString(t *testing.T) {
	for scope, want := range map[Scope]string{
		SessionScope("x"): "session:x",
		OwnerScope("o"):   "owner:o",
		AllScope():        "all",
		{}:                "none",
	} {
		if got := scope.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}

// TestIndexAgreesWithMatches drives the bucketed fan-out with random scopes,
// events and closes, and checks every subscriber got exactly what its
// scope's Matches accepts.
func TestIndexAgreesWithMatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(pool ...string) string { return pool[rng.IntN(len(pool))] }
	sessions := []string{"", "s1", "s2", "s3", "s4"}
	owners := []string{"", "o1", "o2", "o3"}

	randomScope := func() Scope {
		switch rng.IntN(4) {
		case 0:
			return SessionScope(pick(sessions...))
		case 1:
			return OwnerScope(pick(owners...))
		case 2:
			return AllScope()
		default:
			return Scope{}
		}
	}

	const rounds, subsPerRound, eventsPerRound = 20, 10, 100
	h := New(Options{QueueSize: rounds * eventsPerRound})
	type tracked struct {
		sub  *Subscription
		want []uint64
	}
	var live []*tracked
	for round := range rounds {
		for range subsPerRound {
			sub, _ := h.Subscribe(randomScope(), nil)
			live = append(live, &tracked{sub: sub})
		}
		for range eventsPerRound {
			ev := event(pick(sessions...), pick(owners...), "text.delta")
			seq := h.Publish(ev)
			for _, tr := range live {
				if tr.sub.Scope().Matches(ev) {
					tr.want = append(tr.want, seq)
				}
			}
		}
		for _, tr := range live {
			wantSeqs(t, fmt.Sprintf("round %d, %v", round, tr.sub.Scope()), queued(tr.sub), tr.want)
			tr.want = nil
		}
		// Close a random third, to exercise removal from every bucket.
		live = slices.DeleteFunc(live, func(tr *tracked) bool {
			if rng.IntN(3) == 0 {
				tr.sub.Close()
				return true
			}
			return false
		})
		if got := h.Subscribers(); got != len(live) {
			t.Fatalf("round %d: Subscribers() = %d, want %d", round, got, len(live))
		}
	}
}
