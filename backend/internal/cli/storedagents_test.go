package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-os/agents/api/client"
	"github.com/agents-os/agents/backend/internal/server"
	"github.com/agents-os/agents/backend/internal/store/sqlite"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// A stored agent through the Go client against a real stack configured
// by a config file (storedAgentToolDirs): created with a tool under the
// allowed directory, edited the way an editor does (read the definition
// and version, write back guarded by it), refused with the field at
// fault, kept across a restart of the stack, deleted.
func TestTheGoClientEditsStoredAgents(t *testing.T) {
	dir, env := testEnv(t)
	tools := filepath.Join(dir, "tools")
	writeFile(t, filepath.Join(tools, "ok.sh"), goodTool, 0o755)
	writeFile(t, filepath.Join(dir, "agents", "filed.json"), agentJSON("filed", ""), 0o644)
	cfg, err := json.Marshal(map[string]any{
		"agentsDirectories":   []string{filepath.Join(dir, "agents")},
		"db":                  filepath.Join(dir, "agents.db"),
		"storedAgentToolDirs": []string{"tools"},
	})
	if err != nil {
		t.Fatal(err)
	}
	configFile := filepath.Join(dir, "agents.json")
	writeFile(t, configFile, string(cfg), 0o644)
	ctx := context.Background()
	// Each stack stops at the end of its subtest, so the next one may
	// take the database file: a restart.
	dial := func(t *testing.T) *client.Client {
		srv := serveForTest(t, env, configFile, nil)
		c := client.New(http.DefaultClient, srv.url, "")
		t.Cleanup(c.Close)
		return c
	}
	var edited string
	t.Run("edit", func(t *testing.T) {
		c := dial(t)

		toolbox := fmt.Sprintf(`, "bashToolboxes": [{"tag": "SingleTool", "contents": {"Path": %q}}]`, filepath.Join(tools, "ok.sh"))
		created, err := c.CreateAgent(ctx, agentJSON("kept", toolbox))
		if err != nil {
			t.Fatal(client.Describe(err))
		}
		if created.GetVersion() != 1 || len(created.GetTools()) == 0 {
			t.Fatalf("created = %v", created)
		}
		def, version, err := c.StoredDefinition(ctx, "kept")
		if err != nil || version != 1 {
			t.Fatalf("definition = %q at %d, %v", def, version, err)
		}
		edited = strings.Replace(def, "You test.", "You test again.", 1)
		if _, err := c.UpdateAgent(ctx, "kept", edited, version); err != nil {
			t.Fatal(client.Describe(err))
		}
		if _, err := c.UpdateAgent(ctx, "kept", edited, version); !client.IsVersionMismatch(err) {
			t.Fatalf("update from a stale version = %v, want a version mismatch", err)
		}
		broken := strings.Replace(edited, `"modelUrl": "http://127.0.0.1:1/v1", `, "", 1)
		if _, err := c.UpdateAgent(ctx, "kept", broken, 0); client.ErrorField(err) != "contents.modelUrl" {
			t.Fatalf("update without modelUrl = %v (field %q)", err, client.ErrorField(err))
		}
		if _, _, err := c.StoredDefinition(ctx, "filed"); err == nil || !strings.Contains(err.Error(), "read-only") {
			t.Fatalf("definition of a file agent = %v, want read-only", err)
		}

	})
	t.Run("after a restart", func(t *testing.T) {
		c := dial(t)
		def, version, err := c.StoredDefinition(ctx, "kept")
		if err != nil || version != 2 || def != edited {
			t.Fatalf("after a restart = %q at %d, %v", def, version, err)
		}
		if v, err := c.DeleteAgent(ctx, "kept"); err != nil || v != 2 {
			t.Fatalf("delete = %d, %v", v, err)
		}
	})
}

// storedAgent is an agent definition to store, with extra fields of its
// contents.
func storedAgent(slug, extra string) string {
	return strings.Replace(storedDefinition, `"slug": "stored"`, `"slug": "`+slug+`"`+extra, 1)
}

// createStored stores an agent in the database of server's flags, through
// the command line.
func createStored(t *testing.T, env func(string) (string, bool), server []string, def string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.json")
	writeFile(t, path, def, 0o644)
	if code, out, errOut := run(t, env, append([]string{"agents", "create", "-f", path}, server...)...); code != 0 {
		t.Fatalf("create = %d, %q, %q", code, out, errOut)
	}
}

