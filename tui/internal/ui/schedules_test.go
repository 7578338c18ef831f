package ui

import (
	"context"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

func (f *fakeServer) ListSchedules(context.Context, *connect.Request[agentsv1.ListSchedulesRequest]) (*connect.Response[agentsv1.ListSchedulesResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*agentsv1.Schedule, len(f.schedules))
	for i, s := range f.schedules {
		out[i] = proto.CloneOf(s)
	}
	return connect.NewResponse(&agentsv1.ListSchedulesResponse{Schedules: out}), nil
}

func (f *fakeServer) PauseSchedule(_ context.Context, req *connect.Request[agentsv1.PauseScheduleRequest]) (*connect.Response[agentsv1.PauseScheduleResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paused = append(f.paused, req.Msg.GetScheduleId())
	for _, s := range f.schedules {
		if s.GetId() == req.Msg.GetScheduleId() {
			s.Enabled, s.NextFirings = false, nil
			return connect.NewResponse(&agentsv1.PauseScheduleResponse{Schedule: proto.CloneOf(s)}), nil
		}
	}
	return nil, connect.NewError(connect.CodeNotFound, nil)
}

func (f *fakeServer) ListFirings(_ context.Context, req *connect.Request[agentsv1.ListFiringsRequest]) (*connect.Response[agentsv1.ListFiringsResponse], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return connect.NewResponse(&agentsv1.ListFiringsResponse{Firings: f.firings[req.Msg.GetScheduleId()]}), nil
}

// A schedule made elsewhere fires: the Schedules tab lists it; it is
// paused from there, and its firing opens the session it started.
func TestFlowSchedulesTab(t *testing.T) {
	fl := startFlow(t, nil, nil)
	firing := &agentsv1.ScheduleFiring{ScheduleId: "sch-1", FireTime: at(200), Status: agentsv1.FiringStatus_FIRING_STATUS_STARTED, SessionId: id(1),
		Outcome: agentsv1.SessionStatus_SESSION_STATUS_READY, OutcomeReason: "done"}
	fl.f.mu.Lock()
	fl.f.schedules = []*agentsv1.Schedule{{Id: "sch-1", Name: "Hourly check", Agent: "coder", Every: "1h", Enabled: true,
		NextFirings: []*timestamppb.Timestamp{timestamppb.New(now().Add(90 * 60e9))}, LastFiring: firing}}
	fl.f.firings = map[string][]*agentsv1.ScheduleFiring{"sch-1": {firing}}
	fl.f.mu.Unlock()
	fl.f.emit(&agentsv1.Event{SessionId: id(1), Body: &agentsv1.Event_ScheduleFired{ScheduleFired: &agentsv1.ScheduleFired{Firing: firing}}})

	fl.press("tab", "tab", "tab")
	fl.waitFor("the schedule", func(s string) bool {
		return strings.Contains(s, "› Hourly check") && strings.Contains(s, "starts a session of coder") && strings.Contains(s, "in 2h")
	})
	fl.press("p")
	fl.waitFor("the schedule paused", func(s string) bool {
		return strings.Contains(s, "paused Hourly check") && strings.Contains(s, "none while paused")
	})
	fl.f.mu.Lock()
	paused := slices.Clone(fl.f.paused)
	fl.f.mu.Unlock()
	if !slices.Equal(paused, []string{"sch-1"}) {
		t.Errorf("paused %v, want sch-1", paused)
	}
	fl.press("enter")
	fl.waitFor("its firings", func(s string) bool {
		return strings.Contains(s, "Firings of Hourly check") && strings.Contains(s, "ready (done)")
	})
	fl.press("enter")
	fl.waitFor("the firing's session", func(s string) bool {
		tabs, _, _ := strings.Cut(s, "\n")
		return strings.Contains(tabs, "› Plan the 2.0 release")
	})
	fl.quit()
}
