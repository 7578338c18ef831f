package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/eventually"

	"connectrpc.com/connect"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/server"
	"github.com/agents-os/agents/tools/fakellm"
)

// bearerTransport sends a bearer token with every request.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// mcpNotes collects what the server tells an MCP client on its own.
type mcpNotes struct {
	mu       sync.Mutex
	progress []string
	changed  chan struct{}
}

func (n *mcpNotes) messages() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.progress)
}

// connectMCP connects the SDK's client to /mcp, with token unless it is
// empty.
func (e *env) connectMCP(token string) (*mcp.ClientSession, *mcpNotes, error) {
	return e.connectMCPAt(e.http.URL, token)
}

// connectMCPAt is connectMCP to the server at base.
func (e *env) connectMCPAt(base, token string) (*mcp.ClientSession, *mcpNotes, error) {
	notes := &mcpNotes{changed: make(chan struct{}, 8)}
	c := mcp.NewClient(&mcp.Implementation{Name: "agents-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			notes.mu.Lock()
			defer notes.mu.Unlock()
			notes.progress = append(notes.progress, req.Params.Message)
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case notes.changed <- struct{}{}:
			default:
			}
		},
	})
	h := e.http.Client()
	if token != "" {
		h = &http.Client{Transport: bearerTransport{token: token, next: e.http.Client().Transport}}
	}
	cs, err := c.Connect(ctxFor(e.t), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: h, MaxRetries: -1}, nil)
	if err != nil {
		return nil, nil, err
	}
	e.t.Cleanup(func() { _ = cs.Close() })
	return cs, notes, nil
}

func (e *env) mustConnectMCP(token string) (*mcp.ClientSession, *mcpNotes) {
	e.t.Helper()
	cs, notes, err := e.connectMCP(token)
	if err != nil {
		e.t.Fatalf("connect to /mcp: %v", err)
	}
	return cs, notes
}

// askResult is the structured result of an ask_<slug> tool.
type askResult struct {
	Answer    string `json:"answer"`
	SessionID string `json:"session_id"`
}

func structured(t *testing.T, res *mcp.CallToolResult) askResult {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out askResult
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return out
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func toolNames(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(ctxFor(t), nil)
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	out := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		out[tool.Name] = tool
	}
	return out
}

func TestMCPServesRootAgentsAsToolsAndAsksWithProgress(t *testing.T) {
	t.Parallel()
	e := start(t, bossScript(), withSecurity(server.Security{Tokens: testTokens(t)}))
	cs, notes := e.mustConnectMCP(aliceToken)

	tools := toolNames(t, cs)
	boss, ok := tools["ask_boss"]
	if !ok {
		t.Fatalf("tools = %v, want ask_boss", slices.Sorted(maps.Keys(tools)))
	}
	if boss.Description != "Uses tools and a helper." {
		t.Errorf("ask_boss description = %q, want the agent's announce", boss.Description)
	}
	if _, ok := tools["ask_helper"]; ok {
		t.Error("ask_helper is listed: a helpers-only agent is no tool")
	}
	keeper := tools["ask_keeper"]
	if b, _ := json.Marshal(keeper.InputSchema); !strings.Contains(string(b), "API_TOKEN") {
		t.Errorf("ask_keeper input schema %s does not name its declared param", b)
	}

	params := &mcp.CallToolParams{Name: "ask_boss", Arguments: map[string]any{"prompt": "go"}}
	params.SetProgressToken("p1")
	res, err := cs.CallTool(ctxFor(t), params)
	if err != nil {
		t.Fatalf("call ask_boss: %v", err)
	}
	if res.IsError {
		t.Fatalf("ask_boss failed: %s", text(res))
	}
	out := structured(t, res)
	if !strings.HasPrefix(out.Answer, "done: helper says: what is up") {
		t.Errorf("answer = %q, want the final text", out.Answer)
	}
	if !strings.Contains(text(res), out.Answer) || !strings.Contains(text(res), out.SessionID) {
		t.Errorf("text content %q, want the answer and the session id", text(res))
	}
	got, err := e.clientAs(aliceToken).GetSession(ctxFor(t), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: out.SessionID, MetaOnly: true}))
	if err != nil {
		t.Fatalf("the session the call names: %v", err)
	}
	if m := got.Msg.GetSession().GetMeta(); m.GetOwner() != "alice" || m.GetAgent() != "boss" {
		t.Errorf("session owner %q agent %q, want alice's boss session", m.GetOwner(), m.GetAgent())
	}
	// The client's SDK hands notifications to their handler on a
	// goroutine of their own and a response straight to its caller, so
	// the last progress note may be handled after the call returned.
	for _, want := range []string{"calling bash_echo", "asking the helper helper"} {
		eventually.That(t, fmt.Sprintf("progress %q", want), func() bool { return slices.Contains(notes.messages(), want) })
	}
}

