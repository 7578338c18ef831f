package cli

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/config"
	"github.com/agents-os/agents/backend/internal/server"
)

// Attaching to something that is not a usable agents server fails before
// the screen is taken over: these run without a terminal.
func TestTUIAttachFailsFastWithTheReason(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	agentsDir := filepath.Join(dir, "agents")
	writeFile(t, filepath.Join(agentsDir, "good.json"), agentJSON("good", ""), 0o644)
	cfg := writeConfig(t, dir, "agents.json", agentsDir)
	tokens, err := server.ParseTokens([]byte(`{"tokens": [{"token": "alice-token-0123456789", "owner": "alice"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	withAuth := serveForTest(t, env, cfg, tokens)

	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	notAgents := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html>a web site</html>")
	}))
	t.Cleanup(notAgents.Close)
	missing := filepath.Join(dir, "missing.sock")

	tests := []struct {
		name string
		args []string
		says []string
	}{
		{"a dead port", []string{"--attach", deadURL}, []string{deadURL, "connection refused", "agents serve"}},
		{"a missing socket", []string{"--attach", missing}, []string{missing, "no such socket"}},
		{"a missing socket as unix://", []string{"--attach", "unix://" + missing}, []string{missing, "no such socket"}},
		{"a server that is not agents", []string{"--attach", notAgents.URL}, []string{notAgents.URL, "not an agents server"}},
		{"a wrong token", []string{"--attach", withAuth.url, "--token", "wrong-token-0123456789"}, []string{withAuth.url, "unauthenticated", "not valid"}},
		{"no token", []string{"--attach", withAuth.url}, []string{withAuth.url, "token is required", "--token-file"}},
		{"junk", []string{"--attach", "localhost:7420"}, []string{"--attach", "want http(s)://"}},
		{"an unknown session", []string{"--attach", withAuth.url, "--token", "alice-token-0123456789", "--session", "ffff"}, []string{"--session", `no session id starts with "ffff"`}},
		{"an embedded-server flag", []string{"--attach", withAuth.url, "--db", filepath.Join(dir, "x.db")}, []string{"--db", "does not apply with --attach"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			code, out, errOut := run(t, env, append([]string{"tui", "--log-file", filepath.Join(t.TempDir(), "tui.log")}, tc.args...)...)
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("took %s to fail", took)
			}
			if code == 0 {
				t.Fatalf("exit 0, want a failure; stdout %q", out)
			}
			for _, s := range tc.says {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr %q lacks %q", errOut, s)
				}
			}
			if out != "" {
				t.Errorf("stdout %q: nothing is shown before the check passes", out)
			}
		})
	}
}

// The embedded TUI's server is the one serve would start, on the
// in-process transport, logging to the log file only.
func TestTUIEmbeddedServerLogsToItsFileAndServesTheDatabase(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	agentsDir := filepath.Join(dir, "agents")
	writeFile(t, filepath.Join(agentsDir, "good.json"), agentJSON("good", ""), 0o644)
	cfg := writeConfig(t, dir, "agents.json", agentsDir)

	logPath := filepath.Join(dir, "logs", "tui.log")
	logFile, err := openLog(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	var stderr strings.Builder
	a := &app{launcher: true, stdout: io.Discard, stderr: &stderr, lookupEnv: env, flags: config.Flags{ConfigFile: cfg}}
	c, err := a.dialEmbedded(context.Background(), clientFlags{}, embedOptions{recover: true, log: slog.New(slog.NewTextHandler(logFile, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Check(context.Background()); err != nil {
		t.Fatalf("Check: %v", err)
	}
	res, err := c.Sessions.CreateSession(context.Background(), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "good", Title: "from the tui"}))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()

	if stderr.Len() != 0 {
		t.Errorf("the server wrote to stderr: %q", stderr.String())
	}
	logged, err := os.ReadFile(logPath)
	if err != nil || !strings.Contains(string(logged), "agents loaded") {
		t.Errorf("log file %q (%v), want the server's log", logged, err)
	}
	if info, err := os.Stat(logPath); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("log file mode %v (%v), want 0600", info.Mode().Perm(), err)
	}
	// The session is in the configured database, where the next server
	// finds it.
	code, out, _ := run(t, env, "sessions", "ls", "--config", cfg)
	if id := res.Msg.GetSession().GetMeta().GetId(); code != 0 || !strings.Contains(out, id) {
		t.Errorf("sessions ls = %d:\n%s\nwant %s", code, out, id)
	}
}
