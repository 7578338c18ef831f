// Package schedulesview is the Schedules tab: the caller's schedules (an
// admin's: everyone's), each with its target, its timing, its next
// firing and whether it is paused, the selected one in full beside them;
// a schedule is paused or resumed from here, and its firings are listed,
// each opening the session it started or posted to.
package schedulesview

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"connectrpc.com/connect"
	"github.com/charmbracelet/x/ansi"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/layout"
	"github.com/agents-os/agents/tui/internal/listing"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/theme"
)

// Client is what the tab asks of the server, as the generated Connect
// client of the schedule service asks it.
type Client interface {
	ListSchedules(context.Context, *connect.Request[agentsv1.ListSchedulesRequest]) (*connect.Response[agentsv1.ListSchedulesResponse], error)
	PauseSchedule(context.Context, *connect.Request[agentsv1.PauseScheduleRequest]) (*connect.Response[agentsv1.PauseScheduleResponse], error)
	ResumeSchedule(context.Context, *connect.Request[agentsv1.ResumeScheduleRequest]) (*connect.Response[agentsv1.ResumeScheduleResponse], error)
	ListFirings(context.Context, *connect.Request[agentsv1.ListFiringsRequest]) (*connect.Response[agentsv1.ListFiringsResponse], error)
}

// Reply is the answer to a command of the tab: the shell hands it to the
// tab and to no other component.
type Reply interface {
	// reply keeps the replies to this package's own types.
	reply()
}

// Loaded is the answer of Refresh.
type Loaded struct {
	Schedules []*agentsv1.Schedule
	Err       error
}

// Toggled is the answer of a pause or a resume: the schedule as it is
// now.
type Toggled struct {
	ID       string
	Schedule *agentsv1.Schedule
	Err      error
}

// FiringsLoaded is the answer of a listing of a schedule's firings.
type FiringsLoaded struct {
	ID      string
	Firings []*agentsv1.ScheduleFiring
	Err     error
}

func (Loaded) reply()        {}
func (Toggled) reply()       {}
func (FiringsLoaded) reply() {}

// firingsLimit is how many firings the tab lists, newest first.
const firingsLimit = 100

// Schedules is the Schedules tab.
type Schedules struct {
	ctx context.Context
	c   Client
	th  *theme.Theme
	km  *keys.Map
	now func() time.Time

	list listing.List[*agentsv1.Schedule]
	// toggling are the schedules whose pause or resume is under way.
	toggling map[string]bool

	// firings is the list of one schedule's firings, while it is open.
	firings *listing.Sub[*agentsv1.ScheduleFiring]
}

// New returns an empty tab; Refresh fills it. now is the clock next
// firings are counted from.
func New(ctx context.Context, c Client, th *theme.Theme, km *keys.Map, now func() time.Time) *Schedules {
	return &Schedules{ctx: ctx, c: c, th: th, km: km, now: now, toggling: map[string]bool{}}
}

// Refresh lists the schedules again.
func (m *Schedules) Refresh() tea.Cmd {
	ctx, c := m.ctx, m.c
	return func() tea.Msg {
		res, err := c.ListSchedules(ctx, connect.NewRequest(&agentsv1.ListSchedulesRequest{}))
		if err != nil {
			return Loaded{Err: err}
		}
		return Loaded{Schedules: res.Msg.GetSchedules()}
	}
}

// listFirings lists a schedule's firings.
func (m *Schedules) listFirings(id string) tea.Cmd {
	ctx, c := m.ctx, m.c
	return func() tea.Msg {
		res, err := c.ListFirings(ctx, connect.NewRequest(&agentsv1.ListFiringsRequest{ScheduleId: id, Limit: firingsLimit}))
		if err != nil {
			return FiringsLoaded{ID: id, Err: err}
		}
		return FiringsLoaded{ID: id, Firings: res.Msg.GetFirings()}
	}
}

