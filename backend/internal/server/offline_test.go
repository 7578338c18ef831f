package server_test

import (
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// An agent whose key the server lacks talks to the offline model, and its
// descriptor says so: clients show that, not a missing key in red.
func TestAnAgentOnTheOfflineModelSaysSo(t *testing.T) {
	e := start(t, bossScript())
	res, err := e.agents.GetAgent(ctxFor(t), connect.NewRequest(&agentsv1.GetAgentRequest{Slug: "boss"}))
	if err != nil {
		t.Fatal(err)
	}
	m := res.Msg.GetAgent().GetModel()
	if !m.GetOffline() || m.GetApiKeyPresent() || m.GetUrl() != e.model.URL() {
		t.Errorf("model = %v, want the offline model at %s with the key missing", m, e.model.URL())
	}
}