func TestMCPContinuesASessionByItsID(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: bossPrompt}, Reply: fakellm.Reply{Text: "you said {{last_user}}"}},
	}})
	cs, _ := e.mustConnectMCP("")
	ask := func(args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctxFor(t), &mcp.CallToolParams{Name: "ask_boss", Arguments: args})
		if err != nil {
			t.Fatalf("call ask_boss: %v", err)
		}
		return res
	}
	first := structured(t, ask(map[string]any{"prompt": "one"}))
	second := structured(t, ask(map[string]any{"prompt": "two", "session_id": first.SessionID}))
	if second.SessionID != first.SessionID || second.Answer != "you said two" {
		t.Fatalf("second call = %+v, want the answer to two in session %s", second, first.SessionID)
	}
	if n := e.wait(first.SessionID).GetMeta().GetTurnCount(); n != 4 {
		t.Errorf("turns = %d, want both exchanges in the one session", n)
	}

	res, err := cs.CallTool(ctxFor(t), &mcp.CallToolParams{Name: "ask_keeper", Arguments: map[string]any{"prompt": "x", "session_id": first.SessionID}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "continue it with ask_boss") {
		t.Errorf("another agent's session = %q (%v), want a tool error naming its tool", text(res), err)
	}
	unknown := ask(map[string]any{"prompt": "x", "session_id": "00000000-0000-0000-0000-000000000000"})
	if !unknown.IsError || !strings.Contains(text(unknown), "unknown session") {
		t.Errorf("unknown session = %q (error %v), want a tool error saying so", text(unknown), unknown.IsError)
	}
}

func TestMCPNeedsAValidTokenWhenAuthIsOn(t *testing.T) {
	t.Parallel()
	e := start(t, bossScript(), withSecurity(server.Security{Tokens: testTokens(t)}))
	for _, tc := range []struct {
		name, token, code string
	}{
		{"no token", "", "token_required"},
		{"a wrong token", "wrong-token-0123456789", "invalid_token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			header := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}
			if tc.token != "" {
				header = append(header, "Authorization", "Bearer "+tc.token)
			}
			status, _, body := e.do(http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, header...)
			if status != http.StatusUnauthorized {
				t.Fatalf("POST /mcp = %d %s, want 401", status, body)
			}
			if code, reason, _ := jsonError(t, body); code != "unauthenticated" || reason != tc.code {
				t.Errorf("error = {%s %s}, want the JSON error {unauthenticated %s}", code, reason, tc.code)
			}
			if _, _, err := e.connectMCP(tc.token); err == nil {
				t.Error("the MCP client connected")
			}
		})
	}
}

