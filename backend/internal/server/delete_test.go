package server_test

import (
	"net/http"
	"slices"
	"sync"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
)

// createChild makes an idle session under parent ("" for a root).
func (e *env) createIdle(parent string) (string, error) {
	res, err := e.sessions.CreateSession(ctxFor(e.t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "helper", ParentId: parent}))
	if err != nil {
		return "", err
	}
	return res.Msg.GetSession().GetMeta().GetId(), nil
}

func (e *env) mustCreateIdle(parent string) string {
	e.t.Helper()
	id, err := e.createIdle(parent)
	if err != nil {
		e.t.Fatalf("create a session under %q: %v", parent, err)
	}
	return id
}

// list returns every session of the owner, or only the roots.
func (e *env) list(roots bool) []*agentsv1.SessionMeta {
	e.t.Helper()
	res, err := e.sessions.ListSessions(ctxFor(e.t), connect.NewRequest(&agentsv1.ListSessionsRequest{RootsOnly: roots, PageSize: 500}))
	if err != nil {
		e.t.Fatal(err)
	}
	return res.Msg.GetSessions()
}

// checkNoOrphans fails the test when a session's parent is gone: such a
// session shows in no roots listing and under no parent.
func (e *env) checkNoOrphans() {
	e.t.Helper()
	all := e.list(false)
	ids := map[string]bool{}
	for _, m := range all {
		ids[m.GetId()] = true
	}
	for _, m := range all {
		if p := m.GetParentId(); p != "" && !ids[p] {
			e.t.Errorf("session %s points at parent %s, which is gone", m.GetId(), p)
		}
	}
}

// Issue 8, item 10: a session with children is deleted with them
// (cascade) or not at all, so no child is ever left pointing at a parent
// that is gone, idle children included.
func TestDeletingAParentTakesItsChildrenOrIsRefused(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{})
	root := e.mustCreateIdle("")
	child := e.mustCreateIdle(root)
	grandchild := e.mustCreateIdle(child)

	for _, id := range []string{root, child} {
		status, _, body := e.do(http.MethodDelete, "/v1/sessions/"+id, "")
		if _, reason, _ := jsonError(t, body); status != http.StatusPreconditionFailed || reason != "session_has_children" {
			t.Fatalf("single delete of %s, which has an idle child = %d %s, want 412 session_has_children", id, status, body)
		}
	}
	_, err := e.sessions.DeleteSession(ctxFor(t), connect.NewRequest(&agentsv1.DeleteSessionRequest{SessionId: root}))
	if codeOf(err) != connect.CodeFailedPrecondition {
		t.Fatalf("single delete over Connect: err = %v, want failed_precondition", err)
	}
	if n := len(e.list(false)); n != 3 {
		t.Fatalf("sessions after refused deletes = %d, want 3", n)
	}

	res, err := e.sessions.DeleteSession(ctxFor(t), connect.NewRequest(&agentsv1.DeleteSessionRequest{SessionId: root, Mode: agentsv1.DeleteMode_DELETE_MODE_CASCADE}))
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Clone(res.Msg.GetDeletedIds())
	if want := []string{grandchild, child, root}; !slices.Equal(got, want) {
		t.Errorf("cascade deleted %v, want %v (deepest first)", got, want)
	}
	if n := len(e.list(false)); n != 0 {
		t.Errorf("sessions after cascade = %d, want 0", n)
	}

	// A leaf goes alone.
	root = e.mustCreateIdle("")
	leaf := e.mustCreateIdle(root)
	if status, _, body := e.do(http.MethodDelete, "/v1/sessions/"+leaf, ""); status != http.StatusOK {
		t.Fatalf("single delete of a leaf = %d %s", status, body)
	}
	if status, _, body := e.do(http.MethodDelete, "/v1/sessions/"+root, ""); status != http.StatusOK {
		t.Fatalf("single delete of a parent whose children are gone = %d %s", status, body)
	}
	e.checkNoOrphans()
}

// Issue 8, item 10, under concurrency: a child created while its parent
// is being deleted either is created before the delete (which is then
// refused, or takes it along) or is refused itself: never a child of a
// session that is gone.
func TestAChildCreatedDuringItsParentsDeleteIsNeverOrphaned(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{})
	for _, mode := range []agentsv1.DeleteMode{agentsv1.DeleteMode_DELETE_MODE_SINGLE, agentsv1.DeleteMode_DELETE_MODE_CASCADE} {
		for range 20 {
			parent := e.mustCreateIdle("")
			var wg sync.WaitGroup
			wg.Go(func() {
				_, err := e.createIdle(parent)
				if err != nil && codeOf(err) != connect.CodeNotFound {
					t.Errorf("create a child of a parent being deleted: %v, want success or not_found", err)
				}
			})
			wg.Go(func() {
				_, err := e.sessions.DeleteSession(ctxFor(t), connect.NewRequest(&agentsv1.DeleteSessionRequest{SessionId: parent, Mode: mode}))
				if err != nil && codeOf(err) != connect.CodeFailedPrecondition {
					t.Errorf("delete a parent that gets a child: %v, want success or failed_precondition", err)
				}
			})
			wg.Wait()
		}
	}
	e.checkNoOrphans()
}
