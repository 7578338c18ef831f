package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

func createChange(m session.Meta) *store.Change {
	return &store.Change{Create: true, Meta: &m, Events: []store.Event{{SessionID: m.ID, Owner: m.Owner, Kind: events.KindSessionCreated, Time: m.Created, Body: []byte("{}")}}}
}

func childMeta(id, parent string) session.Meta {
	m := newMeta(id, "alice", at(time.Second))
	m.ParentID, m.Depth = parent, 1
	return m
}

// testCommitKeepsChildrenWithTheirParent: a change never leaves a child
// pointing at a parent that is gone. A child is created only under a
// parent that exists, and a session is deleted only with its children,
// however creates and deletes race.
func testCommitKeepsChildrenWithTheirParent(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()

	err := s.Commit(ctx, createChange(childMeta("orphan", "nobody")))
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownSession)
	_, err = s.GetMeta(ctx, "orphan")
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownSession)

	noErr(t, s.Commit(ctx, createChange(newMeta("p", "alice", at(0)))), "create parent")
	noErr(t, s.Commit(ctx, createChange(childMeta("c", "p"))), "create child")
	err = s.Commit(ctx, &store.Change{Delete: []string{"p"}})
	wantErr(t, err, errs.KindFailedPrecondition, errs.CodeSessionHasChildren)
	equal(t, "parent after a refused delete", mustGet(t, s, "p").ID, "p")
	noErr(t, s.Commit(ctx, &store.Change{Delete: []string{"c", "p"}}), "delete parent and child")
	for _, id := range []string{"p", "c"} {
		_, err := s.GetMeta(ctx, id)
		wantErr(t, err, errs.KindNotFound, errs.CodeUnknownSession)
	}

	for i := range 20 {
		parent, child := fmt.Sprintf("p%d", i), fmt.Sprintf("c%d", i)
		noErr(t, s.Commit(ctx, createChange(newMeta(parent, "alice", at(0)))), "create parent")
		var wg sync.WaitGroup
		wg.Go(func() { _ = s.Commit(ctx, createChange(childMeta(child, parent))) })
		wg.Go(func() { _ = s.Commit(ctx, &store.Change{Delete: []string{parent}}) })
		wg.Wait()
		_, perr := s.GetMeta(ctx, parent)
		if _, cerr := s.GetMeta(ctx, child); cerr == nil && perr != nil {
			t.Fatalf("round %d: child %s outlived its parent (%v)", i, child, perr)
		}
	}
}
