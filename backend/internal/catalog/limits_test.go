package catalog

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agents-os/agents/backend/internal/agentfile"
)

func TestBuiltinLimitsMatchNamesWithPrefixesAndSuffixes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		model          string
		window, output int64
		known          bool
	}{
		{"gpt-4o", 128_000, 16_384, true},
		{"gpt-4o-mini-2024-07-18", 128_000, 16_384, true},
		{"openai/gpt-4o", 128_000, 16_384, true},
		{"GPT-4o-Mini", 128_000, 16_384, true},
		{"gpt-4o-2024-05-13", 128_000, 4_096, true},
		{"gpt-4.1-nano-2025-04-14", 1_047_576, 32_768, true},
		{"gpt-4-turbo-2024-04-09", 128_000, 4_096, true},
		{"gpt-4-0613", 8_192, 8_192, true},
		{"gpt-3.5-turbo-0125", 16_385, 4_096, true},
		{"o1-2024-12-17", 200_000, 100_000, true},
		{"o1-mini", 128_000, 65_536, true},
		{"o3-mini-2025-01-31", 200_000, 100_000, true},
		{"o4-mini", 200_000, 100_000, true},
		{"gpt-5-mini", 400_000, 128_000, true},
		{"gpt-5-chat-latest", 128_000, 16_384, true},
		{"mistral-large-latest", 128_000, 8_192, true},
		{"mistral-small-latest", 128_000, 8_192, true},
		{"moonshot-v1-128k", 131_072, 8_192, true},
		{"kimi-k2-0905-preview", 262_144, 8_192, true},
		{"moonshotai/kimi-k2-instruct", 131_072, 8_192, true},
		{"claude-3-5-sonnet-20241022", 200_000, 8_192, true},
		{"anthropic/claude-3.7-sonnet:thinking", 200_000, 64_000, true},
		{"claude-3-5-sonnet@20240620", 200_000, 8_192, true},
		{"claude-opus-4-1-20250805", 200_000, 32_000, true},
		{"claude-sonnet-4-5-20250929", 200_000, 64_000, true},
		// A dot does not start a suffix: these are not the models they
		// begin like, and nothing else knows them.
		{"gpt-4.5-preview", DefaultContextWindow, DefaultMaxOutputTokens, false},
		{"gpt-4oo", DefaultContextWindow, DefaultMaxOutputTokens, false},
		{"llama3.1:8b", DefaultContextWindow, DefaultMaxOutputTokens, false},
		{"", DefaultContextWindow, DefaultMaxOutputTokens, false},
	}
	for _, tc := range cases {
		t.Run(tc.model, func(t *testing.T) {
			t.Parallel()
			got, known := BuiltinLimits(tc.model)
			source := LimitsDefault
			if tc.known {
				source = LimitsBuiltin
			}
			want := Limits{ContextWindow: tc.window, MaxOutputTokens: tc.output, Source: source}
			if got != want || known != tc.known {
				t.Errorf("BuiltinLimits(%q) = %+v, %v; want %+v, %v", tc.model, got, known, want, tc.known)
			}
		})
	}
}

func TestCompleteFillsEveryNumberForTheWindow(t *testing.T) {
	t.Parallel()
	gpt4o := Limits{ContextWindow: 128_000, MaxOutputTokens: 16_384}
	cases := []struct {
		name     string
		settings Compaction
		limits   Limits
		want     Compaction
	}{
		{"defaults", Compaction{}, gpt4o,
			// 128,000 − 8,192 − 6,400; a quarter of the window is more
			// than 40,000.
			Compaction{Threshold: 113_408, OutputReserve: 8_192, Margin: 6_400, PruneOver: 1_000, KeepRecent: 32_000}},
		{"small window", Compaction{}, Limits{ContextWindow: 8_192, MaxOutputTokens: 8_192},
			// The reserve is at most a quarter of the window; the margin at
			// least 256.
			Compaction{Threshold: 5_735, OutputReserve: 2_048, Margin: 409, PruneOver: 1_000, KeepRecent: 2_048}},
		{"large window", Compaction{}, Limits{ContextWindow: 1_047_576, MaxOutputTokens: 32_768},
			Compaction{Threshold: 987_006, OutputReserve: 8_192, Margin: 52_378, PruneOver: 1_000, KeepRecent: 40_000}},
		{"tiny margin", Compaction{}, Limits{ContextWindow: 4_096, MaxOutputTokens: 4_096},
			Compaction{Threshold: 2_816, OutputReserve: 1_024, Margin: 256, PruneOver: 1_000, KeepRecent: 1_024}},
		{"explicit settings", Compaction{Threshold: 60_000, OutputReserve: 4_000, Margin: 1_000, PruneOver: 500, KeepRecent: 10_000, Model: "small", Prompt: []string{"p"}}, gpt4o,
			Compaction{Threshold: 60_000, OutputReserve: 4_000, Margin: 1_000, PruneOver: 500, KeepRecent: 10_000, Model: "small", Prompt: []string{"p"}}},
		{"threshold past the room", Compaction{Threshold: 125_000}, gpt4o,
			Compaction{Threshold: 113_408, OutputReserve: 8_192, Margin: 6_400, PruneOver: 1_000, KeepRecent: 32_000}},
		{"reserve leaving no room", Compaction{OutputReserve: 120_000}, gpt4o,
			// Never below half the window.
			Compaction{Threshold: 64_000, OutputReserve: 120_000, Margin: 6_400, PruneOver: 1_000, KeepRecent: 32_000}},
		{"keep recent past the threshold", Compaction{Threshold: 20_000, KeepRecent: 50_000}, gpt4o,
			Compaction{Threshold: 20_000, OutputReserve: 8_192, Margin: 6_400, PruneOver: 1_000, KeepRecent: 10_000}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.settings.Complete(tc.limits)
			if !sameCompaction(got, tc.want) {
				t.Errorf("Complete = %+v\nwant       %+v", got, tc.want)
			}
		})
	}
}

