package runner

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
)

// BenchmarkRequest measures what a step spends on its model request:
// building it from the history (buildRequest) and writing it on the wire
// (an llm.Client whose transport reads the body and answers at once), for
// histories of 10, 100 and 1,000 turns. Each turn pair is a model answer
// (300 bytes of text, 200 of thinking, one tool call) and its result
// (1 KiB, with mail every tenth time).
//
//   - step/turns=N: one op is one step of a session whose history has N
//     turns (up to 10% more), the newest two of them (the last answer and
//     its result) new since the step before.
//   - session/turns=N: one op is every step of a session, from its first
//     prompt until its history has N turns; ns/step and B/step are per
//     step.
func BenchmarkRequest(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("step/turns=%d", n), func(b *testing.B) { benchStep(b, n) })
	}
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("session/turns=%d", n), func(b *testing.B) { benchSession(b, n) })
	}
}

func benchStep(b *testing.B, n int) {
	// The session grows by a step per op, from n turns to at most 10% more,
	// then starts again from n, with the step before built untimed.
	steps := max(1, n/20)
	turns := benchHistory(n + 2*steps)
	model := benchModel(b)
	ctx := context.Background()
	b.ReportAllocs()
	var a *actor
	for i := 0; i < b.N; i++ {
		k := n + 2*(i%steps)
		if k == n {
			b.StopTimer()
			a = benchActor(turns[:n-2])
			a.buildRequest()
			b.StartTimer()
		}
		a.st.turns = turns[:k]
		if _, err := model.Complete(ctx, a.buildRequest()); err != nil {
			b.Fatal(err)
		}
	}
}

func benchSession(b *testing.B, n int) {
	turns := benchHistory(n)
	model := benchModel(b)
	ctx := context.Background()
	steps := 0
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a := benchActor(nil)
		// A step follows each user turn: every other prefix of the history.
		for k := 2 - n%2; k <= n; k += 2 {
			a.st.turns = turns[:k]
			if _, err := model.Complete(ctx, a.buildRequest()); err != nil {
				b.Fatal(err)
			}
			steps++
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/step")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(steps), "B/step")
}

func benchActor(turns []session.Turn) *actor {
	return &actor{
		id: "bench",
		st: &state{turns: turns},
		agent: &catalog.Agent{
			Agent: &agentfile.Agent{SystemPrompt: []string{"You are a careful engineer.", "Answer briefly."}},
			Model: catalog.Model{Flavor: agentfile.FlavorOpenAIv1, Name: "bench-model"},
		},
	}
}

// benchHistory is a history of n turns that ends with a user turn.
func benchHistory(n int) []session.Turn {
	turns := make([]session.Turn, n)
	for i := range turns {
		t := &turns[i]
		t.Index = i
		step := i / 2
		switch {
		case (n-1-i)%2 == 1:
			t.LLM = &session.LLMTurn{
				Text:      strings.Repeat("I will read the next file. ", 11),
				Thinking:  strings.Repeat("The file may hold it. ", 9),
				ToolCalls: []session.ToolCall{{ID: fmt.Sprintf("call_%d", step), Name: "read_file", Arguments: fmt.Sprintf(`{"path":"src/file%d.go"}`, step)}},
			}
		case i == 0:
			t.User = &session.UserTurn{Text: "Find where the configuration is read, and explain it."}
		default:
			u := &session.UserTurn{ToolResults: []session.ToolResult{{
				CallID: fmt.Sprintf("call_%d", step-1), Name: "read_file", Status: session.ResultOK,
				Text: strings.Repeat("func load(path string) (Config, error) {\n\t// \"quoted\" <tag>\n", 16),
			}}}
			if step%10 == 0 {
				u.Mail = []session.Mail{{Sender: session.Sender{Kind: session.SenderUser, Name: "ann"}, Body: session.MailBody{Kind: session.MailUserMessage, Text: "Also look at the tests."}}}
			}
			t.User = u
		}
	}
	return turns
}

func benchModel(b *testing.B) *llm.Client {
	c, err := llm.New(llm.Config{BaseURL: "http://model.invalid/v1", HTTPClient: &http.Client{Transport: answerAtOnce{}}})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// answerAtOnce reads a request's body and answers with a short completion.
type answerAtOnce struct{}

const benchCompletion = `{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`

func (answerAtOnce) RoundTrip(r *http.Request) (*http.Response, error) {
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		return nil, err
	}
	r.Body.Close()
	return completion(r), nil
}

func completion(r *http.Request) *http.Response {
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"application/json"}},
		Body:       io.NopCloser(strings.NewReader(benchCompletion)),
		Request:    r,
	}
}
