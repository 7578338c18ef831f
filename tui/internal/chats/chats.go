// Package chats is the conversation list: root sessions newest first,
// each with its sub-agent sessions nested under it, their status, agent,
// title, turn count and unread markers, kept live by events.
package chats

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

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

// Loaded is the answer of Refresh: every session of the owner.
type Loaded struct {
	Sessions []*agentsv1.SessionMeta
	Err      error
	// generation is the Refresh that asked; only the newest one counts.
	generation int
}

// Deleted is the answer of a confirmed delete.
type Deleted struct {
	IDs []string
	Err error
}

// Client is what the list asks of the server, as the generated Connect
// client of the session service asks it.
type Client interface {
	pages.Lister
	DeleteSession(context.Context, *connect.Request[agentsv1.DeleteSessionRequest]) (*connect.Response[agentsv1.DeleteSessionResponse], error)
}

// Chats is the conversation list.
type Chats struct {
	ctx context.Context
	c   Client
	th  *theme.Theme
	km  *keys.Map

	metas  map[string]*agentsv1.SessionMeta
	unread map[string]bool
	open   string

	// rows is the tree flattened in display order, rebuilt from metas
	// when stale.
	rows     []row
	stale    bool
	selected string // id of the selected row, kept across rebuilds
	cur      cursor.Cursor
	height   int // of the last render, for page moves

	loaded  bool
	err     error
	refresh pages.Refresh

	confirm *deletion
	cache   map[string]rendered

	// search narrows the rows to the sessions whose title or agent holds
	// its text, with the sessions above them in the tree for context.
	search textinput.Model
	query  string

	now func() time.Time
}

type row struct {
	id          string
	depth       int
	descendants int
}

// deletion is a delete waiting for the user's yes.
type deletion struct {
	id, title   string
	descendants int
}

// rendered is a row's output and what it was drawn from: it is reused
// while none of that changed.
type rendered struct {
	from drawnFrom
	s    string
}

type drawnFrom struct {
	meta             *agentsv1.SessionMeta
	w, depth         int
	selected, unread bool
	dark             bool
	// age is the when column, as it reads at the drawing.
	age string
}

// New returns an empty list; Refresh fills it. now is the clock the when
// column measures with.
func New(ctx context.Context, c Client, th *theme.Theme, km *keys.Map, now func() time.Time) *Chats {
	in := textinput.New()
	in.Prompt = "/ "
	in.Placeholder = "search titles and agents"
	m := &Chats{
		ctx: ctx, c: c, th: th, km: km, now: now,
		metas:  map[string]*agentsv1.SessionMeta{},
		unread: map[string]bool{},
		cache:  map[string]rendered{},
		search: in,
	}
	m.Restyle()
	return m
}

// Restyle takes the theme's styles again after the theme changed.
func (m *Chats) Restyle() {
	m.th.StyleSearch(&m.search)
}

// Refresh fetches every session again.
func (m *Chats) Refresh() tea.Cmd {
	gen := m.refresh.Start()
	ctx, c := m.ctx, m.c
	return func() tea.Msg {
		all, err := pages.Sessions(ctx, c, &agentsv1.ListSessionsRequest{})
		return Loaded{Sessions: all, Err: err, generation: gen}
	}
}

// Handle takes the list's own answers and the events that change it.
func (m *Chats) Handle(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case Loaded:
		replay, ok := m.refresh.Done(msg.generation)
		if !ok {
			return nil
		}
		if msg.Err != nil {
			m.err = client.Describe(msg.Err)
			return nil
		}
		m.err, m.loaded = nil, true
		m.metas = make(map[string]*agentsv1.SessionMeta, len(msg.Sessions))
		for _, s := range msg.Sessions {
			m.metas[s.GetId()] = s
		}
		for _, ev := range replay {
			m.apply(ev)
		}
		m.stale = true
	case Deleted:
		if msg.Err != nil {
			return msgs.Say("", client.Describe(msg.Err))
		}
		for _, id := range msg.IDs {
			m.remove(id)
		}
		return msgs.Say(fmt.Sprintf("deleted %s", plural(len(msg.IDs), "session")), nil)
	case msgs.Event:
		m.refresh.Seen(msg.Event)
		m.apply(msg.Event)
	case msgs.Snapshot:
		return m.Refresh()
	}
	return nil
}

