package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/tools/fakellm"
)

// A session driven far past its model's window keeps answering: every
// request stays under the window, the compactions are turns of the log
// with the turns they cover still there, and the summary is what later
// requests start from.
func TestASessionPastItsWindowCompactsAndKeepsEveryTurn(t *testing.T) {
	t.Parallel()
	k := newKernel(t, onSQLite, fakellm.Rules{ContextWindow: 4000, Default: &fakellm.Reply{Text: "done"}})
	runner.LearnWindow(k.run, "bench-model", 4000)
	ctx := context.Background()
	id := k.create(t, "start")
	k.wait(t, id)
	line := strings.Repeat("the quick brown fox jumps over the lazy dog ", 10) // 440 bytes
	const messages = 100
	for i := range messages {
		if _, _, err := k.run.PostMessage(ctx, "me", id, runner.Message{Text: fmt.Sprintf("message %d: %s", i, line)}, runner.RunOptions{}, nil); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if v := k.wait(t, id); v.Meta.Status != session.StatusReady {
			t.Fatalf("message %d: session %s (%s)", i, v.Meta.Status, v.Meta.StatusReason)
		}
	}
	v := k.wait(t, id)
	var compactions, users int
	for _, turn := range v.Turns {
		switch {
		case turn.Compaction != nil:
			compactions++
			c := turn.Compaction
			if c.TokensAfter >= c.TokensBefore {
				t.Errorf("turn %d: compaction from %d to %d tokens", turn.Index, c.TokensBefore, c.TokensAfter)
			}
			if c.Summary != "" && (c.SummaryEnd >= turn.Index || !strings.Contains(c.Summary, "the user asked")) {
				t.Errorf("turn %d: summary of the turns before %d: %q", turn.Index, c.SummaryEnd, c.Summary)
			}
		case turn.User != nil:
			users++
		}
	}
	if compactions == 0 {
		t.Fatal("no compaction")
	}
	if users != messages+1 {
		t.Errorf("%d user turns kept, want %d", users, messages+1)
	}
	for _, req := range k.fake.Requests() {
		if req.ContextExceeded() {
			t.Errorf("request %d weighs %d tokens, over the window", req.Index, req.PromptTokens)
		}
	}
	reqs := k.fake.Requests()
	if last := reqs[len(reqs)-1]; !sentSummary(last) || !strings.Contains(string(last.Body), "message 99") {
		t.Error("the last request does not start from a summary and end with the last message")
	}
	t.Logf("%d turns, %d compactions, %d requests", len(v.Turns), compactions, len(reqs))
}

// converse posts messages to a session one run at a time.
func converse(t *testing.T, k *kernel, id string, n int, text func(i int) string) {
	t.Helper()
	for i := range n {
		if _, _, err := k.run.PostMessage(context.Background(), "me", id, runner.Message{Text: text(i)}, runner.RunOptions{}, nil); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if v := k.wait(t, id); v.Meta.Status != session.StatusReady {
			t.Fatalf("message %d: session %s (%s)", i, v.Meta.Status, v.Meta.StatusReason)
		}
	}
}

func numbered(i int) string {
	return fmt.Sprintf("message %d: %s", i, strings.Repeat("the quick brown fox jumps over the lazy dog ", 10))
}

// sentSummary reports whether a request starts from a summary.
func sentSummary(req fakellm.Request) bool {
	for _, m := range req.Messages {
		if strings.HasPrefix(m.Content, "[Summary of the earlier conversation") {
			return true
		}
	}
	return false
}

