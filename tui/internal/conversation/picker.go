package conversation

import (
	"strings"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/theme"
)

// pickerRows is the most agents the picker lists at once.
const pickerRows = 8

// agentPicker chooses the agent a conversation continues with.
type agentPicker struct {
	agents  []*agentsv1.AgentDescriptor
	current string
	sel     int
}

func newAgentPicker(agents []*agentsv1.AgentDescriptor, current string) *agentPicker {
	p := &agentPicker{agents: agents, current: current}
	// Start on the first other agent: continuing with the same one is
	// rarely the point.
	for i, a := range agents {
		if a.GetSlug() != current {
			p.sel = i
			break
		}
	}
	return p
}

func (p *agentPicker) Move(delta int) {
	if len(p.agents) > 0 {
		p.sel = (p.sel + delta + len(p.agents)) % len(p.agents)
	}
}

func (p *agentPicker) Selected() *agentsv1.AgentDescriptor {
	if p.sel < 0 || p.sel >= len(p.agents) {
		return nil
	}
	return p.agents[p.sel]
}

func (p *agentPicker) Render(width int, st theme.ConversationStyles) string {
	inner := max(width-st.Focused.GetHorizontalFrameSize(), 1)
	lines := []string{truncate(st.Label.Render("continue with")+st.Muted.Render("  ↑/↓ choose · enter fork at the head with it · esc close"), inner)}
	first := max(0, min(p.sel-pickerRows+1, len(p.agents)-pickerRows))
	for i := first; i < len(p.agents) && i < first+pickerRows; i++ {
		a := p.agents[i]
		mark := "  "
		if i == p.sel {
			mark = "▸ "
		}
		row := mark + a.GetSlug()
		if a.GetSlug() == p.current {
			row += st.Muted.Render(" (current)")
		}
		if ann := a.GetAnnounce(); ann != "" {
			row += st.Muted.Render(" · " + oneLine(ann))
		}
		row = fit(row, inner)
		if i == p.sel {
			row = st.Selected.Render(row)
		}
		lines = append(lines, row)
	}
	return st.Focused.Width(width).Render(strings.Join(lines, "\n"))
}
