package schedulesview

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
	_ "time/tzdata" // the zones of the tests, whatever the machine has

	tea "charm.land/bubbletea/v2"
	"connectrpc.com/connect"
	"github.com/charmbracelet/x/ansi"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/tabtest"
	"github.com/agents-os/agents/tui/internal/theme"
)

// now is the tests' clock.
var now = time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC)

// fakeServer serves the tab's calls from memory, as the server answers
// them: a paused schedule has no next times, a resumed one counts them
// from now; it records what it was asked.
type fakeServer struct {
	mu        sync.Mutex
	schedules []*agentsv1.Schedule
	firings   map[string][]*agentsv1.ScheduleFiring
	lists     int
	firingsOf []string
	toggles   []string
	// err, when set, is every call's answer.
	err error
}

var _ Client = (*fakeServer)(nil)

func (f *fakeServer) ListSchedules(context.Context, *connect.Request[agentsv1.ListSchedulesRequest]) (*connect.Response[agentsv1.ListSchedulesResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	if f.err != nil {
		return nil, f.err
	}
	out := make([]*agentsv1.Schedule, len(f.schedules))
	for i, s := range f.schedules {
		out[i] = proto.CloneOf(s)
	}
	return connect.NewResponse(&agentsv1.ListSchedulesResponse{Schedules: out}), nil
}

func (f *fakeServer) set(id string, enabled bool) (*agentsv1.Schedule, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	for _, s := range f.schedules {
		if s.GetId() == id {
			s.Enabled = enabled
			s.NextFirings = nil
			if enabled {
				s.NextFirings = hourly(now)
			}
			return proto.CloneOf(s), nil
		}
	}
	return nil, connect.NewError(connect.CodeNotFound, errors.New("no schedule "+id))
}

func (f *fakeServer) PauseSchedule(_ context.Context, req *connect.Request[agentsv1.PauseScheduleRequest]) (*connect.Response[agentsv1.PauseScheduleResponse], error) {
	f.toggles = append(f.toggles, "pause "+req.Msg.GetScheduleId())
	s, err := f.set(req.Msg.GetScheduleId(), false)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.PauseScheduleResponse{Schedule: s}), nil
}

func (f *fakeServer) ResumeSchedule(_ context.Context, req *connect.Request[agentsv1.ResumeScheduleRequest]) (*connect.Response[agentsv1.ResumeScheduleResponse], error) {
	f.toggles = append(f.toggles, "resume "+req.Msg.GetScheduleId())
	s, err := f.set(req.Msg.GetScheduleId(), true)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.ResumeScheduleResponse{Schedule: s}), nil
}

