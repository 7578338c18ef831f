package cli

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/config"
	"github.com/agents-os/agents/backend/internal/server"
)

// served is a server started by a test on TCP (with tokens) and on a Unix
// socket, as serve would.
type served struct {
	url, socket string
}

func serveForTest(t *testing.T, env func(string) (string, bool), configFile string, tokens *server.Tokens) served {
	t.Helper()
	return serveWith(t, env, configFile, stackOptions{security: server.Security{Tokens: tokens}})
}

// serveWith is serveForTest with the stack's options given.
func serveWith(t *testing.T, env func(string) (string, bool), configFile string, opts stackOptions) served {
	t.Helper()
	a := &app{launcher: true, stdout: io.Discard, stderr: io.Discard, lookupEnv: env, flags: config.Flags{ConfigFile: configFile}}
	res, err := a.resolve()
	if err != nil {
		t.Fatal(err)
	}
	st, err := a.startStack(context.Background(), res, slog.New(slog.DiscardHandler), opts)
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	socket := opts.holder.Socket // where the database's lock file says it answers
	if socket == "" {
		socket = filepath.Join(t.TempDir(), "agents.sock")
	}
	unix, err := listenUnix(socket)
	if err != nil {
		t.Fatal(err)
	}
	servers := []*http.Server{newHTTPServer(st.server.Handler()), newHTTPServer(st.server.LocalHandler())}
	go func() { _ = servers[0].Serve(tcp) }()
	go func() { _ = servers[1].Serve(unix) }()
	t.Cleanup(func() { shutdown(st, servers, embeddedGrace) })
	return served{url: "http://" + tcp.Addr().String(), socket: socket}
}

// createSession creates an idle session of agent through the client layer.
func createSession(t *testing.T, a *app, cf clientFlags, agent, title string) string {
	t.Helper()
	c, err := a.dial(context.Background(), cf, embedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Sessions.CreateSession(context.Background(), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: agent, Title: title}))
	if err != nil {
		t.Fatalf("create session: %v", err)
	}
	return res.Msg.GetSession().GetMeta().GetId()
}

