package chats

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"connectrpc.com/connect"
	"github.com/charmbracelet/x/ansi"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/theme"
)

// fakeServer lists no session and records the delete it is asked for.
type fakeServer struct {
	got *agentsv1.DeleteSessionRequest
}

var _ Client = (*fakeServer)(nil)

func (d *fakeServer) ListSessions(context.Context, *connect.Request[agentsv1.ListSessionsRequest]) (*connect.Response[agentsv1.ListSessionsResponse], error) {
	return connect.NewResponse(&agentsv1.ListSessionsResponse{}), nil
}

func (d *fakeServer) DeleteSession(_ context.Context, req *connect.Request[agentsv1.DeleteSessionRequest]) (*connect.Response[agentsv1.DeleteSessionResponse], error) {
	d.got = req.Msg
	return connect.NewResponse(&agentsv1.DeleteSessionResponse{DeletedIds: []string{req.Msg.GetSessionId(), "child"}}), nil
}

func meta(id, parent, title string, updated int64) *agentsv1.SessionMeta {
	return &agentsv1.SessionMeta{Id: id, ParentId: parent, Title: title, UpdateTime: &timestamppb.Timestamp{Seconds: updated}}
}

func created(m *agentsv1.SessionMeta) msgs.Event {
	return msgs.Event{Event: &agentsv1.Event{SessionId: m.GetId(), Body: &agentsv1.Event_SessionCreated{SessionCreated: &agentsv1.SessionCreated{Meta: m}}}}
}

func screen(c *Chats) string { return ansi.Strip(c.Render(80, 10)) }

func TestDeleteAsksAndCascadesToSubSessions(t *testing.T) {
	d := &fakeServer{}
	c := New(t.Context(), d, theme.New(true), keys.Default(), time.Now)
	c.Handle(Loaded{Sessions: []*agentsv1.SessionMeta{meta("root", "", "Root", 1), meta("child", "root", "Child", 1)}})

	c.HandleKey(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})
	if s := screen(c); !strings.Contains(s, `Delete "Root" and its 1 sub-session? y/n`) {
		t.Fatalf("no question naming the sub-session:\n%s", s)
	}
	cmd, _ := c.HandleKey(tea.KeyPressMsg{Code: 'y', Text: "y"})
	c.Handle(cmd())
	if d.got.GetMode() != agentsv1.DeleteMode_DELETE_MODE_CASCADE {
		t.Errorf("mode %v, want cascade", d.got.GetMode())
	}
	if c.Meta("root") != nil || c.Meta("child") != nil {
		t.Error("deleted sessions still listed")
	}
}

func TestEventsDuringARefreshSurviveItsAnswer(t *testing.T) {
	c := New(t.Context(), &fakeServer{}, theme.New(true), keys.Default(), time.Now)
	c.Handle(Loaded{Sessions: []*agentsv1.SessionMeta{meta("a", "", "Old title", 1)}})
	gen := c.refresh.Start() // in flight; its answer was read before the events below
	c.Handle(created(meta("b", "", "Made meanwhile", 3)))
	c.Handle(msgs.Event{Event: &agentsv1.Event{SessionId: "a", Body: &agentsv1.Event_SessionUpdated{SessionUpdated: &agentsv1.SessionUpdated{Meta: meta("a", "", "New title", 2)}}}})
	c.Handle(Loaded{Sessions: []*agentsv1.SessionMeta{meta("a", "", "Old title", 1)}, generation: gen})

	s := screen(c)
	for _, want := range []string{"Made meanwhile", "New title"} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lost to a stale answer:\n%s", want, s)
		}
	}
}

