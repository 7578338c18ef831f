// Package export renders sessions for people: markdown with every turn,
// tool call and result.
package export

import (
	"fmt"
	"strings"
	"time"

	"github.com/agents-os/agents/backend/internal/session"
)

// Markdown renders a session as a markdown document.
func Markdown(meta session.Meta, turns []session.Turn) string {
	var b strings.Builder
	title := meta.Title
	if title == "" {
		title = "Session " + meta.ID
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	fmt.Fprintf(&b, "- session: `%s`\n- agent: `%s`\n- status: %s\n", meta.ID, meta.Agent, meta.Status)
	if meta.ParentID != "" {
		fmt.Fprintf(&b, "- parent: `%s`\n", meta.ParentID)
	}
	if meta.ForkedFrom != "" {
		fmt.Fprintf(&b, "- forked from: `%s`\n", meta.ForkedFrom)
	}
	fmt.Fprintf(&b, "- created: %s\n", meta.Created.Format(time.RFC3339))
	u := meta.Usage
	fmt.Fprintf(&b, "- tokens: %d prompt (%d cached), %d completion (%d reasoning)\n", u.Prompt, u.Cached, u.Completion, u.Reasoning)
	for _, t := range turns {
		b.WriteString("\n")
		switch {
		case t.User != nil:
			writeUser(&b, t.User)
		case t.LLM != nil:
			writeLLM(&b, t.LLM)
		case t.Compaction != nil:
			writeCompaction(&b, t.Compaction)
		}
	}
	return b.String()
}

func writeUser(b *strings.Builder, u *session.UserTurn) {
	for _, r := range u.ToolResults {
		fmt.Fprintf(b, "### Result of `%s` (%s)\n\n%s\n\n", r.Name, r.Status, fence(r.Text))
	}
	if u.Text != "" || len(u.Attachments) > 0 {
		fmt.Fprintf(b, "## User\n\n%s\n\n", u.Text)
		for _, a := range u.Attachments {
			fmt.Fprintf(b, "- attachment: %s (%s, %d bytes)\n", a.Name, a.MediaType, len(a.Data))
		}
	}
	for _, m := range u.Mail {
		from := string(m.Sender.Kind)
		if m.Sender.Name != "" {
			from += " " + m.Sender.Name
		}
		fmt.Fprintf(b, "## Mail from %s\n\n%s\n\n", from, m.Body.Text)
	}
}

func writeLLM(b *strings.Builder, l *session.LLMTurn) {
	b.WriteString("## Assistant")
	if l.Interrupted {
		b.WriteString(" (interrupted)")
	}
	b.WriteString("\n\n")
	if l.Thinking != "" {
		fmt.Fprintf(b, "<details><summary>Thinking</summary>\n\n%s\n\n</details>\n\n", l.Thinking)
	}
	if l.Text != "" {
		fmt.Fprintf(b, "%s\n\n", l.Text)
	}
	for _, c := range l.ToolCalls {
		fmt.Fprintf(b, "### Call `%s` (%s)\n\n%s\n\n", c.Name, c.ID, fence(c.Arguments))
	}
}

// fence wraps text in a code fence longer than any backtick run inside it.
func fence(text string) string {
	ticks := "```"
	for strings.Contains(text, ticks) {
		ticks += "`"
	}
	return ticks + "\n" + strings.TrimRight(text, "\n") + "\n" + ticks
}

// writeCompaction writes a compaction as a quoted note: the turns above
// it stay in the export as they were.
func writeCompaction(b *strings.Builder, c *session.Compaction) {
	fmt.Fprintf(b, "> **Compaction** (%s): %d turns summarised, %d tool results shortened; %d → %d tokens\n", c.Reason, c.SummarizedTurns, c.PrunedResults, c.TokensBefore, c.TokensAfter)
	if c.Summary != "" {
		b.WriteString(">\n")
		for _, line := range strings.Split(c.Summary, "\n") {
			fmt.Fprintf(b, "> %s\n", line)
		}
	}
	b.WriteString("\n")
}
