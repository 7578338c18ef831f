package storetest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/cputime"
	"github.com/agents-os/agents/backend/internal/events"
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

// BenchCommitPrompts measures what the store's write path costs a prompt
// as the server writes it with many sessions prompting at once: each
// prompt is two changes, the run's start (the user's turn, the session
// running) and its end (the model's turn, the session ready again, the
// call's spend and the run's outcome), each with its events, and the
// committer writes groups of four changes in one transaction. It reports
// the process's CPU time per prompt (a commit's time also waits for the
// disk).
func BenchCommitPrompts(b *testing.B, open func(b *testing.B) store.Store) {
	const sessions, group = 16, 4
	ctx := context.Background()
	s := open(b)
	b.Cleanup(func() { s.Close() })
	p := NewPrompts(b, s, sessions)
	prompts := 0
	b.ResetTimer()
	cpu0 := cpuTime(b)
	for b.Loop() {
		p.Commit(ctx, group)
		prompts += group
	}
	b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(prompts)*2, "cpu-ns/prompt")
}

// Prompts writes what sessions prompting over and over write, as
// BenchCommitPrompts does: a prompt is two changes, its run's start and
// its run's end.
type Prompts struct {
	b        *testing.B
	s        store.Store
	steppers []*stepper
	body     []byte
	changes  []*store.Change
	next     int
}

// NewPrompts creates sessions ready to prompt in s.
func NewPrompts(b *testing.B, s store.Store, sessions int) *Prompts {
	p := &Prompts{b: b, s: s, body: make([]byte, 240)}
	for i := range sessions {
		st := newStepper(b, s, fmt.Sprintf("s%02d", i))
		st.meta.Status = session.StatusReady
		p.steppers = append(p.steppers, st)
	}
	return p
}

// Commit commits the next n changes, of the sessions in turn, in one
// group commit.
func (p *Prompts) Commit(ctx context.Context, n int) {
	p.changes = p.changes[:0]
	for range n {
		p.changes = append(p.changes, p.steppers[p.next%len(p.steppers)].promptChange(p.body))
		p.next++
	}
	for i, err := range p.s.CommitAll(ctx, p.changes) {
		if err != nil {
			p.b.Fatalf("change %d: %v", i, err)
		}
	}
}

// promptChange is the next change of a session that prompts over and
// over: its run's start when it is ready, its run's end when it runs.
func (st *stepper) promptChange(body []byte) *store.Change {
	now := time.Now().UTC()
	m := &st.meta
	i := m.TurnCount
	c := &store.Change{Meta: m}
	run := events.KindRunStopped
	if m.Status == session.StatusReady {
		run = events.KindRunStarted
		m.Status = session.StatusRunning
		c.NewTurns = []session.Turn{{Index: i, Created: now, User: &session.UserTurn{Text: "what changed since yesterday?"}}}
	} else {
		usage := session.Usage{Prompt: 2000, Completion: 150, Cached: 1800}
		m.Status = session.StatusReady
		m.Usage = m.Usage.Add(usage)
		c.NewTurns = []session.Turn{{Index: i, Created: now, LLM: &session.LLMTurn{Text: "Two commits: the store and the committer.", Usage: usage, Model: "m", FinishReason: "stop"}}}
		c.Spend = &store.SpendChange{SessionID: m.ID, RootID: m.Root(), Owner: m.Owner, Spend: session.Spend{Tokens: 2150}, At: now,
			Agent: m.Agent, Model: "m", Prompt: 2000, Completion: 150}
		c.RunOutcome = &store.RunOutcome{SessionID: m.ID, Status: string(session.StatusReady), At: now}
	}
	m.TurnCount++
	m.Updated = now
	// A copy: the store reads the change's metadata after this call
	// returns, and the next change of the session changes it.
	meta := *m
	c.Meta = &meta
	c.Events = []store.Event{
		{SessionID: m.ID, Owner: m.Owner, Kind: events.KindSessionUpdated, Time: now, Body: body},
		{SessionID: m.ID, Owner: m.Owner, Kind: run, Time: now, Body: body},
	}
	return c
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	t, ok := cputime.Process()
	if !ok {
		b.Fatal("cannot read the process's CPU time here")
	}
	return t
}