func TestMCPCancelledCallCancelsTheRun(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: bossPrompt}, Reply: fakellm.Reply{Text: "a long answer", ChunkSize: 2}},
	}}, withModelFaults(), withSecurity(server.Security{Tokens: testTokens(t)}))
	hold := e.modelFaults.HoldAfter(1)
	defer hold.Release()
	cs, notes := e.mustConnectMCP(aliceToken)

	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	called := make(chan error, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "ask_boss", Arguments: map[string]any{"prompt": "go"}}
		params.SetProgressToken(7)
		_, err := cs.CallTool(ctx, params)
		called <- err
	}()
	select {
	case <-hold.Held():
	case <-time.After(20 * time.Second):
		t.Fatal("the model call never streamed")
	}
	alice := e.clientAs(aliceToken)
	list, err := alice.ListSessions(ctxFor(t), connect.NewRequest(&agentsv1.ListSessionsRequest{Status: agentsv1.SessionStatus_SESSION_STATUS_RUNNING}))
	if err != nil || len(list.Msg.GetSessions()) != 1 {
		t.Fatalf("running sessions = %v (%v), want the call's", list.Msg.GetSessions(), err)
	}
	id := list.Msg.GetSessions()[0].GetId()
	// The text streamed so far reaches the client before the cancel.
	eventually.Holds(10*time.Second, func() bool { return len(notes.messages()) > 0 })
	if msgs := notes.messages(); len(msgs) == 0 || msgs[0] != "a " {
		t.Errorf("progress = %q, want the text streamed so far", msgs)
	}

	cancel()
	if err := <-called; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call = %v", err)
	}
	got, err := alice.GetSession(ctxFor(t), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, Wait: true}))
	if err != nil {
		t.Fatal(err)
	}
	m := got.Msg.GetSession().GetMeta()
	if m.GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY || m.GetStatusReason() != "cancelled" {
		t.Errorf("session after the cancel = %v (%s), want ready after a cancelled run", m.GetStatus(), m.GetStatusReason())
	}
	if m.GetPendingCalls() != 0 || m.GetPendingMail() != 0 || len(got.Msg.GetSession().GetPendingCalls()) != 0 {
		t.Errorf("pending calls %d mail %d, want nothing left pending", m.GetPendingCalls(), m.GetPendingMail())
	}
}

func TestMCPToolListFollowsTheAgents(t *testing.T) {
	t.Parallel()
	dir := copyTestdata(t)
	e := start(t, bossScript(), withAgentsDir(dir))
	cs, notes := e.mustConnectMCP("")
	if _, ok := toolNames(t, cs)["ask_boss"]; !ok {
		t.Fatal("ask_boss is not listed")
	}
	editAgent(t, filepath.Join(dir, "boss.json"), map[string]any{"slug": "chief", "announce": "The new boss."})
	if status, _, body := e.do(http.MethodPost, "/v1/agents:reload", ""); status != http.StatusOK {
		t.Fatalf("reload = %d %s", status, body)
	}
	select {
	case <-notes.changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no tools/list_changed after the agents changed")
	}
	tools := toolNames(t, cs)
	if _, ok := tools["ask_boss"]; ok {
		t.Error("ask_boss is still listed after its agent went")
	}
	if chief, ok := tools["ask_chief"]; !ok || chief.Description != "The new boss." {
		t.Errorf("ask_chief = %+v, want the new agent's tool", chief)
	}
}

func TestMCPIsGuardedLikeEveryRouteWithoutAuth(t *testing.T) {
	t.Parallel()
	e := start(t, bossScript(), withSecurity(server.Security{AllowedHosts: []string{"agents.internal:7420"}}))
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	accept := "application/json, text/event-stream"
	tests := []struct {
		name   string
		req    request
		status int
		reason string
	}{
		{"foreign origin", request{method: "POST", path: "/mcp", body: initialize, header: map[string]string{"Accept": accept, "Origin": "https://evil.example"}}, 403, "origin_not_allowed"},
		{"rebound host name", request{method: "POST", path: "/mcp", body: initialize, host: "evil.example", header: map[string]string{"Accept": accept}}, 403, "host_not_allowed"},
		// The host the operator allowed is served, though it is not
		// loopback: the server's guard decides, not the SDK's.
		{"configured host", request{method: "POST", path: "/mcp", body: initialize, host: "agents.internal:7420", header: map[string]string{"Accept": accept}}, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := e.send(tc.req)
			if status != tc.status {
				t.Fatalf("status = %d, want %d (%s)", status, tc.status, body)
			}
			if tc.reason != "" {
				if code, reason, _ := jsonError(t, body); code != "permission_denied" || reason != tc.reason {
					t.Errorf("error = {%s %s}, want {permission_denied %s}", code, reason, tc.reason)
				}
			}
		})
	}
}

