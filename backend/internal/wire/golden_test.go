package wire

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/backend/internal/session"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenMetas are session metadata of every shape session.updated
// carries: a budget or none, a cost or none, a root or a child.
func goldenMetas() map[string]session.Meta {
	created := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	cost, limit := session.Nanos(1_250_000), session.Nanos(9_000_000_000)
	tokens := int64(50_000)
	plain := session.Meta{
		ID: "s1", Agent: "helper", Owner: "local", Title: "a title", Status: session.StatusRunning,
		TurnCount: 3, Usage: session.Usage{Prompt: 120, Completion: 30}, Created: created, Updated: created.Add(time.Second),
	}
	full := plain
	full.Status, full.StatusReason = session.StatusPaused, "budget"
	full.ParentID, full.ForkedFrom, full.RootID, full.Depth = "p1", "f1", "r1", 2
	full.Usage = session.Usage{Prompt: 1000, Completion: 200, Cached: 50, Reasoning: 7, Cost: &cost}
	full.PendingMail, full.PendingCalls = 1, 2
	full.AllowedTools = []string{"ls", "cat"}
	full.AgentVersion, full.AgentPin, full.AgentGen = 4, 3, 2
	full.Budget = &session.Budget{Tokens: &tokens, Cost: &limit, AutoResume: true}
	full.TreeSpend = session.Spend{Tokens: 60_000, Cost: 2_000_000}
	unlimited := plain
	unlimited.Budget = &session.Budget{AutoResume: true}
	unlimited.TreeSpend = session.Spend{Tokens: 10}
	return map[string]session.Meta{"plain": plain, "full": full, "unlimited": unlimited}
}

// goldenTurns are turns of every kind as events carry them.
func goldenTurns() map[string]session.Turn {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cost := session.Nanos(3_000)
	return map[string]session.Turn{
		"user": userTurn(),
		"llm": {Index: 5, Created: created, LLM: &session.LLMTurn{
			Text: "done", Thinking: "hmm", Model: "m", FinishReason: "stop", AgentVersion: 2, Duration: 1500 * time.Millisecond,
			Usage:     session.Usage{Prompt: 10, Completion: 5, Cost: &cost},
			ToolCalls: []session.ToolCall{{ID: "c1", Name: "ls", Arguments: `{"a":1}`}, {ID: "c2", Name: "ask", Mode: session.CallDeferred}},
		}},
		"llm-plain":   {Index: 1, Created: created, LLM: &session.LLMTurn{Text: "hi", Model: "m", FinishReason: "stop"}},
		"interrupted": {Index: 7, Created: created, LLM: &session.LLMTurn{Text: "cut", Interrupted: true}},
		"compaction": {Index: 9, Created: created, Compaction: &session.Compaction{
			Reason: session.CompactThreshold, SummaryEnd: 4, Summary: "sum", SummarizedTurns: 4, PruneEnd: 2, PrunedResults: 1,
			TokensBefore: 900, TokensAfter: 100, Model: "m", Usage: session.Usage{Prompt: 5}, Instruction: "keep it",
		}},
	}
}

// TestEventJSONGolden holds the JSON of what session.updated carries,
// the metadata and the head turn, to its golden files byte for byte:
// how the wire form is built may change, what clients read may not.
func TestEventJSONGolden(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, name string, m proto.Message) {
		t.Helper()
		got, err := apijson.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", name+".json")
		if *update {
			if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got)+"\n" != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	for name, m := range goldenMetas() {
		check(t, "meta-"+name, Meta(m))
	}
	for name, turn := range goldenTurns() {
		check(t, "turn-"+name, TurnForEvent(turn))
	}
	metas, turns := goldenMetas(), goldenTurns()
	check(t, "session-updated", &agentsv1.Event{SessionId: "s1", Owner: "local", Body: &agentsv1.Event_SessionUpdated{
		SessionUpdated: &agentsv1.SessionUpdated{Meta: Meta(metas["full"]), HeadTurn: TurnForEvent(turns["llm"])}}})
}
