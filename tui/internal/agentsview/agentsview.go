// Package agentsview is the Agents tab: the agents the server loaded,
// each with its source (a file, read-only here, or the database, with its
// version), and the descriptor of the selected one (model, system prompt,
// tools and their kinds, helpers, params), with the problems of the last
// load. A stored agent is edited in $EDITOR from here.
package agentsview

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"connectrpc.com/connect"
	"github.com/charmbracelet/x/ansi"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/cursor"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/layout"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/pages"
	"github.com/agents-os/agents/tui/internal/theme"
	"github.com/agents-os/agents/tui/internal/units"
)

// Loaded is the answer of Refresh or Reload.
type Loaded struct {
	Agents []*agentsv1.AgentDescriptor
	Errors []*agentsv1.AgentLoadError
	Err    error
	// Reloaded says the server read its agent files again.
	Reloaded bool
	// generation is the listing that asked; only the newest one counts.
	generation int
}

// NewSession asks the shell to start a session with an agent.
type NewSession struct{ Agent string }

// Reply is the answer to a command of the tab: the shell hands it to the
// tab and to no other component.
type Reply interface {
	// reply keeps the replies to this package's own types.
	reply()
}

func (Loaded) reply()      {}
func (editFetched) reply() {}
func (editReady) reply()   {}
func (editDone) reply()    {}
func (editSaved) reply()   {}

// Client is what the tab asks of the server, as the generated Connect
// client of the agent service asks it.
type Client interface {
	ListAgents(context.Context, *connect.Request[agentsv1.ListAgentsRequest]) (*connect.Response[agentsv1.ListAgentsResponse], error)
	ReloadAgents(context.Context, *connect.Request[agentsv1.ReloadAgentsRequest]) (*connect.Response[agentsv1.ReloadAgentsResponse], error)
	GetAgent(context.Context, *connect.Request[agentsv1.GetAgentRequest]) (*connect.Response[agentsv1.GetAgentResponse], error)
	UpdateAgent(context.Context, *connect.Request[agentsv1.UpdateAgentRequest]) (*connect.Response[agentsv1.UpdateAgentResponse], error)
	ListAgentVersions(context.Context, *connect.Request[agentsv1.ListAgentVersionsRequest]) (*connect.Response[agentsv1.ListAgentVersionsResponse], error)
}

// Agents is the Agents tab.
type Agents struct {
	ctx context.Context
	c   Client
	th  *theme.Theme
	km  *keys.Map

	agents []*agentsv1.AgentDescriptor
	errs   []*agentsv1.AgentLoadError
	// search narrows the list to the agents whose slug or announce holds
	// its text; shown is that list.
	search  textinput.Model
	shown   []*agentsv1.AgentDescriptor
	cur     cursor.Cursor
	scroll  int // first line of the descriptor shown
	detailH int

	loaded bool
	err    error
	// refresh tells the newest listing's answer from older ones still in
	// flight, which may predate a change.
	refresh pages.Refresh

	// edit is the edit of a stored agent under way, if any.
	edit *editing
	// history, when set, shows a stored agent's versions in the
	// descriptor's place.
	history *history

	// detail caches the selected descriptor's lines at a width.
	detail struct {
		agent *agentsv1.AgentDescriptor
		w     int
		dark  bool
		lines []string
	}
}

// New returns an empty tab; Refresh fills it.
func New(ctx context.Context, c Client, th *theme.Theme, km *keys.Map) *Agents {
	in := textinput.New()
	in.Prompt = "/ "
	in.Placeholder = "search agents"
	m := &Agents{ctx: ctx, c: c, th: th, km: km, search: in}
	m.Restyle()
	return m
}

// Restyle takes the theme's styles again after the theme changed.
func (m *Agents) Restyle() {
	m.th.StyleSearch(&m.search)
}

// Searching reports whether the search line has the keyboard.
func (m *Agents) Searching() bool { return m.search.Focused() }

// Paste types pasted text into the search, when it has the keyboard.
func (m *Agents) Paste(msg tea.PasteMsg) tea.Cmd {
	if !m.search.Focused() {
		return nil
	}
	var cmd tea.Cmd
	m.search, cmd = m.search.Update(msg)
	m.filter()
	return cmd
}