// A fork at a turn before a compaction goes on from the whole history:
// its requests hold the turns the compaction summarised, and no summary.
func TestAForkBeforeACompactionContinuesUncompacted(t *testing.T) {
	t.Parallel()
	k := newKernel(t, onSQLite, answer)
	runner.LearnWindow(k.run, "bench-model", 4000)
	ctx := context.Background()
	id := k.create(t, "start")
	k.wait(t, id)
	converse(t, k, id, 30, numbered)
	v := k.wait(t, id)
	first := -1
	for _, turn := range v.Turns {
		if turn.Compaction != nil {
			first = turn.Index
			break
		}
	}
	if first < 0 {
		t.Fatal("no compaction")
	}
	if last := k.fake.Requests()[len(k.fake.Requests())-1]; !sentSummary(last) {
		t.Fatal("the compacted session's last request holds no summary")
	}
	// Newest-first: keep the turns up to the sixth.
	at := len(v.Turns) - 6
	fork, err := k.run.ForkSession(ctx, "me", id, runner.ForkRequest{AtTurn: &at})
	if err != nil {
		t.Fatal(err)
	}
	k.fake.Reset()
	converse(t, k, fork.Meta.ID, 1, func(int) string { return "after the fork" })
	reqs := k.fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests after the fork, want 1", len(reqs))
	}
	if sentSummary(reqs[0]) {
		t.Error("the fork's request starts from a summary")
	}
	if !strings.Contains(string(reqs[0].Body), "message 0:") {
		t.Error("the fork's request lacks the first message")
	}
}

// Compact on an idle session summarises it at once, as a run of its
// own, and says so; on a running session it waits for the next model
// call; with nothing to fold it says so.
func TestCompactByHand(t *testing.T) {
	t.Parallel()
	k := newKernel(t, onSQLite, answer)
	ctx := context.Background()
	id := k.create(t, "start")
	k.wait(t, id)
	if _, err := k.run.Compact(ctx, "me", id, ""); errs.CodeOf(err) != "nothing_to_compact" {
		t.Fatalf("compacting a one-exchange session: %v, want nothing_to_compact", err)
	}
	converse(t, k, id, 6, numbered)
	done, err := k.run.Compact(ctx, "me", id, "keep the numbers")
	if err != nil {
		t.Fatal(err)
	}
	if done.Pending || done.Turn == nil || done.Turn.Compaction == nil {
		t.Fatalf("compact answered %+v, want the compaction turn", done)
	}
	c := done.Turn.Compaction
	if c.Reason != session.CompactManual || c.Instruction != "keep the numbers" || c.SummarizedTurns == 0 || c.Summary == "" {
		t.Errorf("compaction %+v", c)
	}
	if done.Meta.Status != session.StatusReady {
		t.Errorf("status after compact: %s", done.Meta.Status)
	}
	reqs := k.fake.Requests()
	if !strings.Contains(string(reqs[len(reqs)-1].Body), "Instruction: keep the numbers") {
		t.Error("the summary request does not carry the instruction")
	}
	// The next message starts from the summary.
	converse(t, k, id, 1, func(int) string { return "go on" })
	reqs = k.fake.Requests()
	if !sentSummary(reqs[len(reqs)-1]) {
		t.Error("the request after the compaction holds no summary")
	}
	if v := k.wait(t, id); v.Meta.Usage.Prompt == 0 || v.Meta.TurnCount != len(v.Turns) {
		t.Errorf("meta after compaction: %+v", v.Meta)
	}
}

// overflowBody is OpenAI's answer to a request past the window.
const overflowBody = `{"error":{"message":"This model's maximum context length is 3000 tokens. However, your messages resulted in 3512 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`

func overflowing(times int) fakellm.Rules {
	return fakellm.Rules{
		Rules: []fakellm.Rule{{
			Name:  "too long",
			Match: fakellm.Match{UserContains: "big question"},
			Times: times,
			Reply: fakellm.Reply{Error: &fakellm.HTTPError{Status: 400, Body: overflowBody}},
		}},
		Default: &fakellm.Reply{Text: "done"},
	}
}

