package agentfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTheSandboxSettings(t *testing.T) {
	dir := t.TempDir()
	parse := func(t *testing.T, sandbox string) (*Agent, []*Error, error) {
		t.Helper()
		path := filepath.Join(dir, "a.json")
		body := `{"tag": "OpenAIAgentDescription", "contents": {"slug": "a", "flavor": "OpenAIv1",
			"modelUrl": "http://localhost/v1", "modelName": "m", "sandbox": ` + sandbox + `}}`
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return ParseFile(path)
	}
	a, warnings, err := parse(t, `{"network": false, "required": true, "writable": ["out"], "readable": ["/srv"],
		"limits": {"cpuSeconds": 5, "memoryMB": 256, "processes": 400, "fileSizeMB": 10, "threads": 3}}`)
	if err != nil {
		t.Fatal(err)
	}
	s := a.Sandbox
	if !s.Written || s.Disabled || !s.Required || s.Network == nil || *s.Network ||
		s.Writable[0] != filepath.Join(dir, "out") || s.Readable[0] != "/srv" ||
		s.Limits != (SandboxLimits{CPUSeconds: 5, MemoryMB: 256, Processes: 400, FileSizeMB: 10}) {
		t.Errorf("sandbox = %+v", s)
	}
	if len(warnings) != 1 || warnings[0].Field != "contents.sandbox.limits.threads" {
		t.Errorf("warnings = %v, want one for the unknown limit", warnings)
	}
	for _, tc := range []struct{ sandbox, field string }{
		{`{"enabled": false, "required": true}`, "contents.sandbox.required"},
		{`{"limits": {"processes": 10}}`, "contents.sandbox.limits.processes"},
		{`{"network": "yes"}`, "contents.sandbox.network"},
	} {
		_, _, err := parse(t, tc.sandbox)
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: error %v, want one naming %s", tc.sandbox, err, tc.field)
		}
	}
}
