package mcpserve

import (
	"strings"
	"testing"
)

func TestToolNameKeepsWhatMCPAllowsAndReplacesTheRest(t *testing.T) {
	t.Parallel()
	tests := []struct{ slug, want string }{
		{"boss", "ask_boss"},
		{"code-review.v2", "ask_code-review.v2"},
		{"Snake_Case", "ask_Snake_Case"},
		{"two words", "ask_two_words"},
		{"päivä/ü", "ask_p_iv___"},
		{strings.Repeat("a", 200), "ask_" + strings.Repeat("a", 124)},
	}
	for _, tc := range tests {
		if got := ToolName(tc.slug); got != tc.want {
			t.Errorf("ToolName(%q) = %q, want %q", tc.slug, got, tc.want)
		}
	}
}

func TestTailKeepsTheEndAtACharacterBoundary(t *testing.T) {
	t.Parallel()
	if got := tail("short"); got != "short" {
		t.Errorf("tail(short) = %q", got)
	}
	long := "é" + strings.Repeat("ü", maxProgressText/2)
	got := tail(long)
	if !strings.HasPrefix(got, "…ü") || len(got) > maxProgressText+len("…") {
		t.Errorf("tail of %d bytes = %d bytes starting %q", len(long), len(got), got[:8])
	}
}
