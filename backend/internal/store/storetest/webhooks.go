package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/store"
)

func newWebhook(id, owner string) *store.Webhook {
	return &store.Webhook{
		ID: id, Owner: owner, URL: "https://example.com/" + id, Events: []string{"budget.exceeded"},
		Secret: "whsec_" + id, Enabled: true, Created: at(0), Updated: at(0),
	}
}

// everyEvent is a fan-out plan that queues every event to every webhook
// that was created before it, as package webhooks does for the names it
// matches.
func everyEvent(hooks []store.Webhook, evs []store.Event) []store.Delivery {
	var out []store.Delivery
	for _, e := range evs {
		for _, w := range hooks {
			if e.Seq > w.AfterSeq {
				out = append(out, store.Delivery{
					ID: fmt.Sprintf("msg_%s_%d", w.ID, e.Seq), WebhookID: w.ID, Seq: e.Seq, Kind: e.Kind,
					SessionID: e.SessionID, Body: e.Body, NextAttempt: at(0), Created: at(0),
				})
			}
		}
	}
	return out
}

func commitEvents(t *testing.T, s store.Store, evs ...store.Event) []uint64 {
	t.Helper()
	c := &store.Change{Events: evs}
	noErr(t, s.Commit(context.Background(), c), "commit events")
	return eventSeqs(c.Events)
}

// testWebhooks: webhooks are created, read, listed by owner, changed and
// deleted; an unknown one is unknown_webhook; a new one starts after the
// log's newest event.
func testWebhooks(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	s := open(t, fresh(t))
	mustCreate(t, s, newMeta("a", "alice", at(0)))
	seqs := commitEvents(t, s, event("a", "alice", events.KindRunStopped, 0))

	a := newWebhook("wh_a", "alice")
	noErr(t, s.CreateWebhook(ctx, a, nil), "create")
	equal(t, "after seq", a.AfterSeq, seqs[0])
	b := newWebhook("wh_b", "bob")
	b.ServerWide, b.Events, b.Created = true, []string{"run.failed", "agent.changed"}, at(time.Second)
	noErr(t, s.CreateWebhook(ctx, b, nil), "create b")
	wantErr(t, s.CreateWebhook(ctx, newWebhook("wh_a", "alice"), nil), errs.KindConflict, errs.CodeAlreadyExists)

	got, err := s.GetWebhook(ctx, "wh_b")
	noErr(t, err, "get")
	equal(t, "events", got.Events, []string{"run.failed", "agent.changed"})
	equal(t, "server wide", got.ServerWide, true)
	equal(t, "secret", got.Secret, "whsec_wh_b")
	equal(t, "created", got.Created, at(time.Second))
	_, err = s.GetWebhook(ctx, "wh_none")
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownWebhook)

	list, err := s.ListWebhooks(ctx, "alice")
	noErr(t, err, "list alice")
	equal(t, "alice's", len(list), 1)
	list, err = s.ListWebhooks(ctx, "")
	noErr(t, err, "list all")
	equal(t, "all", []string{list[0].ID, list[1].ID}, []string{"wh_a", "wh_b"})

	got.Enabled, got.DisabledReason, got.URL, got.Updated = false, "broken", "https://example.org/", at(time.Minute)
	noErr(t, s.UpdateWebhook(ctx, got), "update")
	again, err := s.GetWebhook(ctx, "wh_b")
	noErr(t, err, "get after update")
	equal(t, "enabled", again.Enabled, false)
	equal(t, "reason", again.DisabledReason, "broken")
	equal(t, "url", again.URL, "https://example.org/")
	wantErr(t, s.UpdateWebhook(ctx, store.Webhook{ID: "wh_none"}), errs.KindNotFound, errs.CodeUnknownWebhook)

	noErr(t, s.DeleteWebhook(ctx, "wh_b"), "delete")
	_, err = s.GetWebhook(ctx, "wh_b")
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownWebhook)
	wantErr(t, s.DeleteWebhook(ctx, "wh_b"), errs.KindNotFound, errs.CodeUnknownWebhook)

	// A keyed create records its key with the webhook; the key again
	// creates nothing.
	key := &store.IdempotencyRecord{Owner: "alice", Key: "k1", Op: "create_webhook", Result: `{"webhook_id":"wh_k"}`, Created: at(0)}
	noErr(t, s.CreateWebhook(ctx, newWebhook("wh_k", "alice"), key), "create with a key")
	rec, err := s.Idempotent(ctx, "alice", "k1")
	noErr(t, err, "read the key")
	equal(t, "the key's result", rec.Result, key.Result)
	wantErr(t, s.CreateWebhook(ctx, newWebhook("wh_k2", "alice"), key), errs.KindConflict, errs.CodeAlreadyExists)
	_, err = s.GetWebhook(ctx, "wh_k2")
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownWebhook)
}

