package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/agentsview"
	"github.com/agents-os/agents/tui/internal/cursor"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/layout"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/theme"
)

// dialog is a question at the foot of the screen that holds the keyboard
// until it is answered or dismissed.
type dialog interface {
	// HandleKey reports done when the dialog should close.
	HandleKey(tea.KeyPressMsg) (cmd tea.Cmd, done bool)
	Render(w int) string
}

// idPrompt asks for the id of a session to open.
type idPrompt struct {
	th *theme.Theme
	km *keys.Map
	in textinput.Model
}

func newIDPrompt(th *theme.Theme, km *keys.Map) (*idPrompt, tea.Cmd) {
	in := textinput.New()
	in.Prompt = "open session: "
	in.Placeholder = "id"
	st := in.Styles()
	st.Focused.Prompt = th.App.Prompt
	st.Focused.Placeholder = th.App.Muted
	st.Cursor.Blink = false
	in.SetStyles(st)
	return &idPrompt{th: th, km: km, in: in}, in.Focus()
}

func (p *idPrompt) HandleKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	switch {
	case key.Matches(msg, p.km.Get(keys.Back)):
		return nil, true
	case msg.String() == "enter":
		id := strings.TrimSpace(p.in.Value())
		if id == "" {
			return nil, true
		}
		return func() tea.Msg { return msgs.OpenSession{ID: id} }, true
	}
	var cmd tea.Cmd
	p.in, cmd = p.in.Update(msg)
	return cmd, false
}

func (p *idPrompt) Render(w int) string {
	p.in.SetWidth(max(1, w-len(p.in.Prompt)-1))
	return layout.Pad(p.in.View(), w)
}

// agentPicker chooses the agent of a new session.
type agentPicker struct {
	th     *theme.Theme
	km     *keys.Map
	agents []*agentsv1.AgentDescriptor
	cur    cursor.Cursor
}

// pickerRows is how many agents the picker shows at once.
const pickerRows = 6

func (p *agentPicker) HandleKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	switch {
	case key.Matches(msg, p.km.Get(keys.Back)):
		return nil, true
	case key.Matches(msg, p.km.Get(keys.Up)):
		p.cur.Move(-1, len(p.agents))
	case key.Matches(msg, p.km.Get(keys.Down)):
		p.cur.Move(1, len(p.agents))
	case key.Matches(msg, p.km.Get(keys.Open)):
		slug := p.agents[p.cur.Index()].GetSlug()
		return func() tea.Msg { return agentsview.NewSession{Agent: slug} }, true
	}
	return nil, false
}

func (p *agentPicker) Render(w int) string {
	st := p.th.App
	lines := []string{st.Prompt.Render("New session with which agent?") + st.Muted.Render("  enter picks, "+p.km.Get(keys.Back).Help().Key+" cancels")}
	from, to := p.cur.Window(pickerRows, len(p.agents))
	for i := from; i < to; i++ {
		a := p.agents[i]
		pointer, bg := "  ", st.Selected.GetBackground()
		if i == p.cur.Index() {
			pointer = "› "
		} else {
			bg = nil
		}
		lines = append(lines, layout.Row(w,
			[]layout.Seg{{Text: pointer, Style: st.Heading}, {Text: a.GetSlug(), Style: st.Title}, {Text: "  " + a.GetAnnounce(), Style: st.Muted}},
			nil, bg))
	}
	return layout.Fit(strings.Join(lines, "\n"), w, len(lines))
}