// toggle pauses an enabled schedule and resumes a paused one.
func (m *Schedules) toggle(s *agentsv1.Schedule) tea.Cmd {
	id := s.GetId()
	if m.toggling[id] {
		return nil
	}
	m.toggling[id] = true
	ctx, c, pause := m.ctx, m.c, s.GetEnabled()
	return func() tea.Msg {
		if pause {
			res, err := c.PauseSchedule(ctx, connect.NewRequest(&agentsv1.PauseScheduleRequest{ScheduleId: id}))
			if err != nil {
				return Toggled{ID: id, Err: err}
			}
			return Toggled{ID: id, Schedule: res.Msg.GetSchedule()}
		}
		res, err := c.ResumeSchedule(ctx, connect.NewRequest(&agentsv1.ResumeScheduleRequest{ScheduleId: id}))
		if err != nil {
			return Toggled{ID: id, Err: err}
		}
		return Toggled{ID: id, Schedule: res.Msg.GetSchedule()}
	}
}

// Loaded reports whether the schedules were listed at least once.
func (m *Schedules) Loaded() bool { return m.list.Loaded }

// List is the schedules as last listed, oldest first.
func (m *Schedules) List() []*agentsv1.Schedule { return m.list.Items }

// ShowingFirings reports whether a schedule's firings are open.
func (m *Schedules) ShowingFirings() bool { return m.firings != nil }

// Handle takes the tab's answers, and lists again what an event says
// changed: a schedule fired or changed, or the run a firing started
// stopped.
func (m *Schedules) Handle(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case Loaded:
		m.list.Take(msg.Schedules, msg.Err)
	case Toggled:
		delete(m.toggling, msg.ID)
		if msg.Err != nil {
			return msgs.Say("", fmt.Errorf("%s: %w", verb(m.list.ByID(msg.ID)), client.Describe(msg.Err)))
		}
		m.list.Replace(msg.Schedule)
		if msg.Schedule.GetEnabled() {
			return msgs.Say("resumed "+name(msg.Schedule), nil)
		}
		return msgs.Say("paused "+name(msg.Schedule), nil)
	case FiringsLoaded:
		m.firings.Take(msg.ID, msg.Firings, msg.Err)
	case msgs.Snapshot:
		return m.refetch()
	case msgs.Event:
		return m.event(msg.Event)
	}
	return nil
}

// event lists again what ev changed: every schedule when one fired (its
// next times and last firing moved) or was created, changed, paused or
// deleted anywhere, with its firings when they are open; the firings
// when a run one of them started stopped.
func (m *Schedules) event(ev *agentsv1.Event) tea.Cmd {
	switch ev.GetBody().(type) {
	case *agentsv1.Event_ScheduleFired, *agentsv1.Event_ScheduleChanged:
		return m.refetch()
	case *agentsv1.Event_RunStopped, *agentsv1.Event_SessionFailed:
		if f := m.firings; f != nil && ev.GetSessionId() != "" {
			for _, x := range f.Items {
				if x.GetSessionId() == ev.GetSessionId() {
					return m.listFirings(f.ID)
				}
			}
		}
	}
	return nil
}

// refetch lists the schedules again, and the open firings.
func (m *Schedules) refetch() tea.Cmd {
	cmds := []tea.Cmd{m.Refresh()}
	if m.firings != nil {
		cmds = append(cmds, m.listFirings(m.firings.ID))
	}
	return tea.Batch(cmds...)
}

// HandleKey moves through the schedules or the firings, pauses or
// resumes the selected schedule, opens its firings and a firing's
// session; it reports whether it used the key.
func (m *Schedules) HandleKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	km := m.km
	if f := m.firings; f != nil {
		switch {
		case key.Matches(msg, km.Get(keys.Back)):
			m.firings = nil
		case key.Matches(msg, km.Get(keys.Up)):
			f.Move(-1)
		case key.Matches(msg, km.Get(keys.Down)):
			f.Move(1)
		case key.Matches(msg, km.Get(keys.Open)):
			if i := f.Cur.Index(); i < len(f.Items) && f.Items[i].GetSessionId() != "" {
				id := f.Items[i].GetSessionId()
				return func() tea.Msg { return msgs.OpenSession{ID: id} }, true
			}
		case key.Matches(msg, km.Get(keys.PauseSchedule)):
			if s := m.list.ByID(f.ID); s != nil {
				return m.toggle(s), true
			}
		default:
			return nil, false
		}
		return nil, true
	}
	switch {
	case key.Matches(msg, km.Get(keys.Up)):
		m.list.Move(-1)
	case key.Matches(msg, km.Get(keys.Down)):
		m.list.Move(1)
	case key.Matches(msg, km.Get(keys.PauseSchedule)):
		if s := m.list.Selected(); s != nil {
			return m.toggle(s), true
		}
	case key.Matches(msg, km.Get(keys.Open)):
		if s := m.list.Selected(); s != nil {
			m.firings = listing.Open[*agentsv1.ScheduleFiring](s.GetId())
			return m.listFirings(s.GetId()), true
		}
	default:
		return nil, false
	}
	return nil, true
}

