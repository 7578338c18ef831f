package conversation

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/theme"
)

// pendingRows is the most calls the panel lists at once.
const pendingRows = 4

// reasonApproval is the reason of a deferred call that waits for
// approval: it is approved or rejected, not answered with text.
const reasonApproval = "approval"

// pendingPanel lists the session's deferred calls: the run waits for a
// client to answer them. One is selected; answering opens a text input
// for its result, or, for a call that waits for approval, rejecting opens
// one for the reason.
type pendingPanel struct {
	calls     []*agentsv1.DeferredCall
	sel       int
	answering bool
	// rejecting says the input holds the reason of a rejection.
	rejecting bool
	in        textinput.Model
	sending   map[string]bool // tokens whose completion is in flight
}

func newPendingPanel(st theme.ConversationStyles) pendingPanel {
	in := textinput.New()
	in.SetStyles(st.Input)
	return pendingPanel{in: in, sending: map[string]bool{}}
}

// isApproval reports whether the call waits for approval.
func isApproval(c *agentsv1.DeferredCall) bool { return c.GetReason() == reasonApproval }

// Set replaces the calls with the server's list, keeping the selection
// on the same call when it is still there.
func (p *pendingPanel) Set(calls []*agentsv1.DeferredCall) {
	cur := p.Selected()
	p.calls = append([]*agentsv1.DeferredCall(nil), calls...)
	p.sel = 0
	for i, c := range p.calls {
		if c.GetToken() == cur.GetToken() {
			p.sel = i
		}
	}
	p.settle()
}

// Add appends calls not listed yet.
func (p *pendingPanel) Add(calls []*agentsv1.DeferredCall) {
	for _, c := range calls {
		if p.index(c.GetToken()) < 0 {
			p.calls = append(p.calls, c)
		}
	}
}

// Remove drops the call with token.
func (p *pendingPanel) Remove(token string) {
	i := p.index(token)
	if i < 0 {
		return
	}
	p.calls = append(p.calls[:i:i], p.calls[i+1:]...)
	if p.sel > i || p.sel >= len(p.calls) {
		p.sel = max(p.sel-1, 0)
	}
	p.settle()
}

// settle closes the answer input when its call went away.
func (p *pendingPanel) settle() {
	if len(p.calls) == 0 && p.answering {
		p.answering = false
		p.in.Blur()
		p.in.Reset()
	}
}

func (p *pendingPanel) index(token string) int {
	for i, c := range p.calls {
		if c.GetToken() == token {
			return i
		}
	}
	return -1
}

func (p *pendingPanel) Len() int { return len(p.calls) }

// Selected is the selected call, nil when there is none.
func (p *pendingPanel) Selected() *agentsv1.DeferredCall {
	if p.sel < 0 || p.sel >= len(p.calls) {
		return nil
	}
	return p.calls[p.sel]
}

func (p *pendingPanel) Move(delta int) {
	if len(p.calls) > 0 {
		p.sel = (p.sel + delta + len(p.calls)) % len(p.calls)
	}
}

// StartAnswer opens the result input for the selected call.
func (p *pendingPanel) StartAnswer() tea.Cmd {
	p.answering, p.rejecting = true, false
	p.in.Prompt = "result: "
	p.in.Placeholder = "the call's result (enter answers, ctrl+d fails it with this text)"
	return p.in.Focus()
}

// StartReject opens the reason input for rejecting the selected call.
func (p *pendingPanel) StartReject() tea.Cmd {
	p.answering, p.rejecting = true, true
	p.in.Prompt = "reason: "
	p.in.Placeholder = "why not (the model reads it; enter rejects the call)"
	return p.in.Focus()
}

// StopAnswer closes the input, dropping what it held.
func (p *pendingPanel) StopAnswer() {
	p.answering, p.rejecting = false, false
	p.in.Blur()
	p.in.Reset()
}

func (p *pendingPanel) Update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	p.in, cmd = p.in.Update(msg)
	return cmd
}

// Render draws the panel; focused says whether keys go to it.
func (p *pendingPanel) Render(width int, focused bool, st theme.ConversationStyles) string {
	box := st.Panel
	if focused {
		box = st.Focused
	}
	inner := max(width-box.GetHorizontalFrameSize(), 1)
	hint := "  ctrl+l to answer"
	switch {
	case focused && isApproval(p.Selected()):
		hint = "  ↑/↓ select · a approve · A always allow · r reject · esc close"
	case focused:
		hint = "  ↑/↓ select · enter answer · ctrl+d fail · esc close"
	}
	lines := []string{truncate(st.Label.Render(fmt.Sprintf("pending calls (%d)", len(p.calls)))+st.Muted.Render(hint), inner)}
	first := max(0, min(p.sel-pendingRows+1, len(p.calls)-pendingRows))
	for i := first; i < len(p.calls) && i < first+pendingRows; i++ {
		c := p.calls[i]
		mark := "  "
		if i == p.sel {
			mark = "▸ "
		}
		row := mark + c.GetCall().GetName() + " " + st.Muted.Render(oneLine(c.GetCall().GetArguments()))
		switch r := c.GetReason(); {
		case r == reasonApproval:
			// The server runs it once approved: say so before the
			// tool, where the eye starts.
			row = mark + st.Label.Render("approve? ") + c.GetCall().GetName() + " " + st.Muted.Render(oneLine(c.GetCall().GetArguments()))
		case r != "":
			row += st.Muted.Render(" · " + r)
		}
		if p.sending[c.GetToken()] {
			row += st.Muted.Render(" · sending…")
		}
		row = fit(row, inner)
		if i == p.sel && focused {
			row = st.Selected.Render(row)
		}
		lines = append(lines, row)
	}
	if p.answering {
		p.in.SetWidth(max(inner-len(p.in.Prompt)-1, 1))
		lines = append(lines, p.in.View())
	}
	return box.Width(width).Render(strings.Join(lines, "\n"))
}

// oneLine folds a text's lines into one, for a row.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
