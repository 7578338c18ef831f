package runner

import (
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
)

// counter counts the tokens of what a request sends.
type counter interface {
	Message(m llm.Message) int
	Tools(specs []llm.ToolSpec) int
}

// replyPriming is what a chat request adds for the answer's start.
const replyPriming = 3

// estimateTokens is the conservative byte estimate: an over-count of
// what any tokenizer makes of realistic text.
func estimateTokens(s string) int { return (len(s) + 2) / 3 }

// byteCounter counts by the byte estimate.
type byteCounter struct{}

func (byteCounter) Message(m llm.Message) int {
	n := 4 + estimateTokens(m.Text)
	for _, c := range m.ToolCalls {
		n += 4 + estimateTokens(c.Name) + estimateTokens(c.Arguments)
	}
	n += 1105 * len(m.Images)
	return n
}

func (byteCounter) Tools(specs []llm.ToolSpec) int {
	n := 0
	for _, s := range specs {
		n += 8 + estimateTokens(s.Name) + estimateTokens(s.Description) + estimateTokens(string(s.Parameters))
	}
	return n
}

// counterFor returns the counter of a model.
func counterFor(model string) counter { return byteCounter{} }

// measure returns the input tokens of the request the prompt renders:
// what the provider reported for the newest call that saw this rendering,
// plus what was added since, counted; with no such call, all of it,
// counted. withTools says the figure holds the tools' definitions (the
// provider's does).
func (p *prompt) measure(turns []session.Turn) (tokens int64, withTools bool) {
	for i := len(p.counts); i < len(p.msgs); i++ {
		p.counts = append(p.counts, p.counter.Message(p.msgs[i]))
	}
	from, reported := 0, int64(0)
	for i := p.turns - 1; i >= max(p.since, p.view.base); i-- {
		if t := turns[i]; t.LLM != nil && t.LLM.Usage.Prompt > 0 {
			from, reported = p.starts[i-p.view.base], t.LLM.Usage.Prompt
			break
		}
	}
	var sum int64
	for _, c := range p.counts[from:] {
		sum += int64(c)
	}
	if reported > 0 {
		return reported + sum, true
	}
	return sum + replyPriming, false
}
