package conversation

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/badge"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/layout"
	"github.com/agents-os/agents/tui/internal/units"
)

// draftLines bounds the expanded draft editor's height.
const (
	draftMinLines = 3
	draftMaxLines = 8
)

// Render draws the screen in width × height cells: the header, the
// transcript, then from the bottom up the composer, the draft, the
// pending calls and the agent picker; the transcript gets what is left.
func (s *Screen) Render(width, height int) string {
	if width <= 0 || height <= 0 {
		return ""
	}
	header := s.renderHeader(width)
	var bottom []string
	if s.picker != nil {
		bottom = append(bottom, s.picker.Render(width, s.st))
	}
	if s.pending.Len() > 0 {
		bottom = append(bottom, s.pending.Render(width, s.focus == focusPending, s.st))
	}
	if d := s.renderDraft(width); d != "" {
		bottom = append(bottom, d)
	}
	// The placeholder holds on the composer's one line: whole hints, or
	// whole words, as fit after its prompt and the cursor.
	s.composer.ta.Placeholder = layout.Parts(s.placeholder(), " · ", width-ansi.StringWidth(s.composer.ta.Prompt)-1)
	switch {
	case s.export != nil:
		bottom = append(bottom, s.st.Rule.Render(strings.Repeat("─", width)), s.export.Render(width, s.st))
	case s.compact != nil:
		bottom = append(bottom, s.st.Rule.Render(strings.Repeat("─", width)), s.compact.Render(width, s.st))
	case s.attach != nil:
		bottom = append(bottom, s.st.Rule.Render(strings.Repeat("─", width)), s.attach.Render(width, s.st))
	default:
		bottom = append(bottom, s.composer.Render(width, s.st))
	}
	foot := strings.Join(bottom, "\n")
	viewHeight := max(height-lipgloss.Height(header)-lipgloss.Height(foot), 1)
	out := strings.Join([]string{header, s.renderView(width, viewHeight), foot}, "\n")
	// On a very small terminal the panels alone may not fit: keep the
	// top, as the terminal would scroll it away otherwise.
	if lines := strings.Split(out, "\n"); len(lines) > height {
		out = strings.Join(lines[:height], "\n")
	}
	return out
}

// renderHeader draws two lines, three with a budget: agent, title and
// status; then usage, cost and what waits (mail, calls, the draft);
// then the session tree's spend against its budget.
func (s *Screen) renderHeader(width int) string {
	m := s.meta
	title := m.GetTitle()
	switch {
	case s.unborn():
		title = "new session · stored with its first message"
	case title == "":
		title = "untitled"
	}
	agent := m.GetAgent()
	if agent == "" {
		agent = s.id
	}
	switch v, pin := m.GetAgentVersion(), m.GetPinnedAgentVersion(); {
	case pin > 0:
		// Every step runs the version the session is pinned to.
		agent += fmt.Sprintf(" v%d (pinned)", pin)
	case v > 0:
		// A stored agent: the version its latest step ran.
		agent += fmt.Sprintf(" v%d", v)
	}
	left := s.st.Agent.Render(agent) + "  " + s.st.Title.Render(oneLine(title))
	right := statusLabel(s.st, m)
	if s.compacting != nil {
		right = s.st.Accent.Render(compactingLabel(s.compacting))
	}
	if m.GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_RUNNING && m.GetStatusReason() == reasonBudget {
		right = s.st.Error.Render("■ stopped: " + budgetStop(m, s.stopBudget) + " spent")
	}
	// A long status (a failure's reason) gives way to the agent and the
	// title, down to half the line.
	if most := width - min(ansi.StringWidth(left), width/2) - 1; ansi.StringWidth(right) > most {
		right = truncate(right, most)
	}
	gap := width - ansi.StringWidth(right) - 1
	line1 := fit(truncate(left, max(gap, 0)), max(gap, 0)) + " " + right
	if gap < 1 {
		line1 = truncate(right, width)
	}

	u := m.GetUsage()
	parts := []string{s.st.Muted.Render(fmt.Sprintf("tokens in %s · out %s · cached %s · reasoning %s",
		units.Tokens(u.GetPromptTokens()), units.Tokens(u.GetCompletionTokens()), units.Tokens(u.GetCachedTokens()), units.Tokens(u.GetReasoningTokens())))}
	if c := costPart(s.st, u); c != "" {
		parts = append(parts, c)
	}
	if n := m.GetPendingMail(); n > 0 {
		parts = append(parts, s.st.Warn.Render(fmt.Sprintf("%d mail pending", n)))
	}
	if n := m.GetPendingCalls(); n > 0 {
		parts = append(parts, s.st.Warn.Render(units.Count(int(n), "call", "calls")+" pending"))
	}
	if p := m.GetParentId(); p != "" {
		parts = append(parts, s.st.Muted.Render("helper session of "+badge.ShortID(p)))
	}
	if f := m.GetForkedFrom(); f != "" {
		parts = append(parts, s.st.Muted.Render("forked from "+badge.ShortID(f)))
	}
	line2 := truncate(strings.Join(parts, s.st.Muted.Render(" · ")), width)
	// The tree's spend gets a line of its own, when there is one to show.
	if spend := spendPart(s.st, m); spend != "" {
		return line1 + "\n" + line2 + "\n" + truncate(spend, width)
	}
	return line1 + "\n" + line2
}