// filter recomputes the agents shown, keeping the selection on its agent
// when it is still shown.
func (m *Agents) filter() {
	selected := ""
	if a := m.selected(); a != nil {
		selected = a.GetSlug()
	}
	q := strings.ToLower(strings.TrimSpace(m.search.Value()))
	m.shown = m.shown[:0]
	for _, a := range m.agents {
		if q == "" || strings.Contains(strings.ToLower(a.GetSlug()), q) || strings.Contains(strings.ToLower(a.GetAnnounce()), q) {
			m.shown = append(m.shown, a)
		}
	}
	at := 0
	for i, a := range m.shown {
		if a.GetSlug() == selected {
			at = i
		}
	}
	m.cur.Set(at, len(m.shown))
	m.scroll = 0
}

// Refresh lists the agents again.
func (m *Agents) Refresh() tea.Cmd {
	ctx, c, gen := m.ctx, m.c, m.refresh.Start()
	return func() tea.Msg {
		res, err := c.ListAgents(ctx, connect.NewRequest(&agentsv1.ListAgentsRequest{}))
		if err != nil {
			return Loaded{Err: err, generation: gen}
		}
		return Loaded{Agents: res.Msg.GetAgents(), Errors: res.Msg.GetErrors(), generation: gen}
	}
}

// Reload asks the server to read its agent files again and describe
// their tools anew.
func (m *Agents) Reload() tea.Cmd {
	ctx, c, gen := m.ctx, m.c, m.refresh.Start()
	return func() tea.Msg {
		res, err := c.ReloadAgents(ctx, connect.NewRequest(&agentsv1.ReloadAgentsRequest{}))
		if err != nil {
			return Loaded{Err: err, Reloaded: true, generation: gen}
		}
		return Loaded{Agents: res.Msg.GetAgents(), Errors: res.Msg.GetErrors(), Reloaded: true, generation: gen}
	}
}

// Loaded reports whether the agents were listed at least once.
func (m *Agents) Loaded() bool { return m.loaded }

// List is the agents as last loaded, sorted by slug.
func (m *Agents) List() []*agentsv1.AgentDescriptor { return m.agents }

// Handle takes the tab's answers, and refetches when another client
// reloaded the agents.
func (m *Agents) Handle(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case Loaded:
		// Only the newest listing's answer is the list: an older one
		// still in flight may predate a change. A reload overtaken by a
		// later listing still says how it went.
		if _, newest := m.refresh.Done(msg.generation); newest {
			if msg.Err != nil {
				m.err = client.Describe(msg.Err)
			} else {
				m.agents, m.errs, m.err, m.loaded = msg.Agents, msg.Errors, nil, true
				m.filter()
			}
		}
		if !msg.Reloaded {
			return nil
		}
		if msg.Err != nil {
			return msgs.Say("", fmt.Errorf("reload agents: %w", client.Describe(msg.Err)))
		}
		text := fmt.Sprintf("reloaded %s", plural(len(msg.Agents), "agent"))
		if n := len(msg.Errors); n > 0 {
			text += fmt.Sprintf(", %s", plural(n, "load problem"))
		}
		return msgs.Say(text, nil)
	case msgs.Event:
		if _, ok := msg.Event.GetBody().(*agentsv1.Event_AgentsChanged); ok {
			if m.history != nil {
				return tea.Batch(m.Refresh(), m.fetchVersions())
			}
			return m.Refresh()
		}
	case versionsFetched:
		return m.takeVersions(msg)
	case editFetched, editReady, editDone, editSaved:
		if m.edit != nil {
			return m.handleEdit(msg)
		}
	}
	return nil
}