// apply changes the list by one event, without asking the server.
func (m *Chats) apply(ev *agentsv1.Event) {
	id := ev.GetSessionId()
	switch b := ev.GetBody().(type) {
	case *agentsv1.Event_SessionCreated:
		m.upsert(b.SessionCreated.GetMeta())
	case *agentsv1.Event_SessionUpdated:
		if m.upsert(b.SessionUpdated.GetMeta()) && b.SessionUpdated.GetHeadTurn() != nil {
			m.markUnread(id)
		}
	case *agentsv1.Event_SessionDeleted:
		m.remove(id)
	case *agentsv1.Event_RunStarted:
		m.setStatus(id, agentsv1.SessionStatus_SESSION_STATUS_RUNNING, "")
	case *agentsv1.Event_RunStopped:
		m.setStatus(id, b.RunStopped.GetStatus(), b.RunStopped.GetReason())
		m.markUnread(id)
	case *agentsv1.Event_SessionFailed:
		m.setStatus(id, agentsv1.SessionStatus_SESSION_STATUS_FAILED, b.SessionFailed.GetReason())
		m.markUnread(id)
	}
}

// upsert stores meta unless what the list holds is newer, and reports
// whether it did.
func (m *Chats) upsert(meta *agentsv1.SessionMeta) bool {
	if meta.GetId() == "" {
		return false
	}
	if old, ok := m.metas[meta.GetId()]; ok && old.GetUpdateTime().AsTime().After(meta.GetUpdateTime().AsTime()) {
		return false
	}
	m.metas[meta.GetId()] = meta
	m.stale = true
	return true
}

func (m *Chats) remove(id string) {
	if _, ok := m.metas[id]; !ok {
		return
	}
	delete(m.metas, id)
	delete(m.unread, id)
	delete(m.cache, id)
	m.stale = true
}

// setStatus applies a run event's status to a copy of the meta, so the
// row's cache, keyed by the meta, sees the change.
func (m *Chats) setStatus(id string, s agentsv1.SessionStatus, reason string) {
	old, ok := m.metas[id]
	if !ok || s == agentsv1.SessionStatus_SESSION_STATUS_UNSPECIFIED {
		return
	}
	meta := proto.CloneOf(old)
	meta.Status, meta.StatusReason = s, reason
	m.metas[id] = meta
}

// markUnread notes news in a session the user is not looking at.
func (m *Chats) markUnread(id string) {
	if _, ok := m.metas[id]; ok && id != m.open {
		m.unread[id] = true
	}
}

// SetOpen says which session's conversation is on screen ("" for none):
// it is read, and stays read while open.
func (m *Chats) SetOpen(id string) {
	m.open = id
	delete(m.unread, id)
}

// Unread counts the sessions with news not seen yet.
func (m *Chats) Unread() int { return len(m.unread) }

// All is every session the list knows, by id.
func (m *Chats) All() map[string]*agentsv1.SessionMeta { return m.metas }

// Meta is what the list knows of a session, or nil.
func (m *Chats) Meta(id string) *agentsv1.SessionMeta { return m.metas[id] }

// Focused reports whether the list holds the keyboard for a question of
// its own (the delete confirmation) or its search line.
func (m *Chats) Focused() bool { return m.confirm != nil || m.search.Focused() }

// Searching reports whether the search line has the keyboard.
func (m *Chats) Searching() bool { return m.search.Focused() }

// Confirming reports whether a delete waits for its answer.
func (m *Chats) Confirming() bool { return m.confirm != nil }

// Paste types pasted text into the search, when it has the keyboard.
func (m *Chats) Paste(msg tea.PasteMsg) tea.Cmd {
	if !m.search.Focused() {
		return nil
	}
	return m.editSearch(msg)
}

func (m *Chats) editSearch(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	m.search, cmd = m.search.Update(msg)
	if q := strings.TrimSpace(m.search.Value()); q != m.query {
		m.query = q
		m.stale = true
		// Unless the selected session still matches, the first that does
		// is selected.
		m.cur.Set(0, len(m.rows))
	}
	return cmd
}

// HandleKey moves the selection, opens and deletes; it reports whether
// it used the key.
func (m *Chats) HandleKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	m.rebuild()
	if m.confirm != nil {
		return m.answerConfirm(msg), true
	}
	km := m.km
	if m.search.Focused() {
		switch {
		case key.Matches(msg, km.Get(keys.Back)), key.Matches(msg, km.Get(keys.Open)):
			m.search.Blur()
			return nil, true
		case key.Matches(msg, km.Get(keys.Up)) && msg.Text == "", key.Matches(msg, km.Get(keys.Down)) && msg.Text == "":
			// The arrows leave the search for the rows; j and k are text.
			m.search.Blur()
		default:
			cmd := m.editSearch(msg)
			m.rebuild()
			return cmd, true
		}
	}
	switch {
	case key.Matches(msg, km.Get(keys.Search)):
		return m.search.Focus(), true
	case key.Matches(msg, km.Get(keys.Up)):
		m.move(-1)
	case key.Matches(msg, km.Get(keys.Down)):
		m.move(1)
	case key.Matches(msg, km.Get(keys.PageUp)):
		m.move(-max(1, m.height-1))
	case key.Matches(msg, km.Get(keys.PageDown)):
		m.move(max(1, m.height-1))
	case key.Matches(msg, km.Get(keys.Open)):
		if r, ok := m.selectedRow(); ok {
			return open(r.id), true
		}
	case key.Matches(msg, km.Get(keys.Delete)):
		if r, ok := m.selectedRow(); ok {
			m.confirm = &deletion{id: r.id, title: badge.Title(m.metas[r.id]), descendants: r.descendants}
		}
	default:
		return nil, false
	}
	return nil, true
}