func (f *fakeServer) ListFirings(_ context.Context, req *connect.Request[agentsv1.ListFiringsRequest]) (*connect.Response[agentsv1.ListFiringsResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.firingsOf = append(f.firingsOf, req.Msg.GetScheduleId())
	if f.err != nil {
		return nil, f.err
	}
	return connect.NewResponse(&agentsv1.ListFiringsResponse{Firings: f.firings[req.Msg.GetScheduleId()]}), nil
}

func hourly(from time.Time) []*timestamppb.Timestamp {
	var out []*timestamppb.Timestamp
	for i := 1; i <= 5; i++ {
		out = append(out, timestamppb.New(from.Add(time.Duration(i)*time.Hour)))
	}
	return out
}

func newFake() *fakeServer {
	return &fakeServer{
		schedules: []*agentsv1.Schedule{
			{Id: "sch-1", Name: "Hourly check", Agent: "chat", Every: "1h0m0s", Enabled: true, NextFirings: hourly(now), Message: &agentsv1.Message{Text: "check the queue"},
				LastFiring: &agentsv1.ScheduleFiring{FireTime: timestamppb.New(now.Add(-time.Hour)), Status: agentsv1.FiringStatus_FIRING_STATUS_STARTED, SessionId: "s-7"}},
			{Id: "sch-2", SessionId: "s-42", Cron: "0 7 * * 1-5", Timezone: "Europe/Paris", Overlap: agentsv1.ScheduleOverlap_SCHEDULE_OVERLAP_QUEUE, Message: &agentsv1.Message{Text: "good morning"}},
		},
		firings: map[string][]*agentsv1.ScheduleFiring{
			"sch-1": {
				{ScheduleId: "sch-1", FireTime: timestamppb.New(now.Add(-time.Hour)), Status: agentsv1.FiringStatus_FIRING_STATUS_STARTED, SessionId: "s-7",
					Outcome: agentsv1.SessionStatus_SESSION_STATUS_READY, OutcomeReason: "done", Finished: timestamppb.New(now.Add(-59 * time.Minute))},
				{ScheduleId: "sch-1", FireTime: timestamppb.New(now.Add(-2 * time.Hour)), Status: agentsv1.FiringStatus_FIRING_STATUS_FAILED, Reason: "agent chat is not loaded", CatchUp: true},
			},
		},
	}
}

// loaded is a tab with the fake's schedules listed.
func loaded(t *testing.T, f *fakeServer) *Schedules {
	t.Helper()
	m := New(t.Context(), f, theme.New(true), keys.Default(), func() time.Time { return now })
	m.Handle(m.Refresh()())
	if !m.Loaded() {
		t.Fatalf("not loaded: %v", m.list.Err)
	}
	return m
}

func press(m *Schedules, k string) (tea.Cmd, bool) { return m.HandleKey(tabtest.Key(k)) }

// answer runs cmd and hands its answer to the tab, returning what the
// tab asks next (a status line), run.
func answer(m *Schedules, cmd tea.Cmd) tea.Msg {
	if cmd == nil {
		return nil
	}
	next := m.Handle(cmd())
	if next == nil {
		return nil
	}
	return next()
}

func screen(m *Schedules) string { return ansi.Strip(m.Render(120, 30)) }

func TestTheListShowsEachSchedulesNextFiringAndState(t *testing.T) {
	t.Parallel()
	m := loaded(t, newFake())
	out := screen(m)
	for _, want := range []string{
		"› Hourly check", "in 1h", // the next firing, how far off
		"sch-2", "paused", // no name: its id; paused, no next firing
		// The selected one in full.
		"target    starts a session of chat",
		"when      every 1h",
		"next      in 1h", "Mon 7 Dec 2026 14:00 UTC", "in 5h",
		"last      started a session, 1h ago · s-7",
		"check the queue",
		"enter firings · p pause",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the tab lacks %q:\n%s", want, out)
		}
	}
	press(m, "down")
	out = screen(m)
	for _, want := range []string{"posts to session s-42", "cron 0 7 * * 1-5 in Europe/Paris", "none while paused", "if busy   send it as mail", "p resume"} {
		if !strings.Contains(out, want) {
			t.Errorf("the second schedule lacks %q:\n%s", want, out)
		}
	}
}

func TestPauseAndResumeTheSelectedSchedule(t *testing.T) {
	t.Parallel()
	f := newFake()
	m := loaded(t, f)
	cmd, used := press(m, "p")
	if !used || cmd == nil {
		t.Fatal("p did nothing")
	}
	// A second press while the first is under way sends nothing more.
	if again, _ := press(m, "p"); again != nil {
		t.Fatal("a second pause was sent while the first was under way")
	}
	st, _ := answer(m, cmd).(msgs.Status)
	if st.Err != nil || st.Text != "paused Hourly check" {
		t.Fatalf("status %+v", st)
	}
	if out := screen(m); !strings.Contains(out, "Hourly check") || !strings.Contains(out, "none while paused") || strings.Contains(out, "in 1h") {
		t.Fatalf("paused, the tab shows:\n%s", out)
	}
	cmd, _ = press(m, "p")
	st, _ = answer(m, cmd).(msgs.Status)
	if st.Text != "resumed Hourly check" || !strings.Contains(screen(m), "in 1h") {
		t.Fatalf("status %+v, tab:\n%s", st, screen(m))
	}
	if got := strings.Join(f.toggles, ", "); got != "pause sch-1, resume sch-1" {
		t.Fatalf("calls %s", got)
	}

	// A refusal is told, and the schedule stays as it was.
	f.err = connect.NewError(connect.CodePermissionDenied, errors.New("not yours"))
	cmd, _ = press(m, "p")
	st, _ = answer(m, cmd).(msgs.Status)
	if st.Err == nil || !strings.Contains(st.Err.Error(), "pause: ") || !strings.Contains(st.Err.Error(), "not yours") {
		t.Fatalf("a refused pause: status %+v", st)
	}
	if !m.List()[0].GetEnabled() {
		t.Fatal("a refused pause paused the schedule here")
	}
}