// The Unix socket serves everyone as the local owner without a token, /mcp
// included, with auth on.
func TestMCPOnTheSocketActsAsTheLocalOwner(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: bossPrompt}, Reply: fakellm.Reply{Text: "hi"}},
	}}, withSecurity(server.Security{Tokens: testTokens(t)}))
	local := httptest.NewServer(e.srv.LocalHandler())
	t.Cleanup(local.Close)
	cs, _, err := e.connectMCPAt(local.URL, "")
	if err != nil {
		t.Fatalf("connect over the local handler: %v", err)
	}
	res, err := cs.CallTool(ctxFor(t), &mcp.CallToolParams{Name: "ask_boss", Arguments: map[string]any{"prompt": "go"}})
	if err != nil || res.IsError {
		t.Fatalf("ask_boss = %q (%v)", text(res), err)
	}
	id := structured(t, res).SessionID
	asLocal := agentsv1connect.NewSessionServiceClient(local.Client(), local.URL)
	got, err := asLocal.GetSession(ctxFor(t), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, MetaOnly: true}))
	if err != nil {
		t.Fatal(err)
	}
	if owner := got.Msg.GetSession().GetMeta().GetOwner(); owner != server.LocalOwner {
		t.Errorf("owner = %q, want the local owner", owner)
	}
}

// A run that stops to wait for a client tool has no answer for the MCP
// client: the call is a tool error that says so and names the session.
func TestMCPRunWaitingForDeferredCallsIsAToolErrorNamingTheSession(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: "client-tools agent"}, Reply: fakellm.Reply{
			ToolCalls: []fakellm.ToolCall{{Name: "ask_user", Arguments: json.RawMessage(`{"question": "which colour?"}`)}},
		}},
	}})
	cs, _ := e.mustConnectMCP("")
	res, err := cs.CallTool(ctxFor(t), &mcp.CallToolParams{Name: "ask_clienty", Arguments: map[string]any{"prompt": "ask me"}})
	if err != nil {
		t.Fatalf("call ask_clienty: %v", err)
	}
	out := structured(t, res)
	if !res.IsError || !strings.Contains(text(res), "deferred calls (ask_user)") || !strings.Contains(text(res), out.SessionID) || out.SessionID == "" {
		t.Fatalf("result %q (error %v, session %q), want a tool error naming the deferred call and the session", text(res), res.IsError, out.SessionID)
	}
	if s := e.wait(out.SessionID); s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_WAITING {
		t.Errorf("session status = %v, want it waiting for its client", s.GetMeta().GetStatus())
	}
}

func TestMCPFailedRunIsAToolErrorNamingTheSession(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Error: &fakellm.HTTPError{Status: 400, Message: "no such model"}}})
	cs, _ := e.mustConnectMCP("")
	res, err := cs.CallTool(ctxFor(t), &mcp.CallToolParams{Name: "ask_boss", Arguments: map[string]any{"prompt": "go"}})
	if err != nil {
		t.Fatalf("call ask_boss: %v", err)
	}
	out := structured(t, res)
	if !res.IsError || !strings.Contains(text(res), "the run failed") || out.SessionID == "" || !strings.Contains(text(res), out.SessionID) {
		t.Fatalf("result %q (error %v), want a tool error saying the run failed, naming the session", text(res), res.IsError)
	}
}
