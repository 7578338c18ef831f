package catalog

import "strings"

// The limits of a model nothing describes: small enough for most models
// served today, so that an unknown model's sessions are compacted early
// rather than refused by the provider.
const (
	DefaultContextWindow   = 32_768
	DefaultMaxOutputTokens = 4_096
)

// builtinModel is one entry of the table of well-known models.
type builtinModel struct {
	name           string
	window, output int64
}

// builtinModels are the published limits of well-known models reached
// through OpenAI-compatible endpoints, by the name their provider gives
// them. An entry also stands for the names that extend it (see
// BuiltinLimits), so one line covers a model's dated snapshots and
// variants; a variant whose limits differ has a line of its own. Where a
// provider documents no maximum output, 8,192 is taken.
//
// It is a function, not a package variable, so that nothing is built
// before an agent is, and nothing can change the table.
func builtinModels() []builtinModel {
	return []builtinModel{
		// OpenAI.
		{"gpt-5", 400_000, 128_000},
		{"gpt-5-chat", 128_000, 16_384},
		{"gpt-5.1", 400_000, 128_000},
		{"gpt-5.1-chat", 128_000, 16_384},
		{"gpt-4.1", 1_047_576, 32_768},
		{"gpt-4o", 128_000, 16_384},
		{"gpt-4o-2024-05-13", 128_000, 4_096},
		{"gpt-4o-mini", 128_000, 16_384},
		{"chatgpt-4o-latest", 128_000, 16_384},
		{"gpt-4-turbo", 128_000, 4_096},
		{"gpt-4-1106-preview", 128_000, 4_096},
		{"gpt-4-0125-preview", 128_000, 4_096},
		{"gpt-4", 8_192, 8_192},
		{"gpt-3.5-turbo", 16_385, 4_096},
		{"gpt-3.5-turbo-instruct", 4_096, 4_096},
		{"o1", 200_000, 100_000},
		{"o1-mini", 128_000, 65_536},
		{"o1-preview", 128_000, 32_768},
		{"o3", 200_000, 100_000},
		{"o3-mini", 200_000, 100_000},
		{"o4-mini", 200_000, 100_000},

		// Mistral. Small models before 2503 had 32,000 tokens.
		{"mistral-large", 128_000, 8_192},
		{"mistral-medium", 128_000, 8_192},
		{"mistral-small", 32_000, 8_192},
		{"mistral-small-latest", 128_000, 8_192},
		{"mistral-small-2503", 128_000, 8_192},
		{"mistral-small-2506", 128_000, 8_192},

		// Moonshot (Kimi).
		{"moonshot-v1-8k", 8_192, 4_096},
		{"moonshot-v1-32k", 32_768, 8_192},
		{"moonshot-v1-128k", 131_072, 8_192},
		{"kimi-latest", 131_072, 8_192},
		{"kimi-k2", 131_072, 8_192},
		{"kimi-k2-0905-preview", 262_144, 8_192},
		{"kimi-k2-turbo-preview", 262_144, 8_192},
		{"kimi-k2-thinking", 262_144, 8_192},

		// Anthropic, as Anthropic's own compatible endpoint ("claude-3-5-…")
		// and gateways ("claude-3.5-…") name them.
		{"claude-3-haiku", 200_000, 4_096},
		{"claude-3-sonnet", 200_000, 4_096},
		{"claude-3-opus", 200_000, 4_096},
		{"claude-3-5-haiku", 200_000, 8_192},
		{"claude-3.5-haiku", 200_000, 8_192},
		{"claude-3-5-sonnet", 200_000, 8_192},
		{"claude-3.5-sonnet", 200_000, 8_192},
		{"claude-3-7-sonnet", 200_000, 64_000},
		{"claude-3.7-sonnet", 200_000, 64_000},
		{"claude-sonnet-4", 200_000, 64_000},
		{"claude-sonnet-4.5", 200_000, 64_000},
		{"claude-opus-4", 200_000, 32_000},
		{"claude-opus-4.1", 200_000, 32_000},
		{"claude-opus-4-5", 200_000, 64_000},
		{"claude-opus-4.5", 200_000, 64_000},
		{"claude-haiku-4-5", 200_000, 64_000},
		{"claude-haiku-4.5", 200_000, 64_000},
	}
}

// BuiltinLimits returns the limits the server knows for a model name,
// with Source LimitsBuiltin, or the conservative default with Source
// LimitsDefault and false. Case is ignored, and so is a provider's prefix
// ("openai/gpt-4o" is gpt-4o). An entry matches its own name and the
// names that extend it after "-", ":" or "@" ("gpt-4o-mini-2024-07-18",
// "claude-3-7-sonnet:thinking", "claude-3-5-sonnet@20240620"); when
// several do, the longest wins, so "gpt-4o-mini-…" is gpt-4o-mini, not
// gpt-4o.
func BuiltinLimits(model string) (Limits, bool) {
	name := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	var best *builtinModel
	table := builtinModels()
	for i := range table {
		m := &table[i]
		if extends(name, m.name) && (best == nil || len(m.name) > len(best.name)) {
			best = m
		}
	}
	if best == nil {
		return Limits{ContextWindow: DefaultContextWindow, MaxOutputTokens: DefaultMaxOutputTokens, Source: LimitsDefault}, false
	}
	return Limits{ContextWindow: best.window, MaxOutputTokens: best.output, Source: LimitsBuiltin}, true
}

// extends reports whether name is base or base followed by a suffix
// ("-2024-07-18", ":free", "@20240620"). A dot does not start a suffix:
// "gpt-4.1" is not a gpt-4.
func extends(name, base string) bool {
	rest, ok := strings.CutPrefix(name, base)
	return ok && (rest == "" || rest[0] == '-' || rest[0] == ':' || rest[0] == '@')
}
