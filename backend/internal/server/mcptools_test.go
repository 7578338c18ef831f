package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/eventually"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
)

var mcpFake struct {
	once sync.Once
	path string
	err  error
}

// mcpFakeBinary builds the offline MCP server once for the package.
func mcpFakeBinary(t *testing.T) string {
	t.Helper()
	mcpFake.once.Do(func() {
		dir, err := os.MkdirTemp("", "mcpfake")
		if err != nil {
			mcpFake.err = err
			return
		}
		mcpFake.path = filepath.Join(dir, "mcpfake")
		if out, err := exec.Command("go", "build", "-o", mcpFake.path, "github.com/agents-os/agents/tools/cmd/mcpfake").CombinedOutput(); err != nil {
			mcpFake.err = fmt.Errorf("build mcpfake: %v\n%s", err, out)
		}
	})
	if mcpFake.err != nil {
		t.Fatal(mcpFake.err)
	}
	return mcpFake.path
}

// mcpAgents writes the agent "mcpuser": the offline MCP server as "fake",
// and "broken", a server whose program does not exist.
func mcpAgents(t *testing.T) string {
	dir := t.TempDir()
	file := fmt.Sprintf(`{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "mcpuser", "flavor": "OpenAIv1", "modelUrl": "https://models.invalid/v1", "apiKeyId": "test-key", "modelName": "test-model",
		"announce": "Uses MCP tools.", "systemPrompt": ["You use MCP tools."],
		"mcpServers": [
			{"tag": "McpSimpleBinary", "contents": {"name": "fake", "executable": %q}},
			{"tag": "McpSimpleBinary", "contents": {"name": "broken", "executable": %q}}
		]}}`, mcpFakeBinary(t), filepath.Join(dir, "no-such-server"))
	if err := os.WriteFile(filepath.Join(dir, "mcpuser.json"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func callTool(name, args string) fakellm.Reply {
	return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: name, Arguments: json.RawMessage(args)}}}
}

// Issue 12: an agent calls an MCP server's tool end to end; the server's
// progress notifications reach clients as tool.progressed; a server that
// cannot start is shown failed and the agent works without it.
func TestAnAgentCallsAnMCPToolWithProgress(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: callTool("mcp_fake_steps", `{"count":2}`)},
		{Reply: fakellm.Reply{Text: "{{last_tool_result}}"}},
	}}, withAgentsDir(mcpAgents(t)))
	feed := e.openSSE("/v1/events")
	id := e.create("mcpuser", "go").GetMeta().GetId()
	started := until(t, feed, kind(id, "tool.started")).GetToolStarted().GetCall()
	if started.GetKind() != agentsv1.ToolKind_TOOL_KIND_MCP {
		t.Errorf("call kind = %s, want mcp", started.GetKind())
	}
	var lines []string
	for {
		ev := until(t, feed, func(ev *agentsv1.Event) bool {
			return ev.GetSessionId() == id && (ev.GetKind() == "tool.progressed" || ev.GetKind() == "tool.completed")
		})
		if ev.GetKind() == "tool.completed" {
			break
		}
		lines = append(lines, ev.GetToolProgressed().GetMessage())
	}
	if len(lines) == 0 || lines[len(lines)-1] != "step 2 of 2 (2/2)" {
		t.Errorf("progress = %q, want the server's notifications ending with the last", lines)
	}
	if s := e.wait(id); lastTurn(s).GetLlm().GetText() != "all steps done" {
		t.Errorf("answer = %q, want the tool's result", lastTurn(s).GetLlm().GetText())
	}

	res, err := e.agents.GetAgent(ctxFor(t), connect.NewRequest(&agentsv1.GetAgentRequest{Slug: "mcpuser"}))
	if err != nil {
		t.Fatal(err)
	}
	servers := map[string]*agentsv1.McpServerDescriptor{}
	for _, s := range res.Msg.GetAgent().GetMcpServers() {
		servers[s.GetName()] = s
	}
	if s := servers["fake"]; s.GetState() != "running" || s.GetToolCount() == 0 || s.GetError() != "" {
		t.Errorf("fake = %v, want running with tools", s)
	}
	if s := servers["broken"]; s.GetState() != "failed" || !strings.Contains(s.GetError(), "no-such-server") {
		t.Errorf("broken = %v, want failed, saying why", s)
	}
	var names []string
	for _, tl := range res.Msg.GetAgent().GetTools() {
		names = append(names, tl.GetName())
	}
	if !strings.Contains(strings.Join(names, " "), "mcp_fake_echo") {
		t.Errorf("tools = %q, want the server's", names)
	}
}