func TestTheFiringsOpenTheirSessions(t *testing.T) {
	t.Parallel()
	f := newFake()
	m := loaded(t, f)
	cmd, _ := press(m, "enter")
	if !m.ShowingFirings() {
		t.Fatal("enter did not open the firings")
	}
	answer(m, cmd)
	out := screen(m)
	for _, want := range []string{
		"Firings of Hourly check",
		"Mon 7 Dec 2026 12:00 UTC", "started a session", "s-7", "ready (done)",
		"failed (catch-up)", "agent chat is not loaded",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the firings lack %q:\n%s", want, out)
		}
	}
	cmd, _ = press(m, "enter")
	if open, ok := cmd().(msgs.OpenSession); !ok || open.ID != "s-7" {
		t.Fatalf("enter on a firing: %#v", cmd())
	}
	// The failed firing has no session to open.
	press(m, "down")
	if cmd, _ := press(m, "enter"); cmd != nil {
		t.Fatalf("enter on a firing with no session: %#v", cmd())
	}
	if _, used := press(m, "esc"); !used || m.ShowingFirings() {
		t.Fatal("esc did not go back to the schedules")
	}
}

func TestAFiringListsTheSchedulesAgain(t *testing.T) {
	t.Parallel()
	f := newFake()
	m := loaded(t, f)
	answer(m, func() tea.Msg { cmd, _ := press(m, "enter"); return cmd() })
	fired := msgs.Event{Event: &agentsv1.Event{SessionId: "s-8", Body: &agentsv1.Event_ScheduleFired{ScheduleFired: &agentsv1.ScheduleFired{
		Firing: &agentsv1.ScheduleFiring{ScheduleId: "sch-1", SessionId: "s-8", Status: agentsv1.FiringStatus_FIRING_STATUS_STARTED}}}}}
	f.firings["sch-1"] = append([]*agentsv1.ScheduleFiring{fired.Event.GetScheduleFired().GetFiring()}, f.firings["sch-1"]...)
	runAll(m, m.Handle(fired))
	if f.lists != 2 || len(f.firingsOf) != 2 {
		t.Fatalf("%d listings, firings listed %d times; want 2 and 2", f.lists, len(f.firingsOf))
	}
	if out := screen(m); !strings.Contains(out, "s-8") || !strings.Contains(out, "running") {
		t.Fatalf("the new firing is not shown running:\n%s", out)
	}

	// Its run stops: the firings are read again, for its outcome. A run
	// of another session is none of the tab's business.
	runAll(m, m.Handle(msgs.Event{Event: &agentsv1.Event{SessionId: "s-other", Body: &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{}}}}))
	if len(f.firingsOf) != 2 {
		t.Fatalf("another session's run listed the firings again")
	}
	f.firings["sch-1"][0].Outcome = agentsv1.SessionStatus_SESSION_STATUS_READY
	f.firings["sch-1"][0].OutcomeReason = "done"
	runAll(m, m.Handle(msgs.Event{Event: &agentsv1.Event{SessionId: "s-8", Body: &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{}}}}))
	if len(f.firingsOf) != 3 || strings.Contains(screen(m), "running") {
		t.Fatalf("the firings were listed %d times; tab:\n%s", len(f.firingsOf), screen(m))
	}
}

// runAll runs cmd to its end.
func runAll(m *Schedules, cmd tea.Cmd) { tabtest.Run(m.Handle, cmd) }

func TestAServerWithoutSchedulesSaysSo(t *testing.T) {
	t.Parallel()
	f := &fakeServer{err: connect.NewError(connect.CodeUnimplemented, errors.New("agents.v1.ScheduleService is not implemented"))}
	m := New(t.Context(), f, theme.New(true), keys.Default(), func() time.Time { return now })
	m.Handle(m.Refresh()())
	if out := screen(m); !strings.Contains(out, "This server keeps no schedules.") {
		t.Fatalf("tab:\n%s", out)
	}
	f.err = connect.NewError(connect.CodeUnavailable, errors.New("connection refused"))
	m.Handle(m.Refresh()())
	if out := screen(m); !strings.Contains(out, "cannot list schedules") {
		t.Fatalf("tab:\n%s", out)
	}
}

