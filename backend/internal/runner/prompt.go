package runner

import (
	"fmt"
	"strings"

	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
)

// buildRequest turns the session's history into a model request.
func (a *actor) buildRequest() llm.Request {
	req := llm.Request{Model: a.agent.Model.Name, SessionID: a.id}
	if len(a.agent.SystemPrompt) > 0 {
		req.Messages = append(req.Messages, llm.SystemMessage(strings.Join(a.agent.SystemPrompt, "\n")))
	}
	for _, t := range a.st.turns {
		req.Messages = appendTurn(req.Messages, t, a.agent.MailInToolResult)
	}
	for _, t := range a.agent.Tools {
		req.Tools = append(req.Tools, llm.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	return req
}

// appendTurn renders one turn as chat messages: a user turn becomes one
// tool message per result, then a user message with the text and the
// folded mail; an LLM turn becomes one assistant message.
func appendTurn(msgs []llm.Message, t session.Turn, mailInToolResult bool) []llm.Message {
	switch {
	case t.LLM != nil:
		if t.LLM.Text == "" && len(t.LLM.ToolCalls) == 0 {
			return msgs // an answer cut before any text: nothing to show the model
		}
		m := llm.Message{Role: llm.RoleAssistant, Text: t.LLM.Text, Thinking: t.LLM.Thinking}
		for _, c := range t.LLM.ToolCalls {
			m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		return append(msgs, m)
	case t.User != nil:
		u := t.User
		mail := renderMail(u.Mail)
		results := u.ToolResults
		if mailInToolResult && mail != "" && len(results) > 0 {
			results = append([]session.ToolResult(nil), results...)
			last := &results[len(results)-1]
			last.Text = last.Text + "\n\n" + mail
			mail = ""
		}
		for _, r := range results {
			msgs = append(msgs, llm.ToolResultMessage(r.CallID, resultText(r)))
		}
		text := joinNonEmpty(u.Text, mail)
		if text == "" && len(u.Attachments) == 0 {
			return msgs
		}
		var images []llm.Image
		for _, att := range u.Attachments {
			if strings.HasPrefix(att.MediaType, "image/") {
				images = append(images, llm.ImageData(att.MediaType, att.Data))
			} else {
				text = joinNonEmpty(text, fmt.Sprintf("[attachment %s (%s)]\n%s", att.Name, att.MediaType, att.Data))
			}
		}
		return append(msgs, llm.UserMessage(text, images...))
	}
	return msgs
}

// resultText is what the model reads for a result: failures are marked so
// the model can tell them from output.
func resultText(r session.ToolResult) string {
	switch r.Status {
	case session.ResultError:
		return "Error: " + r.Text
	case session.ResultCancelled:
		return "Cancelled: " + r.Text
	case session.ResultAborted:
		return "Aborted: " + r.Text
	}
	return r.Text
}

// renderMail renders folded mail, each piece under a [mail from …] header
// naming its sender.
func renderMail(mail []session.Mail) string {
	var parts []string
	for _, m := range mail {
		parts = append(parts, fmt.Sprintf("[mail from %s]\n%s", senderLabel(m), m.Body.Text))
	}
	return strings.Join(parts, "\n\n")
}

func senderLabel(m session.Mail) string {
	switch m.Sender.Kind {
	case session.SenderSession:
		if m.Body.Agent != "" {
			return fmt.Sprintf("agent %s (session %s)", m.Body.Agent, m.Sender.Name)
		}
		return "session " + m.Sender.Name
	case session.SenderSystem:
		return "system " + m.Sender.Name
	}
	return "user " + m.Sender.Name
}

func joinNonEmpty(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "\n\n")
}
