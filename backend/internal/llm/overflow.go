package llm

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// IsContextOverflow reports whether a provider refused a request because
// it does not fit in the model's context window. Providers say so in
// different words: OpenAI's code context_length_exceeded, and messages
// of vLLM, llama.cpp, Mistral, Anthropic and others.
func IsContextOverflow(e *APIError) bool {
	if e == nil {
		return false
	}
	code := strings.ToLower(e.Code)
	if code == "context_length_exceeded" {
		return true
	}
	if e.Status != 400 && e.Status != 413 && e.Status != 422 && e.Status != 200 {
		return false
	}
	msg := strings.ToLower(e.Message)
	for _, s := range overflowPhrases {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// overflowPhrases are what providers' messages about a request too long
// for the window say.
var overflowPhrases = []string{
	"maximum context length",
	"context length exceeded",
	"context_length_exceeded",
	"exceeds the available context size",
	"exceed context window",
	"exceeds the context window",
	"context window",
	"prompt is too long",
	"too many tokens",
	"input is too long",
}

// windowPatterns find the window a message states, in the wordings of
// OpenAI ("maximum context length is 128000 tokens"), vLLM (the same),
// llama.cpp ("n_ctx: 4096" / "context size (4096 tokens)") and Anthropic
// ("prompt is too long: 210000 tokens > 200000 maximum").
var windowPatterns = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`maximum context length (?:is|of) (\d+)`),
		regexp.MustCompile(`context (?:size|window|length)(?: is| of)? \(?(\d+) tokens`),
		regexp.MustCompile(`n_ctx(?:_slot)?\s*[:=]\s*(\d+)`),
		regexp.MustCompile(`(?:>|exceeds?)\s*(\d+)\s*(?:tokens? )?maximum`),
	}
})

// StatedWindow returns the context window a provider's message states,
// in tokens.
func StatedWindow(message string) (int64, bool) {
	msg := strings.ToLower(message)
	for _, re := range windowPatterns() {
		if m := re.FindStringSubmatch(msg); m != nil {
			if n, err := strconv.ParseInt(m[1], 10, 64); err == nil && n > 0 {
				return n, true
			}
		}
	}
	return 0, false
}