// testWebhookOutbox: the fan-out queues each event once per webhook and
// moves its cursor; a claimed delivery is not claimed again until its
// claim expires; only the claim's holder records an outcome, and a
// delivery is delivered once; a webhook failing long enough is disabled.
func testWebhookOutbox(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	o := fresh(t)
	s := o(t)
	mustCreate(t, s, newMeta("a", "alice", at(0)))
	commitEvents(t, s, event("a", "alice", "x", 0))
	noErr(t, s.CreateWebhook(ctx, newWebhook("wh_a", "alice"), nil), "create")
	seqs := commitEvents(t, s, event("a", "alice", "x", 1), event("a", "alice", "x", 2), event("a", "alice", "x", 3))

	n, err := s.FanOut(ctx, 2, everyEvent)
	noErr(t, err, "fan out")
	equal(t, "read", n, 2)
	n, err = s.FanOut(ctx, 2, everyEvent)
	noErr(t, err, "fan out the rest")
	equal(t, "read the rest", n, 1)
	n, err = s.FanOut(ctx, 2, everyEvent)
	noErr(t, err, "fan out nothing")
	equal(t, "read nothing", n, 0)
	// Across a restart the cursor holds.
	noErr(t, s.Close(), "close")
	s = open(t, o)
	n, err = s.FanOut(ctx, 10, everyEvent)
	noErr(t, err, "fan out after reopen")
	equal(t, "read after reopen", n, 0)

	ds, err := s.ListDeliveries(ctx, "wh_a", "", 0)
	noErr(t, err, "list deliveries")
	got := []uint64{}
	for _, d := range ds {
		got = append(got, d.Seq)
	}
	equal(t, "queued, newest first", got, []uint64{seqs[2], seqs[1], seqs[0]})
	equal(t, "status", ds[0].Status, store.DeliveryPending)

	due, err := s.DueWebhooks(ctx, at(time.Second))
	noErr(t, err, "due")
	equal(t, "due", due, []string{"wh_a"})
	first, err := s.ClaimDeliveries(ctx, "wh_a", "c1", at(time.Second), at(time.Minute), 2)
	noErr(t, err, "claim")
	equal(t, "claimed", len(first), 2)
	equal(t, "claim", first[0].Claim, "c1")
	second, err := s.ClaimDeliveries(ctx, "wh_a", "c2", at(2*time.Second), at(time.Minute), 5)
	noErr(t, err, "claim the rest")
	equal(t, "claimed the rest", len(second), 1)
	none, err := s.ClaimDeliveries(ctx, "wh_a", "c3", at(3*time.Second), at(time.Minute), 5)
	noErr(t, err, "claim again")
	equal(t, "claimed while held", len(none), 0)

	// The wrong claim records nothing.
	held, err := s.RecordAttempt(ctx, store.Attempt{DeliveryID: first[0].ID, WebhookID: "wh_a", Claim: "c2", At: at(4 * time.Second), Delivered: true})
	noErr(t, err, "record under another claim")
	equal(t, "held under another claim", held, false)
	// A failure: pending again, retried at Next; the webhook fails since.
	held, err = s.RecordAttempt(ctx, store.Attempt{DeliveryID: first[0].ID, WebhookID: "wh_a", Claim: "c1", At: at(5 * time.Second),
		StatusCode: 500, Error: "HTTP 500", Next: at(10 * time.Second)})
	noErr(t, err, "record failure")
	equal(t, "held", held, true)
	w, err := s.GetWebhook(ctx, "wh_a")
	noErr(t, err, "get")
	equal(t, "failing since", w.FailingSince, at(5*time.Second))
	next, err := s.NextDelivery(ctx)
	noErr(t, err, "next delivery")
	equal(t, "next delivery: the retry, before the claims' end", next, at(10*time.Second))
	early, err := s.ClaimDeliveries(ctx, "wh_a", "c4", at(9*time.Second), at(time.Minute), 5)
	noErr(t, err, "claim before due")
	equal(t, "claimed before due", len(early), 0)
	retry, err := s.ClaimDeliveries(ctx, "wh_a", "c5", at(10*time.Second), at(time.Minute), 5)
	noErr(t, err, "claim when due")
	if len(retry) != 1 || retry[0].ID != first[0].ID || retry[0].Attempts != 1 || retry[0].LastStatusCode != 500 {
		t.Fatalf("claimed when due = %+v, want %s after one attempt that got 500", retry, first[0].ID)
	}
	// Success, once: the holder's second record, and the first claim's,
	// find it delivered.
	held, err = s.RecordAttempt(ctx, store.Attempt{DeliveryID: first[0].ID, WebhookID: "wh_a", Claim: "c5", At: at(11 * time.Second), Delivered: true, StatusCode: 200})
	noErr(t, err, "record success")
	equal(t, "success held", held, true)
	for _, claim := range []string{"c5", "c1"} {
		held, err = s.RecordAttempt(ctx, store.Attempt{DeliveryID: first[0].ID, WebhookID: "wh_a", Claim: claim, At: at(12 * time.Second), Delivered: true})
		noErr(t, err, "record success again")
		equal(t, "second success held under "+claim, held, false)
	}
	delivered, err := s.ListDeliveries(ctx, "wh_a", store.DeliveryDelivered, 0)
	noErr(t, err, "list delivered")
	if len(delivered) != 1 || delivered[0].Attempts != 2 || !delivered[0].Delivered.Equal(at(11*time.Second)) || delivered[0].LastError != "" {
		t.Fatalf("delivered = %+v, want one after 2 attempts", delivered)
	}
	w, err = s.GetWebhook(ctx, "wh_a")
	noErr(t, err, "get")
	equal(t, "failing since after a success", w.FailingSince, time.Time{})

	// Failures from at(20s) on; at(20s)+1h it has failed long enough.
	held, err = s.RecordAttempt(ctx, store.Attempt{DeliveryID: first[1].ID, WebhookID: "wh_a", Claim: "c1", At: at(20 * time.Second), Error: "refused",
		Next: at(time.Hour), DisableIfFailingSince: at(20*time.Second - time.Hour), DisableReason: "failing"})
	noErr(t, err, "record failure")
	equal(t, "held", held, true)
	w, err = s.GetWebhook(ctx, "wh_a")
	noErr(t, err, "get")
	equal(t, "enabled while failing briefly", w.Enabled, true)
	held, err = s.RecordAttempt(ctx, store.Attempt{DeliveryID: second[0].ID, WebhookID: "wh_a", Claim: "c2", At: at(time.Hour + 20*time.Second), Error: "refused",
		DisableIfFailingSince: at(20 * time.Second), DisableReason: "failing for an hour"})
	noErr(t, err, "record the last failure")
	equal(t, "held", held, true)
	w, err = s.GetWebhook(ctx, "wh_a")
	noErr(t, err, "get")
	equal(t, "enabled after failing long", w.Enabled, false)
	equal(t, "reason", w.DisabledReason, "failing for an hour")
	failed, err := s.ListDeliveries(ctx, "wh_a", store.DeliveryFailed, 0)
	noErr(t, err, "list failed")
	equal(t, "given up", len(failed), 1)
	due, err = s.DueWebhooks(ctx, at(2*time.Hour))
	noErr(t, err, "due when disabled")
	equal(t, "due when disabled", len(due), 0)
	next, err = s.NextDelivery(ctx)
	noErr(t, err, "next delivery when disabled")
	equal(t, "next delivery when disabled", next, time.Time{})

	// Ended deliveries are pruned, pending ones kept.
	pruned, err := s.PruneDeliveries(ctx, at(time.Minute))
	noErr(t, err, "prune")
	equal(t, "pruned", pruned, 2)
	left, err := s.ListDeliveries(ctx, "wh_a", "", 0)
	noErr(t, err, "list after prune")
	equal(t, "left", len(left), 1)
	noErr(t, s.DeleteWebhook(ctx, "wh_a"), "delete")
	left, err = s.ListDeliveries(ctx, "wh_a", "", 0)
	noErr(t, err, "list after delete")
	equal(t, "left after delete", len(left), 0)
}

