package runner

import (
	"time"

	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tokens"
)

// Every request is measured before it is sent, in two steps. The
// provider's reported input of the newest call that saw the same
// rendering is the truth for what was sent then; what was added since is
// counted with the byte-class estimate, which never counts less than the
// tokenizers it is measured against (BENCHMARKS.md, "Measuring a
// request") and costs next to nothing, so every step pays only for its
// new turns. Only a request whose estimate passes the compaction
// threshold is counted again with the model family's tokenizer (what
// was added since the provider's figure, off the actor), and that exact
// measure decides. A tokenizer's vocabulary is loaded the first time a
// session of its family comes near its window.

// replyPriming is what a chat request adds for the answer's start.
const replyPriming = 3

// tokenizerWait bounds how long a request near the threshold waits for
// its family's vocabulary to be built (about 0.2 s for o200k_base).
const tokenizerWait = 3 * time.Second

// measure is a request's measure as the prompt gives it: reported, the
// provider's input for the messages before from (0 when no call saw
// this rendering), and estimated, the estimate of the whole request
// (reported plus the messages from from on, estimated).
type measure struct {
	reported  int64
	from      int
	estimated int64
}

// withTools says the measure holds the tools' definitions, as a
// provider's figure does.
func (m measure) withTools() bool { return m.reported > 0 }

// estimate counts the messages not yet counted, and measures the
// request the prompt renders.
func (p *prompt) measure(turns []session.Turn) measure {
	p.count()
	var m measure
	for i := p.turns - 1; i >= max(p.since, p.view.base); i-- {
		if t := turns[i]; t.LLM != nil && t.LLM.Usage.Prompt > 0 {
			m.from, m.reported = p.starts[i-p.view.base], t.LLM.Usage.Prompt
			break
		}
	}
	m.estimated = m.reported
	for _, c := range p.counts[m.from:] {
		m.estimated += int64(c)
	}
	if m.reported == 0 {
		m.estimated += replyPriming
	}
	return m
}

// count estimates the messages not yet counted.
func (p *prompt) count() {
	for i := len(p.counts); i < len(p.msgs); i++ {
		p.counts = append(p.counts, p.estimator.Message(p.msgs[i]))
	}
}

// estimate is the estimate of the rendered messages, all of them.
func (p *prompt) estimate() int64 {
	p.count()
	var sum int64 = replyPriming
	for _, n := range p.counts {
		sum += int64(n)
	}
	return sum
}

// exact counts req, measured as m, with the model family's tokenizer
// where it has one: the provider's figure plus the messages since,
// counted. It runs off the actor.
func (m measure) exact(c *tokens.Counter, req llm.Request) int64 {
	if m.reported > 0 {
		return m.reported + int64(c.Messages(req.Messages[m.from:]))
	}
	return int64(c.Request(req))
}
