package devtools

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

// project is a working directory with src/ (allowed), secret/ (not) and
// a link from src/ to secret/, under a sandbox allowing src/ recursively
// and files of at most 64 bytes.
func project(t *testing.T) (tool.Tool, string) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"src/main.go":   "package main\n\nfunc main() {\n}\n",
		"src/big.txt":   strings.Repeat("x", 100) + "\n",
		"secret/key":    "hunter2\n",
		"src/.hidden":   "h\n",
		"src/sub/a.txt": "a\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "secret"), filepath.Join(dir, "src", "escape")); err != nil {
		t.Fatal(err)
	}
	box := agentfile.BuiltinToolbox{Kind: agentfile.DeveloperToolboxKind, Name: "dev",
		Capabilities: []string{"read-file-range", "write-file-range", "patch-file", "list-directory", "help"},
		Sandbox: agentfile.FileSandbox{Name: "src-only", MaxFileSize: 64,
			Predicate: agentfile.PathPredicate{Kind: agentfile.PredDirectoryRecursive, Path: filepath.Join(dir, "src")}}}
	return New(box, dir), dir
}

func call(t *testing.T, tl tool.Tool, args string, want session.ResultStatus) string {
	t.Helper()
	a, err := tool.DecodeArgs(tl.Spec(), args)
	if err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	r := tl.Execute(context.Background(), tool.Call{ID: "c1", Name: tl.Spec().Name, Args: a})
	if r.Status != want {
		t.Fatalf("%s = %v %q, want %v", args, r.Status, r.Text, want)
	}
	return r.Text
}

func TestFilesOutsideTheSandboxOrOverItsSizeAreRefused(t *testing.T) {
	t.Parallel()
	dev, dir := project(t)
	for _, c := range []struct{ args, want string }{
		{`{"capability": "read-file-range", "path": "secret/key"}`, "access denied: secret/key is outside the file sandbox src-only"},
		{`{"capability": "read-file-range", "path": "src/../secret/key"}`, "outside the file sandbox"},
		{`{"capability": "read-file-range", "path": "` + filepath.Join(dir, "secret", "key") + `"}`, "outside the file sandbox"},
		{`{"capability": "read-file-range", "path": "src/escape/key"}`, "outside the file sandbox"},
		{`{"capability": "write-file-range", "path": "src/escape/new.txt", "ranges": "head", "contentBlocks": ["x"]}`, "outside the file sandbox"},
		{`{"capability": "write-file-range", "path": "secret/key", "ranges": "1", "contentBlocks": ["x"]}`, "outside the file sandbox"},
		{`{"capability": "patch-file", "path": "secret/key", "patch": "@@ -1 +1 @@\n-hunter2\n+x\n"}`, "outside the file sandbox"},
		{`{"capability": "list-directory", "path": "secret"}`, "outside the file sandbox"},
		{`{"capability": "read-file-range", "path": "src/big.txt"}`, "is 101 bytes, over the file sandbox's maximum of 64 bytes"},
		{`{"capability": "write-file-range", "path": "src/main.go", "ranges": "tail", "contentBlocks": ["` + strings.Repeat("y", 80) + `"]}`, "the result is refused"},
		{`{"capability": "read-file-range", "path": "src/missing.go"}`, "file not found"},
	} {
		if got := call(t, dev, c.args, session.ResultError); !strings.Contains(got, c.want) {
			t.Errorf("%s = %q, want …%s…", c.args, got, c.want)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "secret", "key")); string(data) != "hunter2\n" {
		t.Errorf("secret/key = %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "secret", "new.txt")); err == nil {
		t.Error("a file was written through the link")
	}
}

func TestReadWriteAndPatchLineRanges(t *testing.T) {
	t.Parallel()
	dev, dir := project(t)
	got := call(t, dev, `{"capability": "read-file-range", "path": "src/main.go", "ranges": "1,3-4"}`, session.ResultOK)
	if !strings.Contains(got, `"content":"1\tpackage main\n3\tfunc main() {\n4\t}\n"`) || !strings.Contains(got, `"linesRead":3`) || !strings.Contains(got, `"totalLineCount":4`) {
		t.Errorf("read = %s", got)
	}

	call(t, dev, `{"capability": "write-file-range", "path": "src/new.txt", "ranges": "head", "contentBlocks": ["one\ntwo"]}`, session.ResultOK)
	if data, _ := os.ReadFile(filepath.Join(dir, "src", "new.txt")); string(data) != "one\ntwo\n" {
		t.Errorf("created = %q", data)
	}
	got = call(t, dev, `{"capability": "write-file-range", "path": "src/main.go", "ranges": "1,3-4", "contentBlocks": ["package app", "func run() {}"]}`, session.ResultOK)
	if !strings.Contains(got, `"rangesModified":2`) || !strings.Contains(got, `"linesWritten":2`) {
		t.Errorf("write = %s", got)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "src", "main.go")); string(data) != "package app\n\nfunc run() {}\n" {
		t.Errorf("written = %q", data)
	}
	if got := call(t, dev, `{"capability": "write-file-range", "path": "src/main.go", "ranges": "9", "contentBlocks": ["x"]}`, session.ResultError); !strings.Contains(got, "past the end") {
		t.Errorf("write past the end = %s", got)
	}

	got = call(t, dev, `{"capability": "patch-file", "path": "src/main.go", "patch": "@@ -1,3 +1,3 @@\n-package app\n+package tool\n \n func run() {}\n"}`, session.ResultOK)
	if !strings.Contains(got, `"hunksApplied":1`) || !strings.Contains(got, `"linesChanged":2`) {
		t.Errorf("patch = %s", got)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "src", "main.go")); string(data) != "package tool\n\nfunc run() {}\n" {
		t.Errorf("patched = %q", data)
	}
	if got := call(t, dev, `{"capability": "patch-file", "path": "src/main.go", "patch": "@@ -1 +1 @@\n-package nope\n+package x\n"}`, session.ResultError); !strings.Contains(got, "does not apply") {
		t.Errorf("mismatched patch = %s", got)
	}

	got = call(t, dev, `{"capability": "list-directory", "path": "src", "recursive": true}`, session.ResultOK)
	for _, want := range []string{`"path":"main.go"`, `"path":"sub/a.txt"`, `"path":"escape","type":"symlink"`} {
		if !strings.Contains(got, want) {
			t.Errorf("listing lacks %s: %s", want, got)
		}
	}
	if strings.Contains(got, ".hidden") || strings.Contains(got, "key") {
		t.Errorf("listing shows hidden or linked files: %s", got)
	}
	if got := call(t, dev, `{"capability": "help"}`, session.ResultOK); !strings.Contains(got, "patch-file {path, patch}") {
		t.Errorf("help = %s", got)
	}
}
