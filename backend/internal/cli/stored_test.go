package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
)

// agentStore is an AgentService over agents held in memory: one file
// agent, and the stored ones the commands create. It checks definitions
// as far as the commands' tests need: JSON, and a model URL.
type agentStore struct {
	agentsv1connect.UnimplementedAgentServiceHandler

	mu       sync.Mutex
	agents   map[string]*agentsv1.AgentDescriptor
	versions map[string][]*agentsv1.AgentVersion
	updates  []*agentsv1.UpdateAgentRequest
}

func startAgentStore(t *testing.T) (*agentStore, string) {
	t.Helper()
	f := &agentStore{
		agents: map[string]*agentsv1.AgentDescriptor{
			"filed": {Slug: "filed", Source: agentsv1.AgentSource_AGENT_SOURCE_FILE, File: "/etc/agents/filed.json", Model: &agentsv1.ModelDescriptor{Name: "m"}},
		},
		versions: map[string][]*agentsv1.AgentVersion{},
	}
	mux := http.NewServeMux()
	mux.Handle(agentsv1connect.NewAgentServiceHandler(f))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// check validates a definition, naming the field at fault.
func check(def string) (string, error) {
	var d struct {
		Contents map[string]any `json:"contents"`
	}
	if err := json.Unmarshal([]byte(def), &d); err != nil {
		return "", connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("definition: %v", err))
	}
	if _, ok := d.Contents["modelUrl"]; !ok {
		return "", connect.NewError(connect.CodeInvalidArgument, errors.New("contents.modelUrl: required"))
	}
	slug, _ := d.Contents["slug"].(string)
	return slug, nil
}

func (f *agentStore) store(slug, def string) *agentsv1.AgentDescriptor {
	v := int64(len(f.versions[slug]) + 1)
	for _, old := range f.versions[slug] {
		old.Current = false
	}
	f.versions[slug] = append([]*agentsv1.AgentVersion{{Slug: slug, Version: v, Definition: def, Current: true, Author: "local", CreateTime: timestamppb.Now()}}, f.versions[slug]...)
	ag := &agentsv1.AgentDescriptor{Slug: slug, Source: agentsv1.AgentSource_AGENT_SOURCE_STORED, Version: v, Definition: def, UpdateTime: timestamppb.Now(), Model: &agentsv1.ModelDescriptor{Name: "m"}}
	f.agents[slug] = ag
	return ag
}

