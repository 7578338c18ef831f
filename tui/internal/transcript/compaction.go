package transcript

import (
	"fmt"
	"strings"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/units"
	"github.com/charmbracelet/x/ansi"
)

// CompactionText says what a compaction did, on one line: "41 turns
// summarised · 38,204 → 2,310 tokens · $0.0012".
func CompactionText(c *agentsv1.Compaction) string {
	var parts []string
	if n := int(c.GetSummarizedTurns()); n > 0 {
		parts = append(parts, units.Count(n, "turn summarised", "turns summarised"))
	}
	if n := int(c.GetPrunedResults()); n > 0 {
		parts = append(parts, units.Count(n, "tool result shortened", "tool results shortened"))
	}
	if len(parts) == 0 {
		parts = append(parts, "context compacted")
	}
	if b := c.GetTokensBefore(); b > 0 {
		parts = append(parts, units.Grouped(b)+" → "+units.Grouped(c.GetTokensAfter())+" tokens")
	}
	if u := c.GetUsage(); u != nil && u.CostUsd != nil && u.GetCostUsd() > 0 {
		parts = append(parts, units.USD(u.GetCostUsd()))
	}
	return strings.Join(parts, " · ")
}

// compactionReason is the reason a marker names; a compaction at the
// threshold is the usual one and says nothing.
func compactionReason(reason string) string {
	switch reason {
	case "overflow":
		return "window overflowed"
	case "manual":
		return "on request"
	}
	return ""
}

// renderCompaction is a compaction turn: one marker line across the
// width, and when expanded the instruction it was given, the summary the
// model is sent from then on and what it covers. The turns it covers
// stay above it as they were.
func (v *View) renderCompaction(md *markdown, c *agentsv1.Compaction, width int, expanded bool) []string {
	mark := markCollapsed
	if expanded {
		mark = markExpanded
	}
	// The text is cut before the rule's end, never the rule: the line
	// reads as a marker at any width.
	lead := v.st.Compaction.Render(mark+" ") + v.st.Rule.Render("── ")
	text := v.st.Compaction.Render(CompactionText(c))
	if r := compactionReason(c.GetReason()); r != "" {
		text += v.st.Muted.Render(" · " + r)
	}
	room := max(width-ansi.StringWidth(lead)-3, 1)
	head := lead + ansi.Truncate(text, room, "…") + " "
	head += v.st.Rule.Render(strings.Repeat("─", max(width-ansi.StringWidth(head), 2)))
	head = fit(head, width)
	out := []string{head}
	if !expanded {
		return out
	}
	field := func(name, value string) {
		out = append(out, indent("  "+v.st.Muted.Render(name+": "), v.st.Tool, value, width)...)
	}
	if in := strings.TrimSpace(c.GetInstruction()); in != "" {
		field("instruction", in)
	}
	if end := int(c.GetSummaryEnd()); end > 0 && strings.TrimSpace(c.GetSummary()) != "" {
		what := fmt.Sprintf("turns 1–%d above are sent to the model as this summary", end)
		if m := c.GetModel(); m != "" {
			what += ", written by " + m
		}
		out = append(out, fit("  "+v.st.Muted.Render(what), width))
		for _, l := range md.render(c.GetSummary(), max(width-4, 8)) {
			out = append(out, "    "+l)
		}
	}
	if end, n := int(c.GetPruneEnd()), int(c.GetPrunedResults()); end > 0 && n > 0 {
		out = append(out, fit("  "+v.st.Muted.Render(fmt.Sprintf("%s of turns 1–%d sent shortened to the model",
			units.Count(n, "long tool result", "long tool results"), end)), width))
	}
	if u := c.GetUsage(); u != nil && u.GetPromptTokens()+u.GetCompletionTokens() > 0 {
		out = append(out, fit("  "+v.st.Muted.Render("summary call: "+usage(u)), width))
	}
	return out
}