func TestTimingWordsEachKindOfSchedule(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    *agentsv1.Schedule
		want string
	}{
		{&agentsv1.Schedule{Cron: "0 7 * * 1-5", Timezone: "Europe/Paris"}, "cron 0 7 * * 1-5 in Europe/Paris"},
		{&agentsv1.Schedule{Cron: "@daily"}, "cron @daily in UTC"},
		{&agentsv1.Schedule{Every: "1h30m0s"}, "every 1h30m"},
		{&agentsv1.Schedule{Every: "15m"}, "every 15m"},
		{&agentsv1.Schedule{At: timestamppb.New(time.Date(2026, 12, 24, 6, 0, 0, 0, time.UTC)), Timezone: "Europe/Paris"}, "once, at Thu 24 Dec 2026 07:00 CET"},
	} {
		if got := Timing(c.s); got != c.want {
			t.Errorf("Timing(%v) = %q, want %q", c.s, got, c.want)
		}
	}
}

func TestShortDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"1h0m0s": "1h", "1h30m0s": "1h30m", "90s": "1m30s", "2s": "2s", "36h": "36h", "1.5ms": "1.5ms", "soon": "soon"} {
		if got := ShortDuration(in); got != want {
			t.Errorf("ShortDuration(%q) = %q, want %q", in, got, want)
		}
	}
}

// The next times of a cron expression cross a change to winter time at
// the same wall time, and say which offset each is in.
func TestAbsoluteAcrossADaylightSavingChange(t *testing.T) {
	t.Parallel()
	before := Absolute(time.Date(2026, 10, 24, 5, 0, 0, 0, time.UTC), "Europe/Paris")
	after := Absolute(time.Date(2026, 10, 25, 6, 0, 0, 0, time.UTC), "Europe/Paris")
	if before != "Sat 24 Oct 2026 07:00 CEST" || after != "Sun 25 Oct 2026 07:00 CET" {
		t.Fatalf("got %q and %q", before, after)
	}
}

func TestOutcome(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		f    *agentsv1.ScheduleFiring
		want string
	}{
		{&agentsv1.ScheduleFiring{Status: agentsv1.FiringStatus_FIRING_STATUS_STARTED}, "running"},
		{&agentsv1.ScheduleFiring{Status: agentsv1.FiringStatus_FIRING_STATUS_POSTED, Outcome: agentsv1.SessionStatus_SESSION_STATUS_FAILED, OutcomeReason: "budget_exceeded"}, "failed (budget_exceeded)"},
		{&agentsv1.ScheduleFiring{Status: agentsv1.FiringStatus_FIRING_STATUS_QUEUED}, "with the session's run"},
		{&agentsv1.ScheduleFiring{Status: agentsv1.FiringStatus_FIRING_STATUS_SKIPPED}, "—"},
	} {
		if got := Outcome(c.f); got != c.want {
			t.Errorf("Outcome(%v) = %q, want %q", c.f, got, c.want)
		}
	}
}

// A schedule created, changed, paused or deleted elsewhere (the web app,
// the CLI, another server) lists the schedules again.
func TestAChangedScheduleListsTheSchedulesAgain(t *testing.T) {
	t.Parallel()
	f := newFake()
	m := loaded(t, f)
	before := f.lists
	runAll(m, m.Handle(msgs.Event{Event: &agentsv1.Event{Body: &agentsv1.Event_ScheduleChanged{ScheduleChanged: &agentsv1.ScheduleChanged{
		ScheduleId: "sch-9", Change: agentsv1.ScheduleChange_SCHEDULE_CHANGE_CREATED}}}}))
	if f.lists != before+1 {
		t.Fatalf("%d listings after schedule.changed; want %d", f.lists, before+1)
	}
}

// On a narrow terminal the details wrap, as the webhooks' do: what a
// firing does and when stay readable whole.
func TestNarrowDetailsWrap(t *testing.T) {
	t.Parallel()
	m := loaded(t, newFake())
	press(m, "down")
	out := ansi.Strip(m.Render(56, 30))
	var details []string // the right-hand pane, beside the list
	for _, l := range strings.Split(out, "\n") {
		if _, right, ok := strings.Cut(l, "│"); ok {
			details = append(details, right)
		}
	}
	flat := strings.Join(strings.Fields(strings.Join(details, " ")), " ")
	for _, want := range []string{"posts to session s-42", "cron 0 7 * * 1-5 in Europe/Paris"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the narrow tab lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "…") {
		t.Errorf("the narrow tab cut a detail:\n%s", out)
	}
}
