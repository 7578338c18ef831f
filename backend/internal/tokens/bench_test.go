package tokens

import (
	"testing"

	"github.com/agents-os/agents/backend/internal/llm"
)

// BenchmarkMeasureTurn counts what one step adds to a request: an
// assistant message calling a tool and the tool's result, about a
// kilobyte of command output.
func BenchmarkMeasureTurn(b *testing.B) {
	msgs := history(b, 50)
	turn := msgs[2:4] // the first assistant call and its result
	if turn[0].Role != llm.RoleAssistant || turn[1].Role != llm.RoleTool {
		b.Fatalf("history starts %s, %s", turn[0].Role, turn[1].Role)
	}
	for _, bc := range []struct {
		name  string
		model string
	}{{"tokenizer", "gpt-4o"}, {"estimate", "mistral-large-latest"}} {
		b.Run(bc.name, func(b *testing.B) {
			c := load(b, ForModel(bc.model))
			b.ReportAllocs()
			var n int
			for b.Loop() {
				n = c.Messages(turn)
			}
			b.ReportMetric(float64(n), "tokens/op")
		})
	}
}

// BenchmarkMeasureHistory counts a whole request of a 50-turn session
// with its tools, as a first call or the first after a compaction does.
func BenchmarkMeasureHistory(b *testing.B) {
	req := llm.Request{Messages: history(b, 50), Tools: corpusTools}
	for _, bc := range []struct {
		name  string
		model string
	}{{"tokenizer", "gpt-4o"}, {"estimate", "mistral-large-latest"}} {
		b.Run(bc.name, func(b *testing.B) {
			c := load(b, ForModel(bc.model))
			b.ReportAllocs()
			var n int
			for b.Loop() {
				n = c.Request(req)
			}
			b.ReportMetric(float64(n), "tokens/op")
		})
	}
}
