package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Backoff between restarts of a server that keeps failing: it doubles
// from backoffMin to backoffMax, and starts over once a server stayed up
// for stableAfter.
const (
	backoffMin  = 250 * time.Millisecond
	backoffMax  = time.Minute
	stableAfter = time.Minute
)

// State is where a server is in its life.
type State string

// The server states.
const (
	// StateIdle: not started yet; it starts on first need.
	StateIdle State = "idle"
	// StateRunning: connected, its tools listed.
	StateRunning State = "running"
	// StateFailed: it could not be started, or it crashed and is not back
	// yet; Error says why.
	StateFailed State = "failed"
)

var errPoolClosed = errors.New("the server is stopping")

// protocolVersion is the MCP version the client asks for. Under it a
// server's change notifications come on the session itself; under later
// versions they need a subscription stream the client opens after
// connecting, which may not be listening yet when a change comes right
// after a restart.
const protocolVersion = "2025-11-25"

// server is one connection to one MCP server, started on first need and
// restarted when it crashes.
type server struct {
	pool *Pool
	c    conn

	mu       sync.Mutex
	session  *mcp.ClientSession
	stopProc func()
	// exited is closed when a stdio server's process has exited: a
	// session over a dead process is not handed out, even before watch
	// has noticed.
	exited    <-chan struct{}
	starting  chan struct{} // closed when the start in flight ends
	tools     []*mcp.Tool
	state     State
	err       error
	failures  int
	retryAt   time.Time
	startedAt time.Time
	closed    bool

	// progress routes progress notifications to the call that asked for
	// them, by progress token.
	progress sync.Map
	tokens   atomic.Int64
}

func newServer(p *Pool, c conn) *server {
	return &server{pool: p, c: c, state: StateIdle}
}

// ensure returns a live session, starting the server when none is. A
// server in its backoff after a failure is tried again only once the
// backoff is over: wait says whether to wait for that, or to fail at once.
func (s *server) ensure(ctx context.Context, wait bool) (*mcp.ClientSession, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, errPoolClosed
		}
		if s.session != nil {
			cs, exited := s.session, s.exited
			s.mu.Unlock()
			if !closed(exited) {
				return cs, nil
			}
			s.lost(cs, "its process exited")
			continue
		}
		if ch := s.starting; ch != nil {
			s.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if d := time.Until(s.retryAt); d > 0 {
			err := s.err
			s.mu.Unlock()
			if !wait {
				return nil, err
			}
			select {
			case <-time.After(d):
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		ch := make(chan struct{})
		s.starting = ch
		s.mu.Unlock()
		err := s.start()
		close(ch)
		if err != nil {
			return nil, err
		}
	}
}

// start connects to the server and lists its tools; on failure the
// server waits out a backoff before the next try. The connection lives
// with the pool, not with whoever needed it first.
func (s *server) start() error {
	ctx, cancel := context.WithTimeout(s.pool.ctx, s.pool.opts.StartTimeout)
	defer cancel()
	cs, stop, exited, tools, err := s.connect(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.starting = nil
	if err == nil && s.closed {
		err = errPoolClosed
	}
	if err != nil {
		if stop != nil {
			go stop()
		}
		s.failed(err)
		return s.err
	}
	before := s.tools
	s.session, s.stopProc, s.exited, s.tools = cs, stop, exited, tools
	s.state, s.err, s.startedAt = StateRunning, nil, time.Now()
	s.pool.wg.Add(1)
	go s.watch(cs)
	if before != nil && !sameTools(before, tools) {
		go s.pool.changed()
	}
	return nil
}

// failed records a failure and sets the backoff; s.mu is held.
func (s *server) failed(err error) {
	if !s.startedAt.IsZero() && time.Since(s.startedAt) > stableAfter {
		s.failures = 0
	}
	s.failures++
	s.state = StateFailed
	s.err = fmt.Errorf("MCP server %s: %w", s.c.Name, err)
	s.retryAt = time.Now().Add(backoff(s.failures))
}

func backoff(failures int) time.Duration {
	d := backoffMin << min(failures-1, 16)
	return min(d, backoffMax)
}

func (s *server) connect(ctx context.Context) (*mcp.ClientSession, func(), <-chan struct{}, []*mcp.Tool, error) {
	t, stop, err := s.c.open(s.pool.opts.Reaper, s.pool.opts.Sandbox)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("%s: %w", s.c.target(), err)
	}
	var exited <-chan struct{}
	if e, ok := t.(*exitReporting); ok {
		exited = e.group.Exited()
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agents", Version: "1"}, &mcp.ClientOptions{
		Logger:                      s.pool.log,
		Capabilities:                &mcp.ClientCapabilities{},
		ToolListChangedHandler:      func(context.Context, *mcp.ToolListChangedRequest) { go s.refresh() },
		ProgressNotificationHandler: s.onProgress,
	})
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		return nil, stop, nil, nil, describeErr(s.c, t, err)
	}
	tools, err := listTools(ctx, cs)
	if err != nil {
		_ = cs.Close()
		return nil, stop, nil, nil, describeErr(s.c, t, err)
	}
	return cs, stop, exited, tools, nil
}