// Issue 12: a server that crashes during a call gives that call an error,
// is restarted, and the next call reaches the new server; a changed tool
// list is announced; no server process outlives the server.
func TestAnMCPServerThatCrashesIsRestartedAndStopsWithTheServer(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: callTool("mcp_fake_pid", `{}`)},
		{Match: fakellm.Match{AssistantMessages: steps(1)}, Reply: callTool("mcp_fake_crash", `{}`)},
		{Match: fakellm.Match{AssistantMessages: steps(2)}, Reply: callTool("mcp_fake_grow", `{}`)},
		{Match: fakellm.Match{AssistantMessages: steps(3)}, Reply: callTool("mcp_fake_pid", `{}`)},
		{Reply: fakellm.Reply{Text: "{{last_tool_result}}"}},
	}}, withAgentsDir(mcpAgents(t)))
	feed := e.openSSE("/v1/events")
	id := e.create("mcpuser", "go").GetMeta().GetId()
	// The change may be announced between any two results: both are
	// read from one stream.
	var results []*agentsv1.ToolResult
	changed := false
	for len(results) < 4 || !changed {
		ev := until(t, feed, func(ev *agentsv1.Event) bool {
			return ev.GetKind() == "agents.changed" || kind(id, "tool.completed")(ev)
		})
		if ev.GetKind() == "agents.changed" {
			changed = true
			continue
		}
		results = append(results, ev.GetToolCompleted().GetResult())
	}
	s := e.wait(id)

	before, _ := strconv.Atoi(results[0].GetText())
	if results[1].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR {
		t.Errorf("the crashing call = %v, want an error", results[1])
	}
	if results[2].GetText() != "grown" {
		t.Errorf("the call after the crash = %v, want the restarted server's answer", results[2])
	}
	after, _ := strconv.Atoi(lastTurn(s).GetLlm().GetText())
	if before == 0 || after == 0 || before == after {
		t.Fatalf("server pid %d before the crash, %d after: want two servers", before, after)
	}
	if syscall.Kill(before, 0) == nil {
		t.Errorf("the crashed server %d still runs", before)
	}
	e.stop()
	if syscall.Kill(after, 0) == nil {
		t.Errorf("the MCP server %d outlived the server", after)
	}
}

// A reload that leaves an MCP server declared by no agent stops it (its
// process group ends with it), while a server still declared keeps
// running, the same process.
func TestAReloadStopsTheMCPServersNoAgentDeclaresAnyMore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "mcpuser.json")
	server := func(name string) map[string]any {
		return map[string]any{"tag": "McpSimpleBinary", "contents": map[string]any{"name": name, "executable": mcpFakeBinary(t)}}
	}
	file := `{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "mcpuser", "flavor": "OpenAIv1", "modelUrl": "https://models.invalid/v1", "apiKeyId": "test-key", "modelName": "test-model",
		"announce": "Uses MCP tools.", "systemPrompt": ["You use MCP tools."]}}`
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	editAgent(t, path, map[string]any{"mcpServers": []any{server("kept"), server("dropped")}})
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: callTool("mcp_kept_pid", `{}`)},
		{Match: fakellm.Match{AssistantMessages: steps(1)}, Reply: callTool("mcp_dropped_pid", `{}`)},
		{Reply: fakellm.Reply{Text: "done"}},
	}}, withAgentsDir(dir))
	feed := e.openSSE("/v1/events")
	id := e.create("mcpuser", "go").GetMeta().GetId()
	kept, _ := strconv.Atoi(until(t, feed, kind(id, "tool.completed")).GetToolCompleted().GetResult().GetText())
	dropped, _ := strconv.Atoi(until(t, feed, kind(id, "tool.completed")).GetToolCompleted().GetResult().GetText())
	e.wait(id)
	if kept == 0 || dropped == 0 {
		t.Fatalf("server pids %d and %d, want both servers running", kept, dropped)
	}

	editAgent(t, path, map[string]any{"mcpServers": []any{server("kept")}})
	if status, _, body := e.do(http.MethodPost, "/v1/agents:reload", ""); status != http.StatusOK {
		t.Fatalf("reload = %d %s", status, body)
	}
	if !eventually.Holds(10*time.Second, func() bool { return syscall.Kill(dropped, 0) != nil }) {
		t.Errorf("the server %d no agent declares still runs after the reload", dropped)
	}
	if syscall.Kill(kept, 0) != nil {
		t.Errorf("the server %d the agent still declares was stopped by the reload", kept)
	}
}
