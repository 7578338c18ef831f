package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/link"
)

// fakeServer answers the calls the shell makes from fixed data, over a
// real Connect handler, and streams the events a test feeds it.
type fakeServer struct {
	agentsv1connect.UnimplementedAgentServiceHandler
	agentsv1connect.UnimplementedSessionServiceHandler
	agentsv1connect.UnimplementedEventServiceHandler
	agentsv1connect.UnimplementedScheduleServiceHandler
	agentsv1connect.UnimplementedWebhookServiceHandler

	mu       sync.Mutex
	agents   []*agentsv1.AgentDescriptor
	problems []*agentsv1.AgentLoadError
	sessions []*agentsv1.SessionMeta // newest first, as the server lists
	mail     []*agentsv1.SendMailRequest
	created  int
	reloads  int
	// agentUpdates are the UpdateAgent requests, in order.
	agentUpdates []*agentsv1.UpdateAgentRequest
	// afterGetAgent, when set, runs (locked) after GetAgent answered:
	// another client's change between an editor's read and its write.
	afterGetAgent func()
	// turns are the sessions' turns, by id; GetSession answers them.
	turns map[string][]*agentsv1.Turn
	// getErr, when set, is GetSession's answer.
	getErr error

	// schedules and their firings, by schedule id; paused are the
	// schedules PauseSchedule was asked to pause.
	schedules []*agentsv1.Schedule
	firings   map[string][]*agentsv1.ScheduleFiring
	paused    []string

	// webhooks and their deliveries, by webhook id, newest first.
	webhooks   []*agentsv1.Webhook
	deliveries map[string][]*agentsv1.WebhookDelivery

	events chan *agentsv1.Event
	seq    uint64
}

// emit streams ev to the subscriber at the next position. A created
// session is stored too, as a server would before announcing it: a list
// fetched after the event must hold it.
func (f *fakeServer) emit(ev *agentsv1.Event) {
	f.mu.Lock()
	f.seq++
	ev.Seq = f.seq
	if created := ev.GetSessionCreated(); created != nil {
		f.sessions = append([]*agentsv1.SessionMeta{created.GetMeta()}, f.sessions...)
	}
	f.mu.Unlock()
	f.events <- ev
}

// fakePage is small, so listing every session takes several pages.
const fakePage = 2

func newFake() *fakeServer {
	return &fakeServer{events: make(chan *agentsv1.Event, 16)}
}

// inMemory is the fake as the shell's Client with no server between: its
// handlers have the calls' shape. Its subscription is up at once and
// streams what the test feeds, as the fake's Subscribe does over HTTP.
type inMemory struct {
	*fakeServer
	target string
}

var _ Client = inMemory{}

// newFakeClient is a fake the shell calls directly, named target.
func newFakeClient(target string) (*fakeServer, Client) {
	f := newFake()
	return f, inMemory{fakeServer: f, target: target}
}

func (c inMemory) Target() string { return c.target }

func (c inMemory) Subscribe(ctx context.Context, _ *agentsv1.SubscribeRequest) <-chan client.Update {
	out := make(chan client.Update)
	go func() {
		defer close(out)
		send := func(u client.Update) bool {
			select {
			case out <- u:
				return true
			case <-ctx.Done():
				return false
			}
		}
		if !send(client.Update{State: &client.ConnState{Connected: true}}) {
			return
		}
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-c.events:
				if !send(client.Update{Event: ev}) {
					return
				}
			}
		}
	}()
	return out
}

// newFakeServer serves the fake over HTTP and returns it with a link to
// it, as the TUI reaches a real server: through the protocol's client and
// the sanitizer.
func newFakeServer(t *testing.T) (*fakeServer, Client) {
	t.Helper()
	f := newFake()
	mux := http.NewServeMux()
	mux.Handle(agentsv1connect.NewAgentServiceHandler(f))
	mux.Handle(agentsv1connect.NewSessionServiceHandler(f))
	mux.Handle(agentsv1connect.NewEventServiceHandler(f))
	mux.Handle(agentsv1connect.NewScheduleServiceHandler(f))
	mux.Handle(agentsv1connect.NewWebhookServiceHandler(f))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, link.New(client.New(srv.Client(), srv.URL, ""))
}