func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var tools []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// watch waits for the session to end.
func (s *server) watch(cs *mcp.ClientSession) {
	defer s.pool.wg.Done()
	reason := "the connection closed"
	if err := cs.Wait(); err != nil {
		reason = err.Error()
	}
	s.lost(cs, reason)
}

// lost handles the end of a session the server did not close: the
// server crashed. It is restarted after a backoff, in the background, so
// that it is back before the next call if it can be. A session already
// handled is left alone.
func (s *server) lost(cs *mcp.ClientSession, reason string) {
	s.mu.Lock()
	if s.session != cs || s.closed {
		s.mu.Unlock()
		return
	}
	stop := s.stopProc
	s.session, s.stopProc, s.exited = nil, nil, nil
	s.failed(fmt.Errorf("%s stopped: %s", s.c.target(), reason))
	delay := time.Until(s.retryAt)
	s.mu.Unlock()
	_ = cs.Close()
	stop()
	s.pool.log.Warn("MCP server stopped; restarting", "server", s.c.Name, "reason", reason, "in", delay)
	s.pool.wg.Add(1)
	go s.restart(delay)
}

func closed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// restart brings a crashed server back after delay, trying again with
// backoff until it is up or the pool closes.
func (s *server) restart(delay time.Duration) {
	defer s.pool.wg.Done()
	for {
		select {
		case <-time.After(delay):
		case <-s.pool.ctx.Done():
			return
		}
		_, err := s.ensure(s.pool.ctx, true)
		if err == nil || errors.Is(err, errPoolClosed) || s.pool.ctx.Err() != nil {
			return
		}
		s.pool.log.Warn("MCP server did not restart", "server", s.c.Name, "err", err)
		s.mu.Lock()
		delay = time.Until(s.retryAt)
		s.mu.Unlock()
	}
}

// refresh lists the tools again after the server said they changed.
func (s *server) refresh() {
	s.mu.Lock()
	cs := s.session
	s.mu.Unlock()
	if cs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(s.pool.ctx, s.pool.opts.StartTimeout)
	defer cancel()
	tools, err := listTools(ctx, cs)
	if err != nil {
		s.pool.log.Warn("MCP server tools not listed again", "server", s.c.Name, "err", err)
		return
	}
	s.mu.Lock()
	same := s.session == cs && sameTools(s.tools, tools)
	if s.session == cs {
		s.tools = tools
	}
	s.mu.Unlock()
	if !same {
		s.pool.changed()
	}
}

// stop ends the server for good.
func (s *server) stop() {
	s.mu.Lock()
	s.closed = true
	cs, stop := s.session, s.stopProc
	s.session, s.stopProc = nil, nil
	s.mu.Unlock()
	if cs != nil {
		_ = cs.Close()
	}
	if stop != nil {
		stop()
	}
}

// status reports the server's state.
func (s *server) status() (State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state, s.err
}

// known returns the tools listed last, without starting anything.
func (s *server) known() []*mcp.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

// call calls one tool of the server. Progress the server reports for the
// call goes to progress.
func (s *server) call(ctx context.Context, name string, args json.RawMessage, progress func(string)) (*mcp.CallToolResult, error) {
	cs, err := s.ensure(ctx, true)
	if err != nil {
		return nil, err
	}
	token := "call-" + strconv.FormatInt(s.tokens.Add(1), 10)
	if progress != nil {
		s.progress.Store(token, progress)
		defer s.progress.Delete(token)
	}
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	params.SetProgressToken(token)
	res, err := cs.CallTool(ctx, params)
	if err != nil && ctx.Err() == nil && !answered(err) {
		// The connection failed during the call: the server went away,
		// or its answer was refused (larger than maxMessageBytes), which
		// ends the session too. The next call must not get this session,
		// even before watch notices.
		s.lost(cs, err.Error())
	}
	return res, err
}

// answered reports whether a call's error is the server's own JSON-RPC
// error: the session is fine.
func answered(err error) bool {
	var rpc *jsonrpc.Error
	return errors.As(err, &rpc)
}

func (s *server) onProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	token, _ := req.Params.ProgressToken.(string)
	report, ok := s.progress.Load(token)
	if !ok {
		return
	}
	report.(func(string))(progressLine(req.Params))
}

// progressLine is how a progress notification reads in tool.progressed.
func progressLine(p *mcp.ProgressNotificationParams) string {
	amount := strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total > 0 {
		amount += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
	}
	if p.Message == "" {
		return amount
	}
	return p.Message + " (" + amount + ")"
}

// sameTools reports whether two listings offer the same tools.
func sameTools(a, b []*mcp.Tool) bool {
	return slices.EqualFunc(a, b, func(x, y *mcp.Tool) bool {
		return x.Name == y.Name && x.Description == y.Description && string(schemaOf(x)) == string(schemaOf(y))
	})
}