// A provider's context_length_exceeded compacts the session once and
// sends the call again: the session answers, and the compaction says why.
func TestAnOverflowCompactsAndRetriesOnce(t *testing.T) {
	t.Parallel()
	k := newKernel(t, onSQLite, overflowing(1))
	id := k.create(t, "start")
	k.wait(t, id)
	converse(t, k, id, 4, numbered)
	converse(t, k, id, 1, func(int) string { return "big question" })
	v := k.wait(t, id)
	var c *session.Compaction
	for _, turn := range v.Turns {
		if turn.Compaction != nil {
			c = turn.Compaction
		}
	}
	if c == nil || c.Reason != session.CompactOverflow || c.Summary == "" {
		t.Fatalf("compaction %+v, want a summary for an overflow", c)
	}
	if last := v.Turns[len(v.Turns)-1]; last.LLM == nil || last.LLM.Text != "done" {
		t.Errorf("the session's last turn is %+v, want the answer", last)
	}
	if w, ok := k.run.LearnedWindow("bench-model"); !ok || w != 3000 {
		t.Errorf("learned window %d %v, want 3000", w, ok)
	}
}

// A session whose retry overflows too fails with context_length_exceeded,
// and goes on at its next Resume.
func TestASessionFailedForItsWindowRecovers(t *testing.T) {
	t.Parallel()
	k := newKernel(t, onSQLite, overflowing(2))
	ctx := context.Background()
	id := k.create(t, "start")
	k.wait(t, id)
	converse(t, k, id, 4, numbered)
	if _, _, err := k.run.PostMessage(ctx, "me", id, runner.Message{Text: "big question"}, runner.RunOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	v := k.wait(t, id)
	if v.Meta.Status != session.StatusFailed {
		t.Fatalf("status %s (%s), want failed", v.Meta.Status, v.Meta.StatusReason)
	}
	if _, err := k.run.Resume(ctx, "me", id, nil); err != nil {
		t.Fatal(err)
	}
	v = k.wait(t, id)
	if v.Meta.Status != session.StatusReady {
		t.Fatalf("status after resume %s (%s), want ready", v.Meta.Status, v.Meta.StatusReason)
	}
	if last := v.Turns[len(v.Turns)-1]; last.LLM == nil || last.LLM.Text != "done" {
		t.Errorf("the session's last turn is %+v, want the answer", last)
	}
}

// A helper's child is a session of its own: past its window it compacts
// on its own, its parent untouched, and what its summary cost is spent
// from the tree.
func TestAHelpersChildCompactsOnItsOwn(t *testing.T) {
	t.Parallel()
	rules := fakellm.Rules{
		Default: &fakellm.Reply{Text: "done"},
		Rules: []fakellm.Rule{{Match: fakellm.Match{UserContains: "go"}, Times: 1, Reply: fakellm.Reply{
			ToolCalls: []fakellm.ToolCall{{Name: "prompt_agent_helper", Arguments: json.RawMessage(`{"prompt":"work"}`)}},
		}}},
	}
	k := newKernel(t, onSQLite, rules)
	runner.LearnWindow(k.run, "bench-model", 4000)
	ctx := context.Background()
	parent := createOn(t, k.run, "boss", "go")
	pv := k.wait(t, parent)
	children, _, err := k.run.ListSessions(ctx, "me", store.ListFilter{ParentID: parent})
	if err != nil || len(children) != 1 {
		t.Fatalf("children %v, %v", children, err)
	}
	child := children[0].ID
	converse(t, k, child, 30, numbered)
	cv := k.wait(t, child)
	var summary *session.Compaction
	for _, turn := range cv.Turns {
		if turn.Compaction != nil && turn.Compaction.Summary != "" {
			summary = turn.Compaction
		}
	}
	if summary == nil {
		t.Fatal("the child did not compact")
	}
	pv = k.wait(t, parent)
	for _, turn := range pv.Turns {
		if turn.Compaction != nil {
			t.Fatal("the parent compacted")
		}
	}
	if cv.Meta.Usage.Prompt <= summary.Usage.Prompt {
		t.Errorf("the child's usage %+v does not hold its summary's %+v", cv.Meta.Usage, summary.Usage)
	}
}

// The measure of every request is at least what the provider then
// reports as its prompt tokens, and not far above: the provider's figure
// for the previous call, plus the new turns estimated high. The offline
// model counts about four characters a token, tools included.
func TestEveryRequestIsMeasuredAtLeastAsTheProviderCountsIt(t *testing.T) {
	t.Parallel()
	texts := []string{
		"Plain prose: the committee met on Tuesday and agreed to move the review to the first week of March, pending the budget.",
		`{"id": "3f2a9c1e-8b7d-4e2f-a1c3-5d6e7f8a9b0c", "items": [{"sku": "A-1042", "qty": 3, "price": 19.99}, {"sku": "B-77", "qty": 1}]}`,
		"func (s *Server) handle(w http.ResponseWriter, r *http.Request) {\n\tif err := s.check(r); err != nil {\n\t\thttp.Error(w, err.Error(), 400)\n\t}\n}",
		"会議は火曜日に行われ、三月の第一週にレビューを移すことで合意しました。予算次第です。",
		"drwxr-xr-x  2 root root 4096 Dec  6 10:12 bin\n-rw-r--r--  1 root root  220 Dec  6 10:12 .bash_logout\n-rw-r--r--  1 root root 3526 Dec  6 10:12 .bashrc",
	}
	rules := fakellm.Rules{
		Rules: []fakellm.Rule{{Match: fakellm.Match{UserContains: "tool"}, Times: 1, Reply: fakellm.Reply{
			Text:      "Calling the tool.",
			ToolCalls: []fakellm.ToolCall{{Name: "bash_noop", Arguments: json.RawMessage(`{}`)}},
		}}},
		Default: &fakellm.Reply{Text: "Understood: {{last_user}}"},
	}
	var inputs []int64
	var mu sync.Mutex
	k := newKernelWith(t, onSQLite, rules, kernelOptions{onStep: func(s runner.StepStats) {
		mu.Lock()
		inputs = append(inputs, s.Input)
		mu.Unlock()
	}})
	id := k.create(t, "use the tool")
	k.wait(t, id)
	converse(t, k, id, 3*len(texts), func(i int) string { return texts[i%len(texts)] })
	reqs := k.fake.Requests()
	mu.Lock()
	defer mu.Unlock()
	if len(inputs) != len(reqs) {
		t.Fatalf("%d steps measured, %d requests", len(inputs), len(reqs))
	}
	worst := 0.0
	for i, req := range reqs {
		ratio := float64(inputs[i]) / float64(req.PromptTokens)
		if inputs[i] < int64(req.PromptTokens) || ratio > 3 {
			t.Errorf("request %d measured %d tokens; the provider counted %d", i, inputs[i], req.PromptTokens)
		}
		worst = max(worst, ratio)
	}
	t.Logf("%d requests, the measure at most %.2f times the provider's count", len(reqs), worst)
}

// A summary call is cut by Cancel like any model call: the run stops, no
// compaction is stored, and the next message compacts from scratch.
func TestCancelCutsASummaryCall(t *testing.T) {
	t.Parallel()
	rules := fakellm.Rules{
		Rules:   []fakellm.Rule{{Name: "slow summary", Match: fakellm.Match{Compaction: true}, Times: 1, Reply: fakellm.Reply{InitialDelay: "1m", Text: "too late"}}},
		Default: &fakellm.Reply{Text: "done"},
	}
	k := newKernel(t, onSQLite, rules)
	runner.LearnWindow(k.run, "bench-model", 4000)
	ctx := context.Background()
	id := k.create(t, "start")
	k.wait(t, id)
	i := 0
	for ; i < 60 && !summarising(k.fake.Requests()); i++ {
		if _, _, err := k.run.PostMessage(ctx, "me", id, runner.Message{Text: numbered(i)}, runner.RunOptions{}, nil); err != nil {
			t.Fatal(err)
		}
		for {
			v, err := k.run.GetSession(ctx, "me", id, false, 0)
			if err != nil {
				t.Fatal(err)
			}
			if v.Meta.Status != session.StatusRunning || summarising(k.fake.Requests()) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if !summarising(k.fake.Requests()) {
		t.Fatal("no summary asked for")
	}
	meta, err := k.run.CancelRun(ctx, "me", id)
	if err != nil || meta.Status != session.StatusReady || meta.StatusReason != runner.StopCancelled {
		t.Fatalf("cancel: %+v, %v", meta, err)
	}
	v := k.wait(t, id)
	for _, turn := range v.Turns {
		if turn.Compaction != nil {
			t.Fatal("a cancelled summary was stored")
		}
	}
	converse(t, k, id, 1, numbered)
	v = k.wait(t, id)
	if last := v.Turns[len(v.Turns)-1]; last.LLM == nil || last.LLM.Text != "done" {
		t.Fatalf("last turn %+v", last)
	}
	compacted := false
	for _, turn := range v.Turns {
		compacted = compacted || turn.Compaction != nil && turn.Compaction.Summary != ""
	}
	if !compacted {
		t.Error("the message after the cancel did not compact")
	}
}

// summarising reports whether the model was asked for a summary.
func summarising(reqs []fakellm.Request) bool {
	for _, r := range reqs {
		if r.IsCompaction() {
			return true
		}
	}
	return false
}

// Compact on a running session answers pending, and the run compacts
// before its next model call.
func TestCompactOnARunningSessionWaitsForTheNextCall(t *testing.T) {
	t.Parallel()
	rules := fakellm.Rules{
		Rules: []fakellm.Rule{{Match: fakellm.Match{UserContains: "use the tool"}, Times: 1, Reply: fakellm.Reply{
			Text: strings.Repeat("slowly ", 40), ChunkSize: 7, ChunkDelay: "20ms",
			ToolCalls: []fakellm.ToolCall{{Name: "bash_noop", Arguments: json.RawMessage(`{}`)}},
		}}},
		Default: &fakellm.Reply{Text: "done"},
	}
	k := newKernel(t, onSQLite, rules)
	ctx := context.Background()
	id := k.create(t, "start")
	k.wait(t, id)
	converse(t, k, id, 3, numbered)
	if _, _, err := k.run.PostMessage(ctx, "me", id, runner.Message{Text: "use the tool"}, runner.RunOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	done, err := k.run.Compact(ctx, "me", id, "")
	if err != nil || !done.Pending || done.Turn != nil {
		t.Fatalf("compact a running session: %+v, %v", done, err)
	}
	v := k.wait(t, id)
	n := len(v.Turns)
	// ... the tool call, its result, the compaction, the answer.
	if n < 2 || v.Turns[n-2].Compaction == nil || v.Turns[n-2].Compaction.Reason != session.CompactManual || v.Turns[n-1].LLM == nil {
		t.Fatalf("the run's last turns: %+v, %+v", v.Turns[n-2], v.Turns[n-1])
	}
}

// A provider whose window is far smaller than the model's known one (a
// proxy, a local deployment) refuses once: the server learns the window
// from its message, compacts, and keeps every later request, its output
// included, inside it.
func TestAWindowLearnedFromTheProviderHoldsEveryLaterRequest(t *testing.T) {
	t.Parallel()
	k := newKernel(t, onSQLite, fakellm.Rules{ContextWindow: 4000, Default: &fakellm.Reply{Text: "done"}})
	id := createOn(t, k.run, "mini", "start")
	k.wait(t, id)
	converse(t, k, id, 60, numbered)
	refused := 0
	for _, req := range k.fake.Requests() {
		if req.ContextExceeded() {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("the provider refused %d requests, want only the one that taught the window", refused)
	}
	if w, ok := k.run.LearnedWindow("gpt-4o-mini"); !ok || w != 4000 {
		t.Errorf("learned %d %v, want 4000", w, ok)
	}
}
