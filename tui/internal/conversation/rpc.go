package conversation

import (
	"context"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"connectrpc.com/connect"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/units"
)

// rpcTimeout bounds every call the screen makes: a server that went away
// shows as an error in the status line, never as a frozen screen.
const rpcTimeout = 30 * time.Second

// recentTurns is how many turns a conversation opens with; olderPage is
// how many more each scroll past the top fetches.
const (
	recentTurns = 200
	olderPage   = 100
)

// call runs f with a bounded context.
func call[T any](f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
	defer cancel()
	return f(ctx)
}

func emit(m tea.Msg) tea.Cmd { return func() tea.Msg { return m } }

// status is a command that puts text, or err, on the status line.
func status(text string, err error) tea.Cmd {
	return emit(msgs.Status{Text: text, Err: err})
}

// fetchKind says what a GetSession was for.
type fetchKind int

const (
	fetchAll   fetchKind = iota // the recent turns: (re)load the screen
	fetchOlder                  // a page before the oldest turn loaded
	fetchMeta                   // the summary and pending calls only
)

type sessionMsg struct {
	id      string
	kind    fetchKind
	session *agentsv1.Session
	err     error
}

func (s *Screen) fetch(kind fetchKind) tea.Cmd {
	req := &agentsv1.GetSessionRequest{SessionId: s.id}
	switch kind {
	case fetchAll:
		req.LastTurns = recentTurns
	case fetchOlder:
		before := int32(s.tr.FirstIndex())
		req.BeforeTurn, req.LastTurns = &before, olderPage
	case fetchMeta:
		req.MetaOnly = true
	}
	c, id := s.c, s.id
	return func() tea.Msg {
		resp, err := call(func(ctx context.Context) (*connect.Response[agentsv1.GetSessionResponse], error) {
			return c.GetSession(ctx, connect.NewRequest(req))
		})
		m := sessionMsg{id: id, kind: kind, err: err}
		if err == nil {
			m.session = resp.Msg.GetSession()
		}
		return m
	}
}

type agentsMsg struct {
	id     string
	agents []*agentsv1.AgentDescriptor
	err    error
}

func (s *Screen) fetchAgents() tea.Cmd {
	c, id := s.c, s.id
	return func() tea.Msg {
		resp, err := call(func(ctx context.Context) (*connect.Response[agentsv1.ListAgentsResponse], error) {
			return c.ListAgents(ctx, connect.NewRequest(&agentsv1.ListAgentsRequest{}))
		})
		m := agentsMsg{id: id, err: err}
		if err == nil {
			m.agents = resp.Msg.GetAgents()
		}
		return m
	}
}

// postedMsg is the outcome of a message sent from the composer.
type postedMsg struct {
	id   string
	sent Draft
	resp *agentsv1.PostMessageResponse
	err  error
}

func (s *Screen) post(d Draft, interrupt bool) tea.Cmd {
	c, id := s.c, s.id
	req := &agentsv1.PostMessageRequest{SessionId: id, Message: &agentsv1.Message{Text: d.Text, Attachments: d.Attachments, Interrupt: interrupt}}
	return func() tea.Msg {
		resp, err := call(func(ctx context.Context) (*connect.Response[agentsv1.PostMessageResponse], error) {
			return c.PostMessage(ctx, connect.NewRequest(req))
		})
		m := postedMsg{id: id, sent: d, err: err}
		if err == nil {
			m.resp = resp.Msg
		}
		return m
	}
}

// createdMsg is the outcome of the first message of an unborn session.
type createdMsg struct {
	birth   uint64
	sent    Draft
	session *agentsv1.Session
	err     error
}

// create stores the new session with its first message.
func (s *Screen) create(d Draft) tea.Cmd {
	c, birth := s.c, s.birth
	req := &agentsv1.CreateSessionRequest{Agent: s.meta.GetAgent(), Message: &agentsv1.Message{Text: d.Text, Attachments: d.Attachments}}
	return func() tea.Msg {
		resp, err := call(func(ctx context.Context) (*connect.Response[agentsv1.CreateSessionResponse], error) {
			return c.CreateSession(ctx, connect.NewRequest(req))
		})
		m := createdMsg{birth: birth, sent: d, err: err}
		if err == nil {
			m.session = resp.Msg.GetSession()
		}
		return m
	}
}

// controlMsg is the outcome of a run control: what was done, and the
// session's summary afterwards.
type controlMsg struct {
	id string
	// what names the control in its error ("resume: …"); done is what
	// the status line says once it is done.
	what, done string
	meta       *agentsv1.SessionMeta
	err        error
}