func (f *fakeServer) ListAgents(context.Context, *connect.Request[agentsv1.ListAgentsRequest]) (*connect.Response[agentsv1.ListAgentsResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return connect.NewResponse(&agentsv1.ListAgentsResponse{Agents: f.agents, Errors: f.problems}), nil
}

func (f *fakeServer) ReloadAgents(context.Context, *connect.Request[agentsv1.ReloadAgentsRequest]) (*connect.Response[agentsv1.ReloadAgentsResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reloads++
	return connect.NewResponse(&agentsv1.ReloadAgentsResponse{Agents: f.agents, Errors: f.problems}), nil
}

func (f *fakeServer) ListSessions(_ context.Context, req *connect.Request[agentsv1.ListSessionsRequest]) (*connect.Response[agentsv1.ListSessionsResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var match []*agentsv1.SessionMeta
	for _, s := range f.sessions {
		if strings.Contains(strings.ToLower(s.GetTitle()), strings.ToLower(req.Msg.GetQuery())) {
			match = append(match, s)
		}
	}
	from := 0
	if tok := req.Msg.GetPageToken(); tok != "" {
		from, _ = strconv.Atoi(tok)
	}
	to := min(len(match), from+fakePage)
	res := &agentsv1.ListSessionsResponse{Sessions: match[from:to]}
	if to < len(match) {
		res.NextPageToken = strconv.Itoa(to)
	}
	return connect.NewResponse(res), nil
}

func (f *fakeServer) CreateSession(_ context.Context, req *connect.Request[agentsv1.CreateSessionRequest]) (*connect.Response[agentsv1.CreateSessionResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created++
	meta := &agentsv1.SessionMeta{
		Id:         fmt.Sprintf("c%07d-0000-0000-0000-000000000000", f.created),
		Agent:      req.Msg.GetAgent(),
		Status:     agentsv1.SessionStatus_SESSION_STATUS_READY,
		CreateTime: at(100 + f.created),
		UpdateTime: at(100 + f.created),
	}
	f.sessions = append([]*agentsv1.SessionMeta{meta}, f.sessions...)
	f.seq++
	f.events <- &agentsv1.Event{Seq: f.seq, SessionId: meta.GetId(), Body: &agentsv1.Event_SessionCreated{SessionCreated: &agentsv1.SessionCreated{Meta: meta}}}
	return connect.NewResponse(&agentsv1.CreateSessionResponse{Session: &agentsv1.Session{Meta: meta}}), nil
}

func (f *fakeServer) createdCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.created
}

func (f *fakeServer) GetSession(_ context.Context, req *connect.Request[agentsv1.GetSessionRequest]) (*connect.Response[agentsv1.GetSessionResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.getErr != nil {
		return nil, f.getErr
	}
	for _, s := range f.sessions {
		if s.GetId() == req.Msg.GetSessionId() {
			return connect.NewResponse(&agentsv1.GetSessionResponse{Session: &agentsv1.Session{Meta: s, Seq: f.seq, Turns: f.turns[s.GetId()]}}), nil
		}
	}
	return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("session %s", req.Msg.GetSessionId()))
}

func (f *fakeServer) SendMail(_ context.Context, req *connect.Request[agentsv1.SendMailRequest]) (*connect.Response[agentsv1.SendMailResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mail = append(f.mail, req.Msg)
	return connect.NewResponse(&agentsv1.SendMailResponse{Envelope: &agentsv1.MailEnvelope{SessionId: req.Msg.GetSessionId(), Body: req.Msg.GetBody()}}), nil
}

func (f *fakeServer) DeleteSession(_ context.Context, req *connect.Request[agentsv1.DeleteSessionRequest]) (*connect.Response[agentsv1.DeleteSessionResponse], error) {
	return connect.NewResponse(&agentsv1.DeleteSessionResponse{DeletedIds: []string{req.Msg.GetSessionId()}}), nil
}

// Subscribe says hello with a heartbeat, so the client reports the
// stream up, then streams what the test feeds.
func (f *fakeServer) Subscribe(ctx context.Context, _ *connect.Request[agentsv1.SubscribeRequest], s *connect.ServerStream[agentsv1.SubscribeResponse]) error {
	if err := s.Send(&agentsv1.SubscribeResponse{Item: &agentsv1.SubscribeResponse_Heartbeat{Heartbeat: &agentsv1.Heartbeat{}}}); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-f.events:
			if err := s.Send(&agentsv1.SubscribeResponse{Item: &agentsv1.SubscribeResponse_Event{Event: ev}}); err != nil {
				return err
			}
		}
	}
}

// mailSent lists the recipients of the mail sent so far.
func (f *fakeServer) mailSent() []*agentsv1.SendMailRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*agentsv1.SendMailRequest(nil), f.mail...)
}

