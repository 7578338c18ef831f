package transcript

import (
	"fmt"
	"strings"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/badge"
	"github.com/agents-os/agents/tui/internal/units"
	"github.com/charmbracelet/x/ansi"
)

// Marks that open a collapsible line.
const (
	markCollapsed = "▸"
	markExpanded  = "▾"
)

// renderTurn is a stored turn's lines at width, without the gutter; never
// nil, so a turn that shows nothing is not taken for a stale one.
func (v *View) renderTurn(md *markdown, t *agentsv1.Turn, width int, expanded bool) []string {
	out := []string{}
	switch k := t.GetKind().(type) {
	case *agentsv1.Turn_User:
		out = append(out, v.renderUser(k.User, width)...)
	case *agentsv1.Turn_Llm:
		out = append(out, v.renderLLM(k.Llm, md.render(k.Llm.GetText(), width), width, expanded, false)...)
	case *agentsv1.Turn_Compaction:
		out = append(out, v.renderCompaction(md, k.Compaction, width, expanded)...)
	}
	return out
}

func (v *View) renderUser(u *agentsv1.UserTurn, width int) []string {
	var out []string
	if u.GetText() != "" || len(u.GetAttachments()) > 0 {
		out = append(out, v.st.User.Render("you"))
		out = append(out, wrapPlain(u.GetText(), width)...)
		for _, a := range u.GetAttachments() {
			desc := units.Bytes(a.GetSize())
			if a.GetMediaType() != "" {
				desc += ", " + a.GetMediaType()
			}
			out = append(out, fit(v.st.Muted.Render("+ ")+a.GetName()+v.st.Muted.Render(" ("+desc+")"), width))
		}
	}
	for _, m := range u.GetMail() {
		out = append(out, v.renderMail(m, width)...)
	}
	if rs := u.GetToolResults(); len(rs) > 0 {
		// The results are drawn with their calls; here only that they
		// went back to the model.
		parts := make([]string, len(rs))
		for i, r := range rs {
			c := &call{result: r}
			parts[i] = r.GetName() + " " + v.statusIcon(c.status())
		}
		out = append(out, fit(v.st.Muted.Render("↩ results sent back: ")+strings.Join(parts, v.st.Muted.Render(" · ")), width))
	}
	return out
}

// renderMail is a piece of mail folded into a turn, with who sent it.
func (v *View) renderMail(m *agentsv1.MailEnvelope, width int) []string {
	var from, text string
	switch b := m.GetBody().GetKind().(type) {
	case *agentsv1.MailBody_UserMessage:
		text = b.UserMessage.GetText()
		if names := b.UserMessage.GetAttachmentNames(); len(names) > 0 {
			text += "\n+ " + strings.Join(names, ", ")
		}
	case *agentsv1.MailBody_AgentMessage:
		from = b.AgentMessage.GetAgent()
		text = b.AgentMessage.GetText()
	case *agentsv1.MailBody_Control:
		text = control(b.Control)
	}
	var detail []string
	switch s := m.GetSender().GetKind().(type) {
	case *agentsv1.MailSender_User:
		from = "user " + s.User
	case *agentsv1.MailSender_SessionId:
		if from == "" {
			from = "session"
		}
		detail = append(detail, "session "+badge.ShortID(s.SessionId))
	case *agentsv1.MailSender_System:
		from = "system"
		detail = append(detail, s.System)
	}
	if from == "" {
		from = "unknown sender"
	}
	if m.GetPriority() == agentsv1.MailPriority_MAIL_PRIORITY_URGENT {
		detail = append(detail, "urgent")
	}
	head := v.st.Mail.Render("✉ mail from " + from)
	if len(detail) > 0 {
		head += v.st.Muted.Render(" · " + strings.Join(detail, " · "))
	}
	return append([]string{fit(head, width)}, indent("  ", v.st.Muted, text, width)...)
}

func control(c *agentsv1.ControlMessage) string {
	order, reason := "", ""
	switch k := c.GetKind().(type) {
	case *agentsv1.ControlMessage_StopRun:
		order, reason = "stop the run", k.StopRun.GetReason()
	case *agentsv1.ControlMessage_CancelCalls:
		order, reason = "cancel the running calls", k.CancelCalls.GetReason()
	case *agentsv1.ControlMessage_Resume:
		order, reason = "resume", k.Resume.GetReason()
	}
	if reason != "" {
		return "control: " + order + " (" + reason + ")"
	}
	return "control: " + order
}

// renderLLM is a model answer: a header, its thinking, its text (already
// rendered as markdown) and its calls.
func (v *View) renderLLM(l *agentsv1.LlmTurn, text []string, width int, expanded, streaming bool) []string {
	head := v.st.Agent.Render(v.agentName())
	var meta []string
	if l.GetModel() != "" {
		meta = append(meta, l.GetModel())
	}
	if u := l.GetUsage(); u != nil {
		meta = append(meta, usage(u))
	}
	if streaming {
		meta = append(meta, "answering…")
	}
	if len(meta) > 0 {
		head += v.st.Muted.Render(" · " + strings.Join(meta, " · "))
	}
	out := []string{fit(head, width)}
	if th := strings.TrimSpace(l.GetThinking()); th != "" {
		if expanded {
			out = append(out, v.st.Thinking.Render(markExpanded+" thinking"))
			out = append(out, indent("  ", v.st.Thinking, th, width)...)
		} else {
			out = append(out, fit(v.st.Thinking.Render(markCollapsed+" thinking  "+oneLine(th)), width))
		}
	}
	out = append(out, text...)
	for _, tc := range l.GetToolCalls() {
		c := v.calls[tc.GetId()]
		if c == nil {
			c = &call{call: tc}
		}
		out = append(out, v.renderCall(c, width, expanded)...)
	}
	if l.GetInterrupted() {
		out = append(out, v.st.Warn.Render("! interrupted"))
	} else if l.GetFinishReason() == "length" {
		out = append(out, v.st.Warn.Render("! cut at the length limit"))
	}
	return out
}

