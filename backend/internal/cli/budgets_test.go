package cli

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

const budgetSession = "b0d9e7a1-0000-4000-8000-000000000001"

// budgetServer answers the budget calls from memory and records what it
// was asked, so the commands' requests and output can be checked apart
// from any server's enforcement.
type budgetServer struct {
	agentsv1connect.UnimplementedAgentServiceHandler
	agentsv1connect.UnimplementedSessionServiceHandler
	agentsv1connect.UnimplementedOwnerServiceHandler
	agentsv1connect.UnimplementedEventServiceHandler

	mu      sync.Mutex
	meta    *agentsv1.SessionMeta
	updates []*agentsv1.UpdateSessionRequest
	creates []*agentsv1.CreateSessionRequest
	sets    []*agentsv1.SetOwnerBudgetRequest
	owner   *agentsv1.OwnerBudget
	// events go to the subscriber once a session is created.
	events chan *agentsv1.Event
}

func startBudgetServer(t *testing.T) (*budgetServer, string) {
	t.Helper()
	f := &budgetServer{
		meta: &agentsv1.SessionMeta{Id: budgetSession, Agent: "good", AgentVersion: 4, RootId: budgetSession,
			Usage:  &agentsv1.Usage{PromptTokens: 900, CompletionTokens: 100, CostUsd: proto.Float64(0.002)},
			Budget: &agentsv1.BudgetState{Budget: &agentsv1.Budget{}, Spent: &agentsv1.Spend{Tokens: 1000, CostUsd: 0.002}}},
		owner:  &agentsv1.OwnerBudget{Owner: "alice", Source: agentsv1.BudgetSource_BUDGET_SOURCE_DEFAULT, Budget: &agentsv1.Budget{CostUsd: proto.Float64(5)}, Period: agentsv1.BudgetPeriod_BUDGET_PERIOD_MONTH},
		events: make(chan *agentsv1.Event, 4),
	}
	mux := http.NewServeMux()
	mux.Handle(agentsv1connect.NewAgentServiceHandler(f))
	mux.Handle(agentsv1connect.NewSessionServiceHandler(f))
	mux.Handle(agentsv1connect.NewOwnerServiceHandler(f))
	mux.Handle(agentsv1connect.NewEventServiceHandler(f))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func (f *budgetServer) ListAgents(context.Context, *connect.Request[agentsv1.ListAgentsRequest]) (*connect.Response[agentsv1.ListAgentsResponse], error) {
	return connect.NewResponse(&agentsv1.ListAgentsResponse{Agents: []*agentsv1.AgentDescriptor{{Slug: "good"}}}), nil
}

func (f *budgetServer) GetSession(_ context.Context, r *connect.Request[agentsv1.GetSessionRequest]) (*connect.Response[agentsv1.GetSessionResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Msg.GetSessionId() != budgetSession {
		return nil, connect.NewError(connect.CodeNotFound, errors.New("no such session"))
	}
	return connect.NewResponse(&agentsv1.GetSessionResponse{Session: &agentsv1.Session{Meta: f.meta}}), nil
}

func (f *budgetServer) UpdateSession(_ context.Context, r *connect.Request[agentsv1.UpdateSessionRequest]) (*connect.Response[agentsv1.UpdateSessionResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updates = append(f.updates, r.Msg)
	b := r.Msg.GetBudget()
	if b.GetTokens() == 7 {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("budget.tokens: set the budget on the tree's root session"))
	}
	state := f.meta.GetBudget()
	state.Budget = b
	state.Left = &agentsv1.Budget{}
	if b.Tokens != nil {
		state.Left.Tokens = proto.Int64(max(b.GetTokens()-state.GetSpent().GetTokens(), 0))
	}
	if b.CostUsd != nil {
		state.Left.CostUsd = proto.Float64(max(b.GetCostUsd()-state.GetSpent().GetCostUsd(), 0))
	}
	state.Exceeded = b.Tokens != nil && state.GetSpent().GetTokens() >= b.GetTokens()
	return connect.NewResponse(&agentsv1.UpdateSessionResponse{Meta: f.meta}), nil
}

func (f *budgetServer) CreateSession(_ context.Context, r *connect.Request[agentsv1.CreateSessionRequest]) (*connect.Response[agentsv1.CreateSessionResponse], error) {
	f.mu.Lock()
	f.creates = append(f.creates, r.Msg)
	f.mu.Unlock()
	f.events <- &agentsv1.Event{Seq: 1, SessionId: budgetSession, Body: &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{
		Status: agentsv1.SessionStatus_SESSION_STATUS_PAUSED, Reason: "budget_exceeded", Budget: "session"}}}
	return connect.NewResponse(&agentsv1.CreateSessionResponse{Session: &agentsv1.Session{Meta: f.meta}}), nil
}

func (f *budgetServer) Subscribe(ctx context.Context, _ *connect.Request[agentsv1.SubscribeRequest], s *connect.ServerStream[agentsv1.SubscribeResponse]) error {
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

func (f *budgetServer) GetOwnerBudget(_ context.Context, r *connect.Request[agentsv1.GetOwnerBudgetRequest]) (*connect.Response[agentsv1.GetOwnerBudgetResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return connect.NewResponse(&agentsv1.GetOwnerBudgetResponse{Budget: f.owner}), nil
}

func (f *budgetServer) SetOwnerBudget(_ context.Context, r *connect.Request[agentsv1.SetOwnerBudgetRequest]) (*connect.Response[agentsv1.SetOwnerBudgetResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sets = append(f.sets, r.Msg)
	if r.Msg.GetOwner() == "bob" {
		return nil, connect.NewError(connect.CodePermissionDenied, errors.New("setting a budget needs an admin token"))
	}
	f.owner = &agentsv1.OwnerBudget{Owner: r.Msg.GetOwner(), Source: agentsv1.BudgetSource_BUDGET_SOURCE_OWNER,
		Budget: &agentsv1.Budget{Tokens: r.Msg.Tokens, CostUsd: r.Msg.CostUsd, AutoResume: r.Msg.GetAutoResume()}, Period: r.Msg.GetPeriod()}
	return connect.NewResponse(&agentsv1.SetOwnerBudgetResponse{Budget: f.owner}), nil
}

func (f *budgetServer) GetOwnerUsage(_ context.Context, r *connect.Request[agentsv1.GetOwnerUsageRequest]) (*connect.Response[agentsv1.GetOwnerUsageResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u := &agentsv1.OwnerUsage{
		Owner: "alice", Budget: f.owner,
		Current: &agentsv1.BudgetState{Budget: f.owner.GetBudget(), Spent: &agentsv1.Spend{Tokens: 120000, CostUsd: 4.5},
			Left: &agentsv1.Budget{CostUsd: proto.Float64(0.5)}},
		Total: &agentsv1.Spend{Tokens: 900000, CostUsd: 31.25},
	}
	if b := r.Msg.GetBucket(); b != agentsv1.UsageBucket_USAGE_BUCKET_UNSPECIFIED {
		// The series echoes the range asked for (or 2026-03-01 to 03),
		// with two rows on its first day.
		since, until := r.Msg.GetSince(), r.Msg.GetUntil()
		if since == nil {
			since = timestamppb.New(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
		}
		if until == nil {
			until = timestamppb.New(time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC))
		}
		u.Series = &agentsv1.UsageSeries{Bucket: b, Since: since, Until: until, Points: []*agentsv1.UsagePoint{
			{Start: since, Owner: "alice", Agent: "coder", Model: "small", Calls: 3, PromptTokens: 3000, CompletionTokens: 300, CostUsd: 0.25},
			{Start: since, Owner: "bob", Agent: "reviewer", Calls: 1, PromptTokens: 10, CompletionTokens: 1},
		}}
	}
	return connect.NewResponse(&agentsv1.GetOwnerUsageResponse{Usage: u}), nil
}

func TestBudgetCommands(t *testing.T) {
	t.Parallel()
	_, env := testEnv(t)
	f, url := startBudgetServer(t)
	at := []string{"--attach", url}
	tests := []struct {
		name      string
		args      []string
		code      int
		want, not []string
		errWant   string
	}{
		{"a session's budget", []string{"sessions", "budget", budgetSession}, 0,
			[]string{"budget    no limit\n", "spent     1000 tokens, $0.0020\n"}, []string{"left"}, ""},
		{"set a session's budget", []string{"sessions", "budget", budgetSession, "--tokens", "5000", "--cost-usd", "0.5"}, 0,
			[]string{"budget    5000 tokens, $0.50\n", "left      4000 tokens, $0.50\n"}, []string{"exceeded"}, ""},
		{"lower it below the spend", []string{"sessions", "budget", budgetSession, "--tokens", "1000"}, 0,
			[]string{"budget    1000 tokens\n", "left      0 tokens\n", "exceeded  yes"}, nil, ""},
		{"remove the limits", []string{"sessions", "budget", budgetSession, "--none"}, 0, []string{"budget    no limit\n"}, nil, ""},
		{"--none with a limit", []string{"sessions", "budget", budgetSession, "--none", "--tokens", "5"}, 1, nil, nil, "--none removes the limits"},
		{"a negative limit", []string{"sessions", "budget", budgetSession, "--tokens", "-5"}, 1, nil, nil, "--tokens -5: want 0 or more"},
		{"a dollar limit too large", []string{"sessions", "budget", budgetSession, "--cost-usd", "1e10"}, 1, nil, nil, "--cost-usd 1e+10: want a number of US dollars from 0 to 1000000000"},
		{"a dollar limit not a number", []string{"sessions", "budget", budgetSession, "--cost-usd", "NaN"}, 1, nil, nil, "--cost-usd NaN: want a number of US dollars from 0 to 1000000000"},
		{"an owner's dollar limit too large", []string{"owners", "budget", "alice", "--cost-usd", "1e10"}, 1, nil, nil, "--cost-usd 1e+10: want a number of US dollars from 0 to 1000000000"},
		{"the server's error as it says it", []string{"sessions", "budget", budgetSession, "--tokens", "7"}, 1, nil, nil,
			"invalid_argument: budget.tokens: set the budget on the tree's root session"},
		{"show prints the agent's version and the tree's spend", []string{"sessions", "show", budgetSession}, 0,
			[]string{"agent    good (version 4)\n", "tokens   900 in, 100 out, $0.0020\n", "budget   no limit · tree spent 1000 tokens, $0.0020\n"}, nil, ""},
		{"an owner's budget", []string{"owners", "budget", "alice"}, 0,
			[]string{"owner     alice\n", "budget    $5.00 per month (the server's default)\n"}, nil, ""},
		{"set an owner's budget", []string{"owners", "budget", "alice", "--tokens", "100000", "--period", "day"}, 0,
			[]string{"budget    100000 tokens per day\n"}, []string{"default"}, ""},
		{"a non-admin", []string{"owners", "budget", "bob", "--tokens", "1"}, 1, nil, nil, "permission_denied: setting a budget needs an admin token"},
		{"a bad period", []string{"owners", "budget", "alice", "--tokens", "1", "--period", "week"}, 1, nil, nil, `--period "week": want day, month or total`},
		{"a period alone", []string{"owners", "budget", "alice", "--period", "day"}, 1, nil, nil, "--period goes with --tokens or --cost-usd"},
		{"usage", []string{"owners", "usage"}, 0,
			[]string{"spent     120000 tokens, $4.50\n", "total     900000 tokens, $31.25\n"}, nil, ""},
		{"usage as JSON", []string{"owners", "usage", "--json"}, 0, []string{`"costUsd": 31.25`}, nil, ""},
		{"usage per day", []string{"owners", "usage", "--series", "day"}, 0, []string{
			"total     900000 tokens, $31.25\n\nusage per UTC day, 2026-03-01 to 2026-03-03\n",
			"DAY         AGENT     MODEL  CALLS  IN    OUT  COST\n",
			"2026-03-01  coder     small  3      3000  300  $0.25\n",
			"2026-03-01  reviewer  -      1      10    1    $0.00\n",
			"total                        4      3010  301  $0.25\n",
		}, []string{"OWNER"}, ""},
		{"every owner's usage per hour", []string{"owners", "usage", "--series", "hour", "--since", "2026-03-02T08:30:00Z", "--until", "2026-03-03", "--all-owners"}, 0, []string{
			"usage per UTC hour, 2026-03-02 08:30 to 2026-03-03 00:00\n",
			"HOUR              OWNER  AGENT     MODEL  CALLS  IN    OUT  COST\n",
			"2026-03-02 08:30  bob    reviewer  -      1      10    1    $0.00\n",
		}, nil, ""},
		{"a bad series", []string{"owners", "usage", "--series", "week"}, 1, nil, nil, `--series "week": want day or hour`},
		{"a range with no series", []string{"owners", "usage", "--since", "7d"}, 1, nil, nil, "add --series day or --series hour"},
		{"a since that is no time", []string{"owners", "usage", "--series", "day", "--since", "yesterday"}, 1, nil, nil, `--since "yesterday": want an RFC 3339 time`},
	}
	for _, tc := range tests {
		// Sequential: the budget each row sets is what the next reads.
		code, out, errOut := run(t, env, append(tc.args, at...)...)
		if !checkRun(t, tc.name, code, out, errOut, tc.code, tc.want, tc.not) {
			continue
		}
		if !strings.Contains(errOut, tc.errWant) {
			t.Errorf("%s: stderr %q lacks %q", tc.name, errOut, tc.errWant)
		}
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	// Each set replaced the budget whole: a limit not given is absent.
	if len(f.updates) != 4 {
		t.Fatalf("UpdateSession calls = %d, want 4", len(f.updates))
	}
	if b := f.updates[1].GetBudget(); b.Tokens == nil || b.CostUsd != nil {
		t.Errorf("--tokens 1000 sent %v, want tokens only", b)
	}
	if b := f.updates[2].GetBudget(); b == nil || b.Tokens != nil || b.CostUsd != nil {
		t.Errorf("--none sent %v, want an empty budget", b)
	}
	if s := f.sets[0]; s.GetOwner() != "alice" || s.GetTokens() != 100000 || s.CostUsd != nil || s.GetPeriod() != agentsv1.BudgetPeriod_BUDGET_PERIOD_DAY {
		t.Errorf("SetOwnerBudget = %v", s)
	}
}

// --auto-resume sets a budget that resumes the sessions it paused by
// itself, and the budget says so; it goes with the limits it comes with.
func TestBudgetCommandsSetAutoResume(t *testing.T) {
	t.Parallel()
	_, env := testEnv(t)
	f, url := startBudgetServer(t)
	at := []string{"--attach", url}
	tests := []struct {
		name      string
		args      []string
		code      int
		want, not []string
		errWant   string
	}{
		{"a session's", []string{"sessions", "budget", budgetSession, "--tokens", "5000", "--auto-resume"}, 0,
			[]string{"budget    5000 tokens\n", "resumes   by itself when the budget is raised\n"}, nil, ""},
		{"without limits", []string{"sessions", "budget", budgetSession, "--auto-resume"}, 1, nil, nil,
			"--auto-resume goes with --tokens, --cost-usd or --none"},
		{"an owner's", []string{"owners", "budget", "alice", "--tokens", "100000", "--period", "day", "--auto-resume"}, 0,
			[]string{"budget    100000 tokens per day\n", "resumes   by itself when the budget is raised or its period ends\n"}, nil, ""},
	}
	for _, tc := range tests {
		code, out, errOut := run(t, env, append(tc.args, at...)...)
		if !checkRun(t, tc.name, code, out, errOut, tc.code, tc.want, tc.not) {
			continue
		}
		if !strings.Contains(errOut, tc.errWant) {
			t.Errorf("%s: stderr %q lacks %q", tc.name, errOut, tc.errWant)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.updates) != 1 || !f.updates[0].GetBudget().GetAutoResume() {
		t.Errorf("UpdateSession calls = %v, want one with auto_resume", f.updates)
	}
	if len(f.sets) != 1 || !f.sets[0].GetAutoResume() {
		t.Errorf("SetOwnerBudget calls = %v, want one with auto_resume", f.sets)
	}
}

// run --budget-tokens gives the new session its budget; a run the budget
// stops says which and how to go on.
func TestRunWithABudget(t *testing.T) {
	t.Parallel()
	_, env := testEnv(t)
	f, url := startBudgetServer(t)
	code, _, errOut := run(t, env, "run", "--attach", url, "--budget-tokens", "2000", "--budget-usd", "0.25", "hello")
	if code != exitRunFailed {
		t.Fatalf("run = %d, want %d; stderr:\n%s", code, exitRunFailed, errOut)
	}
	for _, want := range []string{
		"session " + budgetSession + " stopped: budget_exceeded: the session tree's budget cannot hold the next model call (its input and some output)",
		"agents sessions budget " + budgetSession + " --attach " + url + " --tokens N",
		"agents sessions resume " + budgetSession + " --attach " + url,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.creates) != 1 {
		t.Fatalf("CreateSession calls = %d", len(f.creates))
	}
	if b := f.creates[0].GetBudget(); b.GetTokens() != 2000 || b.GetCostUsd() != 0.25 {
		t.Errorf("CreateSession budget = %v, want 2000 tokens and $0.25", b)
	}
}

// run --budget-usd beyond the most a budget holds is refused before a
// session starts.
func TestRunRefusesADollarBudgetOutOfRange(t *testing.T) {
	t.Parallel()
	_, env := testEnv(t)
	f, url := startBudgetServer(t)
	code, _, errOut := run(t, env, "run", "--attach", url, "--budget-usd", "1e10", "hello")
	if want := "--budget-usd 1e+10: want a number of US dollars from 0 to 1000000000"; code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("run = %d, stderr %q; want 1 saying %q", code, errOut, want)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.creates) != 0 {
		t.Errorf("CreateSession calls = %d, want none", len(f.creates))
	}
}

// A server without budgets answers unimplemented; the command says what
// that means.
func TestBudgetCommandsOnAServerWithoutBudgets(t *testing.T) {
	t.Parallel()
	_, env := testEnv(t)
	mux := http.NewServeMux()
	mux.Handle(agentsv1connect.NewAgentServiceHandler(&budgetServer{}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	code, _, errOut := run(t, env, "owners", "usage", "--attach", srv.URL)
	if code != 1 || !strings.Contains(errOut, "this server does not support budgets") {
		t.Errorf("owners usage = %d, %q", code, errOut)
	}
}

// On a server that keeps budgets: a run stops at its budget and says how
// to go on, sessions budget raises it, sessions resume continues the run.
func TestBudgetRoundTripOnTheServer(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, runScript())
	writeFile(t, filepath.Join(dir, "agents", "tools", "ok"), goodTool, 0o755)
	agent := filepath.Join(dir, "agents", "runner.json")
	writeFile(t, agent, agentJSON("runner", `, "bashToolboxes": [{"tag": "FileSystemDirectory", "contents": {"Path": "tools"}}]`), 0o644)
	server := []string{"--agent-file", agent, "--db", filepath.Join(dir, "agents.db")}
	with := func(args ...string) []string { return append(args, server...) }
	running := func(args ...string) []string { return append(with(args...), "--offline-model", model.URL()) }

	if _, _, errOut := run(t, env, with("owners", "usage")...); strings.Contains(errOut, "does not support budgets") {
		t.Skip("this server does not keep budgets")
	}
	code, _, errOut := run(t, env, running("run", "-a", "runner", "--budget-tokens", "1", "please", "check")...)
	m := regexp.MustCompile(`session (\S+) stopped: budget_exceeded: the session tree's budget cannot hold the next model call`).FindStringSubmatch(errOut)
	if code != exitRunFailed || m == nil {
		t.Fatalf("run = %d, stderr:\n%s\nwant %d and the budget named", code, errOut, exitRunFailed)
	}
	id := m[1]
	// The commands the message advises work as they are printed.
	advised := func(prefix string) []string {
		for line := range strings.SplitSeq(errOut, "\n") {
			if words := strings.Fields(line); len(words) > 2 && strings.HasPrefix(strings.TrimSpace(line), prefix) {
				return words[1:]
			}
		}
		t.Fatalf("no %q in:\n%s", prefix, errOut)
		return nil
	}
	raise, resume := advised("agents sessions budget"), advised("agents sessions resume")
	raise[len(raise)-1] = "100000" // --tokens N
	code, out, errOut := run(t, env, with("sessions", "show", id)...)
	// One token holds no model call: the run stopped before the first.
	if code != 0 || !strings.Contains(out, "budget   1 tokens · tree spent 0 tokens · left 1 tokens\n") {
		t.Errorf("sessions show = %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, env, raise...)
	if code != 0 || !strings.Contains(out, "budget    100000 tokens\n") || strings.Contains(out, "exceeded") {
		t.Errorf("%s = %d:\n%s%s", raise, code, out, errOut)
	}
	code, out, errOut = run(t, env, resume...)
	if code != 0 || !strings.Contains(out, "The tool said fine") {
		t.Errorf("sessions resume = %d:\n%s%s", code, out, errOut)
	}
}

func TestParseWhen(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Time{
		"2026-03-01T08:00:00Z":      time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC),
		"2026-03-01T08:00:00+01:00": time.Date(2026, 3, 1, 7, 0, 0, 0, time.UTC),
		"2026-03-01":                time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
		"7d":                        time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC),
		"12h":                       time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC),
	} {
		got, err := parseWhen(v, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseWhen(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"", "yesterday", "-3d", "-1h", "xd"} {
		if got, err := parseWhen(v, now); err == nil {
			t.Errorf("parseWhen(%q) = %v, want an error", v, got)
		}
	}
}
