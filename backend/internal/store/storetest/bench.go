package storetest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// BenchCommitStep measures committed steps per second on stores that open
// makes, each over a fresh database. A step here is what the runner writes
// for one model call with one tool call: the LLM turn, the user turn
// carrying the result and one folded mail, the mail marked delivered and
// the meta update.
func BenchCommitStep(b *testing.B, open func(b *testing.B) store.Store) {
	b.Run("serial", func(b *testing.B) {
		s := open(b)
		b.Cleanup(func() { s.Close() })
		st := newStepper(b, s, "s0")
		b.ResetTimer()
		for b.Loop() {
			st.step(b)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
	})
	// Many sessions stepping at once, as under load: one goroutine per
	// session (on SQLite all sharing the single writer connection).
	b.Run("parallel", func(b *testing.B) {
		s := open(b)
		b.Cleanup(func() { s.Close() })
		var next atomic.Int64
		b.SetParallelism(4)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			st := newStepper(b, s, fmt.Sprintf("s%d", next.Add(1)))
			for pb.Next() {
				st.step(b)
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
	})
}

type stepper struct {
	s    store.Store
	meta session.Meta
	n    int
}

func newStepper(b *testing.B, s store.Store, id string) *stepper {
	now := time.Now().UTC()
	m := session.Meta{ID: id, Agent: "coder", Owner: "bench", Title: "bench", Status: session.StatusRunning, Created: now, Updated: now}
	if err := s.CreateSession(context.Background(), m, nil); err != nil {
		b.Fatal(err)
	}
	return &stepper{s: s, meta: m}
}

func (st *stepper) step(b *testing.B) {
	ctx := context.Background()
	now := time.Now().UTC()
	mail := session.Mail{ID: fmt.Sprintf("%s-m%d", st.meta.ID, st.n), SessionID: st.meta.ID,
		Sender: session.Sender{Kind: session.SenderUser, Name: "bench"}, Priority: session.PriorityNormal,
		Body: session.MailBody{Kind: session.MailUserMessage, Text: "also check the tests"}, Created: now}
	if err := st.s.AddMail(ctx, mail); err != nil {
		b.Fatal(err)
	}
	i := st.meta.TurnCount
	call := session.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "bash", Arguments: `{"cmd":"go test ./..."}`, Kind: session.ToolBash, Mode: session.CallAttached}
	usage := session.Usage{Prompt: 2000, Completion: 150, Cached: 1800}
	turns := []session.Turn{
		{Index: i, Created: now, LLM: &session.LLMTurn{Text: "Running the tests.", ToolCalls: []session.ToolCall{call}, Usage: usage, Model: "m", FinishReason: "tool_calls"}},
		{Index: i + 1, Created: now, User: &session.UserTurn{
			ToolResults: []session.ToolResult{{CallID: call.ID, Name: "bash", Text: "ok  \tgithub.com/x/y\t0.123s\n", Status: session.ResultOK, Duration: time.Second}},
			Mail:        []session.Mail{mail},
		}},
	}
	st.meta.TurnCount += len(turns)
	st.meta.Usage = st.meta.Usage.Add(usage)
	st.meta.Updated = now
	err := st.s.CommitStep(ctx, store.StepCommit{Meta: st.meta, NewTurns: turns, DeliveredMail: []string{mail.ID}})
	if err != nil {
		b.Fatal(err)
	}
	st.n++
}