// -a names a stored agent of the local database: the server a command
// starts in-process serves it, and a slug neither the files nor the
// database have is refused with the known ones, stored included.
func TestRunUsesAStoredAgentOfTheLocalDatabase(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "stored says {{last_user}}"}})
	filed := filepath.Join(dir, "agents", "filed.json")
	writeFile(t, filed, agentJSON("filed", ""), 0o644)
	other := filepath.Join(dir, "agents", "other.json")
	writeFile(t, other, agentJSON("other", ""), 0o644)
	server := []string{"--agent-file", filed, "--agent-file", other, "--db", filepath.Join(dir, "agents.db")}
	createStored(t, env, server, storedAgent("unused", ""))
	createStored(t, env, server, storedAgent("stored", `, "extraAgents": [{"slug": "filed"}]`))

	code, out, errOut := run(t, env, append([]string{"run", "-a", "stored", "--offline-model", model.URL(), "hi"}, server...)...)
	if code != 0 || out != "stored says hi\n" {
		t.Fatalf("run -a stored = %d, %q, %q", code, out, errOut)
	}
	if reqs := model.Requests(); len(reqs) != 1 || !strings.Contains(strings.Join(reqs[0].ToolNames(), " "), "filed") {
		t.Errorf("the model was offered %v, want the file agent as a helper", reqs)
	}
	code, _, errOut = run(t, env, append([]string{"run", "-a", "nobody", "--offline-model", model.URL(), "hi"}, server...)...)
	if want := `--agent: unknown agent "nobody" (known: filed, other, stored, unused)`; code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("run -a nobody = %d, %q; want %q", code, errOut, want)
	}
	// As with a file agent, the server serves only the agent and its
	// helpers.
	code, out, errOut = run(t, env, append([]string{"agents", "ls", "-a", "stored"}, server...)...)
	if code != 0 || !strings.Contains(out, "stored") || !strings.Contains(out, "filed") || strings.Contains(out, "other") || strings.Contains(out, "unused") {
		t.Errorf("agents ls -a stored = %d, want stored and its helper filed alone:\n%s%s", code, out, errOut)
	}
}

