package llm

import (
	"crypto/sha256"
	"fmt"
	"strings"
)

// Flavor names the dialect of an endpoint, as agent files spell it.
type Flavor string

// The flavors agent files know.
const (
	FlavorOpenAI  Flavor = "OpenAIv1"
	FlavorMistral Flavor = "MistralV1"
	FlavorKimi    Flavor = "KimiV1"
	FlavorClaude  Flavor = "ClaudeV1"
)

// ParseFlavor reads a flavor as agent files write it ("OpenAIv1",
// "openai-v1", "MistralV1", "mistral-v1", "KimiV1", "kimiv1", "ClaudeV1",
// "claude-v1"; case does not matter). An empty string is OpenAIv1, which is
// also what any other compatible server (Ollama, vLLM, DeepSeek) speaks.
func ParseFlavor(s string) (Flavor, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "openaiv1", "openai-v1":
		return FlavorOpenAI, nil
	case "mistralv1", "mistral-v1":
		return FlavorMistral, nil
	case "kimiv1", "kimi-v1":
		return FlavorKimi, nil
	case "claudev1", "claude-v1":
		return FlavorClaude, nil
	}
	return "", fmt.Errorf("llm: unknown flavor %q (want OpenAIv1, MistralV1, KimiV1 or ClaudeV1)", s)
}

// dialect is everything that differs between flavors on the wire. Each field
// exists because some provider rejects or requires something the others do
// not; the reason is on the field.
type dialect struct {
	// flavor is the flavor the dialect is, spelled as ParseFlavor returns
	// it.
	flavor Flavor
	// maxTokensField names the completion cap. OpenAI's reasoning models
	// reject max_tokens; Mistral rejects max_completion_tokens (422).
	maxTokensField string
	// defaultMaxTokens is sent when the request sets no cap, for providers
	// whose thinking budget must fit under one.
	defaultMaxTokens int
	// askStreamUsage sends stream_options.include_usage. Mistral rejects the
	// field (422) and reports usage unasked in its last chunk.
	askStreamUsage bool
	// promptCacheKey sends Request.SessionID as prompt_cache_key. Claude's
	// compatibility layer does no prompt caching, so it is left out there.
	promptCacheKey bool
	// echoThinking puts an assistant message's Thinking back as
	// reasoning_content. Kimi with thinking enabled answers 400 to a history
	// whose tool-calling assistant turns lack it; Mistral answers 422 to a
	// history that has it, and OpenAI does not know the field.
	echoThinking bool
	// toolChoiceAuto sends tool_choice "auto" and parallel_tool_calls true
	// when tools are offered, as Mistral needs to call several tools at once.
	toolChoiceAuto bool
	// thinkingBudget turns on extended thinking through Claude's compatibility
	// layer (thinking: {type: enabled, budget_tokens}).
	thinkingBudget int
	// toolCallID rewrites tool call IDs written back into the history; nil
	// keeps them. Mistral accepts only 9 alphanumerics, so IDs that came from
	// another provider (a forked session, a generated ID) must be mapped.
	toolCallID func(string) string
}

// minThinking is the least thinking budget Claude accepts.
const minThinking = 1024

// dialectFor is the table of flavor differences.
func dialectFor(f Flavor) dialect {
	switch f {
	case FlavorMistral:
		return dialect{
			flavor:         FlavorMistral,
			maxTokensField: "max_tokens",
			promptCacheKey: true,
			toolChoiceAuto: true,
			toolCallID:     mistralToolCallID,
		}
	case FlavorKimi:
		return dialect{
			flavor:         FlavorKimi,
			maxTokensField: "max_tokens",
			askStreamUsage: true,
			promptCacheKey: true,
			echoThinking:   true,
		}
	case FlavorClaude:
		return dialect{
			flavor:           FlavorClaude,
			maxTokensField:   "max_tokens",
			defaultMaxTokens: 16000,
			askStreamUsage:   true,
			thinkingBudget:   10000,
		}
	default:
		return dialect{
			flavor:         FlavorOpenAI,
			maxTokensField: "max_completion_tokens",
			askStreamUsage: true,
			promptCacheKey: true,
		}
	}
}

// kimiThinkingPlaceholder stands in for the reasoning of a tool-calling
// assistant turn that has none recorded (a turn from another provider, or
// from before thinking was enabled): Kimi rejects the history without it.
const kimiThinkingPlaceholder = " "

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// mistralToolCallID keeps an ID Mistral would accept and maps any other one
// to 9 alphanumerics derived from it, so that an assistant call and the tool
// message answering it still match after the rewrite.
func mistralToolCallID(id string) string {
	if isMistralToolCallID(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	out := make([]byte, 9)
	for i := range out {
		out[i] = base62[int(sum[i])%len(base62)]
	}
	return string(out)
}

func isMistralToolCallID(id string) bool {
	if len(id) != 9 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if strings.IndexByte(base62, id[i]) < 0 {
			return false
		}
	}
	return true
}