func TestUnreadUntilOpened(t *testing.T) {
	c := New(t.Context(), &fakeServer{}, theme.New(true), keys.Default(), time.Now)
	c.Handle(Loaded{Sessions: []*agentsv1.SessionMeta{meta("a", "", "A", 1), meta("b", "", "B", 1)}})
	c.SetOpen("b")
	stop := func(id string) msgs.Event {
		return msgs.Event{Event: &agentsv1.Event{SessionId: id, Body: &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{Status: agentsv1.SessionStatus_SESSION_STATUS_READY}}}}
	}
	c.Handle(stop("a"))
	c.Handle(stop("b"))
	if n := c.Unread(); n != 1 {
		t.Fatalf("%d unread, want 1: the open session is read", n)
	}
	c.SetOpen("a")
	if n := c.Unread(); n != 0 {
		t.Fatalf("%d unread after opening, want 0", n)
	}
}

// Two refreshes overlap (the list loads at start, and again when the
// stream connects): the first one's answer, older than an event that came
// between them, must not replace what the event showed.
func TestAnOlderRefreshAnswerIsIgnored(t *testing.T) {
	c := New(t.Context(), &fakeServer{}, theme.New(true), keys.Default(), time.Now)
	first := c.refresh.Start()
	second := c.refresh.Start()
	c.Handle(created(meta("b", "", "Made meanwhile", 3)))
	c.Handle(Loaded{Sessions: []*agentsv1.SessionMeta{meta("a", "", "A", 1)}, generation: first})
	c.Handle(Loaded{Sessions: []*agentsv1.SessionMeta{meta("a", "", "A", 1)}, generation: second})
	if s := screen(c); !strings.Contains(s, "Made meanwhile") {
		t.Errorf("a session created between two refreshes was lost:\n%s", s)
	}
}

// The header names the columns where the rows show them; on a narrow
// terminal the columns give way so each row still shows its title.
func TestColumnsLineUpAndGiveWayToTitles(t *testing.T) {
	t.Parallel()
	c := New(t.Context(), &fakeServer{}, theme.New(true), keys.Default(), time.Now)
	m := meta("a", "", "Plan the trip to Lisbon", 1)
	m.Agent, m.TurnCount = "planner", 12
	c.Handle(Loaded{Sessions: []*agentsv1.SessionMeta{m}})
	column := func(line, word string) int {
		i := strings.Index(line, word)
		if i < 0 {
			return -1
		}
		return ansi.StringWidth(line[:i])
	}
	for _, w := range []int{120, 80, 40, 30} {
		lines := strings.Split(ansi.Strip(c.Render(w, 5)), "\n")
		head, row := lines[0], lines[1]
		if !strings.Contains(row, "Plan the trip") {
			t.Errorf("width %d: the row shows no title: %q", w, row)
		}
		if a, b := column(head, "agent"), column(row, "planner"); a != b {
			t.Errorf("width %d: the header's agent at %d, the row's at %d:\n%s\n%s", w, a, b, head, row)
		}
	}
}

// Deleting the selected session selects the row that takes its place,
// not the top of the list.
func TestDeleteKeepsTheSelectionsPlace(t *testing.T) {
	t.Parallel()
	c := New(t.Context(), &fakeServer{}, theme.New(true), keys.Default(), time.Now)
	c.Handle(Loaded{Sessions: []*agentsv1.SessionMeta{meta("a", "", "Alpha", 1), meta("b", "", "Bravo", 1), meta("c", "", "Charlie", 1)}})
	c.HandleKey(tea.KeyPressMsg{Code: 'j', Text: "j"})
	c.HandleKey(tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl})
	cmd, _ := c.HandleKey(tea.KeyPressMsg{Code: 'y', Text: "y"})
	c.Handle(cmd())
	for _, l := range strings.Split(screen(c), "\n") {
		if strings.HasPrefix(l, "›") && !strings.Contains(l, "Alpha") {
			t.Errorf("selected %q after deleting Bravo, want Alpha, which took its place", l)
		}
	}
	if s := screen(c); strings.Contains(s, "Bravo") || !strings.Contains(s, "› ") {
		t.Errorf("after the delete:\n%s", s)
	}
}