func (s *Screen) control(what, done string, f func(context.Context) (*agentsv1.SessionMeta, string, error)) tea.Cmd {
	id := s.id
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), rpcTimeout)
		defer cancel()
		meta, more, err := f(ctx)
		return controlMsg{id: id, what: what, done: done + more, meta: meta, err: err}
	}
}

func (s *Screen) cancelRun(what, done string) tea.Cmd {
	c, req := s.c, &agentsv1.CancelRunRequest{SessionId: s.id}
	return s.control(what, done, func(ctx context.Context) (*agentsv1.SessionMeta, string, error) {
		resp, err := c.CancelRun(ctx, connect.NewRequest(req))
		if err != nil {
			return nil, "", err
		}
		return resp.Msg.GetMeta(), "", nil
	})
}

func (s *Screen) cancelAttached() tea.Cmd {
	c, req := s.c, &agentsv1.CancelAttachedRequest{SessionId: s.id}
	return s.control("hard cancel", "hard cancel", func(ctx context.Context) (*agentsv1.SessionMeta, string, error) {
		resp, err := c.CancelAttached(ctx, connect.NewRequest(req))
		if err != nil {
			return nil, "", err
		}
		return resp.Msg.GetMeta(), ": " + units.Count(int(resp.Msg.GetCancelled()), "tool call", "tool calls") + " cancelled", nil
	})
}

func (s *Screen) pause() tea.Cmd {
	c, req := s.c, &agentsv1.PauseRequest{SessionId: s.id}
	return s.control("pause", "pausing at the next step", func(ctx context.Context) (*agentsv1.SessionMeta, string, error) {
		resp, err := c.Pause(ctx, connect.NewRequest(req))
		if err != nil {
			return nil, "", err
		}
		return resp.Msg.GetMeta(), "", nil
	})
}

func (s *Screen) resume() tea.Cmd {
	c, req := s.c, &agentsv1.ResumeRequest{SessionId: s.id}
	return s.control("resume", "resumed", func(ctx context.Context) (*agentsv1.SessionMeta, string, error) {
		resp, err := c.Resume(ctx, connect.NewRequest(req))
		if err != nil {
			return nil, "", err
		}
		return resp.Msg.GetMeta(), "", nil
	})
}

// forkedMsg is the outcome of a fork: the new session opens.
type forkedMsg struct {
	id      string
	session *agentsv1.Session
	what    string
	err     error
}

func (s *Screen) fork(req *agentsv1.ForkSessionRequest, what string) tea.Cmd {
	c, id := s.c, s.id
	return func() tea.Msg {
		resp, err := call(func(ctx context.Context) (*connect.Response[agentsv1.ForkSessionResponse], error) {
			return c.ForkSession(ctx, connect.NewRequest(req))
		})
		m := forkedMsg{id: id, what: what, err: err}
		if err == nil {
			m.session = resp.Msg.GetSession()
		}
		return m
	}
}

// exportedMsg is the outcome of an export: where it was written.
type exportedMsg struct {
	id, path string
	err      error
}

// exportTo renders the session as markdown into path, which must not
// exist: an export never replaces a file.
func (s *Screen) exportTo(path string) tea.Cmd {
	c, id := s.c, s.id
	return func() tea.Msg {
		resp, err := call(func(ctx context.Context) (*connect.Response[agentsv1.ExportSessionResponse], error) {
			return c.ExportSession(ctx, connect.NewRequest(&agentsv1.ExportSessionRequest{SessionId: id, Format: agentsv1.ExportFormat_EXPORT_FORMAT_MARKDOWN}))
		})
		if err != nil {
			return exportedMsg{id: id, path: path, err: client.Describe(err)}
		}
		return exportedMsg{id: id, path: path, err: writeNew(path, []byte(resp.Msg.GetContent()))}
	}
}

// writeNew writes data to a file that must not exist yet.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// completedMsg is the outcome of answering or failing a deferred call.
type completedMsg struct {
	id    string
	token string
	// done says what the answer did, for the status line.
	done string
	resp *agentsv1.CompleteCallResponse
	err  error
}

func (s *Screen) complete(req *agentsv1.CompleteCallRequest, done string) tea.Cmd {
	c, id := s.c, s.id
	return func() tea.Msg {
		resp, err := call(func(ctx context.Context) (*connect.Response[agentsv1.CompleteCallResponse], error) {
			return c.CompleteCall(ctx, connect.NewRequest(req))
		})
		m := completedMsg{id: id, token: req.GetToken(), done: done, err: err}
		if err == nil {
			m.resp = resp.Msg
		}
		return m
	}
}
