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