func (m *Chats) answerConfirm(msg tea.KeyPressMsg) tea.Cmd {
	d := m.confirm
	switch {
	case msg.String() == "y" || key.Matches(msg, m.km.Get(keys.Open)):
		m.confirm = nil
		return m.delete(*d)
	case msg.String() == "n" || key.Matches(msg, m.km.Get(keys.Back)):
		m.confirm = nil
	}
	return nil
}

// delete asks the server to delete a session, with its sub-sessions when
// it has any: the user was told so.
func (m *Chats) delete(d deletion) tea.Cmd {
	mode := agentsv1.DeleteMode_DELETE_MODE_SINGLE
	if d.descendants > 0 {
		mode = agentsv1.DeleteMode_DELETE_MODE_CASCADE
	}
	ctx, c := m.ctx, m.c
	return func() tea.Msg {
		res, err := c.DeleteSession(ctx, connect.NewRequest(&agentsv1.DeleteSessionRequest{SessionId: d.id, Mode: mode}))
		if err != nil {
			return Deleted{Err: err}
		}
		return Deleted{IDs: res.Msg.GetDeletedIds()}
	}
}

func (m *Chats) move(delta int) {
	m.cur.Move(delta, len(m.rows))
	if r, ok := m.selectedRow(); ok {
		m.selected = r.id
	}
}

func (m *Chats) selectedRow() (row, bool) {
	i := m.cur.Index()
	if i < 0 || i >= len(m.rows) {
		return row{}, false
	}
	return m.rows[i], true
}

