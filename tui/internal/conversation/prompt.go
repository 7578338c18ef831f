package conversation

import (
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/agents-os/agents/tui/internal/theme"
	"github.com/agents-os/agents/tui/sanitize"
)

// linePrompt is a one-line question in place of the composer: where to
// export the session, what a compaction's summary must keep. Under the
// field, a hint says what enter does, or the last error.
type linePrompt struct {
	in   textinput.Model
	hint string
	err  string
}

// newLinePrompt asks with label, offering value; placeholder shows
// while the field is empty.
func newLinePrompt(st theme.ConversationStyles, label, value, placeholder, hint string) *linePrompt {
	in := textinput.New()
	in.Prompt = label
	in.Placeholder = placeholder
	in.SetStyles(st.Input)
	in.SetValue(value)
	in.CursorEnd()
	in.Focus()
	return &linePrompt{in: in, hint: hint}
}

func (p *linePrompt) Update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	p.in, cmd = p.in.Update(msg)
	return cmd
}

func (p *linePrompt) Render(width int, st theme.ConversationStyles) string {
	p.in.SetWidth(max(width-len(p.in.Prompt)-1, 1))
	lines := []string{p.in.View()}
	if p.err != "" {
		lines = append(lines, st.Error.Render(truncate(sanitize.Text(p.err), width)))
	} else {
		lines = append(lines, st.Muted.Render(truncate(p.hint, width)))
	}
	return strings.Join(lines, "\n")
}