// HandleKey moves through the agents, scrolls the descriptor and starts
// a session with the selected agent; it reports whether it used the key.
func (m *Agents) HandleKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	km := m.km
	if m.search.Focused() {
		switch {
		case key.Matches(msg, km.Get(keys.Back)), key.Matches(msg, km.Get(keys.Open)):
			m.search.Blur()
			return nil, true
		case key.Matches(msg, km.Get(keys.Up)) && msg.Text == "", key.Matches(msg, km.Get(keys.Down)) && msg.Text == "":
			// The arrows leave the search for the list; j and k are text.
			m.search.Blur()
		default:
			var cmd tea.Cmd
			m.search, cmd = m.search.Update(msg)
			m.filter()
			return cmd, true
		}
	}
	switch {
	case m.history != nil && key.Matches(msg, km.Get(keys.Back)):
		m.closeVersions()
	case m.history != nil && key.Matches(msg, km.Get(keys.OlderVersion)):
		m.stepVersion(1)
	case m.history != nil && key.Matches(msg, km.Get(keys.NewerVersion)):
		m.stepVersion(-1)
	case key.Matches(msg, km.Get(keys.AgentVersions)):
		return m.toggleVersions(), true
	case key.Matches(msg, km.Get(keys.Search)):
		return m.search.Focus(), true
	case key.Matches(msg, km.Get(keys.Up)):
		m.cur.Move(-1, len(m.shown))
		m.closeVersions()
	case key.Matches(msg, km.Get(keys.Down)):
		m.cur.Move(1, len(m.shown))
		m.closeVersions()
	case key.Matches(msg, km.Get(keys.PageDown)):
		m.scroll += max(1, m.detailH-1)
	case key.Matches(msg, km.Get(keys.PageUp)):
		m.scroll = max(0, m.scroll-max(1, m.detailH-1))
	case key.Matches(msg, km.Get(keys.EditAgent)):
		return m.startEdit(), true
	case key.Matches(msg, km.Get(keys.Open)):
		if a := m.selected(); a != nil {
			slug := a.GetSlug()
			return func() tea.Msg { return NewSession{Agent: slug} }, true
		}
	default:
		return nil, false
	}
	return nil, true
}

func (m *Agents) selected() *agentsv1.AgentDescriptor {
	if i := m.cur.Index(); i < len(m.shown) {
		return m.shown[i]
	}
	return nil
}

// Render draws the tab in w×h cells: the list on the left, the
// descriptor on the right, load problems across the foot.
func (m *Agents) Render(w, h int) string {
	st := m.th.App
	var top []string
	if m.err != nil {
		top = append(top, st.Error.Render("cannot list agents: "+m.err.Error()))
	}
	if !m.loaded {
		if m.err == nil {
			top = append(top, st.Muted.Render("loading agents…"))
		}
		return layout.Fit(strings.Join(top, "\n"), w, h)
	}
	foot := m.problems(w, max(1, h/4))
	if m.search.Focused() || m.search.Value() != "" {
		m.search.SetWidth(max(1, w-4))
		top = append(top, m.search.View())
	}
	bodyH := h - len(top) - len(foot)
	if len(m.agents) > 0 && len(m.shown) == 0 {
		top = append(top, st.Muted.Render(fmt.Sprintf("No agent's slug or announce contains %q.", strings.TrimSpace(m.search.Value()))))
		return layout.Fit(strings.Join(append(top, foot...), "\n"), w, h)
	}
	if len(m.agents) == 0 {
		top = append(top, st.Muted.Render("No agents loaded: add agent files to the configuration, then press "+m.km.Get(keys.Reload).Help().Key+"."))
		return layout.Fit(strings.Join(append(top, foot...), "\n"), w, h)
	}
	listW := min(28, max(12, w/3))
	detailW := w - listW - 3
	list := m.renderList(listW, bodyH)
	detail := m.renderDetail(detailW, bodyH)
	sep := st.Muted.Render(" │ ")
	lines := top
	for i := range bodyH {
		lines = append(lines, list[i]+sep+detail[i])
	}
	return layout.Fit(strings.Join(append(lines, foot...), "\n"), w, h)
}

