package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
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

	"connectrpc.com/connect"
	"go.uber.org/goleak"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/sandbox"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// binDir holds the agents binary the process tests build; TestMain
// removes it.
var binDir = sync.OnceValues(func() (string, error) { return os.MkdirTemp("", "agents-bin-") })

func TestMain(m *testing.M) {
	// The test binary is the sandbox's launcher, as the agents binary
	// is: the servers the tests run in the process confine their tools.
	sandbox.Main()
	// Every server a test starts in the process ends with it.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if dir, err := binDir(); err == nil {
			_ = os.RemoveAll(dir)
		}
		os.Exit(code)
	}))
}

// buildBinary builds the agents command once per test binary run.
var buildBinary = sync.OnceValues(func() (string, error) {
	dir, err := binDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "agents")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/agents-os/agents/backend/cmd/agents").CombinedOutput()
	if err != nil {
		return "", errors.New(string(out))
	}
	return bin, nil
})

// process is an `agents serve` running as a child process.
type process struct {
	t      *testing.T
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan struct{}
	url    string
	socket string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startServe runs the binary with args and waits until it is ready.
func startServe(t *testing.T, dir string, args ...string) *process {
	t.Helper()
	bin, err := buildBinary()
	if err != nil {
		t.Fatalf("build agents: %v", err)
	}
	port := freePort(t)
	p := &process{t: t, stderr: &syncBuffer{}, done: make(chan struct{}),
		url: "http://127.0.0.1:" + strconv.Itoa(port), socket: filepath.Join(dir, "agents.sock")}
	p.cmd = exec.Command(bin, append([]string{"serve", "--port", strconv.Itoa(port), "--socket", p.socket}, args...)...)
	p.cmd.Dir = dir
	p.cmd.Env = []string{"HOME=" + dir, "XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "XDG_DATA_HOME=" + filepath.Join(dir, "data"), "PATH=" + os.Getenv("PATH")}
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	for range 300 {
		if res, err := http.Get(p.url + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-p.done:
			t.Fatalf("serve exited early: %s", p.stderr)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("serve not ready:\n%s", p.stderr)
	return nil
}

// exitCode waits (generously) for the process to end and returns its exit
// status, -1 when a signal ended it.
func (p *process) exitCode() int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		p.t.Fatalf("serve did not exit:\n%s", p.stderr)
	}
	return p.cmd.ProcessState.ExitCode()
}

// sessions is a Connect client over the Unix socket.
func (p *process) sessions() agentsv1connect.SessionServiceClient {
	c, err := client.Dial(p.socket, "")
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(c.Close)
	return c.Sessions
}

func TestSIGTERMStopsGracefullyAndTheSessionSurvives(t *testing.T) {
	t.Parallel()
	for _, db := range []struct {
		name string
		dsn  func(t *testing.T, dir string) string
	}{
		{"sqlite", func(t *testing.T, dir string) string { return filepath.Join(dir, "agents.db") }},
		{"postgres", func(t *testing.T, _ string) string { return pgtest.DSN(t) }},
	} {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testSIGTERM(t, dir, db.dsn(t, dir))
		})
	}
}

// testSIGTERM stops a server mid-run with SIGTERM and starts it again on
// the same database.
func testSIGTERM(t *testing.T, dir, dsn string) {
	// A long, slow answer: the run is mid-stream when the signal comes.
	model := fakellmtest.Start(t, fakellm.Rules{Default: &fakellm.Reply{
		Text:      strings.Repeat("word ", 60),
		ChunkSize: 5, ChunkDelay: "50ms",
	}})
	agent := filepath.Join(dir, "slow.json")
	writeFile(t, agent, agentJSON("slow", ""), 0o644)
	args := []string{"--agent-file", agent, "--db", dsn, "--offline-model", model.URL(), "--shutdown-grace", "30s"}
	p := startServe(t, dir, args...)

	// An SSE client on TCP follows everything.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/v1/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("open SSE: %v %v", err, res)
	}
	defer res.Body.Close()
	lines := make(chan string, 1024)
	streamErr := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		streamErr <- sc.Err()
		close(lines)
	}()

	// A run starts over the Unix socket.
	created, err := p.sessions().CreateSession(ctx, connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "slow", Message: &agentsv1.Message{Text: "talk for a while"}}))
	if err != nil {
		t.Fatal(err)
	}
	id := created.Msg.GetSession().GetMeta().GetId()
	waitFor(t, lines, "event: text.delta")

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The stream ends cleanly (no reset, no truncated chunk), and the
	// process exits 0.
	for range lines {
	}
	if err := <-streamErr; err != nil {
		t.Errorf("the event stream ended with %v, want a clean end", err)
	}
	if code := p.exitCode(); code != 0 {
		t.Fatalf("exit status = %d, want 0\n%s", code, p.stderr)
	}
	log := p.stderr.String()
	for _, want := range []string{`"msg":"shutting down"`, `"msg":"stopped"`} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %s:\n%s", want, log)
		}
	}
	if _, err := os.Stat(p.socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket file is still there after shutdown: %v", err)
	}

	// After a restart the session is there with its message, and its run
	// resumes and finishes.
	again := startServe(t, dir, args...)
	got, err := again.sessions().GetSession(context.Background(), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, Wait: true}))
	if err != nil {
		t.Fatalf("get session after restart: %v", err)
	}
	s := got.Msg.GetSession()
	if s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Fatalf("status after restart = %v (%s), want ready", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason())
	}
	turns := s.GetTurns()
	if len(turns) < 2 || turns[0].GetUser().GetText() != "talk for a while" || !strings.HasPrefix(turns[len(turns)-1].GetLlm().GetText(), "word word") {
		t.Errorf("turns after restart = %v, want the message and the finished answer", turns)
	}
	if err := again.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := again.exitCode(); code != 0 {
		t.Errorf("second server exit status = %d, want 0", code)
	}
}

func TestASecondSignalStopsAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	agent := filepath.Join(dir, "idle.json")
	writeFile(t, agent, agentJSON("idle", ""), 0o644)
	p := startServe(t, dir, "--agent-file", agent, "--db", filepath.Join(dir, "agents.db"), "--shutdown-grace", "10m")

	// A request whose body never comes holds a graceful stop for the whole
	// (long) grace. "100 Continue" says its handler is reading the body.
	conn, err := net.Dial("tcp", strings.TrimPrefix(p.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.Contains(status, "100 Continue") {
		t.Fatalf("status line %q (%v), want 100 Continue", status, err)
	}

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(p.stderr.String(), `"msg":"shutting down"`) {
		select {
		case <-p.done:
			t.Fatalf("serve exited before the second signal:\n%s", p.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Well inside the ten-minute grace, the process is gone, ended by the
	// signal rather than by a graceful exit.
	if code := p.exitCode(); code != -1 {
		t.Errorf("exit status = %d, want the signal's (-1)\n%s", code, p.stderr)
	}
}

// waitFor reads lines until one equals want.
func waitFor(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("stream ended before %q", want)
			}
			if l == want {
				return
			}
		case <-timeout:
			t.Fatalf("no %q within 30s", want)
		}
	}
}