// epoch is the fixed time the fixtures' clocks start from.
var epoch = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

// at is epoch plus min minutes.
func at(min int) *timestamppb.Timestamp {
	return timestamppb.New(epoch.Add(time.Duration(min) * time.Minute))
}

// now is the clock of the fixtures: a day after epoch.
func now() time.Time { return epoch.Add(24 * time.Hour) }

func id(n int) string { return fmt.Sprintf("%08d-0000-0000-0000-000000000000", n) }

func session(n int, title, agent string, st agentsv1.SessionStatus, turns int32, parent string) *agentsv1.SessionMeta {
	return &agentsv1.SessionMeta{
		Id: id(n), Title: title, Agent: agent, Status: st, TurnCount: turns, ParentId: parent,
		CreateTime: at(n), UpdateTime: at(n + 30),
	}
}

// fixtures fills the server with sessions in every status, nested two
// levels deep, a few agents and two schedules, one paused.
func fixtures(f *fakeServer) {
	const (
		ready   = agentsv1.SessionStatus_SESSION_STATUS_READY
		running = agentsv1.SessionStatus_SESSION_STATUS_RUNNING
		waiting = agentsv1.SessionStatus_SESSION_STATUS_WAITING
		paused  = agentsv1.SessionStatus_SESSION_STATUS_PAUSED
		failed  = agentsv1.SessionStatus_SESSION_STATUS_FAILED
	)
	// Newest first, as the server lists them.
	f.sessions = []*agentsv1.SessionMeta{
		session(9, "Grandchild: read the changelog", "reader", running, 2, id(8)),
		session(8, "Child: survey the release notes", "researcher", running, 4, id(1)),
		session(7, "Fix the flaky upload test", "coder", failed, 6, ""),
		session(6, "Weekly report draft", "writer", paused, 3, ""),
		session(5, "Approve the deploy", "ops", waiting, 5, ""),
		session(4, "Rotate the staging keys", "ops", waiting, 8, ""),
		session(3, "Child: summarise issue 42", "researcher", ready, 2, id(1)),
		session(2, "", "coder", ready, 0, ""),
		session(1, "Plan the 2.0 release", "planner", running, 12, ""),
	}
	// 07:00 in Paris on the weekdays after now().
	mornings := []*timestamppb.Timestamp{timestamppb.New(time.Date(2025, 3, 17, 6, 0, 0, 0, time.UTC)), timestamppb.New(time.Date(2025, 3, 18, 6, 0, 0, 0, time.UTC))}
	f.schedules = []*agentsv1.Schedule{
		{Id: "sch-1", Name: "Weekday mornings", Agent: "planner", Cron: "0 7 * * 1-5", Timezone: "Europe/Paris", Enabled: true, NextFirings: mornings,
			Message:    &agentsv1.Message{Text: "What is on today?"},
			LastFiring: &agentsv1.ScheduleFiring{ScheduleId: "sch-1", FireTime: timestamppb.New(time.Date(2025, 3, 14, 6, 0, 0, 0, time.UTC)), Status: agentsv1.FiringStatus_FIRING_STATUS_STARTED, SessionId: id(1)}},
		{Id: "sch-2", SessionId: id(6), Every: "24h0m0s", Overlap: agentsv1.ScheduleOverlap_SCHEDULE_OVERLAP_QUEUE, Message: &agentsv1.Message{Text: "Add today's numbers."}},
	}
	webhookFixtures(f)
	f.agents = []*agentsv1.AgentDescriptor{
		{
			Slug:     "coder",
			Announce: "Writes and fixes code in the repository.",
			Model:    &agentsv1.ModelDescriptor{Flavor: "OpenAIv1", Name: "gpt-4.1", Url: "https://api.openai.com/v1", ApiKeyId: "openai", ApiKeyPresent: true},
			SystemPrompt: []string{
				"You are a careful programmer.",
				"Run the tests before you say you are done.",
			},
			Tools: []*agentsv1.ToolDescriptor{
				{Name: "bash_run_tests", Description: "Run the test suite\nand report failures.", Kind: agentsv1.ToolKind_TOOL_KIND_BASH, Source: "tools/run-tests"},
				{Name: "prompt_agent_researcher", Description: "Ask the researcher.", Kind: agentsv1.ToolKind_TOOL_KIND_HELPER, Source: "researcher"},
				{Name: "open_in_editor", Description: "Open a file in the user's editor.", Kind: agentsv1.ToolKind_TOOL_KIND_CLIENT},
				{Name: "send_mail", Description: "Send mail to another session.", Kind: agentsv1.ToolKind_TOOL_KIND_SYSTEM},
			},
			Helpers: []string{"researcher"},
			Params: []*agentsv1.ParamDescriptor{
				{Name: "GITHUB_TOKEN", Description: "token for the GitHub API", Secret: true, Required: true},
				{Name: "BRANCH", Description: "branch to work on"},
			},
			File: "/etc/agents/coder.json",
		},
		{
			Slug:     "planner",
			Announce: "Breaks work into steps.",
			Model:    &agentsv1.ModelDescriptor{Flavor: "MistralV1", Name: "mistral-large", Url: "https://api.mistral.ai/v1", ApiKeyId: "mistral"},
			File:     "/etc/agents/planner.json",
		},
		{
			Slug:     "researcher",
			Announce: "Finds and summarises sources.",
			Model:    &agentsv1.ModelDescriptor{Flavor: "OpenAIv1", Name: "gpt-4.1-mini", Url: "https://api.openai.com/v1", ApiKeyId: "openai", ApiKeyPresent: true},
			Parent:   "coder",
			File:     "/etc/agents/researcher.json",
		},
	}
	f.problems = []*agentsv1.AgentLoadError{
		{File: "/etc/agents/broken.json", Field: "contents.flavor", Reason: `unknown flavor "OpenAIv9"`},
	}
}