func (m *Agents) renderList(w, h int) []string {
	st := m.th.App
	from, to := m.cur.Window(h, len(m.shown))
	out := make([]string, 0, h)
	for i := from; i < to; i++ {
		a := m.shown[i]
		pointer, bg := "  ", st.Selected.GetBackground()
		if i != m.cur.Index() {
			bg = nil
		} else {
			pointer = "› "
		}
		left := []layout.Seg{{Text: pointer, Style: st.Heading}, {Text: a.GetSlug(), Style: st.Title}}
		var right []layout.Seg
		if a.GetParent() != "" {
			right = append(right, layout.Seg{Text: " helper", Style: st.Muted})
		}
		if a.GetSource() == agentsv1.AgentSource_AGENT_SOURCE_STORED {
			right = append(right, layout.Seg{Text: fmt.Sprintf(" v%d", a.GetVersion()), Style: st.Key})
		}
		out = append(out, layout.Row(w, left, right, bg))
	}
	for len(out) < h {
		out = append(out, strings.Repeat(" ", w))
	}
	return out
}

func (m *Agents) renderDetail(w, h int) []string {
	a := m.selected()
	d := &m.detail
	if d.agent != a || d.w != w || d.dark != m.th.Dark {
		d.agent, d.w, d.dark = a, w, m.th.Dark
		if m.history != nil {
			d.lines = strings.Split(renderHistory(m.th.App, m.history, w), "\n")
		} else {
			d.lines = strings.Split(describe(m.th.App, a, w), "\n")
		}
	}
	m.detailH = h
	more := m.th.App.Muted.Render(m.km.Get(keys.PageDown).Help().Key + " for more")
	shown, top := layout.Scroll(d.lines, m.scroll, h, more)
	m.scroll = top
	return strings.Split(layout.Fit(strings.Join(shown, "\n"), w, h), "\n")
}