func TestSessionsAndAgentsCommandsOverEveryTransport(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	agentsDir := filepath.Join(dir, "agents")
	writeFile(t, filepath.Join(agentsDir, "good.json"), agentJSON("good", `, "bashToolboxes": [{"tag": "FileSystemDirectory", "contents": {"Path": "tools"}}]`), 0o644)
	writeFile(t, filepath.Join(agentsDir, "tools", "ok"), goodTool, 0o755)
	cfg := writeConfig(t, dir, "agents.json", agentsDir)
	tokens, err := server.ParseTokens([]byte(`{"tokens": [{"token": "alice-token-0123456789", "owner": "alice"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := serveForTest(t, env, cfg, tokens)
	tokenFile := filepath.Join(dir, "alice.token")
	writeFile(t, tokenFile, "alice-token-0123456789\n", 0o600)

	a := &app{launcher: true, stdout: io.Discard, stderr: io.Discard, lookupEnv: env}
	alices := createSession(t, a, clientFlags{attach: srv.url, tokenFile: tokenFile}, "good", "alice's session")
	locals := createSession(t, a, clientFlags{attach: "unix://" + srv.socket}, "good", "the local session")

	overTCP := []string{"--attach", srv.url, "--token-file", tokenFile}
	overSocket := []string{"--attach", srv.socket}
	tests := []struct {
		name      string
		args      []string
		code      int
		want, not []string
	}{
		{"ls over TCP shows the token's owner's sessions", append([]string{"sessions", "ls"}, overTCP...), 0, []string{alices, "alice's session", "ready"}, []string{locals}},
		{"ls over the socket acts as the local owner", append([]string{"sessions", "ls"}, overSocket...), 0, []string{locals}, []string{alices}},
		{"ls --all over the socket sees everyone", append([]string{"sessions", "ls", "--all"}, overSocket...), 0, []string{alices, locals, "alice"}, nil},
		{"ls --all needs an admin token", append([]string{"sessions", "ls", "--all"}, overTCP...), 1, nil, nil},
		{"a token from the environment", []string{"sessions", "ls", "--attach", srv.url}, 0, []string{alices}, nil},
		{"show", append([]string{"sessions", "show", alices}, overTCP...), 0, []string{"session  " + alices, "agent    good", "owner    alice"}, nil},
		{"show --json", append([]string{"sessions", "show", alices, "--json"}, overTCP...), 0, []string{`"id": "` + alices + `"`}, nil},
		{"show another owner's session", append([]string{"sessions", "show", locals}, overTCP...), 1, nil, nil},
		{"export", append([]string{"sessions", "export", alices}, overTCP...), 0, []string{"- agent: `good`"}, nil},
		{"export as JSON", append([]string{"sessions", "export", alices, "--format", "json"}, overTCP...), 0, []string{`"id":"` + alices + `"`}, nil},
		{"import", append([]string{"sessions", "import", "-a", "good", convTestFile}, overTCP...), 0, []string{"imported   " + convTestID}, nil},
		{"an import is its importer's", append([]string{"sessions", "show", convTestID}, overTCP...), 0, []string{"owner    alice", "A single dot."}, nil},
		{"another owner's import of it gets an id of its own", append([]string{"sessions", "import", convTestFile}, overSocket...), 0, []string{"imported as a new session: the file's session id is not available here"}, []string{convTestID}},
		{"agents ls", append([]string{"agents", "ls"}, overTCP...), 0, []string{"SLUG", "good", "http://127.0.0.1:1/v1", "a test agent"}, nil},
		{"agents show", append([]string{"agents", "show", "good"}, overSocket...), 0, []string{"agent     good", "bash_ok", "You test."}, nil},
		{"agents show unknown", append([]string{"agents", "show", "nope"}, overSocket...), 1, nil, nil},
		{"rm", append([]string{"sessions", "rm", alices}, overTCP...), 0, []string{"deleted " + alices}, nil},
		{"ls after rm", append([]string{"sessions", "ls"}, overTCP...), 0, nil, []string{alices}},
	}
	envWithToken := func(k string) (string, bool) {
		if k == "AGENTS_TOKEN" {
			return "alice-token-0123456789", true
		}
		return env(k)
	}
	for _, tc := range tests {
		// Sequential: rm changes what later rows see.
		code, out, errOut := run(t, envWithToken, tc.args...)
		checkRun(t, tc.name, code, out, errOut, tc.code, tc.want, tc.not)
	}

	// Without a token, the TCP server refuses and the command says why.
	code, _, errOut := run(t, env, "sessions", "ls", "--attach", srv.url)
	if code == 0 || !strings.Contains(errOut, "unauthenticated") {
		t.Errorf("ls without a token = %d, stderr %q; want a failure naming unauthenticated", code, errOut)
	}
}

func TestSessionsCommandsWithoutAttachUseALocalServer(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	agentsDir := filepath.Join(dir, "agents")
	writeFile(t, filepath.Join(agentsDir, "good.json"), agentJSON("good", ""), 0o644)
	cfg := writeConfig(t, dir, "agents.json", agentsDir)

	// A session made by one in-process server is listed by the next: the
	// commands share the configured database.
	a := &app{launcher: true, stdout: io.Discard, stderr: io.Discard, lookupEnv: env, flags: config.Flags{ConfigFile: cfg}}
	id := createSession(t, a, clientFlags{}, "good", "made locally")
	code, out, errOut := run(t, env, "sessions", "ls", "--config", cfg)
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "made locally") {
		t.Errorf("sessions ls = %d:\n%s%s\nwant the session %s", code, out, errOut, id)
	}
	code, out, _ = run(t, env, "agents", "ls", "--config", cfg)
	if code != 0 || !strings.Contains(out, "good") {
		t.Errorf("agents ls = %d:\n%s", code, out)
	}
	if code, _, errOut := run(t, env, "sessions", "ls", "--attach", "ftp://nowhere"); code == 0 || !strings.Contains(errOut, "--attach") {
		t.Errorf("a bad --attach = %d %q, want a usage error", code, errOut)
	}
}
