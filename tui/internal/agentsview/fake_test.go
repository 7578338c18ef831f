package agentsview

import (
	"context"
	"errors"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"
	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/theme"
)

// fakeServer serves the tab's calls from memory and counts them.
type fakeServer struct {
	mu       sync.Mutex
	agents   []*agentsv1.AgentDescriptor
	problems []*agentsv1.AgentLoadError
	lists    int
	reloads  int
	// reloadErr, when set, is ReloadAgents' answer.
	reloadErr error
	// versions are ListAgentVersions' answers by slug, newest first.
	versions map[string][]*agentsv1.AgentVersion
}

var _ Client = (*fakeServer)(nil)

func (f *fakeServer) ListAgents(context.Context, *connect.Request[agentsv1.ListAgentsRequest]) (*connect.Response[agentsv1.ListAgentsResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	return connect.NewResponse(&agentsv1.ListAgentsResponse{Agents: f.agents, Errors: f.problems}), nil
}

func (f *fakeServer) ReloadAgents(context.Context, *connect.Request[agentsv1.ReloadAgentsRequest]) (*connect.Response[agentsv1.ReloadAgentsResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reloads++
	if f.reloadErr != nil {
		return nil, f.reloadErr
	}
	return connect.NewResponse(&agentsv1.ReloadAgentsResponse{Agents: f.agents, Errors: f.problems}), nil
}

func (f *fakeServer) GetAgent(context.Context, *connect.Request[agentsv1.GetAgentRequest]) (*connect.Response[agentsv1.GetAgentResponse], error) {
	return nil, connect.NewError(connect.CodeUnimplemented, errors.New("not in this fake"))
}

func (f *fakeServer) ListAgentVersions(_ context.Context, req *connect.Request[agentsv1.ListAgentVersionsRequest]) (*connect.Response[agentsv1.ListAgentVersionsResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	list, ok := f.versions[req.Msg.GetSlug()]
	if !ok {
		return nil, connect.NewError(connect.CodeNotFound, errors.New("no agent "+req.Msg.GetSlug()))
	}
	return connect.NewResponse(&agentsv1.ListAgentVersionsResponse{Versions: list}), nil
}

func (f *fakeServer) UpdateAgent(context.Context, *connect.Request[agentsv1.UpdateAgentRequest]) (*connect.Response[agentsv1.UpdateAgentResponse], error) {
	return nil, connect.NewError(connect.CodeUnimplemented, errors.New("not in this fake"))
}

// run hands the answer of cmd to the tab, and returns the status line
// the tab then asks for, if any.
func run(a *Agents, cmd tea.Cmd) (msgs.Status, bool) {
	next := a.Handle(cmd())
	if next == nil {
		return msgs.Status{}, false
	}
	st, ok := next().(msgs.Status)
	return st, ok
}

func TestReloadSaysWhatItLoaded(t *testing.T) {
	t.Parallel()
	f := &fakeServer{
		agents:   []*agentsv1.AgentDescriptor{{Slug: "coder"}, {Slug: "planner"}},
		problems: []*agentsv1.AgentLoadError{{File: "broken.json", Reason: "bad"}},
	}
	a := New(t.Context(), f, theme.New(true), keys.Default())
	st, ok := run(a, a.Reload())
	if !ok || st.Err != nil || st.Text != "reloaded 2 agents, 1 load problem" {
		t.Fatalf("status %+v, want the agents and problems counted", st)
	}
	if f.reloads != 1 || len(a.List()) != 2 {
		t.Fatalf("%d reloads, %d agents listed; want 1 and 2", f.reloads, len(a.List()))
	}

	f.reloadErr = connect.NewError(connect.CodeInternal, errors.New("disk gone"))
	st, _ = run(a, a.Reload())
	if st.Err == nil || len(a.List()) != 2 {
		t.Fatalf("a failed reload: status %+v, %d agents; want the error and the list kept", st, len(a.List()))
	}
}

// Another client changed the agents: the tab lists them again.
func TestAChangeOfTheAgentsListsThemAgain(t *testing.T) {
	t.Parallel()
	f := &fakeServer{agents: []*agentsv1.AgentDescriptor{{Slug: "coder"}}}
	a := New(t.Context(), f, theme.New(true), keys.Default())
	a.Handle(a.Refresh()())
	f.agents = append(f.agents, &agentsv1.AgentDescriptor{Slug: "writer"})
	cmd := a.Handle(msgs.Event{Event: &agentsv1.Event{Body: &agentsv1.Event_AgentsChanged{AgentsChanged: &agentsv1.AgentsChanged{}}}})
	if cmd == nil {
		t.Fatal("no refetch after agents.changed")
	}
	a.Handle(cmd())
	if f.lists != 2 || len(a.List()) != 2 {
		t.Fatalf("%d listings, %d agents; want 2 and 2", f.lists, len(a.List()))
	}
}

// Two listings in flight answer in any order: the older answer, which
// may predate the change the newer one was asked for, does not replace
// the newer.
func TestAnOlderListingAnsweringLastIsIgnored(t *testing.T) {
	t.Parallel()
	f := &fakeServer{agents: []*agentsv1.AgentDescriptor{{Slug: "coder"}}}
	a := New(t.Context(), f, theme.New(true), keys.Default())
	first := a.Refresh()
	old := first()
	f.agents = append(f.agents, &agentsv1.AgentDescriptor{Slug: "writer"})
	cmd := a.Handle(msgs.Event{Event: &agentsv1.Event{Body: &agentsv1.Event_AgentsChanged{AgentsChanged: &agentsv1.AgentsChanged{}}}})
	a.Handle(cmd())
	a.Handle(old)
	if len(a.List()) != 2 {
		t.Fatalf("%d agents listed after the older answer came last; want the newer listing's 2", len(a.List()))
	}
}