// renderView draws the transcript lines the viewport shows, exactly
// height of them.
func (s *Screen) renderView(width, height int) string {
	s.viewWidth, s.viewHeight = width, height
	if s.loading && s.tr.Count() == 0 {
		return fitLines([]string{s.st.Muted.Render("loading…")}, width, height)
	}
	if s.timeline {
		return s.renderTimeline(width, height)
	}
	lines := s.tr.Lines(width)
	bottom := max(len(lines)-height, 0)
	if s.follow || s.offset > bottom {
		s.offset = bottom
	}
	shown := append([]string(nil), lines[s.offset:min(s.offset+height, len(lines))]...)
	if s.offset == 0 && s.tr.FirstIndex() > 0 && len(shown) > 0 {
		note := fmt.Sprintf("↑ %s: scroll up to load them", units.Count(s.tr.FirstIndex(), "older turn", "older turns"))
		if s.olderLoading {
			note = "loading older turns…"
		}
		shown[0] = s.st.Muted.Render(note)
	}
	if below := len(lines) - s.offset - height; below > 0 && len(shown) == height {
		shown[height-1] = s.st.Muted.Render(fmt.Sprintf("↓ %s more (%s)", units.Count(below, "line", "lines"), s.keyName(keys.PageDown)))
	}
	return fitLines(shown, width, height)
}

// renderDraft draws the draft: one line (its first line and size) when
// collapsed, its editor when expanded; nothing when there is none.
func (s *Screen) renderDraft(width int) string {
	d := s.drafts.Get(s.id)
	if !s.draftOpen {
		if d.Empty() {
			return ""
		}
		n := strings.Count(strings.TrimRight(d.Text, "\n"), "\n") + 1
		info := fmt.Sprintf(" · %s, %s", units.Count(n, "line", "lines"), units.Bytes(int64(len(d.Text))))
		if len(d.Attachments) > 0 {
			info += ", " + units.Count(len(d.Attachments), "file", "files")
		}
		info += fmt.Sprintf(" · %s send now · %s edit", s.keyName(keys.SendNow), s.keyName(keys.ToggleDraft))
		label := s.st.Label.Render("draft ")
		room := max(width-ansi.StringWidth(label)-ansi.StringWidth(info), 8)
		return truncate(label+truncate(firstLine(d.Text), room)+s.st.Muted.Render(info), width)
	}
	box := s.st.Panel
	if s.focus == focusDraft {
		box = s.st.Focused
	}
	inner := max(width-box.GetHorizontalFrameSize(), 1)
	lines := []string{truncate(s.st.Label.Render("draft")+s.st.Muted.Render(fmt.Sprintf(
		"  sent when the run stops · %s now · %s editor · esc close",
		s.keyName(keys.SendNow), s.keyName(keys.Editor))), inner)}
	s.draftEditor.SetWidth(inner)
	s.draftEditor.SetHeight(min(max(s.draftEditor.LineCount(), draftMinLines), draftMaxLines))
	lines = append(lines, s.draftEditor.View())
	if chips := renderChips(d.Attachments, inner, s.st); chips != "" {
		lines = append(lines, chips)
	}
	return box.Width(width).Render(strings.Join(lines, "\n"))
}

// placeholder says what enter does now: send, or add to the draft; with
// the transcript focused, how to come back to the composer. Its parts go
// from the most needed; a narrow composer shows those that fit.
func (s *Screen) placeholder() []string {
	if s.focus != focusComposer {
		return []string{fmt.Sprintf("%s to type here", s.keyName(keys.Focus))}
	}
	if s.meta != nil && !acceptsInput(s.status()) {
		return []string{fmt.Sprintf("Busy: %s adds to the draft", s.keyName(keys.Send)), fmt.Sprintf("%s interrupts with this message", s.keyName(keys.Interrupt))}
	}
	return []string{"Write a message", s.keyName(keys.Send) + " sends", s.keyName(keys.Newline) + " new line",
		s.keyName(keys.Attach) + " attach", s.keyName(keys.Editor) + " editor"}
}

// keyName is the first key bound to a, as the hints show it.
func (s *Screen) keyName(a keys.Action) string {
	if ks := s.km.Get(a).Keys(); len(ks) > 0 {
		return ks[0]
	}
	return "(unbound)"
}

// fitLines makes exactly height lines, each cut or padded to width.
func fitLines(lines []string, width, height int) string {
	out := make([]string, height)
	for i := range out {
		if i < len(lines) {
			out[i] = fit(lines[i], width)
		} else {
			out[i] = strings.Repeat(" ", width)
		}
	}
	return strings.Join(out, "\n")
}
