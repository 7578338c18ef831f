// Package history is the History tab: every session of the owner, roots
// and sub-sessions alike, newest first, searchable by title and kept
// live by events.
package history

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/badge"
	"github.com/agents-os/agents/tui/internal/cursor"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/layout"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/pages"
	"github.com/agents-os/agents/tui/internal/theme"
	"github.com/agents-os/agents/tui/internal/units"
)

// Loaded is the answer of a listing for one query.
type Loaded struct {
	// Gen is the listing's number: an answer for a query the user has
	// typed past is dropped.
	Gen      int
	Sessions []*agentsv1.SessionMeta
	Err      error
}

// Client is what the tab asks of the server: the listing of sessions.
type Client interface {
	pages.Lister
}

// History is the History tab.
type History struct {
	ctx context.Context
	c   Client
	th  *theme.Theme
	km  *keys.Map
	now func() time.Time

	search textinput.Model
	query  string // the query of the rows shown (or being fetched)

	// rows are newest first, each sub-session under its parent (when the
	// parent is listed too); depth is how deep each is nested.
	rows   []*agentsv1.SessionMeta
	depth  map[string]int
	cur    cursor.Cursor
	height int

	loaded  bool
	err     error
	refresh pages.Refresh

	cache map[string]rendered
}

type rendered struct {
	from drawnFrom
	s    string
}

type drawnFrom struct {
	meta     *agentsv1.SessionMeta
	w, depth int
	selected bool
	dark     bool
	age      string
}

// New returns an empty History; Refresh fills it. now gives the time
// ages are measured from.
func New(ctx context.Context, c Client, th *theme.Theme, km *keys.Map, now func() time.Time) *History {
	in := textinput.New()
	in.Prompt = "/ "
	in.Placeholder = "search titles"
	h := &History{ctx: ctx, c: c, th: th, km: km, now: now, search: in, cache: map[string]rendered{}}
	h.Restyle()
	return h
}

// Restyle takes the theme's styles again after the theme changed.
func (m *History) Restyle() {
	m.th.StyleSearch(&m.search)
}

// Refresh lists the sessions matching the query again, every page.
func (m *History) Refresh() tea.Cmd {
	gen := m.refresh.Start()
	ctx, c, q := m.ctx, m.c, m.query
	return func() tea.Msg {
		all, err := pages.Sessions(ctx, c, &agentsv1.ListSessionsRequest{Query: q})
		return Loaded{Gen: gen, Sessions: all, Err: err}
	}
}

// Handle takes the tab's answers and the events that change it.
func (m *History) Handle(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case Loaded:
		replay, ok := m.refresh.Done(msg.Gen)
		if !ok {
			return nil
		}
		if msg.Err != nil {
			m.err = client.Describe(msg.Err)
			return nil
		}
		m.err, m.loaded = nil, true
		selected := m.selectedID()
		m.rows = msg.Sessions
		for _, ev := range replay {
			m.apply(ev)
		}
		m.nest(selected)
		m.cur.Set(m.cur.Index(), len(m.rows))
	case msgs.Event:
		m.refresh.Seen(msg.Event)
		if selected := m.selectedID(); m.apply(msg.Event) {
			m.nest(selected)
		}
	case msgs.Snapshot:
		return m.Refresh()
	}
	return nil
}

