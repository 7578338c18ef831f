package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
)

var flavors = []agentfile.Flavor{agentfile.FlavorOpenAIv1, agentfile.FlavorMistralV1, agentfile.FlavorKimiV1, agentfile.FlavorClaudeV1}

// wideHistory has every kind of turn a history holds: a prompt with an
// image and a text attachment, model turns with text, thinking and tool
// calls (or none of them: a cut answer), results of each status, results
// with mail, mail alone.
func wideHistory() []session.Turn {
	mail := []session.Mail{
		{Sender: session.Sender{Kind: session.SenderUser, Name: "ann"}, Body: session.MailBody{Kind: session.MailUserMessage, Text: "Also <b> & \"c\"."}},
		{Sender: session.Sender{Kind: session.SenderSession, Name: "s-2"}, Body: session.MailBody{Kind: session.MailAgentMessage, Text: "done", Agent: "helper"}},
	}
	call := func(id string) []session.ToolCall {
		return []session.ToolCall{{ID: id, Name: "read_file", Arguments: `{"path":"a.txt"}`}, {ID: id + "b", Name: "list_dir"}}
	}
	results := func(id string, status session.ResultStatus) []session.ToolResult {
		return []session.ToolResult{{CallID: id, Name: "read_file", Text: "contents", Status: session.ResultOK}, {CallID: id + "b", Name: "list_dir", Text: "a.txt\nb.txt", Status: status}}
	}
	turns := []session.Turn{
		{User: &session.UserTurn{Text: "What is in these?", Attachments: []session.Attachment{
			{Name: "a.png", MediaType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
			{Name: "notes.txt", MediaType: "text/plain", Data: []byte("some notes, é")},
		}}},
		{LLM: &session.LLMTurn{Text: "Let me look.", Thinking: "Read both.", ToolCalls: call("call_1")}},
		{User: &session.UserTurn{ToolResults: results("call_1", session.ResultError), Mail: mail}},
		{LLM: &session.LLMTurn{ToolCalls: call("D681PevKs")}},
		{User: &session.UserTurn{ToolResults: results("D681PevKs", session.ResultCancelled)}},
		{LLM: &session.LLMTurn{Thinking: "cut before any text", Interrupted: true}},
		{User: &session.UserTurn{Mail: mail[:1]}},
		{LLM: &session.LLMTurn{Text: "One more.", ToolCalls: call("call_3")}},
		{User: &session.UserTurn{Text: "and this", ToolResults: results("call_3", session.ResultAborted), Mail: mail[1:]}},
		{LLM: &session.LLMTurn{Text: "Done: <all> of it."}},
		{User: &session.UserTurn{Text: "Thanks.", Attachments: []session.Attachment{{Name: "b.jpg", MediaType: "image/jpeg", Data: []byte{0xff, 0xd8}}}}},
	}
	for i := range turns {
		turns[i].Index = i
	}
	return turns
}

func testAgent(flavor agentfile.Flavor, mailInToolResult bool, system ...string) *catalog.Agent {
	return &catalog.Agent{
		Agent: &agentfile.Agent{SystemPrompt: system, MailInToolResult: mailInToolResult},
		Model: catalog.Model{Flavor: flavor, Name: "m"},
	}
}

// renderAll renders the whole history, as every step did before the
// prompt was kept.
func renderAll(agent *catalog.Agent, turns []session.Turn) []llm.Message {
	var msgs []llm.Message
	if len(agent.SystemPrompt) > 0 {
		msgs = append(msgs, llm.SystemMessage(strings.Join(agent.SystemPrompt, "\n")))
	}
	for _, t := range turns {
		msgs = appendTurn(msgs, t, agent.MailInToolResult)
	}
	return msgs
}

// TestBuildRequestKeepsThePrompt grows a session one turn at a time and
// checks each request against the history rendered whole: the same
// messages, encoded as llm encodes them for the agent's flavor, and so the
// same body on the wire. Requests already made stay as they were.
func TestBuildRequestKeepsThePrompt(t *testing.T) {
	t.Parallel()
	for _, flavor := range flavors {
		for _, mailInToolResult := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/mailInToolResult=%v", flavor, mailInToolResult), func(t *testing.T) {
				t.Parallel()
				agent := testAgent(flavor, mailInToolResult, "You are terse.", "Be exact.")
				turns := wideHistory()
				a := &actor{id: "s-1", agent: agent, st: &state{}}
				var reqs []llm.Request
				var wants [][]llm.Message
				for n := 1; n <= len(turns); n++ {
					a.st.turns = turns[:n]
					req := a.buildRequest()
					checkRequest(t, agent, req, renderAll(agent, turns[:n]))
					reqs, wants = append(reqs, req), append(wants, renderAll(agent, turns[:n]))
				}
				for i, req := range reqs {
					if !reflect.DeepEqual(req.Messages, wants[i]) {
						t.Errorf("request %d changed after later steps", i)
					}
				}
			})
		}
	}
}