// newTestModel is a shell over the fake server with the default keys and
// the fixtures' clock, whose test fails if it drops a message of the
// TUI's own.
func newTestModel(t *testing.T, c Client, km *keys.Map, mod func(*Config)) *Model {
	t.Helper()
	if km == nil {
		km = keys.Default()
	}
	cfg := Config{Ctx: t.Context(), Client: c, Keys: km, Now: now, Log: watchDrops(t)}
	if mod != nil {
		mod(&cfg)
	}
	return New(cfg)
}

// drive runs cmd and feeds what it returns back into m, as the program
// would, until nothing is left to run. The terminal queries a running
// program would answer reach m unanswered; it ignores them.
func drive(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			drive(m, c)
		}
	default:
		_, next := m.Update(msg)
		drive(m, next)
	}
}

func (f *fakeServer) GetAgent(_ context.Context, req *connect.Request[agentsv1.GetAgentRequest]) (*connect.Response[agentsv1.GetAgentResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.agents {
		if a.GetSlug() == req.Msg.GetSlug() {
			res := connect.NewResponse(&agentsv1.GetAgentResponse{Agent: proto.CloneOf(a)})
			if f.afterGetAgent != nil {
				f.afterGetAgent()
			}
			return res, nil
		}
	}
	return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("no agent %q", req.Msg.GetSlug()))
}

// UpdateAgent stores a new version of a stored agent. It checks what the
// edit tests need of a definition: JSON, with a model URL.
func (f *fakeServer) UpdateAgent(_ context.Context, req *connect.Request[agentsv1.UpdateAgentRequest]) (*connect.Response[agentsv1.UpdateAgentResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.agentUpdates = append(f.agentUpdates, req.Msg)
	var def struct {
		Contents map[string]any `json:"contents"`
	}
	if err := json.Unmarshal([]byte(req.Msg.GetDefinition()), &def); err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	if _, ok := def.Contents["modelUrl"]; !ok {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("contents.modelUrl: required"))
	}
	for i, a := range f.agents {
		if a.GetSlug() != req.Msg.GetSlug() {
			continue
		}
		if a.GetSource() != agentsv1.AgentSource_AGENT_SOURCE_STORED {
			return nil, connect.NewError(connect.CodeAlreadyExists, errors.New("a file agent is read-only"))
		}
		if req.Msg.ExpectedVersion != nil && req.Msg.GetExpectedVersion() != a.GetVersion() {
			return nil, connect.NewError(connect.CodeAborted, errors.New("version mismatch"))
		}
		n := proto.CloneOf(a)
		n.Version++
		n.Definition = req.Msg.GetDefinition()
		n.Announce, _ = def.Contents["announce"].(string)
		f.agents[i] = n
		return connect.NewResponse(&agentsv1.UpdateAgentResponse{Agent: n}), nil
	}
	return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("no agent %q", req.Msg.GetSlug()))
}