// testWebhookClaimRace: dispatchers claiming at once never claim one
// delivery twice, and fan-outs at once queue each event once. They share
// one store, whose pool gives each its own connection where the database
// has several (PostgreSQL).
func testWebhookClaimRace(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	s := open(t, fresh(t))
	other := s
	mustCreate(t, s, newMeta("a", "alice", at(0)))
	noErr(t, s.CreateWebhook(ctx, newWebhook("wh_a", "alice"), nil), "create")
	var evs []store.Event
	for i := range 40 {
		evs = append(evs, event("a", "alice", "x", i))
	}
	commitEvents(t, s, evs...)

	var wg sync.WaitGroup
	for _, st := range []store.Store{s, other} {
		wg.Go(func() {
			for {
				n, err := st.FanOut(ctx, 7, everyEvent)
				if err != nil {
					t.Errorf("fan out: %v", err)
					return
				}
				if n == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	all, err := s.ListDeliveries(ctx, "wh_a", "", 100)
	noErr(t, err, "list")
	equal(t, "queued", len(all), 40)

	var mu sync.Mutex
	claimed := map[string]string{}
	for i, st := range []store.Store{s, other, s, other} {
		wg.Go(func() {
			claim := fmt.Sprintf("c%d", i)
			for {
				ds, err := st.ClaimDeliveries(ctx, "wh_a", claim, at(time.Second), at(time.Minute), 3)
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				if len(ds) == 0 {
					return
				}
				mu.Lock()
				for _, d := range ds {
					if prev, ok := claimed[d.ID]; ok {
						t.Errorf("delivery %s claimed by %s and %s", d.ID, prev, claim)
					}
					claimed[d.ID] = claim
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	equal(t, "claimed", len(claimed), 40)
}

// testPruneKeepsUnfannedEvents: the log keeps the events the webhooks'
// fan-out has not read while a webhook is enabled.
func testPruneKeepsUnfannedEvents(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	s := open(t, fresh(t))
	mustCreate(t, s, newMeta("a", "alice", at(0)))
	noErr(t, s.CreateWebhook(ctx, newWebhook("wh_a", "alice"), nil), "create")
	seqs := commitEvents(t, s, event("a", "alice", "x", 0), event("a", "alice", "x", 1), event("a", "alice", "x", 2))
	_, err := s.PruneEvents(ctx, at(time.Hour), 1)
	noErr(t, err, "prune")
	oldest, _, err := s.EventBounds(ctx)
	noErr(t, err, "bounds")
	equal(t, "oldest kept before the fan-out", oldest, seqs[0])
	_, err = s.FanOut(ctx, 2, everyEvent)
	noErr(t, err, "fan out")
	_, err = s.PruneEvents(ctx, at(time.Hour), 1)
	noErr(t, err, "prune")
	oldest, _, err = s.EventBounds(ctx)
	noErr(t, err, "bounds")
	equal(t, "oldest kept after the fan-out", oldest, seqs[2])
}

// testAbandonedDeliveries: the pending deliveries of a disabled webhook,
// which no dispatcher attempts, are failed once their retries would have
// run out (not while claimed), then pruned as every ended delivery; an
// enabled webhook's are left to their retries; a deleted webhook's went
// with it.
func testAbandonedDeliveries(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	s := open(t, fresh(t))
	mustCreate(t, s, newMeta("a", "alice", at(0)))
	for _, id := range []string{"wh_on", "wh_off", "wh_gone"} {
		noErr(t, s.CreateWebhook(ctx, newWebhook(id, "alice"), nil), "create %s", id)
	}
	commitEvents(t, s, event("a", "alice", "x", 1), event("a", "alice", "x", 2))
	_, err := s.FanOut(ctx, 10, everyEvent)
	noErr(t, err, "fan out")
	claimed, err := s.ClaimDeliveries(ctx, "wh_off", "c1", at(time.Second), at(time.Hour), 1)
	noErr(t, err, "claim")
	equal(t, "claimed", len(claimed), 1)
	off, err := s.GetWebhook(ctx, "wh_off")
	noErr(t, err, "get wh_off")
	off.Enabled = false
	noErr(t, s.UpdateWebhook(ctx, off), "disable wh_off")
	noErr(t, s.DeleteWebhook(ctx, "wh_gone"), "delete wh_gone")

	statuses := func(id string) map[string]int {
		t.Helper()
		ds, err := s.ListDeliveries(ctx, id, "", 10)
		noErr(t, err, "deliveries of %s", id)
		out := map[string]int{}
		for _, d := range ds {
			out[d.Status]++
			if d.Status == store.DeliveryFailed && (d.LastError != "disabled" || !d.NextAttempt.IsZero()) {
				t.Errorf("abandoned delivery %+v", d)
			}
		}
		return out
	}
	n, err := s.AbandonDeliveries(ctx, at(0), at(time.Minute), "disabled")
	noErr(t, err, "abandon within the retry window")
	equal(t, "abandoned within the retry window", n, 0)
	n, err = s.AbandonDeliveries(ctx, at(time.Minute), at(time.Minute), "disabled")
	noErr(t, err, "abandon")
	equal(t, "abandoned while one is claimed", n, 1)
	equal(t, "wh_off", statuses("wh_off"), map[string]int{store.DeliveryFailed: 1, store.DeliveryPending: 1})
	n, err = s.AbandonDeliveries(ctx, at(time.Minute), at(2*time.Hour), "disabled")
	noErr(t, err, "abandon once the claim ran out")
	equal(t, "abandoned once the claim ran out", n, 1)
	held, err := s.RecordAttempt(ctx, store.Attempt{DeliveryID: claimed[0].ID, WebhookID: "wh_off", Claim: "c1", At: at(2 * time.Hour), Delivered: true})
	noErr(t, err, "record a late attempt")
	equal(t, "a late attempt of an abandoned delivery holds", held, false)
	equal(t, "wh_off", statuses("wh_off"), map[string]int{store.DeliveryFailed: 2})
	equal(t, "wh_on", statuses("wh_on"), map[string]int{store.DeliveryPending: 2})
	equal(t, "wh_gone", statuses("wh_gone"), map[string]int{})

	pruned, err := s.PruneDeliveries(ctx, at(time.Second))
	noErr(t, err, "prune")
	equal(t, "pruned", pruned, 2)
	equal(t, "wh_off after pruning", statuses("wh_off"), map[string]int{})
	equal(t, "wh_on after pruning", statuses("wh_on"), map[string]int{store.DeliveryPending: 2})
}

// testWebhookLastDelivery: a webhook is read and listed with its newest
// delivery (the latest event's), where it stands and what its last
// attempt got, without its body; one with none has none.
func testWebhookLastDelivery(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	s := open(t, fresh(t))
	mustCreate(t, s, newMeta("a", "alice", at(0)))
	for _, id := range []string{"wh_failing", "wh_fine"} {
		noErr(t, s.CreateWebhook(ctx, newWebhook(id, "alice"), nil), "create %s", id)
	}
	seqs := commitEvents(t, s, event("a", "alice", "x", 1), event("a", "alice", "y", 2))
	_, err := s.FanOut(ctx, 10, everyEvent)
	noErr(t, err, "fan out")
	// Created after the fan-out: nothing queued for it.
	quiet := newWebhook("wh_quiet", "alice")
	quiet.Created = at(time.Second)
	noErr(t, s.CreateWebhook(ctx, quiet, nil), "create wh_quiet")

	for _, id := range []string{"wh_failing", "wh_fine"} {
		ds, err := s.ClaimDeliveries(ctx, id, "c_"+id, at(time.Second), at(time.Hour), 10)
		noErr(t, err, "claim %s", id)
		equal(t, "claimed of "+id, len(ds), 2)
		for _, d := range ds {
			a := store.Attempt{DeliveryID: d.ID, WebhookID: id, Claim: "c_" + id, At: at(2 * time.Second)}
			if id == "wh_fine" {
				a.Delivered, a.StatusCode = true, 204
			} else {
				a.StatusCode, a.Error, a.Next = 503, "HTTP 503", at(time.Minute)
			}
			held, err := s.RecordAttempt(ctx, a)
			noErr(t, err, "record %s", d.ID)
			equal(t, "held "+d.ID, held, true)
		}
	}

	check := func(what string, w store.Webhook, want *store.Delivery) {
		t.Helper()
		if want == nil {
			if w.Last != nil {
				t.Errorf("%s: last delivery %+v, want none", what, *w.Last)
			}
			return
		}
		if w.Last == nil {
			t.Fatalf("%s: no last delivery, want %+v", what, *want)
		}
		equal(t, what+": last delivery", *w.Last, *want)
	}
	failing := &store.Delivery{ID: fmt.Sprintf("msg_wh_failing_%d", seqs[1]), WebhookID: "wh_failing", Seq: seqs[1], Kind: "y", SessionID: "a",
		Status: store.DeliveryPending, Attempts: 1, LastStatusCode: 503, LastError: "HTTP 503", NextAttempt: at(time.Minute),
		LastAttempt: at(2 * time.Second), Created: at(0)}
	fine := &store.Delivery{ID: fmt.Sprintf("msg_wh_fine_%d", seqs[1]), WebhookID: "wh_fine", Seq: seqs[1], Kind: "y", SessionID: "a",
		Status: store.DeliveryDelivered, Attempts: 1, LastStatusCode: 204, LastAttempt: at(2 * time.Second), Created: at(0), Delivered: at(2 * time.Second)}

	list, err := s.ListWebhooks(ctx, "alice")
	noErr(t, err, "list")
	equal(t, "listed", len(list), 3)
	check("listed wh_failing", list[0], failing)
	check("listed wh_fine", list[1], fine)
	check("listed wh_quiet", list[2], nil)
	all, err := s.ListWebhooks(ctx, "")
	noErr(t, err, "list every owner's")
	equal(t, "every owner's", len(all), 3)
	check("every owner's wh_failing", all[0], failing)

	got, err := s.GetWebhook(ctx, "wh_failing")
	noErr(t, err, "get")
	check("got wh_failing", got, failing)
	equal(t, "failing since", got.FailingSince, at(2*time.Second))
	got, err = s.GetWebhook(ctx, "wh_quiet")
	noErr(t, err, "get wh_quiet")
	check("got wh_quiet", got, nil)

	// Its log pruned, a webhook has no last delivery.
	_, err = s.PruneDeliveries(ctx, at(time.Hour))
	noErr(t, err, "prune")
	got, err = s.GetWebhook(ctx, "wh_fine")
	noErr(t, err, "get after prune")
	check("wh_fine after its log was pruned", got, nil)
}

// testWebhookLastAttempt: a delivery records when it was last tried:
// never, until an attempt's outcome is recorded; a failed attempt sets
// it and a retry moves it, failed or delivered (then it is the delivered
// time); a record under a claim that no longer holds leaves it; a
// webhook's last delivery carries it.
func testWebhookLastAttempt(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	s := open(t, fresh(t))
	mustCreate(t, s, newMeta("a", "alice", at(0)))
	noErr(t, s.CreateWebhook(ctx, newWebhook("wh_a", "alice"), nil), "create")
	commitEvents(t, s, event("a", "alice", "x", 1))
	_, err := s.FanOut(ctx, 10, everyEvent)
	noErr(t, err, "fan out")
	// tried is the delivery's last attempt as listed and as the
	// webhook's last delivery.
	tried := func(what string, want time.Time) {
		t.Helper()
		ds, err := s.ListDeliveries(ctx, "wh_a", "", 10)
		noErr(t, err, "list")
		if len(ds) != 1 {
			t.Fatalf("%s: %d deliveries, want 1", what, len(ds))
		}
		equal(t, what+": listed last attempt", ds[0].LastAttempt, want)
		w, err := s.GetWebhook(ctx, "wh_a")
		noErr(t, err, "get")
		if w.Last == nil {
			t.Fatalf("%s: the webhook has no last delivery", what)
		}
		equal(t, what+": the webhook's last delivery's last attempt", w.Last.LastAttempt, want)
	}
	tried("queued", time.Time{})

	attempt := func(claim string, now time.Time, a store.Attempt) store.Delivery {
		t.Helper()
		ds, err := s.ClaimDeliveries(ctx, "wh_a", claim, now, now.Add(time.Minute), 10)
		noErr(t, err, "claim %s", claim)
		if len(ds) != 1 {
			t.Fatalf("claim %s: %d deliveries, want 1", claim, len(ds))
		}
		a.DeliveryID, a.WebhookID, a.Claim = ds[0].ID, "wh_a", claim
		held, err := s.RecordAttempt(ctx, a)
		noErr(t, err, "record under %s", claim)
		equal(t, "held under "+claim, held, true)
		return ds[0]
	}
	attempt("c1", at(time.Second), store.Attempt{At: at(5 * time.Second), StatusCode: 503, Error: "HTTP 503", Next: at(10 * time.Second)})
	tried("failed once", at(5*time.Second))
	// The retry is claimed with the first attempt's time, then moves it.
	retry := attempt("c2", at(10*time.Second), store.Attempt{At: at(12 * time.Second), Error: "connection refused", Next: at(time.Minute)})
	equal(t, "claimed for the retry: last attempt", retry.LastAttempt, at(5*time.Second))
	tried("failed twice", at(12*time.Second))
	// A late record of a lost claim changes nothing.
	held, err := s.RecordAttempt(ctx, store.Attempt{DeliveryID: retry.ID, WebhookID: "wh_a", Claim: "c1", At: at(20 * time.Second), Delivered: true})
	noErr(t, err, "record under a lost claim")
	equal(t, "held under a lost claim", held, false)
	tried("after a lost claim's record", at(12*time.Second))
	attempt("c3", at(time.Minute), store.Attempt{At: at(time.Minute + time.Second), Delivered: true, StatusCode: 204})
	tried("delivered", at(time.Minute+time.Second))
	ds, err := s.ListDeliveries(ctx, "wh_a", store.DeliveryDelivered, 10)
	noErr(t, err, "list delivered")
	if len(ds) != 1 || ds[0].Attempts != 3 || !ds[0].Delivered.Equal(ds[0].LastAttempt) {
		t.Errorf("delivered = %+v, want one after 3 attempts, delivered at its last", ds)
	}
}