// Render draws the tab in w×h cells: the schedules on the left, the
// selected one on the right; or the firings of the one opened.
func (m *Schedules) Render(w, h int) string {
	st := m.th.App
	if gate, ok := m.list.Gate(st, "schedules", w, h); ok {
		return gate
	}
	if m.firings != nil {
		return m.renderFirings(w, h)
	}
	now := m.now()
	return m.list.Render(st, listing.Split[*agentsv1.Schedule]{
		Noun:  "schedules",
		Empty: "No schedules: make one with `agents schedules`, the API or the web app.",
		Row: func(s *agentsv1.Schedule) (string, layout.Seg) {
			switch next := nextFiring(s); {
			case !s.GetEnabled():
				return name(s), layout.Seg{Text: " paused", Style: st.Paused}
			case next.IsZero():
				return name(s), layout.Seg{Text: " done", Style: st.Muted}
			default:
				return name(s), layout.Seg{Text: " " + until(next.Sub(now)), Style: st.Key}
			}
		},
		Describe: m.describe,
	}, w, h)
}

// describe is a schedule in full, in w cells: what each firing does,
// when, its next times, its last firing, its message and its rules.
func (m *Schedules) describe(s *agentsv1.Schedule, w int) string {
	if s == nil {
		return ""
	}
	st := m.th.App
	var b strings.Builder
	line := func(s string) { b.WriteString(s + "\n") }
	field := func(label, value string) { line(st.Muted.Render(fmt.Sprintf("%-9s", label)) + " " + value) }
	// wrapped fields go on over the next lines on a narrow terminal, as
	// the webhooks' do, rather than being cut.
	// A tail (a session's id) ends the last line, cut there when it must
	// be: the firings list it whole.
	wrapped := func(label, value, tail string) {
		ls := strings.Split(ansi.Wrap(value, max(1, w-10), ""), "\n")
		ls[len(ls)-1] += tail
		for i, l := range ls {
			if i > 0 {
				label = ""
			}
			field(label, l)
		}
	}
	now := m.now()

	line(st.Title.Bold(true).Render(name(s)) + " " + state(st, s))
	wrapped("target", Target(s), "")
	wrapped("when", Timing(s), "")
	zone := displayZone(s)
	switch next := s.GetNextFirings(); {
	case !s.GetEnabled():
		field("next", st.Muted.Render("none while paused"))
	case len(next) == 0:
		field("next", st.Muted.Render("none: done"))
	default:
		for i, t := range next {
			label := ""
			if i == 0 {
				label = "next"
			}
			at := t.AsTime()
			field(label, fmt.Sprintf("%-8s %s", until(at.Sub(now)), st.Muted.Render(Absolute(at, zone))))
		}
	}
	if f := s.GetLastFiring(); f != nil {
		tail := ""
		if f.GetSessionId() != "" {
			tail = " · " + f.GetSessionId()
		}
		wrapped("last", FiringStatus(f)+", "+ago(now.Sub(f.GetFireTime().AsTime())), tail)
	}
	if s.GetSessionId() != "" {
		busy := "skip the firing"
		if s.GetOverlap() == agentsv1.ScheduleOverlap_SCHEDULE_OVERLAP_QUEUE {
			busy = "send it as mail"
		}
		field("if busy", busy)
	}
	missed := "skipped"
	if s.GetMissed() == agentsv1.ScheduleMissed_SCHEDULE_MISSED_ONCE {
		missed = "fire once for all"
	}
	field("missed", missed)
	if s.GetOwner() != "" {
		field("owner", s.GetOwner())
	}
	if text := s.GetMessage().GetText(); text != "" {
		line("")
		line(st.Heading.Render("Message"))
		for _, l := range strings.Split(ansi.Wrap(text, max(1, w-2), ""), "\n") {
			line("  " + l)
		}
	}
	line("")
	line(st.Muted.Render(m.km.Get(keys.Open).Help().Key + " firings · " + m.km.Get(keys.PauseSchedule).Help().Key + " " + verb(s)))
	return strings.TrimSuffix(b.String(), "\n")
}