func (f *agentStore) ListAgents(context.Context, *connect.Request[agentsv1.ListAgentsRequest]) (*connect.Response[agentsv1.ListAgentsResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	res := &agentsv1.ListAgentsResponse{}
	for _, slug := range []string{"filed", "stored"} {
		if ag := f.agents[slug]; ag != nil {
			res.Agents = append(res.Agents, ag)
		}
	}
	return connect.NewResponse(res), nil
}

func (f *agentStore) GetAgent(_ context.Context, r *connect.Request[agentsv1.GetAgentRequest]) (*connect.Response[agentsv1.GetAgentResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ag := f.agents[r.Msg.GetSlug()]
	if ag == nil {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("no agent %q", r.Msg.GetSlug()))
	}
	return connect.NewResponse(&agentsv1.GetAgentResponse{Agent: ag}), nil
}

func (f *agentStore) CreateAgent(_ context.Context, r *connect.Request[agentsv1.CreateAgentRequest]) (*connect.Response[agentsv1.CreateAgentResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	slug, err := check(r.Msg.GetDefinition())
	if err != nil {
		return nil, err
	}
	if f.agents[slug] != nil {
		return nil, connect.NewError(connect.CodeAlreadyExists, fmt.Errorf("agent %q exists", slug))
	}
	return connect.NewResponse(&agentsv1.CreateAgentResponse{Agent: f.store(slug, r.Msg.GetDefinition())}), nil
}

func (f *agentStore) UpdateAgent(_ context.Context, r *connect.Request[agentsv1.UpdateAgentRequest]) (*connect.Response[agentsv1.UpdateAgentResponse], error) {
	if r.Msg.GetSlug() == "" {
		// As the server answers the edit's question whether the caller
		// may change agents at all.
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("slug is required"))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updates = append(f.updates, r.Msg)
	ag := f.agents[r.Msg.GetSlug()]
	switch {
	case ag == nil:
		return nil, connect.NewError(connect.CodeNotFound, errors.New("no such agent"))
	case ag.GetSource() == agentsv1.AgentSource_AGENT_SOURCE_FILE:
		return nil, connect.NewError(connect.CodeAlreadyExists, errors.New("a file agent is read-only"))
	case r.Msg.ExpectedVersion != nil && r.Msg.GetExpectedVersion() != ag.GetVersion():
		return nil, connect.NewError(connect.CodeAborted, errors.New("version mismatch"))
	}
	if _, err := check(r.Msg.GetDefinition()); err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.UpdateAgentResponse{Agent: f.store(r.Msg.GetSlug(), r.Msg.GetDefinition())}), nil
}

func (f *agentStore) DeleteAgent(_ context.Context, r *connect.Request[agentsv1.DeleteAgentRequest]) (*connect.Response[agentsv1.DeleteAgentResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ag := f.agents[r.Msg.GetSlug()]
	switch {
	case ag == nil:
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("no agent %q", r.Msg.GetSlug()))
	case ag.GetSource() == agentsv1.AgentSource_AGENT_SOURCE_FILE:
		return nil, connect.NewError(connect.CodeAlreadyExists, fmt.Errorf("agent %q comes from a file and is read-only to the API", r.Msg.GetSlug()))
	}
	delete(f.agents, r.Msg.GetSlug())
	return connect.NewResponse(&agentsv1.DeleteAgentResponse{Slug: ag.GetSlug(), Version: ag.GetVersion()}), nil
}

func (f *agentStore) ListAgentVersions(_ context.Context, r *connect.Request[agentsv1.ListAgentVersionsRequest]) (*connect.Response[agentsv1.ListAgentVersionsResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return connect.NewResponse(&agentsv1.ListAgentVersionsResponse{Versions: f.versions[r.Msg.GetSlug()]}), nil
}

// storedDefinition is a stored agent's definition laid out on lines, as a
// person writes one, the model URL on a line of its own.
const storedDefinition = `{
  "tag": "OpenAIAgentDescription",
  "contents": {
    "slug": "stored",
    "flavor": "OpenAIv1",
    "modelUrl": "http://127.0.0.1:1/v1",
    "apiKeyId": "test-key",
    "modelName": "m",
    "announce": "a stored agent",
    "systemPrompt": ["You test."]
  }
}
`

// editorScript writes an editor that runs steps, one per time it is
// started, on the file it is given (as "$1"), and keeps a copy of each
// file it was given as seen.N in dir.
func editorScript(t *testing.T, dir string, steps ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("#!/usr/bin/env bash\nset -e\ncd " + shellQuote(dir) + "\nn=$(ls seen.* 2>/dev/null | wc -l)\ncp \"$1\" seen.$n\ncase $n in\n")
	for i, s := range steps {
		fmt.Fprintf(&b, "%d) %s ;;\n", i, s)
	}
	b.WriteString("*) echo 'started too often' >&2; exit 1 ;;\nesac\n")
	path := filepath.Join(dir, "editor")
	writeFile(t, path, b.String(), 0o755)
	return path
}

func readSeen(t *testing.T, dir string, n int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("seen.%d", n)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func withEditor(env func(string) (string, bool), editor string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if k == "EDITOR" {
			return editor, true
		}
		return env(k)
	}
}

func TestStoredAgentCommands(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	f, url := startAgentStore(t)
	at := []string{"--attach", url}
	def := filepath.Join(dir, "stored.json")
	writeFile(t, def, storedDefinition, 0o644)
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, bad, strings.Replace(storedDefinition, `"modelUrl": "http://127.0.0.1:1/v1",`, "", 1), 0o644)

	tests := []struct {
		name          string
		args          []string
		code          int
		want, errWant string
	}{
		{"create", []string{"agents", "create", "-f", def}, 0, "created agent stored, version 1\n", ""},
		{"create again", []string{"agents", "create", "-f", def}, 1, "", `already_exists: agent "stored" exists`},
		{"create what the server refuses", []string{"agents", "create", "-f", bad}, 1, "", "invalid_argument: contents.modelUrl: required"},
		{"ls shows the source", []string{"agents", "ls"}, 0, "stored  stored v1", ""},
		{"show", []string{"agents", "show", "stored"}, 0, "stored    version 1, updated ", ""},
		{"edit a file agent", []string{"agents", "edit", "filed"}, 1, "", "agent filed comes from the file /etc/agents/filed.json and is read-only here"},
		{"rm a file agent", []string{"agents", "rm", "filed"}, 1, "", `filed: already_exists: agent "filed" comes from a file and is read-only to the API`},
		{"versions", []string{"agents", "versions", "stored"}, 0, "1        yes      ", ""},
		{"a version's definition", []string{"agents", "versions", "stored", "--show", "1"}, 0, storedDefinition, ""},
	}
	for _, tc := range tests {
		code, out, errOut := run(t, env, append(tc.args, at...)...)
		if code != tc.code || !strings.Contains(out, tc.want) || !strings.Contains(errOut, tc.errWant) {
			t.Errorf("%s: exit status %d (want %d)\nstdout: %s(want %q)\nstderr: %s(want %q)", tc.name, code, tc.code, out, tc.want, errOut, tc.errWant)
		}
	}

	// The edit loop: JSON broken first, then a definition the server
	// refuses, each reopened with its error on top; then a good one.
	edits := t.TempDir()
	script := editorScript(t, edits,
		`sed -i 's/"announce": "a stored agent",/"announce": "an edited agent"/' "$1"`,
		`sed -i 's/"an edited agent"/"an edited agent",/; /modelUrl/d' "$1"`,
		`sed -i 's|"modelName": "m",|"modelName": "m", "modelUrl": "http://127.0.0.1:2/v1",|' "$1"`,
	)
	code, out, errOut := run(t, withEditor(env, script), append([]string{"agents", "edit", "stored"}, at...)...)
	if code != 0 || out != "agent stored: version 2\n" {
		t.Fatalf("edit = %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if first := readSeen(t, edits, 0); !strings.HasPrefix(first, "# Agent stored, version 1. Saved, it becomes version 2.\n") || strings.Contains(first, "error") ||
		!strings.Contains(first, storedDefinition) {
		t.Errorf("the first file:\n%s", first)
	}
	if second := readSeen(t, edits, 1); !strings.Contains(second, "# error: not JSON: line 10, column 5: ") || !strings.Contains(second, `"announce": "an edited agent"`) {
		t.Errorf("the file reopened after broken JSON keeps the edit and says where it broke:\n%s", second)
	}
	if third := readSeen(t, edits, 2); !strings.Contains(third, "# error: invalid_argument: contents.modelUrl: required\n") {
		t.Errorf("the file reopened after the server refused it:\n%s", third)
	}
	f.mu.Lock()
	got := f.agents["stored"].GetDefinition()
	updates := len(f.updates)
	expected := f.updates[0].GetExpectedVersion()
	f.mu.Unlock()
	if strings.Contains(got, "#") || !strings.Contains(got, `"announce": "an edited agent",`) || !strings.Contains(got, "127.0.0.1:2") {
		t.Errorf("stored definition:\n%s", got)
	}
	if updates != 2 || expected != 1 {
		t.Errorf("UpdateAgent calls = %d, the first expecting version %d; want 2, expecting 1", updates, expected)
	}

	// Saved unchanged, or emptied: nothing is stored.
	for _, tc := range []struct{ name, step, want string }{
		{"unchanged", "true", "edit cancelled: no change"},
		{"emptied", `: > "$1"`, "edit cancelled: the file was emptied"},
	} {
		script := editorScript(t, t.TempDir(), tc.step)
		code, _, errOut := run(t, withEditor(env, script), append([]string{"agents", "edit", "stored"}, at...)...)
		if code != 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: edit = %d, %q; want %q", tc.name, code, errOut, tc.want)
		}
	}
	f.mu.Lock()
	if len(f.updates) != 2 {
		t.Errorf("a cancelled edit called UpdateAgent")
	}
	f.mu.Unlock()

	code, out, errOut = run(t, env, append([]string{"agents", "rm", "stored"}, at...)...)
	if code != 0 || out != "deleted agent stored (version 2)\n" {
		t.Errorf("rm = %d, %q, %q", code, out, errOut)
	}
}

// On a server that stores agents: create, a refused create naming the
// field, the edit loop, versions, a file agent left alone, and rm.
func TestStoredAgentsOnTheServer(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	filed := filepath.Join(dir, "agents", "filed.json")
	writeFile(t, filed, agentJSON("filed", ""), 0o644)
	server := []string{"--agent-file", filed, "--db", filepath.Join(dir, "agents.db")}
	with := func(args ...string) []string { return append(args, server...) }
	def := filepath.Join(dir, "stored.json")
	writeFile(t, def, storedDefinition, 0o644)

	code, out, errOut := run(t, env, with("agents", "create", "-f", def)...)
	if strings.Contains(errOut, "does not store agents") {
		t.Skip("this server does not store agents")
	}
	if code != 0 || out != "created agent stored, version 1\n" {
		t.Fatalf("create = %d, %q, %q", code, out, errOut)
	}
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, bad, strings.Replace(strings.Replace(storedDefinition, `"modelUrl": "http://127.0.0.1:1/v1",`, "", 1), `"stored"`, `"other"`, 1), 0o644)
	if code, _, errOut := run(t, env, with("agents", "create", "-f", bad)...); code != 1 || !strings.Contains(errOut, "invalid_argument: ") || !strings.Contains(errOut, "contents.modelUrl") {
		t.Errorf("create without a model URL = %d, %q; want the field named", code, errOut)
	}

	edits := t.TempDir()
	script := editorScript(t, edits,
		`sed -i 's/"announce": "a stored agent",/"announce": "an edited agent"/' "$1"`,
		`sed -i 's/"an edited agent"/"an edited agent",/; /modelUrl/d' "$1"`,
		`sed -i 's|"modelName": "m",|"modelName": "m", "modelUrl": "http://127.0.0.1:2/v1",|' "$1"`,
	)
	code, out, errOut = run(t, withEditor(env, script), with("agents", "edit", "stored")...)
	if code != 0 || out != "agent stored: version 2\n" {
		t.Fatalf("edit = %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if third := readSeen(t, edits, 2); !strings.Contains(third, "# error: invalid_argument: ") || !strings.Contains(third, "contents.modelUrl") {
		t.Errorf("the file reopened after the server refused it:\n%s", third)
	}
	code, out, errOut = run(t, env, with("agents", "show", "stored")...)
	if code != 0 || !strings.Contains(out, "stored    version 2, ") || !strings.Contains(out, "an edited agent") {
		t.Errorf("show after the edit = %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, env, with("agents", "versions", "stored")...)
	if code != 0 || !strings.Contains(out, "2        yes") || !strings.Contains(out, "\n1  ") {
		t.Errorf("versions = %d:\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run(t, env, with("agents", "edit", "filed")...); code != 1 || !strings.Contains(errOut, "read-only") {
		t.Errorf("edit of a file agent = %d, %q", code, errOut)
	}
	// One refusal does not stop the others: each slug is tried, and the
	// command fails once all were.
	code, out, errOut = run(t, env, with("agents", "rm", "filed", "nosuch", "stored")...)
	if code != 1 || !strings.Contains(errOut, "filed: ") || !strings.Contains(errOut, "nosuch: ") || out != "deleted agent stored (version 2)\n" {
		t.Errorf("rm filed nosuch stored = %d, %q, %q", code, out, errOut)
	}
}

// agents create's help shows an agent file, and that file stores as it
// is shown.
func TestAgentsCreateHelpShowsAFileThatStores(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	code, help, _ := run(t, env, "agents", "create", "--help")
	_, rest, found := strings.Cut(help, "notes.json:\n\n")
	shown, _, ended := strings.Cut(rest, "\nWithout OPENAI_API_KEY")
	if code != 0 || !found || !ended || !strings.Contains(shown, `"slug": "notes"`) {
		t.Fatalf("agents create --help = %d, shows no agent file:\n%s", code, help)
	}
	def := filepath.Join(dir, "notes.json")
	writeFile(t, def, shown, 0o644)
	if code, out, errOut := run(t, env, "agents", "create", "-f", def, "--db", filepath.Join(dir, "a.db")); code != 0 || out != "created agent notes, version 1\n" {
		t.Errorf("agents create -f of the help's file = %d: %s%s", code, out, errOut)
	}
}
