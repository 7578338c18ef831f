package mcptools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/confine"
	"github.com/agents-os/agents/backend/internal/sandbox"
)

// stopGrace is how long a stdio server has to exit once its stdin is
// closed before its process group is killed.
const stopGrace = 2 * time.Second

// maxMessageBytes bounds one message from an MCP server as the client
// reads it: a stdio line, an event of an HTTP event stream, a whole HTTP
// body otherwise. A server answering more is refused before it is held,
// so no server can grow ours without bound. (What the model reads of a
// result is cut much shorter; see maxResultBytes.) Images and embedded
// resources come base64-encoded, hence the room.
const maxMessageBytes = 8 << 20

// conn is a server fully resolved: everything needed to reach it. Two
// declarations that resolve alike share one connection.
type conn struct {
	Name string `json:"name"`
	// Stdio.
	Executable string   `json:"executable,omitempty"`
	Args       []string `json:"args,omitempty"`
	Env        []string `json:"env,omitempty"`
	Dir        string   `json:"dir,omitempty"`
	// Within, when set, are the only folders the executable may lie in,
	// judged when the process starts (a stored agent's: see confine).
	Within []string `json:"within,omitempty"`
	// Policy, when set, confines the process: what its agent allows,
	// to which open adds its folders; Home is the folder of its own.
	Policy *sandbox.Policy `json:"policy,omitempty"`
	Home   string          `json:"home,omitempty"`
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

// confinement is what the sandbox allows a confined server: its agent's
// policy and its own folder; ok is false for a server that runs
// unconfined.
func (c conn) confinement() (p sandbox.Policy, ok bool) {
	if c.Policy == nil {
		return sandbox.Policy{}, false
	}
	p = *c.Policy
	p.Read = slices.Clone(p.Read)
	if filepath.IsAbs(c.Dir) {
		// The agent file's folder. A stored agent has no file: its
		// server runs in the server's working directory, which it
		// does not get to read.
		p.Read = append(p.Read, c.Dir)
	}
	p.Write = append(slices.Clone(p.Write), c.Home)
	return p, true
}

// confine wraps a confined server's command in the sandbox: it reads
// its program's folders and the agent file's (where it runs, and where
// its relative arguments point), and writes in its own folder. (Its
// tmp is not emptied at start: `agents check` may start the server of
// an agent whose server runs.)
func (c conn) confine(cmd *exec.Cmd, sb *sandbox.Sandbox) error {
	p, ok := c.confinement()
	if !ok {
		return nil
	}
	if err := sandbox.MakeDir(filepath.Join(c.Home, "tmp")); err != nil {
		return err
	}
	p.Read = append(p.Read, programDirs(cmd.Path)...)
	return sb.Wrap(cmd, p)
}

// programDirs are the folders a program needs to read: its own, as named
// and with links followed (npx is a link into npm's package); and, for a
// program in a bin folder, the installation around it (its lib and
// share: a node or a python installed in a folder of its own), unless
// that is a home folder or the root.
func programDirs(program string) []string {
	var dirs []string
	home, _ := os.UserHomeDir()
	add := func(path string) {
		dir := filepath.Dir(path)
		dirs = append(dirs, dir)
		if filepath.Base(dir) != "bin" {
			return
		}
		prefix := filepath.Dir(dir)
		if prefix == "/" || home != "" && (prefix == home || prefix == filepath.Join(home, ".local")) {
			return
		}
		dirs = append(dirs, prefix)
	}
	abs, err := filepath.Abs(program)
	if err != nil {
		return nil
	}
	add(abs)
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		add(real)
	}
	return dirs
}

// open starts the server's process (stdio) or prepares its HTTP client;
// stop ends what open started. A confined server starts in sb.
func (c conn) open(reaper *bashtool.Reaper, sb *sandbox.Sandbox) (t mcp.Transport, stop func(), err error) {
	if c.URL != "" {
		client := &http.Client{Transport: headerTransport{headers: c.Headers, next: http.DefaultTransport}}
		return &mcp.StreamableClientTransport{Endpoint: c.URL, HTTPClient: client, MaxRetries: 2, MaxEventSize: maxMessageBytes}, func() {}, nil
	}
	program := c.Executable
	if len(c.Within) > 0 {
		if program, err = confine.Program(program, c.Within); err != nil {
			return nil, nil, err
		}
	}
	cmd := exec.Command(program, c.Args...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	if err := c.confine(cmd, sb); err != nil {
		return nil, nil, err
	}
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
	return &exitReporting{IOTransport: mcp.IOTransport{Reader: stdout, Writer: stdin, MaxLineLength: maxMessageBytes}, group: group, stderr: tail}, stop, nil
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

// headerTransport adds the declared headers to every request, and bounds
// every answer that is not an event stream (the MCP client bounds each
// event of those itself) at maxMessageBytes: the client reads such a
// body whole.
type headerTransport struct {
	headers map[string]string
	next    http.RoundTripper
}

func (h headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	res, err := h.next.RoundTrip(req)
	if err == nil && !isEventStream(res.Header.Get("Content-Type")) {
		res.Body = &boundedBody{body: res.Body, left: maxMessageBytes}
	}
	return res, err
}

func isEventStream(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && mediaType == "text/event-stream"
}

// errBodyTooLarge is the read error of a body past maxMessageBytes.
var errBodyTooLarge = fmt.Errorf("the MCP server answered more than %d MiB at once; the answer is refused", maxMessageBytes>>20)

// boundedBody reads at most left bytes of body, then fails.
type boundedBody struct {
	body io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errBodyTooLarge
	}
	// One byte more than is left tells a body of exactly the bound from
	// a longer one.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.body.Read(p)
	if int64(n) > b.left {
		n, b.left = int(b.left), -1
		return n, errBodyTooLarge
	}
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.body.Close() }

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