// renderFirings is the open schedule's firings, newest first: when each
// stood for, what it did, its session, how that session's run ended.
func (m *Schedules) renderFirings(w, h int) string {
	st := m.th.App
	f := m.firings
	s := m.list.ByID(f.ID)
	title := f.ID
	if s != nil {
		title = name(s) + " " + state(st, s)
	}
	lines := []string{st.Heading.Render("Firings of ") + st.Title.Bold(true).Render(title)}
	note, ready := f.Note(st, "firings", "It has not fired yet.")
	if note != "" {
		lines = append(lines, note)
	}
	if !ready {
		return layout.Fit(strings.Join(lines, "\n"), w, h)
	}
	zone := ""
	if s != nil {
		zone = displayZone(s)
	}
	// Each column is as wide as its longest cell; the outcome takes the
	// rest.
	type row struct{ at, did, session, outcome string }
	rows := make([]row, len(f.Items))
	head := row{"time", "did", "session", "outcome"}
	atW, didW, sessionW := len(head.at), len(head.did), len(head.session)
	for i, x := range f.Items {
		r := row{at: Absolute(x.GetFireTime().AsTime(), zone), did: FiringStatus(x), session: x.GetSessionId(), outcome: Outcome(x)}
		for _, t := range FiringTags(x) {
			r.did += " (" + t + ")"
		}
		if r.session == "" {
			r.session = "—"
		}
		if x.GetReason() != "" {
			r.outcome = x.GetReason()
		}
		rows[i] = r
		atW, didW, sessionW = max(atW, ansi.StringWidth(r.at)), max(didW, ansi.StringWidth(r.did)), max(sessionW, ansi.StringWidth(r.session))
	}
	columns := func(r row) string {
		return fmt.Sprintf("%-*s  %-*s  %-*s  %s", atW, r.at, didW, r.did, sessionW, r.session, r.outcome)
	}
	lines = append(lines, st.Muted.Render("  "+columns(head)))
	lines = append(lines, f.Rows(st, func(i int) (string, lipgloss.Style) {
		if f.Items[i].GetStatus() == agentsv1.FiringStatus_FIRING_STATUS_FAILED {
			return columns(rows[i]), st.Failed
		}
		return columns(rows[i]), st.Title
	}, w, h-len(lines))...)
	return layout.Fit(strings.Join(lines, "\n"), w, h)
}

func state(st theme.AppStyles, s *agentsv1.Schedule) string {
	if s.GetEnabled() {
		return st.Connected.Render("● enabled")
	}
	return st.Paused.Render("⏸ paused")
}

// verb is what the pause key does to s.
func verb(s *agentsv1.Schedule) string {
	if s != nil && !s.GetEnabled() {
		return "resume"
	}
	return "pause"
}

// name is what to call a schedule: its name, else its id.
func name(s *agentsv1.Schedule) string {
	if s.GetName() != "" {
		return s.GetName()
	}
	return s.GetId()
}

// Target says what each firing does: "starts a session of chat",
// "posts to session s-1".
func Target(s *agentsv1.Schedule) string {
	if s.GetAgent() != "" {
		return "starts a session of " + s.GetAgent()
	}
	return "posts to session " + s.GetSessionId()
}

// Timing is the schedule's timing in one phrase: "cron 0 7 * * 1-5 in
// Europe/Paris" (UTC when it names no zone), "every 1h30m", "once, at
// Thu 24 Dec 2026 07:00 CET".
func Timing(s *agentsv1.Schedule) string {
	switch {
	case s.GetCron() != "":
		return "cron " + s.GetCron() + " in " + displayZone(s)
	case s.GetEvery() != "":
		return "every " + ShortDuration(s.GetEvery())
	case s.GetAt() != nil:
		return "once, at " + Absolute(s.GetAt().AsTime(), s.GetTimezone())
	}
	return "no timing"
}

// displayZone is the zone a schedule's times are shown in: the zone its
// cron expression or time is read in (UTC for a cron expression that
// names none); "" (the local zone) for an interval.
func displayZone(s *agentsv1.Schedule) string {
	if s.GetCron() != "" && s.GetTimezone() == "" {
		return "UTC"
	}
	if s.GetEvery() != "" {
		return ""
	}
	return s.GetTimezone()
}

