package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

func testMail(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	mustCreate(t, s, newMeta("s1", "alice", at(0)))
	mustCreate(t, s, newMeta("s2", "alice", at(0)))

	// Same created time, ids against insertion order: the mailbox order
	// must still be the order they arrived in.
	in := []session.Mail{
		newMail("m-d", "s1", at(0)),
		newMail("m-c", "s1", at(0)),
		newMail("m-b", "s1", at(0)),
		newMail("m-a", "s1", at(0)),
	}
	in[1].Sender = session.Sender{Kind: session.SenderSession, Name: "s2"}
	in[1].Priority = session.PriorityUrgent
	in[1].Body = session.MailBody{Kind: session.MailAgentMessage, Text: "from s2", Agent: "helper", AttachmentNames: []string{"x.txt"}}
	in[2].Body = session.MailBody{Kind: session.MailStopRun, Reason: "user asked"}
	mustAddMail(t, s, in...)
	mustAddMail(t, s, newMail("elsewhere", "s2", at(0)))

	pending, err := s.PendingMail(ctx, "s1")
	noErr(t, err, "pending")
	equal(t, "pending, in arrival order", pending, in)

	newest, err := s.ListMail(ctx, "s1", false)
	noErr(t, err, "list")
	equal(t, "list, newest first", mailIDs(newest), []string{"m-a", "m-b", "m-c", "m-d"})
	equal(t, "pending count", mustGet(t, s, "s1").PendingMail, 4)

	marked, err := s.MarkDelivered(ctx, []string{"m-c"}, at(time.Minute))
	noErr(t, err, "mark")
	equal(t, "marked", marked, []string{"m-c"})
	pendingOnly, err := s.ListMail(ctx, "s1", true)
	noErr(t, err, "list pending")
	equal(t, "pending only, newest first", mailIDs(pendingOnly), []string{"m-a", "m-b", "m-d"})
	equal(t, "pending count", mustGet(t, s, "s1").PendingMail, 3)

	// Mail may be stored already delivered (kept for the record).
	done := newMail("done", "s1", at(0))
	when := at(time.Second)
	done.Delivered = &when
	mustAddMail(t, s, done)
	all, err := s.ListMail(ctx, "s1", false)
	noErr(t, err, "list all")
	equal(t, "stored delivered", all[0], done)
	pending, err = s.PendingMail(ctx, "s1")
	noErr(t, err, "pending")
	equal(t, "pending", mailIDs(pending), []string{"m-d", "m-b", "m-a"})

	none, err := s.PendingMail(ctx, "ghost")
	noErr(t, err, "pending of unknown session")
	equal(t, "pending of unknown session", mailIDs(none), []string{})
}

func testMailRejects(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	mustCreate(t, s, newMeta("s1", "alice", at(0)))
	mustAddMail(t, s, newMail("m1", "s1", at(0)))
	tests := []struct {
		name string
		mail session.Mail
		kind errs.Kind
		code string
	}{
		{"unknown session", newMail("m2", "ghost", at(0)), errs.KindNotFound, errs.CodeUnknownSession},
		{"duplicate id", newMail("m1", "s1", at(0)), errs.KindConflict, errs.CodeAlreadyExists},
		{"no id", newMail("", "s1", at(0)), errs.KindInvalid, errs.CodeInvalidMail},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantErr(t, s.AddMail(context.Background(), tc.mail), tc.kind, tc.code)
		})
	}
	all, err := s.ListMail(context.Background(), "s1", false)
	noErr(t, err, "list")
	equal(t, "mail", mailIDs(all), []string{"m1"})
}

func testMarkDelivered(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	mustCreate(t, s, newMeta("s1", "alice", at(0)))
	mustAddMail(t, s, newMail("m1", "s1", at(0)), newMail("m2", "s1", at(0)), newMail("m3", "s1", at(0)))

	steps := []struct {
		ids  []string
		when time.Time
		want []string
	}{
		{[]string{"m2", "unknown", "m1", "m2"}, at(time.Minute), []string{"m2", "m1"}},
		{[]string{"m1", "m3"}, at(time.Hour), []string{"m3"}},
		{[]string{"m1", "m2", "m3"}, at(2 * time.Hour), []string{}},
		{nil, at(3 * time.Hour), []string{}},
	}
	for i, st := range steps {
		got, err := s.MarkDelivered(ctx, st.ids, st.when)
		noErr(t, err, "mark %d", i)
		if got == nil {
			got = []string{}
		}
		equal(t, fmt.Sprintf("newly marked in step %d", i), got, st.want)
	}
	// Each keeps the time of its one delivery.
	all, err := s.ListMail(ctx, "s1", false)
	noErr(t, err, "list")
	for _, m := range all {
		want := at(time.Minute)
		if m.ID == "m3" {
			want = at(time.Hour)
		}
		if m.Delivered == nil || !m.Delivered.Equal(want) {
			t.Fatalf("mail %s delivered at %v, want %v", m.ID, m.Delivered, want)
		}
	}
}

// testMarkDeliveredRace has several deliverers claim the same mail in
// different orders: every piece must be claimed by exactly one.
func testMarkDeliveredRace(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	mustCreate(t, s, newMeta("s1", "alice", at(0)))
	var all []string
	for i := range 50 {
		id := fmt.Sprintf("m%02d", i)
		all = append(all, id)
		mustAddMail(t, s, newMail(id, "s1", at(0)))
	}

	const racers = 8
	results := make([][]string, racers)
	errc := make(chan error, racers)
	var wg sync.WaitGroup
	for r := range racers {
		order := slices.Clone(all)
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		wg.Go(func() {
			// Claim in small batches so the racers interleave.
			for chunk := range slices.Chunk(order, 7) {
				got, err := s.MarkDelivered(ctx, chunk, at(time.Minute))
				if err != nil {
					errc <- err
					return
				}
				results[r] = append(results[r], got...)
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatalf("mark: %v", err)
	}
	var claimed []string
	for _, r := range results {
		claimed = append(claimed, r...)
	}
	slices.Sort(claimed)
	equal(t, "each mail claimed once", claimed, all)
	equal(t, "pending count", mustGet(t, s, "s1").PendingMail, 0)
}