func usage(u *agentsv1.Usage) string {
	s := "in " + units.Tokens(u.GetPromptTokens()) + " out " + units.Tokens(u.GetCompletionTokens())
	if n := u.GetCachedTokens(); n > 0 {
		s += " cached " + units.Tokens(n)
	}
	if n := u.GetReasoningTokens(); n > 0 {
		s += " reasoning " + units.Tokens(n)
	}
	return s
}

// renderCall is one tool call: a line with its status, and when expanded
// its arguments and result in full. A running call shows its last
// progress under it.
func (v *View) renderCall(c *call, width int, expanded bool) []string {
	st := c.status()
	mark := markCollapsed
	if expanded {
		mark = markExpanded
	}
	name := c.name()
	var info []string
	if c.helper() {
		name = "helper " + c.helperAgent()
		if id := c.childID(); id != "" {
			info = append(info, "session "+badge.ShortID(id))
		}
	}
	switch st {
	case statusRunning:
		info = append(info, "running")
	case statusWaiting:
		info = append(info, "waiting: "+c.deferred)
	case statusCancelled:
		info = append(info, "cancelled")
	case statusAborted:
		info = append(info, "aborted by a restart")
	}
	if d := c.result.GetDuration(); d != nil {
		info = append(info, duration(d.AsDuration()))
	}
	prefix := v.st.Tool.Render(mark) + " " + v.statusIcon(st) + " " + v.st.Tool.Bold(true).Render(name)
	suffix := ""
	if len(info) > 0 {
		suffix = "  " + v.st.Muted.Render(strings.Join(info, " · "))
	}
	line := prefix
	if args := shortArgs(c.call.GetArguments()); args != "" {
		room := width - ansi.StringWidth(prefix) - ansi.StringWidth(suffix) - 2
		if room >= 8 {
			line += "  " + fit(v.st.Tool.Render(args), room)
		}
	}
	out := []string{fit(line+suffix, width)}

	if !expanded {
		switch {
		case st == statusRunning && c.progress != "":
			out = append(out, fit("    "+v.st.Muted.Render("└ "+oneLine(c.progress)), width))
		case c.childFailed != "" && c.result == nil:
			out = append(out, fit("    "+v.st.ToolError.Render("└ "+oneLine(c.childFailed)), width))
		}
		return out
	}
	if args := c.call.GetArguments(); args != "" {
		out = append(out, "    "+v.st.Muted.Render("arguments"))
		out = append(out, indent("      ", v.st.Tool, prettyJSON(args), width)...)
	}
	if id := c.childID(); id != "" {
		out = append(out, fit("    "+v.st.Muted.Render("session ")+id, width))
	}
	if c.progress != "" && st == statusRunning {
		out = append(out, "    "+v.st.Muted.Render("progress"))
		out = append(out, indent("      ", v.st.Muted, c.progress, width)...)
	}
	if c.childFailed != "" {
		out = append(out, "    "+v.st.ToolError.Render("helper failed"))
		out = append(out, indent("      ", v.st.ToolError, c.childFailed, width)...)
	}
	if r := c.result; r != nil {
		out = append(out, "    "+v.st.Muted.Render("result"))
		text, style := r.GetText(), v.st.Tool
		if st == statusError || st == statusAborted {
			style = v.st.ToolError
		}
		if strings.TrimSpace(text) == "" {
			text = "(empty)"
		}
		out = append(out, indent("      ", style, text, width)...)
	}
	return out
}

func (v *View) statusIcon(s status) string {
	switch s {
	case statusRunning:
		return v.st.Warn.Render("●")
	case statusWaiting:
		return v.st.Warn.Render("◆")
	case statusOK:
		return v.st.OK.Render("✓")
	case statusError:
		return v.st.ToolError.Render("✗")
	case statusCancelled:
		return v.st.Muted.Render("⊘")
	case statusAborted:
		return v.st.ToolError.Render("!")
	}
	return v.st.Muted.Render("○")
}

// renderFooter says how the session stands after its last turn, when
// that is worth a line: a failure, a stopped run, a pause, calls that
// wait for a client.
func (v *View) renderFooter(width int) []string {
	switch v.status {
	case agentsv1.SessionStatus_SESSION_STATUS_FAILED:
		reason := v.reason
		if reason == "" {
			reason = "the run failed"
		}
		return indent(v.st.ToolError.Render("✗ failed: "), v.st.ToolError, reason, width)
	case agentsv1.SessionStatus_SESSION_STATUS_PAUSED:
		return []string{v.st.Warn.Render("paused")}
	case agentsv1.SessionStatus_SESSION_STATUS_WAITING:
		n := 0
		for _, c := range v.calls {
			if c.status() == statusWaiting {
				n++
			}
		}
		return []string{v.st.Warn.Render(fmt.Sprintf("waiting for %d deferred %s", n, plural(n, "call", "calls")))}
	case agentsv1.SessionStatus_SESSION_STATUS_READY:
		switch v.reason {
		case "cancelled", "max_steps", "shutdown":
			return []string{v.st.Muted.Render("run stopped: " + strings.ReplaceAll(v.reason, "_", " "))}
		}
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (v *View) agentName() string {
	if v.agent != "" {
		return v.agent
	}
	return "agent"
}
