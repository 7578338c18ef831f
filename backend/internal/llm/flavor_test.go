package llm

import (
	"regexp"
	"strings"
	"testing"
)

func TestParseFlavor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Flavor
	}{
		{"", FlavorOpenAI},
		{"OpenAIv1", FlavorOpenAI},
		{"openai-v1", FlavorOpenAI},
		{"MistralV1", FlavorMistral},
		{"mistral-v1", FlavorMistral},
		{"KimiV1", FlavorKimi},
		{"kimiv1", FlavorKimi},
		{"ClaudeV1", FlavorClaude},
		{"claude-v1", FlavorClaude},
		{" CLAUDEV1 ", FlavorClaude},
	}
	for _, tt := range tests {
		got, err := ParseFlavor(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseFlavor(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := ParseFlavor("GeminiV1"); err == nil || !strings.Contains(err.Error(), "GeminiV1") {
		t.Errorf("unknown flavor: error %v, want one naming it", err)
	}
}

func TestMistralToolCallID(t *testing.T) {
	t.Parallel()
	valid := regexp.MustCompile(`^[A-Za-z0-9]{9}$`)
	if got := mistralToolCallID("D681PevKs"); got != "D681PevKs" {
		t.Errorf("a valid Mistral id was rewritten to %q", got)
	}
	seen := map[string]string{}
	for _, id := range []string{"call_abc123", "call_abc124", "toolu_01A09q90qw90lq917835lq9", "", "abc-12345", "12345678"} {
		got := mistralToolCallID(id)
		if !valid.MatchString(got) {
			t.Errorf("mistralToolCallID(%q) = %q, not 9 alphanumerics", id, got)
		}
		if again := mistralToolCallID(id); again != got {
			t.Errorf("mistralToolCallID(%q) is not stable: %q then %q", id, got, again)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("%q and %q both map to %q", other, id, got)
		}
		seen[got] = id
	}
}

// A flavor spelled as agent files may spell it is the flavor itself: a
// client for "mistral-v1" speaks Mistral's dialect.
func TestNewTakesTheParsedFlavor(t *testing.T) {
	t.Parallel()
	for in, want := range map[Flavor]Flavor{"": FlavorOpenAI, "mistral-v1": FlavorMistral, "kimiv1": FlavorKimi, "claude-v1": FlavorClaude} {
		c, err := New(Config{BaseURL: "https://example.com/v1", Flavor: in})
		if err != nil {
			t.Fatalf("New(%q): %v", in, err)
		}
		if c.Flavor() != want || c.dialect.toolChoiceAuto != (want == FlavorMistral) {
			t.Errorf("New(%q) speaks %s (tool_choice auto %v), want %s", in, c.Flavor(), c.dialect.toolChoiceAuto, want)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{
		{BaseURL: ""},
		{BaseURL: "api.openai.com/v1"},
		{BaseURL: "ftp://example.com"},
		{BaseURL: "https://api.mistral.ai/v1", Flavor: "MistralV2"},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%v) accepted a bad config", cfg)
		}
	}
}

func TestEndpoint(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://api.openai.com/v1":                   "https://api.openai.com/v1/chat/completions",
		"https://api.openai.com/v1/":                  "https://api.openai.com/v1/chat/completions",
		"http://localhost:11434/v1/chat/completions":  "http://localhost:11434/v1/chat/completions",
		"https://api.anthropic.com/v1/":               "https://api.anthropic.com/v1/chat/completions",
		"https://example.com/openai/v1?api-version=1": "https://example.com/openai/v1/chat/completions?api-version=1",
	} {
		c, err := New(Config{BaseURL: in})
		if err != nil {
			t.Fatalf("New(%q): %v", in, err)
		}
		if c.endpoint != want {
			t.Errorf("endpoint for %q = %q, want %q", in, c.endpoint, want)
		}
	}
}
