package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agents-os/agents/tools/fakellm"
)

// lockedBuffer collects stderr, which request handlers write concurrently.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunServesAndRecords(t *testing.T) {
	t.Parallel()
	rulesPath := writeFile(t, "rules.json", `{"rules": [{"name": "echo", "reply": {"text": "echo: {{last_user}}"}}]}`)
	recordPath := filepath.Join(t.TempDir(), "requests.jsonl")

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stdout, stdoutWriter := io.Pipe()
	stderr := &lockedBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--rules", rulesPath, "--addr", "127.0.0.1:0", "--record", recordPath}, stdoutWriter, stderr)
		stdoutWriter.Close()
	}()

	first, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URL line: %v (stderr: %s)", err, stderr)
	}
	url := strings.TrimSpace(first)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1") {
		t.Fatalf("first line = %q, want http://127.0.0.1:PORT/v1", first)
	}

	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/chat/completions",
		// A multi-line body must still make a single record line.
		strings.NewReader("{\n  \"model\": \"m\",\n  \"messages\": [{\"role\": \"user\", \"content\": \"ping\"}]\n}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer test-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Choices []struct{ Message struct{ Content string } }
	}
	err = json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	if err != nil || len(answer.Choices) != 1 || answer.Choices[0].Message.Content != "echo: ping" {
		t.Fatalf("answer = %+v, %v; want echo: ping", answer, err)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run = %v, want a clean stop", err)
	}

	data, err := os.ReadFile(recordPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 1 {
		t.Fatalf("record file has %d lines, want 1:\n%s", len(lines), data)
	}
	var recorded fakellm.Request
	if err := json.Unmarshal([]byte(lines[0]), &recorded); err != nil {
		t.Fatal(err)
	}
	if recorded.LastUserText() != "ping" || recorded.RuleName != "echo" || recorded.Header.Get("Authorization") != "Bearer test-key" {
		t.Errorf("recorded = %+v", recorded)
	}
	if log := stderr.String(); !strings.Contains(log, `request 0: model "m"`) || !strings.Contains(log, `rule 0 ("echo")`) {
		t.Errorf("stderr = %q, want a line about the request", log)
	}
}

func TestRunCheck(t *testing.T) {
	t.Parallel()
	good := writeFile(t, "good.json", `{"rules": [{"reply": {}}, {"reply": {"text": "x"}}]}`)
	var stdout bytes.Buffer
	if err := run(t.Context(), []string{"--rules", good, "--check"}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "2 rules, OK") {
		t.Errorf("stdout = %q, want a summary", stdout.String())
	}

	bad := writeFile(t, "bad.json", `{"rules": [{"reply": {"chunk_delay": "soon"}}]}`)
	err := run(t.Context(), []string{"--rules", bad, "--check"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "reply.chunk_delay") {
		t.Errorf("err = %v, want the file and field named", err)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want error
	}{
		{"unknown flag", []string{"--nope"}, errUsage},
		{"stray argument", []string{"rules.json"}, errUsage},
		{"check without rules", []string{"--check"}, errUsage},
		{"negative context window", []string{"--context-window", "-1"}, errUsage},
		{"help", []string{"-h"}, flag.ErrHelp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			err := run(t.Context(), tt.args, io.Discard, &stderr)
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			if !strings.Contains(stderr.String(), "-rules") {
				t.Errorf("stderr = %q, want the usage", stderr.String())
			}
		})
	}
}

// startRun runs the command with args until the test ends and returns the
// base URL it prints.
func startRun(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	stdout, stdoutWriter := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"--addr", "127.0.0.1:0", "--quiet"}, args...), stdoutWriter, io.Discard)
		stdoutWriter.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run = %v, want a clean stop", err)
		}
	})
	first, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URL line: %v", err)
	}
	return strings.TrimSpace(first)
}

func TestRunContextWindow(t *testing.T) {
	t.Parallel()
	// 400 characters of user text: 100 prompt tokens.
	long := strings.Repeat("abcd", 100)
	tests := []struct {
		name       string
		rules      string
		args       []string
		wantStatus int
	}{
		{"unlimited by default", `{"rules": []}`, nil, http.StatusOK},
		{"flag", `{"rules": []}`, []string{"--context-window", "99"}, http.StatusBadRequest},
		{"flag large enough", `{"rules": []}`, []string{"--context-window", "100"}, http.StatusOK},
		{"file", `{"context_window": 99, "rules": []}`, nil, http.StatusBadRequest},
		{"flag replaces the file's window", `{"context_window": 99, "rules": []}`, []string{"--context-window", "1000"}, http.StatusOK},
		{"flag 0 lifts the file's window", `{"context_window": 99, "rules": []}`, []string{"--context-window", "0"}, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url := startRun(t, append([]string{"--rules", writeFile(t, "rules.json", tt.rules)}, tt.args...)...)
			resp, err := http.Post(url+"/chat/completions", "application/json",
				strings.NewReader(`{"model": "m", "messages": [{"role": "user", "content": "`+long+`"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d: %s", resp.StatusCode, tt.wantStatus, data)
			}
		})
	}
}

func TestRunFailsOnBusyAddress(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = run(t.Context(), []string{"--addr", ln.Addr().String()}, io.Discard, io.Discard)
	if err == nil {
		t.Error("run listened on a busy address")
	}
}

func TestBaseURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ addr, want string }{
		{"127.0.0.1:8080", "http://127.0.0.1:8080/v1"},
		{"0.0.0.0:8080", "http://127.0.0.1:8080/v1"},
		{"[::]:8080", "http://[::1]:8080/v1"},
		{"[::1]:8080", "http://[::1]:8080/v1"},
	}
	for _, tt := range tests {
		addr, err := net.ResolveTCPAddr("tcp", tt.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := baseURL(addr); got != tt.want {
			t.Errorf("baseURL(%s) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}
