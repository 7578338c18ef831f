package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
)

// Issue 20, item 16: an agent file with an agents-exe field this server
// does not implement and a misspelt one loads, and its descriptor says
// so (GetAgent, ListAgents and the JSON route alike); once the file is
// fixed, ReloadAgents clears them.
func TestGetAgentCarriesTheWarningsOfItsFile(t *testing.T) {
	t.Parallel()
	dir := copyTestdata(t)
	path := filepath.Join(dir, "boss.json")
	clean, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	editAgent(t, path, map[string]any{
		"wakeOn":  []any{"mail"},
		"maxStep": 3,
	})
	e := start(t, fakellm.Rules{}, withAgentsDir(dir))

	want := []*agentsv1.AgentLoadError{
		{File: path, Field: "contents.maxStep", Reason: `unknown field; ignored (did you mean "maxSteps"?)`},
		{File: path, Field: "contents.wakeOn", Reason: "not supported by this server; ignored"},
	}
	check := func(how string, got []*agentsv1.AgentLoadError, want []*agentsv1.AgentLoadError) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: warnings = %v, want %v", how, got, want)
			return
		}
		for i := range want {
			if got[i].GetFile() != want[i].GetFile() || got[i].GetField() != want[i].GetField() || got[i].GetReason() != want[i].GetReason() {
				t.Errorf("%s: warning %d = %v, want %v", how, i, got[i], want[i])
			}
		}
	}
	get := func() []*agentsv1.AgentLoadError {
		t.Helper()
		res, err := e.agents.GetAgent(ctxFor(t), connect.NewRequest(&agentsv1.GetAgentRequest{Slug: "boss"}))
		if err != nil {
			t.Fatal(err)
		}
		return res.Msg.GetAgent().GetWarnings()
	}
	getJSON := func() []*agentsv1.AgentLoadError {
		t.Helper()
		status, _, body := e.do(http.MethodGet, "/v1/agents/boss", "")
		if status != http.StatusOK {
			t.Fatalf("GET /v1/agents/boss = %d %s", status, body)
		}
		var d struct {
			Warnings []struct{ File, Field, Reason string } `json:"warnings"`
		}
		if err := json.Unmarshal(body, &d); err != nil {
			t.Fatal(err)
		}
		out := []*agentsv1.AgentLoadError{}
		for _, w := range d.Warnings {
			out = append(out, &agentsv1.AgentLoadError{File: w.File, Field: w.Field, Reason: w.Reason})
		}
		return out
	}

	check("GetAgent", get(), want)
	check("GET /v1/agents/boss", getJSON(), want)
	list, err := e.agents.ListAgents(ctxFor(t), connect.NewRequest(&agentsv1.ListAgentsRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list.Msg.GetAgents() {
		if a.GetSlug() == "boss" {
			check("ListAgents", a.GetWarnings(), want)
		} else {
			check("ListAgents "+a.GetSlug(), a.GetWarnings(), nil)
		}
	}

	if err := os.WriteFile(path, clean, 0o644); err != nil {
		t.Fatal(err)
	}
	reload, err := e.agents.ReloadAgents(ctxFor(t), connect.NewRequest(&agentsv1.ReloadAgentsRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range reload.Msg.GetAgents() {
		check("ReloadAgents "+a.GetSlug(), a.GetWarnings(), nil)
	}
	check("GetAgent after the reload", get(), nil)
	check("GET /v1/agents/boss after the reload", getJSON(), nil)
}