// ShortDuration words a Go duration without its zero units: "1h0m0s" is
// "1h". Text that is no duration is given back as it is.
func ShortDuration(d string) string {
	v, err := time.ParseDuration(d)
	if err != nil || v <= 0 || v%time.Second != 0 {
		return d
	}
	out := v.String()
	for _, zero := range []string{"h0m0s", "m0s"} {
		if strings.HasSuffix(out, zero) {
			out = strings.TrimSuffix(out, zero) + zero[:1]
		}
	}
	return out
}

// Absolute is a moment in an IANA zone (the local one when zone is empty
// or unknown here), with the zone's abbreviation.
func Absolute(t time.Time, zone string) string {
	loc := time.Local
	if zone != "" {
		if l, err := time.LoadLocation(zone); err == nil {
			loc = l
		}
	}
	return t.In(loc).Format("Mon 2 Jan 2006 15:04 MST")
}

// nextFiring is the first of a schedule's next times, zero when none.
func nextFiring(s *agentsv1.Schedule) time.Time {
	next := s.GetNextFirings()
	if len(next) == 0 {
		return time.Time{}
	}
	times := make([]time.Time, len(next))
	for i, t := range next {
		times[i] = t.AsTime()
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	return times[0]
}

// until is how far off a time is, in the fewest characters that stay
// readable: "in 42s", "in 5m", "in 3h", "in 2d"; "due" once it passed.
func until(d time.Duration) string {
	switch {
	case d < time.Second:
		return "due"
	case d < time.Minute:
		return fmt.Sprintf("in %ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("in %dm", int((d+time.Minute/2)/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("in %dh", int((d+time.Hour/2)/time.Hour))
	default:
		return fmt.Sprintf("in %dd", int((d+12*time.Hour)/(24*time.Hour)))
	}
}

// ago is how long ago a time was, as until words how far off.
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	default:
		return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
	}
}

// FiringStatus is what a firing did, in a few words.
func FiringStatus(f *agentsv1.ScheduleFiring) string {
	switch f.GetStatus() {
	case agentsv1.FiringStatus_FIRING_STATUS_STARTED:
		return "started a session"
	case agentsv1.FiringStatus_FIRING_STATUS_POSTED:
		return "posted"
	case agentsv1.FiringStatus_FIRING_STATUS_QUEUED:
		return "queued as mail"
	case agentsv1.FiringStatus_FIRING_STATUS_SKIPPED:
		return "skipped"
	case agentsv1.FiringStatus_FIRING_STATUS_FAILED:
		return "failed"
	}
	return "unknown"
}

// FiringTags are what else to know of a firing: a catch-up for missed
// times, fired by hand.
func FiringTags(f *agentsv1.ScheduleFiring) []string {
	var out []string
	if f.GetCatchUp() {
		out = append(out, "catch-up")
	}
	if f.GetManual() {
		out = append(out, "by hand")
	}
	return out
}

// Outcome is how the run a firing started ended: "ready (done)"; while it
// goes on, "running"; for a firing that sent nothing, "—".
func Outcome(f *agentsv1.ScheduleFiring) string {
	switch f.GetStatus() {
	case agentsv1.FiringStatus_FIRING_STATUS_SKIPPED, agentsv1.FiringStatus_FIRING_STATUS_FAILED:
		return "—"
	}
	var label string
	switch f.GetOutcome() {
	case agentsv1.SessionStatus_SESSION_STATUS_UNSPECIFIED:
		if f.GetStatus() == agentsv1.FiringStatus_FIRING_STATUS_QUEUED {
			return "with the session's run"
		}
		return "running"
	case agentsv1.SessionStatus_SESSION_STATUS_READY:
		label = "ready"
	case agentsv1.SessionStatus_SESSION_STATUS_WAITING:
		label = "waiting"
	case agentsv1.SessionStatus_SESSION_STATUS_PAUSED:
		label = "paused"
	case agentsv1.SessionStatus_SESSION_STATUS_FAILED:
		label = "failed"
	case agentsv1.SessionStatus_SESSION_STATUS_RUNNING:
		label = "running"
	}
	if f.GetOutcomeReason() != "" {
		return label + " (" + f.GetOutcomeReason() + ")"
	}
	return label
}