// rebuild flattens the tree again after the sessions changed: roots
// newest first, children under their parent in the order they were
// created. A child whose parent is not listed is shown as a root.
func (m *Chats) rebuild() {
	if !m.stale {
		return
	}
	m.stale = false
	children := map[string][]*agentsv1.SessionMeta{}
	var roots []*agentsv1.SessionMeta
	for _, s := range m.metas {
		if p := s.GetParentId(); p != "" && m.metas[p] != nil {
			children[p] = append(children[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	byCreation := func(a, b *agentsv1.SessionMeta) int {
		return cmp.Or(
			a.GetCreateTime().AsTime().Compare(b.GetCreateTime().AsTime()),
			strings.Compare(a.GetId(), b.GetId()))
	}
	slices.SortFunc(roots, func(a, b *agentsv1.SessionMeta) int { return byCreation(b, a) })
	m.rows = m.rows[:0]
	var walk func(s *agentsv1.SessionMeta, depth int) int
	walk = func(s *agentsv1.SessionMeta, depth int) int {
		i := len(m.rows)
		m.rows = append(m.rows, row{id: s.GetId(), depth: depth})
		kids := children[s.GetId()]
		slices.SortFunc(kids, byCreation)
		n := 0
		for _, k := range kids {
			n += 1 + walk(k, depth+1)
		}
		m.rows[i].descendants = n
		return n
	}
	for _, r := range roots {
		walk(r, 0)
	}
	if m.query != "" {
		m.rows = m.matching()
	}
	// The selected session where it is now; gone (deleted), the row that
	// took its place.
	at := m.cur.Index()
	for i, r := range m.rows {
		if r.id == m.selected {
			at = i
			break
		}
	}
	m.cur.Set(at, len(m.rows))
	if r, ok := m.selectedRow(); ok {
		m.selected = r.id
	}
}

// matching keeps the rows that hold the query, and those above them in
// the tree, so a helper's session shows under its parent.
func (m *Chats) matching() []row {
	q := strings.ToLower(m.query)
	keep := make([]bool, len(m.rows))
	for i, r := range m.rows {
		meta := m.metas[r.id]
		if !strings.Contains(strings.ToLower(badge.Title(meta)), q) && !strings.Contains(strings.ToLower(meta.GetAgent()), q) {
			continue
		}
		keep[i] = true
		// The ancestors are the nearest rows above with a smaller depth.
		d := r.depth
		for j := i - 1; j >= 0 && d > 0; j-- {
			if m.rows[j].depth < d {
				keep[j] = true
				d = m.rows[j].depth
			}
		}
	}
	var out []row
	for i, r := range m.rows {
		if keep[i] {
			out = append(out, r)
		}
	}
	return out
}

// Column widths, in cells.
const (
	agentWidth = 16
	turnsWidth = 6
	// whenWidth fits the longest age, "999d", and a space before it.
	whenWidth = 6
)

// minTitle is the room a row's title keeps on a narrow terminal: the
// columns give way to it, the turns first, then the age, then the agent.
const minTitle = 16

// columns are the right-hand cells of a row, or of the header, in w
// cells: each column's text in its width, with a space before it.
func columns(w int, agent, turns, when string, style lipgloss.Style) []layout.Seg {
	keep := layout.Keep(w, 6+minTitle, []int{agentWidth, turnsWidth, whenWidth}, []int{1, 2, 0})
	var out []layout.Seg
	if keep[0] {
		out = append(out, layout.Seg{Text: " " + layout.Pad(agent, agentWidth-1), Style: style})
	}
	if keep[1] {
		out = append(out, layout.Seg{Text: fmt.Sprintf("%*s", turnsWidth, turns), Style: style})
	}
	if keep[2] {
		out = append(out, layout.Seg{Text: fmt.Sprintf("%*s", whenWidth, when), Style: style})
	}
	return out
}

// Render draws the list in w×h cells.
func (m *Chats) Render(w, h int) string {
	m.rebuild()
	st := m.th.App
	var lines []string
	if m.search.Focused() || m.query != "" {
		m.search.SetWidth(max(1, w-4))
		lines = append(lines, m.search.View())
	}
	if m.err != nil {
		lines = append(lines, st.Error.Render("cannot list sessions: "+m.err.Error()))
	}
	foot := ""
	if m.confirm != nil {
		foot = st.Prompt.Render(m.confirmQuestion())
	}
	switch {
	case !m.loaded && m.err == nil:
		lines = append(lines, st.Muted.Render("loading sessions…"))
	case len(m.rows) == 0 && m.loaded && m.query != "":
		lines = append(lines, st.Muted.Render(fmt.Sprintf("No session title or agent contains %q.", m.query)))
	case len(m.rows) == 0 && m.loaded:
		lines = append(lines, st.Muted.Render(fmt.Sprintf("No sessions yet: %s starts one.", m.km.Get(keys.NewSession).Help().Key)))
	case len(m.rows) > 0:
		lines = append(lines, layout.Row(w,
			[]layout.Seg{{Text: "      session", Style: st.Muted}},
			columns(w, "agent", "turns", "when", st.Muted),
			nil))
		room := h - len(lines)
		if foot != "" {
			room--
		}
		m.height = room
		from, to := m.cur.Window(room, len(m.rows))
		for i := from; i < to; i++ {
			lines = append(lines, m.renderRow(m.rows[i], w, i == m.cur.Index()))
		}
	}
	body := layout.Fit(strings.Join(lines, "\n"), w, h)
	if foot != "" {
		body = layout.Fit(body, w, h-1) + "\n" + layout.Pad(foot, w)
	}
	return body
}

func (m *Chats) confirmQuestion() string {
	d := m.confirm
	if d.descendants > 0 {
		return fmt.Sprintf("Delete %q and its %s? y/n", d.title, plural(d.descendants, "sub-session"))
	}
	return fmt.Sprintf("Delete %q? y/n", d.title)
}

// renderRow draws one session, reusing the last drawing while nothing
// it shows changed.
func (m *Chats) renderRow(r row, w int, selected bool) string {
	meta := m.metas[r.id]
	unread := m.unread[r.id]
	age := units.Age(m.now().Sub(meta.GetUpdateTime().AsTime()))
	from := drawnFrom{meta: meta, w: w, depth: r.depth, selected: selected, unread: unread, dark: m.th.Dark, age: age}
	if c, ok := m.cache[r.id]; ok && c.from == from {
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
	indent := ""
	if r.depth > 0 {
		indent = strings.Repeat("  ", r.depth-1) + "└ "
	}
	title := st.Title
	if unread {
		title = title.Bold(true)
	}
	left := []layout.Seg{
		{Text: pointer, Style: st.Heading},
		{Text: badge.Icon(meta.GetStatus(), unread), Style: badge.Style(st, meta.GetStatus(), unread)},
		{Text: " "},
		{Text: badge.UnreadMark(unread), Style: st.Unread},
		{Text: " " + indent, Style: st.Muted},
		{Text: badge.Title(meta), Style: title},
	}
	right := columns(w, meta.GetAgent(), fmt.Sprint(meta.GetTurnCount()), age, st.Muted)
	s := layout.Row(w, left, right, bg)
	m.cache[r.id] = rendered{from: from, s: s}
	return s
}

func open(id string) tea.Cmd {
	return func() tea.Msg { return msgs.OpenSession{ID: id} }
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
