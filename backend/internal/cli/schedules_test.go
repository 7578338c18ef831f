package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
)

// scheduleServer answers the schedule calls from memory and records
// what it was asked.
type scheduleServer struct {
	agentsv1connect.UnimplementedAgentServiceHandler
	agentsv1connect.UnimplementedScheduleServiceHandler

	mu      sync.Mutex
	creates []*agentsv1.CreateScheduleRequest
	updates []*agentsv1.UpdateScheduleRequest
}

var testSchedule = &agentsv1.Schedule{
	Id: "sc1", Owner: "alice", Agent: "triage", Cron: "0 7 * * 1-5", Timezone: "Europe/Paris", Enabled: true,
	Message: &agentsv1.Message{Text: "check the queue"}, Overlap: agentsv1.ScheduleOverlap_SCHEDULE_OVERLAP_QUEUE,
	Missed:      agentsv1.ScheduleMissed_SCHEDULE_MISSED_ONCE,
	NextFirings: []*timestamppb.Timestamp{timestamppb.New(time.Date(2026, 12, 8, 6, 0, 0, 0, time.UTC))},
}

func (f *scheduleServer) ListAgents(context.Context, *connect.Request[agentsv1.ListAgentsRequest]) (*connect.Response[agentsv1.ListAgentsResponse], error) {
	return connect.NewResponse(&agentsv1.ListAgentsResponse{}), nil
}

func (f *scheduleServer) CreateSchedule(_ context.Context, req *connect.Request[agentsv1.CreateScheduleRequest]) (*connect.Response[agentsv1.CreateScheduleResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.creates = append(f.creates, req.Msg)
	return connect.NewResponse(&agentsv1.CreateScheduleResponse{Schedule: testSchedule}), nil
}

func (f *scheduleServer) UpdateSchedule(_ context.Context, req *connect.Request[agentsv1.UpdateScheduleRequest]) (*connect.Response[agentsv1.UpdateScheduleResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updates = append(f.updates, req.Msg)
	return connect.NewResponse(&agentsv1.UpdateScheduleResponse{Schedule: testSchedule}), nil
}

func (f *scheduleServer) ListSchedules(context.Context, *connect.Request[agentsv1.ListSchedulesRequest]) (*connect.Response[agentsv1.ListSchedulesResponse], error) {
	return connect.NewResponse(&agentsv1.ListSchedulesResponse{Schedules: []*agentsv1.Schedule{testSchedule}}), nil
}

func (f *scheduleServer) ListFirings(context.Context, *connect.Request[agentsv1.ListFiringsRequest]) (*connect.Response[agentsv1.ListFiringsResponse], error) {
	return connect.NewResponse(&agentsv1.ListFiringsResponse{Firings: []*agentsv1.ScheduleFiring{{
		ScheduleId: "sc1", FireTime: timestamppb.New(time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)),
		Status: agentsv1.FiringStatus_FIRING_STATUS_STARTED, SessionId: "s-1", CatchUp: true,
		Outcome: agentsv1.SessionStatus_SESSION_STATUS_READY, OutcomeReason: "done",
	}}}), nil
}

func (f *scheduleServer) GetSchedule(_ context.Context, req *connect.Request[agentsv1.GetScheduleRequest]) (*connect.Response[agentsv1.GetScheduleResponse], error) {
	if req.Msg.GetScheduleId() != "sc1" {
		return nil, connect.NewError(connect.CodeNotFound, nil)
	}
	return connect.NewResponse(&agentsv1.GetScheduleResponse{Schedule: testSchedule}), nil
}

func TestScheduleCommands(t *testing.T) {
	t.Parallel()
	_, env := testEnv(t)
	f := &scheduleServer{}
	mux := http.NewServeMux()
	mux.Handle(agentsv1connect.NewAgentServiceHandler(f))
	mux.Handle(agentsv1connect.NewScheduleServiceHandler(f))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	at := []string{"--attach", srv.URL}
	tests := []struct {
		name      string
		args      []string
		code      int
		want, not []string
	}{
		{"create", []string{"schedules", "create", "--to-agent", "triage", "--cron", "0 7 * * 1-5", "--timezone", "Europe/Paris",
			"-m", "check the queue", "--overlap", "queue", "--missed", "once", "--param", "team=core", "--budget-tokens", "5000"}, 0,
			[]string{"schedule  sc1\n", "target    agent triage\n", `when      cron "0 7 * * 1-5" Europe/Paris`, "overlap   queue\n", "missed    once\n", "next      "}, nil},
		{"a bad overlap", []string{"schedules", "create", "--to-agent", "triage", "--every", "1m", "-m", "x", "--overlap", "wait"}, 1, nil, nil},
		{"a bad param", []string{"schedules", "create", "--to-agent", "triage", "--every", "1m", "-m", "x", "--param", "team"}, 1, nil, nil},
		{"update", []string{"schedules", "update", "sc1", "--every", "1h"}, 0, []string{"schedule  sc1\n"}, nil},
		{"ls", []string{"schedules", "ls"}, 0, []string{"ID", "sc1", "agent triage", "enabled"}, nil},
		{"firings", []string{"schedules", "firings", "sc1"}, 0, []string{"started", "s-1", "ready (done)", "catch-up"}, nil},
		{"an unknown schedule", []string{"schedules", "get", "nope"}, 1, nil, nil},
	}
	for _, tc := range tests {
		code, out, errOut := run(t, env, append(tc.args, at...)...)
		checkRun(t, tc.name, code, out, errOut, tc.code, tc.want, tc.not)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.creates) != 1 {
		t.Fatalf("CreateSchedule calls = %d, want 1 (the bad flags are refused before)", len(f.creates))
	}
	c := f.creates[0]
	if c.GetAgent() != "triage" || c.GetCron() != "0 7 * * 1-5" || c.GetTimezone() != "Europe/Paris" || c.GetMessage().GetText() != "check the queue" ||
		c.GetOverlap() != agentsv1.ScheduleOverlap_SCHEDULE_OVERLAP_QUEUE || c.GetMissed() != agentsv1.ScheduleMissed_SCHEDULE_MISSED_ONCE ||
		c.GetParams()["team"] != "core" || c.GetBudget().GetTokens() != 5000 || c.Enabled != nil {
		t.Errorf("CreateSchedule = %v", c)
	}
	u := f.updates[0]
	if u.GetScheduleId() != "sc1" || u.Every == nil || u.GetEvery() != "1h" || u.Cron != nil || u.Name != nil || u.Message != nil || u.GetUpdateParams() {
		t.Errorf("UpdateSchedule = %v, want only every", u)
	}
}
