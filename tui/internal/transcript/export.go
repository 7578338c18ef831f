package transcript

import (
	"fmt"
	"strings"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/badge"
	"github.com/agents-os/agents/tui/internal/units"
)

// Markdown is a turn as markdown, for the clipboard: its text as written,
// its thinking quoted, its calls and results in fences. Empty when the
// turn is not loaded.
func (v *View) Markdown(index int) string {
	var b strings.Builder
	if v.live != nil && index == int(v.live.turn.GetTurnIndex()) {
		t := v.live.turn
		v.llmMarkdown(&b, &agentsv1.LlmTurn{Text: t.GetText(), Thinking: t.GetThinking(), ToolCalls: t.GetToolCalls()})
		return strings.TrimSpace(b.String()) + "\n"
	}
	e := v.entry(index)
	if e == nil {
		return ""
	}
	switch k := e.turn.GetKind().(type) {
	case *agentsv1.Turn_User:
		userMarkdown(&b, k.User)
	case *agentsv1.Turn_Llm:
		v.llmMarkdown(&b, k.Llm)
	case *agentsv1.Turn_Compaction:
		compactionMarkdown(&b, k.Compaction)
	}
	return strings.TrimSpace(b.String()) + "\n"
}

func userMarkdown(b *strings.Builder, u *agentsv1.UserTurn) {
	if u.GetText() != "" {
		b.WriteString(u.GetText() + "\n\n")
	}
	for _, a := range u.GetAttachments() {
		fmt.Fprintf(b, "- attachment `%s` (%s)\n", a.GetName(), units.Bytes(a.GetSize()))
	}
	for _, m := range u.GetMail() {
		text := ""
		switch body := m.GetBody().GetKind().(type) {
		case *agentsv1.MailBody_UserMessage:
			text = body.UserMessage.GetText()
		case *agentsv1.MailBody_AgentMessage:
			text = body.AgentMessage.GetText()
		case *agentsv1.MailBody_Control:
			text = control(body.Control)
		}
		fmt.Fprintf(b, "\n**Mail from %s**\n\n%s\n", sender(m), text)
	}
	for _, r := range u.GetToolResults() {
		fmt.Fprintf(b, "\n**Result of `%s`** (%s)\n\n%s\n", r.GetName(), resultStatus(r), fenced(r.GetText(), ""))
	}
}

func (v *View) llmMarkdown(b *strings.Builder, l *agentsv1.LlmTurn) {
	if th := strings.TrimSpace(l.GetThinking()); th != "" {
		b.WriteString("> " + strings.ReplaceAll(th, "\n", "\n> ") + "\n\n")
	}
	if l.GetText() != "" {
		b.WriteString(l.GetText() + "\n\n")
	}
	for _, tc := range l.GetToolCalls() {
		fmt.Fprintf(b, "**Call `%s`**\n\n%s\n", tc.GetName(), fenced(prettyJSON(tc.GetArguments()), "json"))
		if c := v.calls[tc.GetId()]; c != nil && c.result != nil {
			fmt.Fprintf(b, "\n**Result** (%s)\n\n%s\n", resultStatus(c.result), fenced(c.result.GetText(), ""))
		}
		b.WriteString("\n")
	}
	if l.GetInterrupted() {
		b.WriteString("_(interrupted)_\n")
	}
}

// fenced puts text in a code fence longer than any backtick run inside.
func fenced(text, lang string) string {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	return fence + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + fence
}

func resultStatus(r *agentsv1.ToolResult) string {
	switch r.GetStatus() {
	case agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR:
		return "error"
	case agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_CANCELLED:
		return "cancelled"
	case agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ABORTED:
		return "aborted"
	}
	return "ok"
}

func sender(m *agentsv1.MailEnvelope) string {
	switch s := m.GetSender().GetKind().(type) {
	case *agentsv1.MailSender_User:
		return "user " + s.User
	case *agentsv1.MailSender_SessionId:
		if a := m.GetBody().GetAgentMessage().GetAgent(); a != "" {
			return a + " (session " + badge.ShortID(s.SessionId) + ")"
		}
		return "session " + badge.ShortID(s.SessionId)
	case *agentsv1.MailSender_System:
		return "system (" + s.System + ")"
	}
	return "unknown sender"
}

func compactionMarkdown(b *strings.Builder, c *agentsv1.Compaction) {
	fmt.Fprintf(b, "_Context compacted: %s_\n\n", CompactionText(c))
	if in := c.GetInstruction(); in != "" {
		fmt.Fprintf(b, "**Instruction:** %s\n\n", in)
	}
	if s := strings.TrimSpace(c.GetSummary()); s != "" {
		b.WriteString(s + "\n")
	}
}
