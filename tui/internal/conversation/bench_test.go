package conversation

import (
	"fmt"
	"strings"
	"testing"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// BenchmarkStreamingScreen is the conversation screen's cost while an
// answer streams: each delta applied and the whole screen drawn, as the
// shell does for every event. It reports the share of one core that 200
// deltas a second would take.
func BenchmarkStreamingScreen(b *testing.B) {
	var turns []*agentsv1.Turn
	for i := 0; i < 200; i += 2 {
		turns = append(turns, userTurn(i, fmt.Sprintf("Question %d: what does the `retry` helper do?", i)),
			llmTurn(i+1, "It retries the call with **exponential backoff**:\n\n```go\nfor d := 100 * time.Millisecond; ; d *= 2 {\n\tif err := f(); err == nil {\n\t\treturn nil\n\t}\n\ttime.Sleep(d)\n}\n```\n\nand gives up after five attempts."))
	}
	r := newRig(b, running, turns...).open()
	r.s.Render(100, 30)
	// An answer of paragraphs and lists, streamed eight bytes at a time;
	// once streamed, it starts again in the same turn.
	text := strings.Repeat("The answer streams in piece by piece, with a list:\n\n- one item\n- another item\n\nand a paragraph after it.\n\n", 20)
	var pieces []string
	for i := 0; i < len(text); i += 8 {
		pieces = append(pieces, text[i:min(i+8, len(text))])
	}
	seq := uint64(1000)
	n := 0
	for b.Loop() {
		seq++
		r.event(ev(seq, &agentsv1.TextDelta{Text: pieces[n%len(pieces)], TurnIndex: 200}))
		r.s.Render(100, 30)
		n++
	}
	perDelta := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(perDelta*200*100, "%core@200deltas/s")
}
