package history

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/charmbracelet/x/ansi"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/theme"
)

// fakeServer lists its sessions one a page, and records each request.
type fakeServer struct {
	mu       sync.Mutex
	sessions []*agentsv1.SessionMeta
	asked    []*agentsv1.ListSessionsRequest
}

var _ Client = (*fakeServer)(nil)

func (f *fakeServer) ListSessions(_ context.Context, req *connect.Request[agentsv1.ListSessionsRequest]) (*connect.Response[agentsv1.ListSessionsResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, req.Msg)
	at := 0
	if tok := req.Msg.GetPageToken(); tok != "" {
		at, _ = strconv.Atoi(tok)
	}
	res := &agentsv1.ListSessionsResponse{}
	if at < len(f.sessions) {
		res.Sessions = f.sessions[at : at+1]
	}
	if at+1 < len(f.sessions) {
		res.NextPageToken = strconv.Itoa(at + 1)
	}
	return connect.NewResponse(res), nil
}

var epoch = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

func meta(id, parent, title string, minute int) *agentsv1.SessionMeta {
	at := timestamppb.New(epoch.Add(time.Duration(minute) * time.Minute))
	return &agentsv1.SessionMeta{Id: id, ParentId: parent, Title: title, Agent: "coder", CreateTime: at, UpdateTime: at}
}

func newHistory(t *testing.T, f *fakeServer) *History {
	return New(t.Context(), f, theme.New(true), keys.Default(), func() time.Time { return epoch.Add(24 * time.Hour) })
}

func screen(h *History) []string {
	return strings.Split(ansi.Strip(h.Render(100, 12)), "\n")
}

func lineOf(lines []string, sub string) int {
	for i, l := range lines {
		if strings.Contains(l, sub) {
			return i
		}
	}
	return -1
}

// Every page of the listing is read, and a sub-session shows under its
// parent even when a newer root was listed between them.
func TestRefreshReadsEveryPageAndNestsSubSessions(t *testing.T) {
	t.Parallel()
	f := &fakeServer{sessions: []*agentsv1.SessionMeta{
		meta("child", "root", "The child", 3),
		meta("newer", "", "A newer root", 2),
		meta("root", "", "The root", 1),
	}}
	h := newHistory(t, f)
	h.Handle(h.Refresh()())

	if len(f.asked) != 3 {
		t.Fatalf("%d requests, want one a page (3)", len(f.asked))
	}
	lines := screen(h)
	newer, root, child := lineOf(lines, "A newer root"), lineOf(lines, "The root"), lineOf(lines, "The child")
	if newer < 0 || root < 0 || child < 0 || !(newer < root && root < child) {
		t.Fatalf("want the newer root, then the root with its child under it:\n%s", strings.Join(lines, "\n"))
	}
}

// Two listings overlap (a query typed on): the answer of the older one,
// which lacks what the newer found, is dropped even when it comes last.
func TestAnOlderListingsAnswerIsDropped(t *testing.T) {
	t.Parallel()
	f := &fakeServer{sessions: []*agentsv1.SessionMeta{meta("a", "", "Old list", 1)}}
	h := newHistory(t, f)
	older := h.Refresh()
	olderAnswer := older()
	f.sessions = []*agentsv1.SessionMeta{meta("b", "", "New list", 2)}
	h.Handle(h.Refresh()())
	h.Handle(olderAnswer)

	lines := screen(h)
	if lineOf(lines, "New list") < 0 || lineOf(lines, "Old list") >= 0 {
		t.Fatalf("the older answer replaced the newer:\n%s", strings.Join(lines, "\n"))
	}
}

// On a narrow terminal the columns give way so each row still shows its
// title, and the header still names the columns shown.
func TestNarrowRowsKeepTheirTitles(t *testing.T) {
	t.Parallel()
	f := &fakeServer{sessions: []*agentsv1.SessionMeta{meta("a", "", "Plan the trip to Lisbon", 1)}}
	h := newHistory(t, f)
	h.Handle(h.Refresh()())
	for _, w := range []int{100, 60, 40, 30} {
		lines := strings.Split(ansi.Strip(h.Render(w, 6)), "\n")
		at := lineOf(lines, "Plan the trip")
		if at < 0 {
			t.Errorf("width %d: the row shows no title:\n%s", w, strings.Join(lines, "\n"))
			continue
		}
		row, head := lines[at], lines[at-1]
		i, j := strings.Index(head, "agent"), strings.Index(row, "coder")
		if (i < 0) != (j < 0) || i >= 0 && ansi.StringWidth(head[:i]) != ansi.StringWidth(row[:j]) {
			t.Errorf("width %d: header and row do not line up:\n%s\n%s", w, head, row)
		}
	}
}
