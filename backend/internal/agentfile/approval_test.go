package agentfile

import (
	"encoding/json"
	"strings"
	"testing"
)

// testArgs are decoded arguments, as the tool package gives them.
type testArgs map[string]json.RawMessage

func (a testArgs) Value(name string) (json.RawMessage, bool) {
	v, ok := a[name]
	return v, ok
}

// agentWith is an agent file whose contents carry extra, a JSON fragment
// such as `"approvals": [...]`.
func agentWith(extra string) []byte {
	return []byte(`{"tag": "OpenAIAgentDescription", "contents": {"slug": "a", "flavor": "OpenAIv1",
		"modelUrl": "http://localhost:1/v1", "modelName": "m", ` + extra + `}}`)
}

func TestApprovalsRefuseBadPolicies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, approvals, field, reason string
	}{
		{"unknown policy", `[{"tool": "x", "approval": "sometimes"}]`, "contents.approvals[0].approval", `unknown policy "sometimes"`},
		{"no policy", `[{"tool": "x"}]`, "contents.approvals[0].approval", "required field is missing"},
		{"both", `[{"tool": "x", "approval": "always", "when": {"arg": "a", "matches": "b"}}]`, "contents.approvals[0].when", "not both"},
		{"no tool", `[{"approval": "always"}]`, "contents.approvals[0].tool", "required field is missing"},
		{"bad tool name", `[{"tool": "rm -rf", "approval": "always"}]`, "contents.approvals[0].tool", "is not a tool name"},
		{"duplicate", `[{"tool": "x", "approval": "always"}, {"tool": "x", "approval": "never"}]`, "contents.approvals[1].tool", `duplicate approval policy for "x"`},
		{"bad pattern", `[{"tool": "x", "when": {"arg": "command", "matches": "rm ("}}]`, "contents.approvals[0].when.matches", "is not a regular expression: missing closing )"},
		{"rule without arg", `[{"tool": "x", "when": [{"matches": "rm"}]}]`, "contents.approvals[0].when[0].arg", "required field is missing"},
		{"empty rules", `[{"tool": "x", "when": []}]`, "contents.approvals[0].when", "at least one rule"},
		{"not a list", `{"tool": "x"}`, "contents.approvals", "must be a list, got object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err, _ := parse(agentWith(`"approvals": `+tc.approvals), "/a.json", "/")
			if err == nil {
				t.Fatalf("approvals %s parsed, want an error at %s", tc.approvals, tc.field)
			}
			if err.Field != tc.field || !strings.Contains(err.Reason, tc.reason) {
				t.Errorf("error = %s: %s, want %s: …%s…", err.Field, err.Reason, tc.field, tc.reason)
			}
		})
	}
}

func TestApprovalAsks(t *testing.T) {
	t.Parallel()
	p, _, perr, _ := parse(agentWith(`"approvals": [
		{"tool": "deploy", "approval": "always"},
		{"tool": "lookup", "approval": "never"},
		{"tool": "bash_run", "when": {"arg": "command", "matches": "(^|\\s)(rm|sudo)\\s"}},
		{"tool": "copy", "when": [{"arg": "to", "matches": "^/etc/"}, {"arg": "force", "matches": "true"}]}
	]`), "/a.json", "/")
	if perr != nil {
		t.Fatalf("parse: %v", perr)
	}
	a := p.agent
	cases := []struct {
		tool, args string
		want       bool
	}{
		{"deploy", `{}`, true},
		{"lookup", `{"q": "rm -rf /"}`, false},
		{"unlisted", `{"command": "sudo rm -rf /"}`, false},
		{"bash_run", `{"command": "ls -l"}`, false},
		{"bash_run", `{"command": "sudo reboot"}`, true},
		{"bash_run", `{"command": "cd /tmp && rm x"}`, true},
		{"bash_run", `{"other": "rm x"}`, false},
		{"bash_run", `{"command": 7}`, false},
		{"copy", `{"to": "/etc/passwd"}`, true},
		{"copy", `{"to": "/tmp/x", "force": true}`, true},
		{"copy", `{"to": "/tmp/x", "force": false}`, false},
		{"copy", `{"to": ["/tmp/x", "/etc/y"]}`, false},
		{"copy", `{}`, false},
	}
	for _, tc := range cases {
		var args testArgs
		if err := json.Unmarshal([]byte(tc.args), &args); err != nil {
			t.Fatal(err)
		}
		got := false
		if p := a.ApprovalFor(tc.tool); p != nil {
			got = p.Asks(args)
		}
		if got != tc.want {
			t.Errorf("%s(%s) asks = %v, want %v", tc.tool, tc.args, got, tc.want)
		}
	}
}
