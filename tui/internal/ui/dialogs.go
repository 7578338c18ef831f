package ui

import (
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/agentsview"
	"github.com/agents-os/agents/tui/internal/cursor"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/layout"
	"github.com/agents-os/agents/tui/internal/theme"
)

// dialog is a question at the foot of the screen that holds the keyboard
// until it is answered or dismissed.
type dialog interface {
	// HandleKey reports done when the dialog should close.
	HandleKey(tea.KeyPressMsg) (cmd tea.Cmd, done bool)
	Render(w int) string
	// Keys are the dialog's keys, for the footer.
	Keys() []key.Binding
}

// idPrompt asks for the id of a session to open.
type idPrompt struct {
	th      *theme.Theme
	km      *keys.Map
	in      textinput.Model
	resolve func(string) tea.Cmd
}

// newIDPrompt asks for a session id, or the start of one; resolve opens
// the session it names.
func newIDPrompt(th *theme.Theme, km *keys.Map, resolve func(string) tea.Cmd) (*idPrompt, tea.Cmd) {
	in := textinput.New()
	in.Prompt = "open session: "
	in.Placeholder = "id, or its first characters"
	p := &idPrompt{th: th, km: km, in: in, resolve: resolve}
	p.restyle()
	return p, p.in.Focus()
}

// restyle takes the theme's styles, which change when the terminal's
// background answer comes after the prompt opened.
func (p *idPrompt) restyle() {
	st := p.in.Styles()
	st.Focused.Prompt = p.th.App.Prompt
	st.Focused.Placeholder = p.th.App.Muted
	st.Cursor.Blink = false
	p.in.SetStyles(st)
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
		return p.resolve(id), true
	}
	var cmd tea.Cmd
	p.in, cmd = p.in.Update(msg)
	return cmd, false
}

func (p *idPrompt) Render(w int) string {
	p.restyle()
	p.in.SetWidth(max(1, w-len(p.in.Prompt)-1))
	return layout.Pad(p.in.View(), w)
}

func (p *idPrompt) Keys() []key.Binding {
	return []key.Binding{label("enter", "open"), label(p.km.Get(keys.Back).Help().Key, "cancel")}
}

// agentPicker chooses the agent of a new session. Typing narrows the list
// to the agents whose slug contains what was typed.
type agentPicker struct {
	th     *theme.Theme
	km     *keys.Map
	agents func() []*agentsv1.AgentDescriptor
	filter string
	cur    cursor.Cursor
}

// pickerRows is how many agents the picker shows at once.
const pickerRows = 6

// shown is the agents the filter lets through.
func (p *agentPicker) shown() []*agentsv1.AgentDescriptor {
	if p.filter == "" {
		return p.agents()
	}
	var out []*agentsv1.AgentDescriptor
	for _, a := range p.agents() {
		if strings.Contains(strings.ToLower(a.GetSlug()), strings.ToLower(p.filter)) {
			out = append(out, a)
		}
	}
	return out
}

func (p *agentPicker) HandleKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	shown := p.shown()
	// Printable keys type into the filter, even those the lists bind
	// (j, k): the arrows still move. A key carries text only when it
	// prints, shifted (A, _) or not; a ctrl or alt combination has none.
	typed := msg.Text != ""
	switch {
	case key.Matches(msg, p.km.Get(keys.Back)):
		return nil, true
	case msg.String() == "backspace" && p.filter != "":
		_, n := utf8.DecodeLastRuneInString(p.filter)
		p.filter = p.filter[:len(p.filter)-n]
		p.cur = cursor.Cursor{}
	case typed && strings.TrimSpace(msg.Text) != "":
		p.filter += msg.Text
		p.cur = cursor.Cursor{}
	case key.Matches(msg, p.km.Get(keys.Up)):
		p.cur.Move(-1, len(shown))
	case key.Matches(msg, p.km.Get(keys.Down)):
		p.cur.Move(1, len(shown))
	case key.Matches(msg, p.km.Get(keys.Open)):
		if len(shown) == 0 {
			return nil, false
		}
		slug := shown[p.cur.Index()].GetSlug()
		return func() tea.Msg { return agentsview.NewSession{Agent: slug} }, true
	}
	return nil, false
}

func (p *agentPicker) Keys() []key.Binding {
	out := []key.Binding{label("enter", "start"), label("type", "filter")}
	// j and k type into the filter: only the other keys move.
	var move []string
	for _, a := range []keys.Action{keys.Up, keys.Down} {
		if ks := p.km.Unprinted(a); len(ks) > 0 {
			move = append(move, ks[0])
		}
	}
	if len(move) > 0 {
		out = append(out, label(strings.Join(move, "/"), "move"))
	}
	return append(out, label(p.km.Get(keys.Back).Help().Key, "cancel"))
}

func (p *agentPicker) Render(w int) string {
	st := p.th.App
	hint := "  type to filter, enter picks, " + p.km.Get(keys.Back).Help().Key + " cancels"
	head := st.Prompt.Render("New session with which agent?")
	if p.filter != "" {
		head += " " + st.Title.Render(p.filter)
	}
	lines := []string{head + st.Muted.Render(hint)}
	shown := p.shown()
	switch {
	case len(shown) == 0 && p.filter == "":
		lines = append(lines, st.Muted.Render("  loading agents…"))
	case len(shown) == 0:
		lines = append(lines, st.Muted.Render("  no agent matches"))
	}
	from, to := p.cur.Window(pickerRows, len(shown))
	for i := from; i < to; i++ {
		a := shown[i]
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
