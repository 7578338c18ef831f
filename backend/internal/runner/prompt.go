package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
)

// buildRequest turns the session's history into a model request. The
// messages and their encoding come from the session's prompt, brought up
// to date with the turns added since the step before; the tools are added
// by the model call (toolSpecs).
func (a *actor) buildRequest() llm.Request {
	a.prompt.update(a.agent, a.st.turns)
	n := len(a.prompt.msgs)
	req := llm.Request{Model: a.agent.Model.Name, SessionID: a.id, Messages: a.prompt.msgs[:n:n]}
	if a.prompt.encoded != nil {
		req.Encoded = a.prompt.encoded[:n:n]
	}
	return req
}

// toolSpecs is how the tools of a step are offered to the model.
func toolSpecs(set *catalog.Toolset) []llm.ToolSpec {
	var out []llm.ToolSpec
	for _, t := range set.List() {
		spec := t.Spec()
		out = append(out, llm.ToolSpec{Name: spec.Name, Description: spec.Description, Parameters: spec.Parameters})
	}
	return out
}

// prompt is a session's history as the model reads it, kept from step to
// step. Turns are only ever appended, so each is rendered (appendTurn) and
// encoded for the model's flavor once, by the first request built after
// it; a request shares the kept slices, capped at their length, so later
// appends never touch what a call in flight reads. A change of what the
// rendering depends on besides the turns (the system prompt, the agent's
// mailInToolResult, the model's flavor, as a reload of the agent may
// bring) renders the whole history again, and so does a history that is
// not the one rendered plus new turns.
//
// It holds, per turn, the rendered messages (which share the turn's
// strings, except rendered mail, attachment text and image data URLs) and
// their JSON: about 1.3 times the history's JSON in all (BENCHMARKS.md,
// "Request building"). It goes with the actor when the session is evicted.
type prompt struct {
	system           []string
	mailInToolResult bool
	flavor           llm.Flavor
	// turns is how many turns are rendered; lastUser and lastLLM are the
	// newest of them, to tell a history that grew from one that changed.
	turns    int
	lastUser *session.UserTurn
	lastLLM  *session.LLMTurn
	msgs     []llm.Message
	// encoded has one entry per message of msgs; nil when a message could
	// not be encoded, so that the client encodes msgs itself and reports
	// why.
	encoded []llm.EncodedMessage
}

// update renders and encodes the turns not yet rendered.
func (p *prompt) update(agent *catalog.Agent, turns []session.Turn) {
	flavor := modelFlavor(agent.Model)
	system := systemPrompt(agent, turns)
	if !p.current(agent, system, flavor, turns) {
		*p = prompt{system: system, mailInToolResult: agent.MailInToolResult, flavor: flavor, encoded: []llm.EncodedMessage{}}
		if len(system) > 0 {
			p.msgs = append(p.msgs, llm.SystemMessage(strings.Join(system, "\n")))
			p.encode()
		}
	}
	for _, t := range turns[p.turns:] {
		p.msgs = appendTurn(p.msgs, t, p.mailInToolResult)
		p.encode()
	}
	p.turns = len(turns)
	if n := len(turns); n > 0 {
		p.lastUser, p.lastLLM = turns[n-1].User, turns[n-1].LLM
	}
}

// systemPrompt is the agent's system prompt, followed, for a narrowed
// helper's child, by the context its parent's tool gave it.
func systemPrompt(agent *catalog.Agent, turns []session.Turn) []string {
	n := session.NarrowingOf(turns)
	if n == nil || len(n.Context) == 0 {
		return agent.SystemPrompt
	}
	return slices.Concat(agent.SystemPrompt, n.Context)
}

// current reports whether p renders a beginning of turns for agent with
// this system prompt.
func (p *prompt) current(agent *catalog.Agent, system []string, flavor llm.Flavor, turns []session.Turn) bool {
	if flavor != p.flavor || agent.MailInToolResult != p.mailInToolResult || !slices.Equal(system, p.system) {
		return false
	}
	if p.turns == 0 {
		return true
	}
	if len(turns) < p.turns {
		return false
	}
	last := turns[p.turns-1]
	return last.User == p.lastUser && last.LLM == p.lastLLM
}

// encode encodes the messages added since it last ran.
func (p *prompt) encode() {
	if p.encoded == nil || len(p.encoded) == len(p.msgs) {
		return
	}
	encoded, err := llm.EncodeMessages(p.flavor, p.msgs[len(p.encoded):])
	if err != nil {
		p.encoded = nil
		return
	}
	p.encoded = append(p.encoded, encoded...)
}

// modelFlavor is the flavor the model's client speaks (see LLMModels).
func modelFlavor(m catalog.Model) llm.Flavor {
	flavor, err := llm.ParseFlavor(string(m.Flavor))
	if err != nil {
		return llm.FlavorOpenAI
	}
	return flavor
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