func sameCompaction(a, b Compaction) bool {
	return a.Threshold == b.Threshold && a.OutputReserve == b.OutputReserve && a.Margin == b.Margin &&
		a.PruneOver == b.PruneOver && a.KeepRecent == b.KeepRecent && a.Model == b.Model && slices.Equal(a.Prompt, b.Prompt)
}

// limitsAgent is an agent file's JSON for a model; extra goes into
// contents.
func limitsAgent(slug, model, extra string) string {
	return fmt.Sprintf(`{"tag": "OpenAIAgentDescription", "contents": {"slug": %q, "flavor": "OpenAIv1",
		"modelUrl": "https://example.test/v1", "apiKeyId": "k", "modelName": %q%s}}`, slug, model, extra)
}

// Limits come from the agent file, else the config's models, else the
// server's table, else the default; compaction settings from the agent
// file, else the config, else the defaults, every number set. Stored
// agents and agents pointed at the offline model resolve alike.
func TestAgentsResolveTheirLimitsAndCompaction(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for slug, content := range map[string]string{
		"own": limitsAgent("own", "gpt-4o", `, "contextWindow": 50000,
			"compaction": {"threshold": 30000, "keepRecent": 5000, "model": "small"}`),
		"configured": limitsAgent("configured", "gpt-4o-mini", ""),
		"known":      limitsAgent("known", "openai/gpt-4.1-2025-04-14", ""),
		"unknown":    limitsAgent("unknown", "m", ""),
	} {
		path := filepath.Join(dir, slug+".json")
		writeFile(t, path, content, 0o644)
		files = append(files, path)
	}
	set := agentfile.Loader{WorkDir: dir}.Load(files, nil)
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	stored := []Stored{{Slug: "kept", Version: 1, Definition: limitsAgent("kept", "m", `, "maxOutputTokens": 2000, "compaction": {"pruneOver": 300}`)}}
	cat := New(context.Background(), func() *agentfile.Set { return set }, Options{
		HasKey:          func(string) bool { return false },
		OfflineModelURL: "http://127.0.0.1:1/v1",
		Models:          map[string]Limits{"gpt-4o-mini": {ContextWindow: 100_000, Source: LimitsConfig}},
		Compaction:      Compaction{Threshold: 90_000, PruneOver: 500, Prompt: []string{"Summarise."}},
		Stored:          func(context.Context) ([]Stored, error) { return stored, nil },
		WorkDir:         dir,
	})
	if errs := cat.Snapshot().Errors; len(errs) > 0 {
		t.Fatal(errs)
	}

	cases := []struct {
		slug            string
		limits          Limits
		compaction      Compaction
		thresholdSource string
	}{
		{"own", Limits{50_000, 16_384, LimitsAgent},
			Compaction{Threshold: 30_000, OutputReserve: 8_192, Margin: 2_500, PruneOver: 500, KeepRecent: 5_000, Model: "small", Prompt: []string{"Summarise."}},
			LimitsAgent},
		// The config's threshold does not fit the window: 100,000 − 8,192
		// − 5,000.
		{"configured", Limits{100_000, 16_384, LimitsConfig},
			Compaction{Threshold: 86_808, OutputReserve: 8_192, Margin: 5_000, PruneOver: 500, KeepRecent: 25_000, Prompt: []string{"Summarise."}},
			ThresholdComputed},
		{"known", Limits{1_047_576, 32_768, LimitsBuiltin},
			Compaction{Threshold: 90_000, OutputReserve: 8_192, Margin: 52_378, PruneOver: 500, KeepRecent: 40_000, Prompt: []string{"Summarise."}},
			LimitsConfig},
		{"unknown", Limits{32_768, 4_096, LimitsDefault},
			Compaction{Threshold: 27_034, OutputReserve: 4_096, Margin: 1_638, PruneOver: 500, KeepRecent: 8_192, Prompt: []string{"Summarise."}},
			ThresholdComputed},
		{"kept", Limits{32_768, 2_000, LimitsAgent},
			Compaction{Threshold: 29_130, OutputReserve: 2_000, Margin: 1_638, PruneOver: 300, KeepRecent: 8_192, Prompt: []string{"Summarise."}},
			ThresholdComputed},
	}
	snap := cat.Snapshot()
	for _, tc := range cases {
		a, err := snap.Get(tc.slug)
		if err != nil {
			t.Fatal(err)
		}
		if !a.Model.Offline {
			t.Errorf("%s: not pointed at the offline model", tc.slug)
		}
		if a.Model.Limits != tc.limits {
			t.Errorf("%s: limits = %+v, want %+v", tc.slug, a.Model.Limits, tc.limits)
		}
		if !sameCompaction(a.Compaction, tc.compaction) || a.ThresholdSource != tc.thresholdSource {
			t.Errorf("%s: compaction = %+v from %s\nwant %+v from %s", tc.slug, a.Compaction, a.ThresholdSource, tc.compaction, tc.thresholdSource)
		}
	}

	// A window learned later keeps the agent's and the server's settings
	// and recomputes the rest.
	own, _ := snap.Get("own")
	learned := own.CompactionFor(Limits{ContextWindow: 20_000, MaxOutputTokens: 4_000, Source: LimitsLearned})
	want := Compaction{Threshold: 15_000, OutputReserve: 4_000, Margin: 1_000, PruneOver: 500, KeepRecent: 5_000, Model: "small", Prompt: []string{"Summarise."}}
	if !sameCompaction(learned, want) {
		t.Errorf("CompactionFor a learned window = %+v\nwant %+v", learned, want)
	}
}