// check loads the stored agents of the database as a server would now: a
// stored agent whose helper is gone (a file agent no longer served: a
// stored helper is not deleted while an agent names it), or whose tool
// lies outside the directories allowed today, is a problem named by its
// slug; without a database, check reads the files alone and creates none.
func TestCheckReportsTheStoredAgents(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	filed := filepath.Join(dir, "agents", "filed.json")
	writeFile(t, filed, agentJSON("filed", ""), 0o644)
	tools := filepath.Join(dir, "tools")
	writeFile(t, filepath.Join(tools, "ok.sh"), goodTool, 0o755)
	allow := filepath.Join(dir, "allow.json")
	writeFile(t, allow, fmt.Sprintf(`{"storedAgentToolDirs": [%q]}`, tools), 0o644)
	aide := filepath.Join(dir, "agents", "aide.json")
	writeFile(t, aide, agentJSON("aide", ""), 0o644)
	db := filepath.Join(dir, "agents.db")
	server := []string{"--agent-file", filed, "--db", db}
	allowed := append([]string{"--config", allow, "--agent-file", aide}, server...)
	createStored(t, env, allowed, storedAgent("boss", `, "extraAgents": [{"slug": "aide"}]`))
	createStored(t, env, allowed, storedAgent("tooly", fmt.Sprintf(`, "bashToolboxes": [{"tag": "SingleTool", "contents": {"Path": %q}}]`, filepath.Join(tools, "ok.sh"))))
	if code, out, errOut := run(t, env, append([]string{"check"}, allowed...)...); code != 0 || !strings.Contains(out, "4 agents loaded, 0 problems") {
		t.Fatalf("check of sound stored agents = %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut := run(t, env, append([]string{"check"}, server...)...)
	for _, want := range []string{
		"stored agent boss: contents.extraAgents[0]",
		"stored agent tooly: contents.bashToolboxes[0]: ",
		"1 agent loaded, 2 problems",
	} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("check after the helper was deleted, allowing no tools = %d, want 1 and %q:\n%s%s", code, want, out, errOut)
		}
	}

	// Attached, or on a database a server holds, the server says which
	// of its stored agents it refused.
	cfg := filepath.Join(dir, "served.json")
	writeFile(t, cfg, fmt.Sprintf(`{"agentsFiles": [%q], "db": %q}`, filed, db), 0o644)
	srv := serveWith(t, env, cfg, stackOptions{holder: sqlite.Holder{Socket: filepath.Join(t.TempDir(), "agents.sock")}})
	for _, args := range [][]string{{"--attach", srv.url}, {"--db", db}} {
		code, out, errOut = run(t, env, append([]string{"check", "--agent-file", filed}, args...)...)
		for _, want := range []string{
			"stored agent boss: contents.extraAgents[0]",
			"stored agent tooly: contents.bashToolboxes[0]: ",
			"1 agent loaded, 2 problems",
		} {
			if code != 1 || !strings.Contains(out, want) {
				t.Errorf("check %s = %d, want 1 and %q:\n%s%s", strings.Join(args, " "), code, want, out, errOut)
			}
		}
	}

	code, out, errOut = run(t, env, "check", "--agent-file", filed)
	if code != 0 || !strings.Contains(out, "1 agent loaded, 0 problems") {
		t.Errorf("check without a database = %d:\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "agents", "agents.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("check without a database created the default one (%v)", err)
	}
}

// Issue 33, item 15: `agents agents edit` against a real server with
// tokens. A caller who may not change agents is refused before the
// editor opens. A definition the server does not store after the editor
// (someone else saved meanwhile) is kept in a file the command names,
// with the command that stores it, and that command stores it.
func TestEditKeepsWhatItCouldNotStore(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	cfg, err := json.Marshal(map[string]any{"db": filepath.Join(dir, "agents.db")})
	if err != nil {
		t.Fatal(err)
	}
	configFile := filepath.Join(dir, "agents.json")
	writeFile(t, configFile, string(cfg), 0o644)
	tokens, err := server.ParseTokens([]byte(`{"tokens": [{"token": "alice-token-0123456789", "owner": "alice"}, {"token": "admin-token-0123456789", "owner": "root", "admin": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := serveForTest(t, env, configFile, tokens)
	admin := client.New(http.DefaultClient, srv.url, "admin-token-0123456789")
	t.Cleanup(admin.Close)
	if _, err := admin.CreateAgent(context.Background(), agentJSON("kept", "")); err != nil {
		t.Fatal(client.Describe(err))
	}
	as := func(owner string) []string {
		file := filepath.Join(dir, owner+".token")
		writeFile(t, file, owner+"-token-0123456789\n", 0o600)
		return []string{"--attach", srv.url, "--token-file", file}
	}

	// Alice may not: the editor never starts.
	edits := t.TempDir()
	script := editorScript(t, edits, `sed -i 's/You test./You test, by alice./' "$1"`)
	code, _, errOut := run(t, withEditor(env, script), append([]string{"agents", "edit", "kept"}, as("alice")...)...)
	if code != 1 || !strings.Contains(errOut, "permission_denied") {
		t.Errorf("alice's edit = %d, %q; want permission_denied", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(edits, "seen.0")); err == nil {
		t.Errorf("the editor opened for a caller who may not save")
	}

	// The admin edits while someone else saves: nothing is stored, the
	// edited text is kept and the way to store it is said.
	other := filepath.Join(dir, "other.json")
	writeFile(t, other, agentJSON("kept", `, "maxSteps": 7`), 0o644)
	edits = t.TempDir()
	script = editorScript(t, edits, `sed -i 's/You test./You test, edited./' "$1" && curl -sSf -o /dev/null -X PUT -H 'Authorization: Bearer admin-token-0123456789' -H 'Content-Type: application/json' --data-binary @`+shellQuote(other)+` `+srv.url+`/v1/agents/kept`)
	code, _, errOut = run(t, withEditor(env, script), append([]string{"agents", "edit", "kept"}, as("admin")...)...)
	if code != 1 || !strings.Contains(errOut, "changed while you edited it") {
		t.Fatalf("edit during another's save = %d, %q", code, errOut)
	}
	kept := keptFile(t, errOut)
	if b, err := os.ReadFile(kept); err != nil || !strings.Contains(string(b), "You test, edited.") || strings.Contains(string(b), "#") {
		t.Fatalf("the kept file %s = %q, %v; want the edited definition", kept, b, err)
	}
	if want := "agents agents update kept -f " + kept; !strings.Contains(errOut, want) {
		t.Errorf("stderr %q does not say how to store it (%s)", errOut, want)
	}
	code, out, errOut := run(t, env, append([]string{"agents", "update", "kept", "-f", kept}, as("admin")...)...)
	if code != 0 || out != "agent kept: version 3\n" {
		t.Errorf("update -f the kept file = %d, %q, %q", code, out, errOut)
	}
	if def, _, err := admin.StoredDefinition(context.Background(), "kept"); err != nil || !strings.Contains(def, "You test, edited.") {
		t.Errorf("stored after update -f: %q, %v", def, err)
	}
}

// keptFile is the file an edit's error says it kept the text in.
func keptFile(t *testing.T, errOut string) string {
	t.Helper()
	_, rest, ok := strings.Cut(errOut, "kept in ")
	if !ok {
		t.Fatalf("stderr %q names no file the text is kept in", errOut)
	}
	return strings.TrimRight(strings.Fields(rest)[0], ":;,.")
}

// Issue 33: agents run --agent-version runs that version of a stored
// agent, which the session shows; agents rollback makes an earlier
// version current again as a new version, which versions lists.
func TestRunPinsAVersionAndRollbackRestoresOne(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: "revised"}, Reply: fakellm.Reply{Text: "the revised version"}},
		{Reply: fakellm.Reply{Text: "the first version"}},
	}})
	server := []string{"--db", filepath.Join(dir, "agents.db")}
	createStored(t, env, server, storedDefinition)
	script := editorScript(t, t.TempDir(), `sed -i 's/You test./You test, revised./' "$1"`)
	if code, out, errOut := run(t, withEditor(env, script), append([]string{"agents", "edit", "stored"}, server...)...); code != 0 {
		t.Fatalf("edit = %d, %q, %q", code, out, errOut)
	}
	runAt := func(args ...string) string {
		t.Helper()
		code, out, errOut := run(t, env, append(append([]string{"run", "-a", "stored", "--offline-model", model.URL()}, args...), server...)...)
		if code != 0 {
			t.Fatalf("run %v = %d, %q, %q", args, code, out, errOut)
		}
		return out
	}
	code, out, errOut := run(t, env, append([]string{"agents", "diff", "stored"}, server...)...)
	if code != 0 || !strings.Contains(out, "--- stored version 1\n+++ stored version 2\n") ||
		!strings.Contains(out, "\n-") || !strings.Contains(out, "revised") {
		t.Errorf("diff after an edit = %d:\n%s%s", code, out, errOut)
	}
	if out := runAt("--agent-version", "1", "hi"); out != "the first version\n" {
		t.Errorf("run --agent-version 1 = %q, want version 1's answer", out)
	}
	if out := runAt("hi"); out != "the revised version\n" {
		t.Errorf("run = %q, want the current version's answer", out)
	}
	if code, _, errOut := run(t, env, append([]string{"run", "-a", "stored", "--agent-version", "7", "--offline-model", model.URL(), "hi"}, server...)...); code != 1 || !strings.Contains(errOut, "no version 7") {
		t.Errorf("run --agent-version 7 = %d, %q; want it refused", code, errOut)
	}

	code, out, errOut = run(t, env, append([]string{"agents", "rollback", "stored", "1"}, server...)...)
	if code != 0 || out != "agent stored: version 3, restored from version 1\n" {
		t.Fatalf("rollback = %d, %q, %q", code, out, errOut)
	}
	if out := runAt("hi"); out != "the first version\n" {
		t.Errorf("run after the rollback = %q, want version 1's answer", out)
	}
	code, out, errOut = run(t, env, append([]string{"agents", "versions", "stored"}, server...)...)
	if code != 0 || !strings.Contains(out, "RESTORED") || !strings.Contains(out, "from 1") {
		t.Errorf("versions after a rollback = %d:\n%s%s", code, out, errOut)
	}
	// Version 3 restored version 1: the same definition, so no diff; and
	// from 2 to 3 the edit is taken back.
	if code, out, errOut := run(t, env, append([]string{"agents", "diff", "stored", "1"}, server...)...); code != 0 || out != "" {
		t.Errorf("diff 1 against the restored current = %d, %q, %q; want no difference", code, out, errOut)
	}
	if code, out, errOut := run(t, env, append([]string{"agents", "diff", "stored", "2", "3"}, server...)...); code != 0 || !strings.Contains(out, "+++ stored version 3") || !strings.Contains(out, "\n-") {
		t.Errorf("diff 2 3 = %d:\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run(t, env, append([]string{"agents", "diff", "stored", "9"}, server...)...); code != 1 || !strings.Contains(errOut, "no version 9") {
		t.Errorf("diff 9 = %d, %q; want it refused", code, errOut)
	}
}
