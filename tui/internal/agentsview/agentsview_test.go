package agentsview

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/theme"
)

// An agent whose key the server lacks is answered by the offline model
// when the server has one: the details say so, as the web app does,
// rather than show the key as missing, as if the agent could not answer.
func TestTheDetailsSayTheOfflineModelAnswers(t *testing.T) {
	st := theme.New(true).App
	model := &agentsv1.ModelDescriptor{Flavor: "OpenAIv1", Name: "gpt-4o-mini", Url: "http://127.0.0.1:7421/v1", ApiKeyId: "openai"}
	agent := &agentsv1.AgentDescriptor{Slug: "boss", Model: model}

	missing := ansi.Strip(describe(st, agent, 100))
	if !strings.Contains(missing, "openai (missing)") {
		t.Errorf("without the key and no offline model:\n%s", missing)
	}

	model.Offline = true
	offline := ansi.Strip(describe(st, agent, 100))
	if strings.Contains(offline, "missing") || !strings.Contains(offline, "the offline model answers") {
		t.Errorf("answered by the offline model:\n%s", offline)
	}
}

// The model's limits show once the server knows them, and nothing of
// them before.
func TestTheDetailsNameTheModelsWindow(t *testing.T) {
	t.Parallel()
	st := theme.New(true).App
	model := &agentsv1.ModelDescriptor{Flavor: "OpenAIv1", Name: "gpt-4o"}
	agent := &agentsv1.AgentDescriptor{Slug: "boss", Model: model}
	if d := ansi.Strip(describe(st, agent, 120)); strings.Contains(d, "window") {
		t.Errorf("limits shown while the server sends none:\n%s", d)
	}
	model.ContextWindow, model.MaxOutputTokens, model.CompactThreshold, model.LimitsSource = 128000, 16384, 113000, "builtin"
	want := "window  context window 128,000 · max output 16,384 · compacts above 113,000 (builtin)"
	if d := ansi.Strip(describe(st, agent, 120)); !strings.Contains(d, want) {
		t.Errorf("details lack %q:\n%s", want, d)
	}
}

// An agent's budget, which its sessions get when their client sets none,
// shows in its details.
func TestTheDetailsNameTheAgentsBudget(t *testing.T) {
	t.Parallel()
	st := theme.New(true).App
	agent := &agentsv1.AgentDescriptor{Slug: "boss", Model: &agentsv1.ModelDescriptor{Name: "gpt-4o"}}
	if d := ansi.Strip(describe(st, agent, 120)); strings.Contains(d, "budget") {
		t.Errorf("a budget shown for an agent without one:\n%s", d)
	}
	tokens, cost := int64(50000), 1.5
	agent.Budget = &agentsv1.AgentBudget{Tokens: &tokens, CostUsd: &cost}
	want := "budget  50,000 tokens · $1.50 a session tree, unless its client sets one"
	if d := ansi.Strip(describe(st, agent, 120)); !strings.Contains(d, want) {
		t.Errorf("details lack %q:\n%s", want, d)
	}
}