// TestBuildRequestRendersAgainWhenItsInputsChange changes, mid-session,
// each thing the rendering depends on besides new turns.
func TestBuildRequestRendersAgainWhenItsInputsChange(t *testing.T) {
	t.Parallel()
	turns := wideHistory()
	other := wideHistory() // the same history in new turns
	other[4].User.ToolResults[0].Text = "other contents"
	tests := []struct {
		name   string
		change func(a *actor)
	}{
		{"flavor", func(a *actor) { a.agent = testAgent(agentfile.FlavorMistralV1, false, "You are terse.") }},
		{"mailInToolResult", func(a *actor) { a.agent = testAgent(agentfile.FlavorKimiV1, true, "You are terse.") }},
		{"system prompt", func(a *actor) { a.agent = testAgent(agentfile.FlavorKimiV1, false, "You are verbose.") }},
		{"no system prompt", func(a *actor) { a.agent = testAgent(agentfile.FlavorKimiV1, false) }},
		{"unknown flavor", func(a *actor) { a.agent = testAgent("GeminiV1", false, "You are terse.") }},
		{"history replaced", func(a *actor) { a.st = &state{turns: other[:8]} }},
		{"history shorter", func(a *actor) { a.st = &state{turns: turns[:4]} }},
		{"history replaced, longer", func(a *actor) { a.st = &state{turns: other} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := &actor{id: "s-1", agent: testAgent(agentfile.FlavorKimiV1, false, "You are terse."), st: &state{}}
			for n := 1; n <= 6; n++ {
				a.st.turns = turns[:n]
				a.buildRequest()
			}
			tt.change(a)
			checkRequest(t, a.agent, a.buildRequest(), renderAll(a.agent, a.st.turns))
			a.st.turns = append(a.st.turns[:len(a.st.turns):len(a.st.turns)], turns[len(a.st.turns)%len(turns)])
			checkRequest(t, a.agent, a.buildRequest(), renderAll(a.agent, a.st.turns))
		})
	}
}

// A history that cannot be encoded is sent unencoded, so that the client
// reports why, as it did before.
func TestBuildRequestLeavesBadHistoryToTheClient(t *testing.T) {
	t.Parallel()
	agent := testAgent(agentfile.FlavorOpenAIv1, false)
	turns := wideHistory()[:3]
	turns[2].User = &session.UserTurn{ToolResults: []session.ToolResult{{Name: "read_file", Text: "no call id"}}}
	a := &actor{id: "s-1", agent: agent, st: &state{turns: turns[:2]}}
	if req := a.buildRequest(); req.Encoded == nil {
		t.Fatal("a good history was not encoded")
	}
	a.st.turns = turns
	req := a.buildRequest()
	if req.Encoded != nil {
		t.Errorf("Encoded = %d messages, want none", len(req.Encoded))
	}
	client, _ := captureClient(t, agent.Model.Flavor)
	if _, err := client.Complete(context.Background(), req); err == nil || !strings.Contains(err.Error(), "tool call id") {
		t.Errorf("Complete: %v, want the missing tool call id", err)
	}
}

// checkRequest checks req against the messages want and the agent.
func checkRequest(t *testing.T, agent *catalog.Agent, req llm.Request, want []llm.Message) {
	t.Helper()
	if req.Model != "m" || req.SessionID != "s-1" || len(req.Tools) != 0 {
		t.Errorf("request for %s, session %s, with %d tools", req.Model, req.SessionID, len(req.Tools))
	}
	if !reflect.DeepEqual(req.Messages, want) {
		t.Fatalf("messages\n got %+v\nwant %+v", req.Messages, want)
	}
	encoded, err := llm.EncodeMessages(modelFlavor(agent.Model), want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(req.Encoded, encoded) {
		t.Errorf("encoded messages differ from the history encoded whole")
	}
	client, bodies := captureClient(t, agent.Model.Flavor)
	unencoded := req
	unencoded.Encoded = nil
	for _, r := range []llm.Request{req, unencoded} {
		if _, err := client.Complete(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if got := bodies(); len(got) != 2 || !bytes.Equal(got[0], got[1]) {
		t.Errorf("bodies differ with and without encoded messages:\n%s", bytes.Join(got, []byte("\n")))
	}
}

// captureClient is a client of flavor whose transport keeps each body.
func captureClient(t *testing.T, flavor agentfile.Flavor) (*llm.Client, func() [][]byte) {
	t.Helper()
	rec := &recorder{}
	f, _ := llm.ParseFlavor(string(flavor))
	c, err := llm.New(llm.Config{BaseURL: "http://model.invalid/v1", Flavor: f, MaxAttempts: 1, HTTPClient: &http.Client{Transport: rec}})
	if err != nil {
		t.Fatal(err)
	}
	return c, rec.all
}

type recorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.bodies = append(r.bodies, body)
	r.mu.Unlock()
	return completion(req), nil
}

func (r *recorder) all() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bodies
}
