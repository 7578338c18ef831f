package conversation

import (
	"context"
	"fmt"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"
	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/tabtest"
	"github.com/agents-os/agents/tui/internal/theme"
)

const sid = "5e551011-0000-4000-8000-000000000001"

// fakeServer is the server of one session held in memory, as a
// conversation's Client; it records every request the screen makes.
type fakeServer struct {
	mu          sync.Mutex
	agents      []*agentsv1.AgentDescriptor
	meta        *agentsv1.SessionMeta
	turns       []*agentsv1.Turn
	calls       []*agentsv1.DeferredCall
	live        *agentsv1.TurnInProgress
	seq         uint64
	deltaSeq    uint64
	gets        []*agentsv1.GetSessionRequest
	getErr      error
	posts       []*agentsv1.PostMessageRequest
	postErr     error
	completes   []*agentsv1.CompleteCallRequest
	complErr    error
	forks       []*agentsv1.ForkSessionRequest
	cancels     int
	pauses      int
	resumes     int
	resumeErr   error
	exported    string
	creates     []*agentsv1.CreateSessionRequest
	hardCancels int
	compacts    []*agentsv1.CompactRequest
	compactErr  error
	// others are the other sessions GetSession answers with (helpers).
	others map[string]*agentsv1.Session
}

func (f *fakeServer) CreateSession(_ context.Context, r *connect.Request[agentsv1.CreateSessionRequest]) (*connect.Response[agentsv1.CreateSessionResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.creates = append(f.creates, r.Msg)
	f.meta = &agentsv1.SessionMeta{Id: sid, Agent: r.Msg.GetAgent(), Status: agentsv1.SessionStatus_SESSION_STATUS_RUNNING, TurnCount: 1}
	f.turns = []*agentsv1.Turn{userTurn(0, r.Msg.GetMessage().GetText())}
	return connect.NewResponse(&agentsv1.CreateSessionResponse{Session: &agentsv1.Session{Meta: f.meta, Turns: f.turns}}), nil
}

func (f *fakeServer) CancelAttached(context.Context, *connect.Request[agentsv1.CancelAttachedRequest]) (*connect.Response[agentsv1.CancelAttachedResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hardCancels++
	return connect.NewResponse(&agentsv1.CancelAttachedResponse{Meta: f.meta, Cancelled: 1}), nil
}

func (f *fakeServer) GetSession(_ context.Context, r *connect.Request[agentsv1.GetSessionRequest]) (*connect.Response[agentsv1.GetSessionResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	req := r.Msg
	f.gets = append(f.gets, req)
	if f.getErr != nil {
		return nil, f.getErr
	}
	if o, ok := f.others[req.GetSessionId()]; ok {
		return connect.NewResponse(&agentsv1.GetSessionResponse{Session: o}), nil
	}
	s := &agentsv1.Session{Meta: f.meta, PendingCalls: f.calls, Seq: f.seq, DeltaSeq: f.deltaSeq, InProgress: f.live}
	if req.GetMetaOnly() {
		s.FirstTurnIndex = int32(len(f.turns))
		return connect.NewResponse(&agentsv1.GetSessionResponse{Session: s}), nil
	}
	end := len(f.turns)
	if req.BeforeTurn != nil {
		end = int(req.GetBeforeTurn())
	}
	start := 0
	if n := int(req.GetLastTurns()); n > 0 {
		start = max(end-n, 0)
	}
	s.Turns, s.FirstTurnIndex = f.turns[start:end], int32(start)
	return connect.NewResponse(&agentsv1.GetSessionResponse{Session: s}), nil
}

func (f *fakeServer) PostMessage(_ context.Context, r *connect.Request[agentsv1.PostMessageRequest]) (*connect.Response[agentsv1.PostMessageResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.posts = append(f.posts, r.Msg)
	if f.postErr != nil {
		return nil, f.postErr
	}
	resp := &agentsv1.PostMessageResponse{Meta: f.meta}
	if acceptsInput(f.meta.GetStatus()) {
		resp.Meta = &agentsv1.SessionMeta{Id: sid, Agent: f.meta.GetAgent(), Status: agentsv1.SessionStatus_SESSION_STATUS_RUNNING}
	} else {
		resp.MailId = "mail-1"
	}
	return connect.NewResponse(resp), nil
}

func (f *fakeServer) CompleteCall(_ context.Context, r *connect.Request[agentsv1.CompleteCallRequest]) (*connect.Response[agentsv1.CompleteCallResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.completes = append(f.completes, r.Msg)
	if f.complErr != nil {
		return nil, f.complErr
	}
	var left []*agentsv1.DeferredCall
	for _, c := range f.calls {
		if c.GetToken() != r.Msg.GetToken() {
			left = append(left, c)
		}
	}
	f.calls = left
	return connect.NewResponse(&agentsv1.CompleteCallResponse{Meta: f.meta, Remaining: int32(len(left))}), nil
}

func (f *fakeServer) ForkSession(_ context.Context, r *connect.Request[agentsv1.ForkSessionRequest]) (*connect.Response[agentsv1.ForkSessionResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forks = append(f.forks, r.Msg)
	return connect.NewResponse(&agentsv1.ForkSessionResponse{Session: &agentsv1.Session{Meta: &agentsv1.SessionMeta{Id: "f0f0f0f0-fork"}}}), nil
}

func (f *fakeServer) CancelRun(context.Context, *connect.Request[agentsv1.CancelRunRequest]) (*connect.Response[agentsv1.CancelRunResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancels++
	return connect.NewResponse(&agentsv1.CancelRunResponse{Meta: f.meta}), nil
}

func (f *fakeServer) Pause(context.Context, *connect.Request[agentsv1.PauseRequest]) (*connect.Response[agentsv1.PauseResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pauses++
	return connect.NewResponse(&agentsv1.PauseResponse{Meta: f.meta}), nil
}

func (f *fakeServer) Resume(context.Context, *connect.Request[agentsv1.ResumeRequest]) (*connect.Response[agentsv1.ResumeResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resumes++
	if f.resumeErr != nil {
		return nil, f.resumeErr
	}
	return connect.NewResponse(&agentsv1.ResumeResponse{Meta: f.meta}), nil
}

// Compact answers as the server does: pending on a running session,
// else with the compaction turn, which it stores.
func (f *fakeServer) Compact(_ context.Context, r *connect.Request[agentsv1.CompactRequest]) (*connect.Response[agentsv1.CompactResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.compacts = append(f.compacts, r.Msg)
	if f.compactErr != nil {
		return nil, f.compactErr
	}
	if f.meta.GetStatus() == agentsv1.SessionStatus_SESSION_STATUS_RUNNING {
		return connect.NewResponse(&agentsv1.CompactResponse{Meta: f.meta, Pending: true}), nil
	}
	t := compactionTurn(len(f.turns), r.Msg.GetInstruction())
	f.turns = append(f.turns, t)
	f.meta.TurnCount = int32(len(f.turns))
	return connect.NewResponse(&agentsv1.CompactResponse{Meta: f.meta, Compaction: t}), nil
}

func (f *fakeServer) ExportSession(_ context.Context, r *connect.Request[agentsv1.ExportSessionRequest]) (*connect.Response[agentsv1.ExportSessionResponse], error) {
	if r.Msg.GetFormat() != agentsv1.ExportFormat_EXPORT_FORMAT_MARKDOWN {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("want markdown"))
	}
	return connect.NewResponse(&agentsv1.ExportSessionResponse{ContentType: "text/markdown", Content: f.exported}), nil
}

var _ Client = (*fakeServer)(nil)

func (f *fakeServer) ListAgents(context.Context, *connect.Request[agentsv1.ListAgentsRequest]) (*connect.Response[agentsv1.ListAgentsResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return connect.NewResponse(&agentsv1.ListAgentsResponse{Agents: f.agents}), nil
}

// rig is a screen over fakes, with what its commands sent the shell.
type rig struct {
	t      testing.TB
	fake   *fakeServer
	drafts *Drafts
	s      *Screen
	// out collects every message the commands produced.
	out []tea.Msg
}

func newRig(t testing.TB, status agentsv1.SessionStatus, turns ...*agentsv1.Turn) *rig {
	t.Helper()
	fake := &fakeServer{
		meta: &agentsv1.SessionMeta{
			Id: sid, Agent: "coder", Title: "Fix the flaky test", Status: status, TurnCount: int32(len(turns)),
			Usage: &agentsv1.Usage{PromptTokens: 12840, CompletionTokens: 912, CachedTokens: 8192, ReasoningTokens: 120},
		},
		turns: turns,
		seq:   10,
	}
	fake.agents = []*agentsv1.AgentDescriptor{
		{Slug: "coder", Announce: "writes code"},
		{Slug: "reviewer", Announce: "reviews code"},
	}
	r := &rig{t: t, fake: fake, drafts: NewDrafts(fake)}
	r.s = New(fake, theme.New(true), keys.Default(), r.drafts, sid)
	r.s.Write() // as after a fork; a list opens with the transcript focused
	return r
}

// open runs Init and everything it leads to.
func (r *rig) open() *rig {
	r.run(r.s.Init())
	return r
}

// run executes cmd and every command its messages lead to, handing each
// message to the drafts and the screen as the shell does, and keeping
// those meant for the shell.
func (r *rig) run(cmd tea.Cmd) {
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch m := c().(type) {
		case nil:
		case tea.BatchMsg:
			queue = append(queue, m...)
		default:
			r.out = append(r.out, m)
			queue = append(queue, r.drafts.Handle(m), r.s.Handle(m))
		}
	}
}

// send delivers a message from outside (an event) as the shell does.
func (r *rig) send(m tea.Msg) {
	r.run(emit(m))
}

// event delivers an event of the session.
func (r *rig) event(ev *agentsv1.Event) { r.send(msgs.Event{Event: ev}) }

func (r *rig) key(k tea.KeyPressMsg) {
	cmd, _ := r.s.HandleKey(k)
	r.run(cmd)
}

func (r *rig) keys(names ...string) {
	for _, n := range names {
		r.key(press(n))
	}
}

func (r *rig) typeText(text string) {
	for _, ch := range text {
		r.key(tea.KeyPressMsg{Code: ch, Text: string(ch)})
	}
}

// statuses are the status lines the screen asked for.
func (r *rig) statuses() []msgs.Status {
	var out []msgs.Status
	for _, m := range r.out {
		if s, ok := m.(msgs.Status); ok {
			out = append(out, s)
		}
	}
	return out
}

func (r *rig) lastStatus() msgs.Status {
	st := r.statuses()
	if len(st) == 0 {
		r.t.Fatalf("no status line")
	}
	return st[len(st)-1]
}

// press builds the key a name such as "enter", "ctrl+r" or "[" stands for.
func press(name string) tea.KeyPressMsg { return tabtest.Key(name) }

// Builders of turns, calls and events.

func userTurn(i int, text string) *agentsv1.Turn {
	return &agentsv1.Turn{Index: int32(i), Kind: &agentsv1.Turn_User{User: &agentsv1.UserTurn{Text: text}}}
}

func llmTurn(i int, text string) *agentsv1.Turn {
	return &agentsv1.Turn{Index: int32(i), Kind: &agentsv1.Turn_Llm{Llm: &agentsv1.LlmTurn{Text: text, Model: "test-model", FinishReason: "stop"}}}
}

func fewTurns() []*agentsv1.Turn {
	return []*agentsv1.Turn{
		userTurn(0, "The test TestReconnect fails one run in ten. Can you look?"),
		llmTurn(1, "It races the server's shutdown: the client dials before the listener is closed."),
		userTurn(2, "Fix it, and keep the test under a second."),
		llmTurn(3, "Done: the test waits for the listener to close before it dials again."),
	}
}

func compactionTurn(i int, instruction string) *agentsv1.Turn {
	cost := 0.0012
	return &agentsv1.Turn{Index: int32(i), Kind: &agentsv1.Turn_Compaction{Compaction: &agentsv1.Compaction{
		Reason: "manual", SummaryEnd: int32(i), SummarizedTurns: int32(i), Summary: "The user asked to fix a flaky test; it was fixed.",
		TokensBefore: 38204, TokensAfter: 2310, Model: "test-model", Instruction: instruction,
		Usage: &agentsv1.Usage{PromptTokens: 38000, CompletionTokens: 300, CostUsd: &cost},
	}}}
}

func deferred(token, name, args string) *agentsv1.DeferredCall {
	return &agentsv1.DeferredCall{Token: token, SessionId: sid, Reason: "client_tool",
		Call: &agentsv1.ToolCall{Id: "call-" + token, Name: name, Arguments: args, Kind: agentsv1.ToolKind_TOOL_KIND_CLIENT, Mode: agentsv1.CallMode_CALL_MODE_DEFERRED}}
}

func ev(seq uint64, body any) *agentsv1.Event {
	e := &agentsv1.Event{Seq: seq, SessionId: sid}
	switch b := body.(type) {
	case *agentsv1.RunStopped:
		e.Kind, e.Body = "run.stopped", &agentsv1.Event_RunStopped{RunStopped: b}
	case *agentsv1.RunStarted:
		e.Kind, e.Body = "run.started", &agentsv1.Event_RunStarted{RunStarted: b}
	case *agentsv1.SessionUpdated:
		e.Kind, e.Body = "session.updated", &agentsv1.Event_SessionUpdated{SessionUpdated: b}
	case *agentsv1.SessionFailed:
		e.Kind, e.Body = "session.failed", &agentsv1.Event_SessionFailed{SessionFailed: b}
	case *agentsv1.CallsDeferred:
		e.Kind, e.Body = "calls.deferred", &agentsv1.Event_CallsDeferred{CallsDeferred: b}
	case *agentsv1.TextDelta:
		e.Kind, e.Body = "text.delta", &agentsv1.Event_TextDelta{TextDelta: b}
	case *agentsv1.SubcallStarted:
		e.Kind, e.Body = "subcall.started", &agentsv1.Event_SubcallStarted{SubcallStarted: b}
	case *agentsv1.CompactionStarted:
		e.Kind, e.Body = "compaction.started", &agentsv1.Event_CompactionStarted{CompactionStarted: b}
	case *agentsv1.SessionCompacted:
		e.Kind, e.Body = "session.compacted", &agentsv1.Event_SessionCompacted{SessionCompacted: b}
	case *agentsv1.MailAccepted:
		e.Kind, e.Body = "mail.accepted", &agentsv1.Event_MailAccepted{MailAccepted: b}
	default:
		panic(fmt.Sprintf("no event for %T", body))
	}
	return e
}

func stopped(seq uint64, st agentsv1.SessionStatus) *agentsv1.Event {
	return ev(seq, &agentsv1.RunStopped{Status: st, Reason: "done"})
}

const (
	ready   = agentsv1.SessionStatus_SESSION_STATUS_READY
	running = agentsv1.SessionStatus_SESSION_STATUS_RUNNING
	waiting = agentsv1.SessionStatus_SESSION_STATUS_WAITING
	paused  = agentsv1.SessionStatus_SESSION_STATUS_PAUSED
	failed  = agentsv1.SessionStatus_SESSION_STATUS_FAILED
)
