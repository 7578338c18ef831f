package systools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

func run(t *testing.T, tl tool.Tool, args string) tool.Result {
	t.Helper()
	a, err := tool.DecodeArgs(tl.Spec(), args)
	if err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	return tl.Execute(context.Background(), tool.Call{ID: "c1", Args: a, Session: tool.Session{ID: "s1", Agent: "a"}})
}

// Only the enabled capabilities answer, and a command passes the
// toolbox's command filter first: refused, or an answer that is not the
// filter's JSON, and it does not run.
func TestCapabilitiesAndTheCommandFilter(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	filter := `if grep -q forbidden; then echo '{"acceptance": "refused", "note": "not that"}'; elif [ -e garbage ]; then echo nope; else echo '{"acceptance": "allowed"}'; fi`
	sys := New(agentfile.BuiltinToolbox{Kind: agentfile.SystemToolboxKind, Name: "s",
		Capabilities: []string{"working-directory", "execute-command"}, CommandFilter: filter}, Runtime{WorkDir: dir})

	if r := run(t, sys, `{"capability": "working-directory"}`); r.Status != session.ResultOK || !strings.Contains(r.Text, `"path":"`+dir+`"`) {
		t.Errorf("working-directory = %v %s", r.Status, r.Text)
	}
	if r := run(t, sys, `{"capability": "hostname"}`); r.Status != session.ResultError || !strings.Contains(r.Text, "not enabled") {
		t.Errorf("hostname = %v %s", r.Status, r.Text)
	}
	if r := run(t, sys, `{"capability": "execute-command", "command": "echo hi > out; cat out"}`); r.Status != session.ResultOK || !strings.Contains(r.Text, `"stdout":"hi\n"`) {
		t.Errorf("allowed command = %v %s", r.Status, r.Text)
	}
	if r := run(t, sys, `{"capability": "execute-command", "command": "touch forbidden"}`); r.Status != session.ResultError || !strings.Contains(r.Text, "refused by the command filter: not that") {
		t.Errorf("refused command = %v %s", r.Status, r.Text)
	}
	run(t, sys, `{"capability": "execute-command", "command": "touch garbage"}`)
	if r := run(t, sys, `{"capability": "execute-command", "command": "touch ran"}`); r.Status != session.ResultError || !strings.Contains(r.Text, "output is not") {
		t.Errorf("command after a garbled filter answer = %v %s", r.Status, r.Text)
	}
	for _, name := range []string{"forbidden", "ran"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s exists: a command the filter did not allow ran", name)
		}
	}
}
