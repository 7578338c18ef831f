package transcript

import (
	"fmt"
	"testing"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/theme"
)

// benchSession is a session of n turns: questions, and answers of a few
// paragraphs, a list and a code block, every fourth with a tool call.
func benchSession(n int) *agentsv1.Session {
	turns := make([]*agentsv1.Turn, 0, n)
	for i := range n {
		switch {
		case i%2 == 0:
			turns = append(turns, userTurn(i, fmt.Sprintf("Question %d: how does this part of the program work, and what would you change?", i)))
		case i%4 == 1:
			turns = append(turns, llmTurn(i, "Let me read it first.", toolCall(fmt.Sprint("c", i), "read_file", `{"path":"main.go"}`)))
		default:
			turns = append(turns, llmTurn(i, longAnswer(4)))
		}
		if i%4 == 2 {
			// The results of the call asked for in the turn before.
			turns[i] = resultsTurn(i, result(fmt.Sprint("c", i-1), "read_file", "package main\n", ok, 20*time.Millisecond))
		}
	}
	return session(ready, "done", turns...)
}

func BenchmarkRender1000Turns(b *testing.B) {
	s := benchSession(1000)
	b.Run("fresh", func(b *testing.B) {
		for b.Loop() {
			v := newView()
			v.Load(s)
			v.Lines(100)
		}
	})
	b.Run("one-more-turn", func(b *testing.B) {
		v := newView()
		v.Load(s)
		v.Lines(100)
		next := 1000
		for b.Loop() {
			v.Apply(headTurn(userTurn(next, "And one more question."), running))
			v.Lines(100)
			next++
		}
	})
	b.Run("select", func(b *testing.B) {
		v := newView()
		v.Load(s)
		v.Lines(100)
		i := 0
		for b.Loop() {
			v.Select(i % 1000)
			v.Lines(100)
			i++
		}
	})
}

// BenchmarkStreamDeltas streams 200 deltas into an answer in progress
// (after ten stored turns), drawing the transcript after each. For
// comparison, whole-answer renders the answer so far from scratch at each
// delta, which is what keeping the complete blocks saves.
func BenchmarkStreamDeltas(b *testing.B) {
	s := benchSession(10)
	s.Meta.Status = running
	answer := longAnswer(24)
	pieces := deltas(answer, len(answer)/200+1)
	events := make([]*agentsv1.Event, len(pieces))
	for i, p := range pieces {
		events[i] = event(&agentsv1.TextDelta{Text: p, TurnIndex: 10})
	}
	b.Run("transcript", func(b *testing.B) {
		for b.Loop() {
			v := newView()
			v.Load(s)
			v.Lines(100)
			for _, ev := range events {
				v.Apply(ev)
				v.Lines(100)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(events)), "µs/delta")
	})
	b.Run("whole-answer", func(b *testing.B) {
		m := newMarkdown(theme.New(true).Transcript.Markdown)
		for b.Loop() {
			text := ""
			for _, p := range pieces {
				text += p
				m.render(text, 98)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(pieces)), "µs/delta")
	})
}
