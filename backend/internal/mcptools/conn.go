package mcptools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-os/agents/backend/internal/bashtool"
)

// stopGrace is how long a stdio server has to exit once its stdin is
// closed before its process group is killed.
const stopGrace = 2 * time.Second

// conn is a server fully resolved: everything needed to reach it. Two
// declarations that resolve alike share one connection.
type conn struct {
	Name string `json:"name"`
	// Stdio.
	Executable string   `json:"executable,omitempty"`
	Args       []string `json:"args,omitempty"`
	Env        []string `json:"env,omitempty"`
	Dir        string   `json:"dir,omitempty"`
	// Streamable HTTP.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`

	// decl is the key of the connection as declared, before a session's
	// params went into its headers (Toolbox.declared); not part of its
	// own key.
	decl string
}

func (c conn) key() string {
	b, _ := json.Marshal(c)
	return string(b)
}

func (c conn) transportName() string {
	if c.URL != "" {
		return "http"
	}
	return "stdio"
}

// target says where the server is, for people: its command line or URL.
func (c conn) target() string {
	if c.URL != "" {
		return c.URL
	}
	return strings.Join(append([]string{c.Executable}, c.Args...), " ")
}

// open starts the server's process (stdio) or prepares its HTTP client;
// stop ends what open started.
func (c conn) open(reaper *bashtool.Reaper) (t mcp.Transport, stop func(), err error) {
	if c.URL != "" {
		client := &http.Client{Transport: headerTransport{headers: c.Headers, next: http.DefaultTransport}}
		return &mcp.StreamableClientTransport{Endpoint: c.URL, HTTPClient: client, MaxRetries: 2}, func() {}, nil
	}
	cmd := exec.Command(c.Executable, c.Args...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	tail := &tailBuffer{max: 2 << 10}
	cmd.Stderr = tail
	group, err := bashtool.StartGroup(cmd, reaper)
	if err != nil {
		return nil, nil, err
	}
	stop = func() {
		_ = stdin.Close()
		select {
		case <-group.Exited():
		case <-time.After(stopGrace):
		}
		group.Kill()
	}
	return &exitReporting{IOTransport: mcp.IOTransport{Reader: stdout, Writer: stdin}, group: group, stderr: tail}, stop, nil
}

// exitReporting is a stdio transport that can say why its server went
// away: its exit status and the end of its stderr.
type exitReporting struct {
	mcp.IOTransport
	group  *bashtool.Group
	stderr *tailBuffer
}

// exitReason describes how a stdio server ended, or "" while it runs.
func (e *exitReporting) exitReason() string {
	select {
	case <-e.group.Exited():
	case <-time.After(200 * time.Millisecond):
		return ""
	}
	reason := e.group.State().String()
	if tail := strings.TrimSpace(e.stderr.String()); tail != "" {
		reason += ": " + lastLine(tail)
	}
	return reason
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// headerTransport adds the declared headers to every request.
type headerTransport struct {
	headers map[string]string
	next    http.RoundTripper
}

func (h headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	return h.next.RoundTrip(req)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

// describeErr turns a failure to reach a server into a sentence.
func describeErr(c conn, t mcp.Transport, err error) error {
	if e, ok := t.(*exitReporting); ok {
		if reason := e.exitReason(); reason != "" {
			return fmt.Errorf("%s exited (%s)", c.target(), reason)
		}
	}
	return fmt.Errorf("%s: %v", c.target(), err)
}