// describe renders a descriptor in w cells: every field a person needs
// to know what the agent will do, and nothing secret (the API key is
// named, never shown).
func describe(st theme.AppStyles, a *agentsv1.AgentDescriptor, w int) string {
	var b strings.Builder
	line := func(s string) { b.WriteString(s + "\n") }
	wrap := func(indent, s string) {
		for _, l := range strings.Split(ansi.Wrap(s, max(1, w-len(indent)), ""), "\n") {
			line(indent + l)
		}
	}
	field := func(name, value string) { line("  " + st.Muted.Render(fmt.Sprintf("%-7s", name)) + " " + value) }

	line(st.Title.Bold(true).Render(a.GetSlug()))
	if a.GetAnnounce() != "" {
		wrap("", a.GetAnnounce())
	}
	if a.GetParent() != "" {
		line(st.Muted.Render("helper of " + a.GetParent()))
	}
	if a.GetSource() == agentsv1.AgentSource_AGENT_SOURCE_STORED {
		text := fmt.Sprintf("stored · version %d", a.GetVersion())
		if t := a.GetUpdateTime(); t != nil {
			text += " · written " + t.AsTime().Local().Format(time.DateTime)
		}
		line(st.Key.Render(text))
	} else if a.GetFile() != "" {
		line(st.Muted.Render("file " + a.GetFile() + " · read-only here"))
	}

	md := a.GetModel()
	line("")
	line(st.Heading.Render("Model"))
	field("flavor", md.GetFlavor())
	field("name", md.GetName())
	field("url", md.GetUrl())
	keyState := st.Error.Render("missing")
	switch {
	case md.GetApiKeyPresent():
		keyState = st.Connected.Render("present")
	case md.GetOffline():
		// The url is the offline model's: the agent answers, only not
		// with the model its file names.
		keyState = st.Muted.Render("not on the server: the offline model answers, with scripted replies")
	}
	if md.GetApiKeyId() == "" {
		field("key", st.Muted.Render("no key needed"))
	} else {
		field("key", md.GetApiKeyId()+" ("+keyState+")")
	}
	if l := limits(md); l != "" {
		field("window", l)
	}
	if n := a.GetMaxSteps(); n > 0 {
		field("steps", fmt.Sprintf("at most %d per run", n))
	}
	if b := a.GetBudget(); b != nil {
		var parts []string
		if b.Tokens != nil {
			parts = append(parts, units.Grouped(b.GetTokens())+" tokens")
		}
		if b.CostUsd != nil {
			parts = append(parts, fmt.Sprintf("$%.2f", b.GetCostUsd()))
		}
		field("budget", strings.Join(parts, " · ")+" a session tree, unless its client sets one")
	}

	line("")
	line(st.Heading.Render("System prompt"))
	if len(a.GetSystemPrompt()) == 0 {
		line(st.Muted.Render("  (none)"))
	}
	for _, p := range a.GetSystemPrompt() {
		wrap("  ", p)
	}

	line("")
	line(st.Heading.Render(fmt.Sprintf("Tools (%d)", len(a.GetTools()))))
	for _, t := range a.GetTools() {
		head := "  " + t.GetName() + " " + st.Key.Render("["+kindName(t.GetKind())+"]")
		if t.GetSource() != "" {
			head += " " + st.Muted.Render(t.GetSource())
		}
		line(head)
		if d, _, _ := strings.Cut(t.GetDescription(), "\n"); d != "" {
			line(st.Muted.Render("    " + ansi.Truncate(d, max(1, w-4), "…")))
		}
	}

	if len(a.GetHelpers()) > 0 {
		line("")
		line(st.Heading.Render("Helpers"))
		wrap("  ", strings.Join(a.GetHelpers(), ", "))
	}

	if len(a.GetParams()) > 0 {
		line("")
		line(st.Heading.Render("Params"))
		for _, p := range a.GetParams() {
			var tags []string
			if p.GetRequired() {
				tags = append(tags, "required")
			}
			if p.GetSecret() {
				tags = append(tags, "secret")
			}
			s := "  " + p.GetName()
			if len(tags) > 0 {
				s += " " + st.Key.Render("("+strings.Join(tags, ", ")+")")
			}
			if p.GetDescription() != "" {
				s += " " + st.Muted.Render(p.GetDescription())
			}
			line(s)
		}
	}

	if len(a.GetMcpServers()) > 0 {
		line("")
		line(st.Heading.Render("MCP servers"))
		for _, s := range a.GetMcpServers() {
			line("  " + s.GetName() + " " + st.Muted.Render(s.GetTransport()+" "+s.GetTarget()))
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func kindName(k agentsv1.ToolKind) string {
	switch k {
	case agentsv1.ToolKind_TOOL_KIND_BASH:
		return "bash"
	case agentsv1.ToolKind_TOOL_KIND_HELPER:
		return "helper"
	case agentsv1.ToolKind_TOOL_KIND_CLIENT:
		return "client"
	case agentsv1.ToolKind_TOOL_KIND_MCP:
		return "mcp"
	case agentsv1.ToolKind_TOOL_KIND_SYSTEM:
		return "system"
	case agentsv1.ToolKind_TOOL_KIND_HTTP:
		return "http"
	default:
		return "tool"
	}
}

// problems are the load errors, at most max lines of them.
func (m *Agents) problems(w, most int) []string {
	if len(m.errs) == 0 {
		return nil
	}
	st := m.th.App
	out := []string{st.Error.Render(plural(len(m.errs), "load problem") + ":")}
	for i, e := range m.errs {
		if len(out) == most && i < len(m.errs)-1 {
			out = append(out, st.Muted.Render(fmt.Sprintf("  …and %d more", len(m.errs)-i)))
			break
		}
		where := e.GetFile()
		if e.GetField() != "" {
			where += " " + e.GetField()
		}
		out = append(out, ansi.Truncate("  "+where+": "+e.GetReason(), w, "…"))
	}
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// limits says how much one request to the model may hold and when the
// agent's sessions are compacted, "" while the server does not know.
func limits(md *agentsv1.ModelDescriptor) string {
	if md.GetContextWindow() <= 0 {
		return ""
	}
	parts := []string{"context window " + units.Grouped(md.GetContextWindow())}
	if n := md.GetMaxOutputTokens(); n > 0 {
		parts = append(parts, "max output "+units.Grouped(n))
	}
	if n := md.GetCompactThreshold(); n > 0 {
		parts = append(parts, "compacts above "+units.Grouped(n))
	}
	text := strings.Join(parts, " · ")
	if src := md.GetLimitsSource(); src != "" {
		text += " (" + src + ")"
	}
	return text
}
