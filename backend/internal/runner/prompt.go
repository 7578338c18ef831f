package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tokens"
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
// not the one rendered plus new turns, and a new compaction turn: from
// it on, the turns it summarised are sent as its summary and the long
// tool results it pruned as stubs (see compaction.go).
//
// It holds, per turn, the rendered messages (which share the turn's
// strings, except rendered mail, attachment text and image data URLs) and
// their JSON: about 1.3 times the history's JSON in all (BENCHMARKS.md,
// "Request building"). It goes with the actor when the session is evicted.
type prompt struct {
	system           []string
	mailInToolResult bool
	flavor           llm.Flavor
	// turns is how many turns are rendered; lastUser, lastLLM and
	// lastCompaction are the newest of them, to tell a history that grew
	// from one that changed.
	turns          int
	lastUser       *session.UserTurn
	lastLLM        *session.LLMTurn
	lastCompaction *session.Compaction
	// view is what the newest compaction sends instead of the older
	// turns; base is the first turn rendered whole (the summary's end).
	view view
	// starts has, for each turn from base on, the index in msgs of its
	// first message (a turn may render none).
	starts []int
	// since is the first turn whose model call saw this rendering: the
	// input tokens it reported are the truth for what was sent (measure).
	since int
	msgs  []llm.Message
	// encoded has one entry per message of msgs; nil when a message could
	// not be encoded, so that the client encodes msgs itself and reports
	// why.
	encoded []llm.EncodedMessage
	// counts has the estimated tokens of the first len(counts) messages
	// (see measure.go); estimator estimates, counter counts with the
	// model family's tokenizer, for model.
	counts    []int
	estimator *tokens.Counter
	counter   *tokens.Counter
	model     string
}

// update renders and encodes the turns not yet rendered.
func (p *prompt) update(agent *catalog.Agent, turns []session.Turn) {
	flavor := modelFlavor(agent.Model)
	if p.counter == nil || p.model != agent.Model.Name || flavor != p.flavor {
		p.model, p.counts = agent.Model.Name, nil
		p.counter = tokens.ForModel(agent.Model.Name).WithFlavor(flavor)
		p.estimator = tokens.ForModel("").WithFlavor(flavor)
	}
	system := systemPrompt(agent, turns)
	if fresh := p.msgs == nil; fresh || !p.current(agent, system, flavor, turns) || compactedSince(turns, p.turns) {
		since := len(turns)
		if fresh {
			// Built again from the history (a session loaded): the calls
			// since the newest compaction saw this same rendering.
			since = 0
		}
		p.reset(agent, system, flavor, turns, since)
	}
	for i := p.turns; i < len(turns); i++ {
		p.starts = append(p.starts, len(p.msgs))
		p.msgs = p.view.appendTurn(p.msgs, turns[i], p.mailInToolResult)
		p.encode()
	}
	p.turns = len(turns)
	if n := len(turns); n > 0 {
		p.lastUser, p.lastLLM, p.lastCompaction = turns[n-1].User, turns[n-1].LLM, turns[n-1].Compaction
	}
}

// reset starts the rendering again: the system prompt and, after a
// compaction, its summary; the turns from the summary's end on follow.
func (p *prompt) reset(agent *catalog.Agent, system []string, flavor llm.Flavor, turns []session.Turn, since int) {
	v, at := viewOf(turns)
	*p = prompt{system: system, mailInToolResult: agent.MailInToolResult, flavor: flavor, encoded: []llm.EncodedMessage{}, view: v, turns: v.base, counter: p.counter, estimator: p.estimator, model: p.model}
	p.since = max(since, at+1)
	p.msgs = []llm.Message{}
	if len(system) > 0 {
		p.msgs = append(p.msgs, llm.SystemMessage(strings.Join(system, "\n")))
	}
	p.msgs = append(p.msgs, v.header(p.mailInToolResult)...)
	p.encode()
}

// compactedSince reports whether a compaction turn follows the first
// rendered turns.
func compactedSince(turns []session.Turn, rendered int) bool {
	for _, t := range turns[min(rendered, len(turns)):] {
		if t.Compaction != nil {
			return true
		}
	}
	return false
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
	if p.turns == p.view.base {
		return len(turns) >= p.turns
	}
	if len(turns) < p.turns {
		return false
	}
	last := turns[p.turns-1]
	return last.User == p.lastUser && last.LLM == p.lastLLM && last.Compaction == p.lastCompaction
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