// nest orders the rows as a tree: roots newest first, each session's
// sub-sessions right under it in the order they were made. A
// sub-session whose parent is not listed (the search left it out) is a
// root. The selection stays on the session selected before.
func (m *History) nest(selected string) {
	listed := make(map[string]bool, len(m.rows))
	for _, s := range m.rows {
		listed[s.GetId()] = true
	}
	kids := map[string][]*agentsv1.SessionMeta{}
	var roots []*agentsv1.SessionMeta
	for _, s := range m.rows {
		if p := s.GetParentId(); p != "" && listed[p] && p != s.GetId() {
			kids[p] = append(kids[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	byCreation := func(a, b *agentsv1.SessionMeta) int {
		return a.GetCreateTime().AsTime().Compare(b.GetCreateTime().AsTime())
	}
	slices.SortStableFunc(roots, func(a, b *agentsv1.SessionMeta) int { return byCreation(b, a) })
	out := make([]*agentsv1.SessionMeta, 0, len(m.rows))
	m.depth = make(map[string]int, len(m.rows))
	seen := make(map[string]bool, len(m.rows))
	var walk func(s *agentsv1.SessionMeta, d int)
	walk = func(s *agentsv1.SessionMeta, d int) {
		if seen[s.GetId()] {
			return
		}
		seen[s.GetId()] = true
		out = append(out, s)
		m.depth[s.GetId()] = d
		ks := kids[s.GetId()]
		slices.SortStableFunc(ks, byCreation)
		for _, k := range ks {
			walk(k, d+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	m.rows = out
	if i := slices.IndexFunc(m.rows, func(s *agentsv1.SessionMeta) bool { return s.GetId() == selected }); i >= 0 {
		m.cur.Set(i, len(m.rows))
	}
}

func (m *History) selectedID() string {
	if i := m.cur.Index(); i >= 0 && i < len(m.rows) {
		return m.rows[i].GetId()
	}
	return ""
}

// apply changes the rows by one event, and reports whether it did. Run
// events carry no summary; the session.updated that goes with each
// brings the new status.
func (m *History) apply(ev *agentsv1.Event) bool {
	switch b := ev.GetBody().(type) {
	case *agentsv1.Event_SessionCreated:
		m.upsert(b.SessionCreated.GetMeta())
	case *agentsv1.Event_SessionUpdated:
		m.upsert(b.SessionUpdated.GetMeta())
	case *agentsv1.Event_SessionDeleted:
		m.rows = slices.DeleteFunc(m.rows, func(s *agentsv1.SessionMeta) bool { return s.GetId() == ev.GetSessionId() })
		delete(m.cache, ev.GetSessionId())
	default:
		return false
	}
	return true
}

// upsert replaces a listed session by a newer summary, or lists a new
// session that matches the query at its place by creation time. The
// server matches the query against titles; so does this, ignoring case.
func (m *History) upsert(meta *agentsv1.SessionMeta) {
	i := slices.IndexFunc(m.rows, func(s *agentsv1.SessionMeta) bool { return s.GetId() == meta.GetId() })
	if i >= 0 {
		if !m.rows[i].GetUpdateTime().AsTime().After(meta.GetUpdateTime().AsTime()) {
			m.rows[i] = meta
		}
		return
	}
	if !strings.Contains(strings.ToLower(meta.GetTitle()), strings.ToLower(m.query)) {
		return
	}
	// nest puts it in its place.
	m.rows = append(m.rows, meta)
}

// Focused reports whether the search line holds the keyboard.
func (m *History) Focused() bool { return m.search.Focused() }

// HandleKey edits the search or moves through the rows; it reports
// whether it used the key.
func (m *History) HandleKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	km := m.km
	if m.search.Focused() {
		switch {
		case key.Matches(msg, km.Get(keys.Back)), key.Matches(msg, km.Get(keys.Open)):
			m.search.Blur()
			return nil, true
		case key.Matches(msg, km.Get(keys.Up)) && msg.Text == "", key.Matches(msg, km.Get(keys.Down)) && msg.Text == "":
			// The arrows leave the search for the rows; j and k are text.
		default:
			var cmd tea.Cmd
			m.search, cmd = m.search.Update(msg)
			if q := strings.TrimSpace(m.search.Value()); q != m.query {
				m.query = q
				return tea.Batch(cmd, m.Refresh()), true
			}
			return cmd, true
		}
	}
	switch {
	case key.Matches(msg, km.Get(keys.Search)):
		return m.search.Focus(), true
	case key.Matches(msg, km.Get(keys.Up)):
		m.search.Blur()
		m.cur.Move(-1, len(m.rows))
	case key.Matches(msg, km.Get(keys.Down)):
		m.search.Blur()
		m.cur.Move(1, len(m.rows))
	case key.Matches(msg, km.Get(keys.PageUp)):
		m.cur.Move(-max(1, m.height-1), len(m.rows))
	case key.Matches(msg, km.Get(keys.PageDown)):
		m.cur.Move(max(1, m.height-1), len(m.rows))
	case key.Matches(msg, km.Get(keys.Open)):
		if i := m.cur.Index(); i < len(m.rows) {
			id := m.rows[i].GetId()
			return func() tea.Msg { return msgs.OpenSession{ID: id} }, true
		}
	default:
		return nil, false
	}
	return nil, true
}

// Paste types pasted text into the search, when it has the keyboard.
func (m *History) Paste(msg tea.PasteMsg) tea.Cmd {
	if !m.search.Focused() {
		return nil
	}
	var cmd tea.Cmd
	m.search, cmd = m.search.Update(msg)
	if q := strings.TrimSpace(m.search.Value()); q != m.query {
		m.query = q
		return tea.Batch(cmd, m.Refresh())
	}
	return cmd
}

// Column widths, in cells.
const (
	agentWidth  = 16
	statusWidth = 9
	turnsWidth  = 6
	ageWidth    = 5
)

// Render draws the tab in w×h cells: the search line, then the rows.
func (m *History) Render(w, h int) string {
	st := m.th.App
	m.search.SetWidth(max(1, w-4))
	lines := []string{m.search.View()}
	if m.err != nil {
		lines = append(lines, st.Error.Render("cannot list sessions: "+m.err.Error()))
	}
	switch {
	case !m.loaded && m.err == nil:
		lines = append(lines, st.Muted.Render("loading sessions…"))
	case m.loaded && len(m.rows) == 0 && m.query != "":
		lines = append(lines, st.Muted.Render(fmt.Sprintf("No session title contains %q.", m.query)))
	case m.loaded && len(m.rows) == 0:
		lines = append(lines, st.Muted.Render("No sessions yet."))
	default:
		lines = append(lines, layout.Row(w,
			[]layout.Seg{{Text: "      session", Style: st.Muted}},
			[]layout.Seg{{Text: columns(w, "agent", "status", "turns", "age"), Style: st.Muted}},
			nil))
		room := h - len(lines)
		m.height = room
		from, to := m.cur.Window(room, len(m.rows))
		for i := from; i < to; i++ {
			lines = append(lines, m.renderRow(m.rows[i], w, i == m.cur.Index()))
		}
	}
	return layout.Fit(strings.Join(lines, "\n"), w, h)
}

// minTitle is the room a row's title keeps on a narrow terminal: the
// columns give way to it, the turns first, then the status, the age and
// the agent.
const minTitle = 16

// columns are the right-hand cells of a row, or of the header, in w
// cells: each column's text in its width, with a space before it.
func columns(w int, agent, status, turns, age string) string {
	cells := []string{
		" " + layout.Pad(agent, agentWidth-1),
		" " + layout.Pad(status, statusWidth-1),
		fmt.Sprintf(" %*s", turnsWidth, turns),
		fmt.Sprintf(" %*s", ageWidth, age),
	}
	widths := make([]int, len(cells))
	for i, c := range cells {
		widths[i] = ansi.StringWidth(c)
	}
	var b strings.Builder
	for i, keep := range layout.Keep(w, 6+minTitle, widths, []int{2, 1, 3, 0}) {
		if keep {
			b.WriteString(cells[i])
		}
	}
	return b.String()
}

func (m *History) renderRow(s *agentsv1.SessionMeta, w int, selected bool) string {
	from := drawnFrom{meta: s, w: w, depth: m.depth[s.GetId()], selected: selected, dark: m.th.Dark, age: units.Age(m.now().Sub(s.GetUpdateTime().AsTime()))}
	if c, ok := m.cache[s.GetId()]; ok && c.from == from {
		return c.s
	}
	st := m.th.App
	bg := st.Selected.GetBackground()
	pointer := "  "
	if selected {
		pointer = "› "
	} else {
		bg = nil
	}
	sub := ""
	if d := from.depth; d > 0 {
		sub = strings.Repeat("  ", d-1) + "└ "
	} else if s.GetParentId() != "" {
		sub = "↳ " // a sub-session whose parent the search left out
	}
	left := []layout.Seg{
		{Text: pointer, Style: st.Heading},
		{Text: badge.Icon(s.GetStatus(), false), Style: badge.Style(st, s.GetStatus(), false)},
		{Text: "   "},
		{Text: sub, Style: st.Muted},
		{Text: badge.Title(s), Style: st.Title},
	}
	right := []layout.Seg{{Text: columns(w, s.GetAgent(), statusName(s.GetStatus()), fmt.Sprint(s.GetTurnCount()), from.age), Style: st.Muted}}
	out := layout.Row(w, left, right, bg)
	m.cache[s.GetId()] = rendered{from: from, s: out}
	return out
}

func statusName(s agentsv1.SessionStatus) string {
	switch s {
	case agentsv1.SessionStatus_SESSION_STATUS_RUNNING:
		return "running"
	case agentsv1.SessionStatus_SESSION_STATUS_WAITING:
		return "waiting"
	case agentsv1.SessionStatus_SESSION_STATUS_PAUSED:
		return "paused"
	case agentsv1.SessionStatus_SESSION_STATUS_FAILED:
		return "failed"
	default:
		return "ready"
	}
}
