package server

import (
	"context"
	"strings"
	"time"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/schedule"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/wire"
)

// scheduleService serves ScheduleService.
type scheduleService struct {
	s *Server
}

var _ agentsv1connect.ScheduleServiceHandler = (*scheduleService)(nil)

// Firings a ListFirings answers by default and at most.
const (
	defaultFirings = 50
	maxFirings     = 500
)

// scheduleOwner is whose schedules a request reaches: an admin's reach
// every owner's, anyone else's only their own.
func scheduleOwner(ctx context.Context) string {
	if isAdmin(ctx) {
		return runner.AnyOwner
	}
	return owner(ctx)
}

func requireScheduleID(id string) error {
	if id == "" {
		return errs.Invalid(errs.CodeInvalidArgument, "schedule_id is required").With("field", "schedule_id")
	}
	return nil
}

func overlapOf(o agentsv1.ScheduleOverlap) schedule.Overlap {
	if o == agentsv1.ScheduleOverlap_SCHEDULE_OVERLAP_QUEUE {
		return schedule.OverlapQueue
	}
	return schedule.OverlapSkip
}

func missedOf(m agentsv1.ScheduleMissed) schedule.Missed {
	if m == agentsv1.ScheduleMissed_SCHEDULE_MISSED_ONCE {
		return schedule.MissedOnce
	}
	return schedule.MissedSkip
}

func (h *scheduleService) CreateSchedule(ctx context.Context, req *connect.Request[agentsv1.CreateScheduleRequest]) (*connect.Response[agentsv1.CreateScheduleResponse], error) {
	m := req.Msg
	b, err := budgetArg(m.GetBudget())
	if err != nil {
		return nil, err
	}
	if err := scheduleMessage(m.GetMessage()); err != nil {
		return nil, err
	}
	msg := message(m.GetMessage())
	spec := schedule.Spec{
		Name: m.GetName(), Agent: m.GetAgent(), SessionID: m.GetSessionId(),
		Cron: m.GetCron(), Every: m.GetEvery(), Timezone: m.GetTimezone(),
		Text: msg.Text, Attachments: msg.Attachments, Budget: b, Params: m.GetParams(),
		Overlap: overlapOf(m.GetOverlap()), Missed: missedOf(m.GetMissed()),
	}
	if m.At != nil {
		spec.At = m.GetAt().AsTime()
	}
	enabled := m.Enabled == nil || m.GetEnabled()
	v, err := h.s.runner.CreateSchedule(ctx, owner(ctx), spec, enabled, m.GetIdempotencyKey())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.CreateScheduleResponse{Schedule: scheduleOf(v)}), nil
}

func (h *scheduleService) GetSchedule(ctx context.Context, req *connect.Request[agentsv1.GetScheduleRequest]) (*connect.Response[agentsv1.GetScheduleResponse], error) {
	if err := requireScheduleID(req.Msg.GetScheduleId()); err != nil {
		return nil, err
	}
	v, err := h.s.runner.GetSchedule(ctx, scheduleOwner(ctx), req.Msg.GetScheduleId())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.GetScheduleResponse{Schedule: scheduleOf(v)}), nil
}

func (h *scheduleService) ListSchedules(ctx context.Context, req *connect.Request[agentsv1.ListSchedulesRequest]) (*connect.Response[agentsv1.ListSchedulesResponse], error) {
	list, err := h.s.runner.ListSchedules(ctx, scheduleOwner(ctx), store.ScheduleFilter{Agent: req.Msg.GetAgent(), SessionID: req.Msg.GetSessionId()})
	if err != nil {
		return nil, err
	}
	out := &agentsv1.ListSchedulesResponse{Schedules: make([]*agentsv1.Schedule, len(list))}
	for i, v := range list {
		out.Schedules[i] = scheduleOf(v)
	}
	return connect.NewResponse(out), nil
}

func (h *scheduleService) UpdateSchedule(ctx context.Context, req *connect.Request[agentsv1.UpdateScheduleRequest]) (*connect.Response[agentsv1.UpdateScheduleResponse], error) {
	m := req.Msg
	if err := requireScheduleID(m.GetScheduleId()); err != nil {
		return nil, err
	}
	b, err := budgetArg(m.GetBudget())
	if err != nil {
		return nil, err
	}
	v, err := h.s.runner.UpdateSchedule(ctx, scheduleOwner(ctx), m.GetScheduleId(), func(spec *schedule.Spec, enabled *bool) error {
		if err := patchSchedule(m, spec, enabled); err != nil {
			return err
		}
		if m.Budget != nil {
			spec.Budget = b
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.UpdateScheduleResponse{Schedule: scheduleOf(v)}), nil
}

// scheduleMessage refuses what a schedule's message cannot keep: a
// firing never interrupts a run (with overlap queue, its message joins
// the run at its next step), so an interrupting one would be stored
// without it.
func scheduleMessage(m *agentsv1.Message) error {
	if m.GetInterrupt() {
		return errs.Invalid(errs.CodeInvalidArgument, "message.interrupt: a schedule's message does not interrupt a run (with overlap queue it joins the run at its next step); leave interrupt out").With("field", "message.interrupt")
	}
	return nil
}

// patchSchedule applies to spec what an update sets. An update names at
// most one target and one timing: given two, which one it meant is not
// for the server to guess.
func patchSchedule(m *agentsv1.UpdateScheduleRequest, spec *schedule.Spec, enabled *bool) error {
	if m.Agent != nil && m.SessionId != nil {
		return errs.Invalid(errs.CodeInvalidArgument, "agent: give agent or session_id, not both").With("field", "agent")
	}
	var timings []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"cron", m.Cron != nil}, {"every", m.Every != nil}, {"at", m.At != nil}} {
		if f.set {
			timings = append(timings, f.name)
		}
	}
	if len(timings) > 1 {
		return errs.Invalid(errs.CodeInvalidArgument, "%s: give one of cron, every and at, not %s", timings[0], strings.Join(timings, " and ")).With("field", timings[0])
	}
	if m.Name != nil {
		spec.Name = m.GetName()
	}
	switch {
	case m.Agent != nil:
		spec.Agent, spec.SessionID = m.GetAgent(), ""
	case m.SessionId != nil:
		spec.Agent, spec.SessionID = "", m.GetSessionId()
	}
	switch {
	case m.Cron != nil:
		spec.Cron, spec.Every, spec.At = m.GetCron(), "", time.Time{}
	case m.Every != nil:
		spec.Cron, spec.Every, spec.At = "", m.GetEvery(), time.Time{}
	case m.At != nil:
		spec.Cron, spec.Every, spec.At = "", "", m.GetAt().AsTime()
	}
	if m.Timezone != nil {
		spec.Timezone = m.GetTimezone()
	}
	if m.Message != nil {
		if err := scheduleMessage(m.GetMessage()); err != nil {
			return err
		}
		msg := message(m.GetMessage())
		spec.Text, spec.Attachments = msg.Text, msg.Attachments
	}
	if m.GetUpdateParams() {
		spec.Params = m.GetParams()
	}
	if m.Enabled != nil {
		*enabled = m.GetEnabled()
	}
	if m.GetOverlap() != agentsv1.ScheduleOverlap_SCHEDULE_OVERLAP_UNSPECIFIED {
		spec.Overlap = overlapOf(m.GetOverlap())
	}
	if m.GetMissed() != agentsv1.ScheduleMissed_SCHEDULE_MISSED_UNSPECIFIED {
		spec.Missed = missedOf(m.GetMissed())
	}
	return nil
}

func (h *scheduleService) DeleteSchedule(ctx context.Context, req *connect.Request[agentsv1.DeleteScheduleRequest]) (*connect.Response[agentsv1.DeleteScheduleResponse], error) {
	if err := requireScheduleID(req.Msg.GetScheduleId()); err != nil {
		return nil, err
	}
	if err := h.s.runner.DeleteSchedule(ctx, scheduleOwner(ctx), req.Msg.GetScheduleId()); err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.DeleteScheduleResponse{}), nil
}

// setEnabled pauses or resumes a schedule.
func (h *scheduleService) setEnabled(ctx context.Context, id string, on bool) (*agentsv1.Schedule, error) {
	if err := requireScheduleID(id); err != nil {
		return nil, err
	}
	v, err := h.s.runner.UpdateSchedule(ctx, scheduleOwner(ctx), id, func(_ *schedule.Spec, enabled *bool) error {
		*enabled = on
		return nil
	})
	if err != nil {
		return nil, err
	}
	return scheduleOf(v), nil
}

func (h *scheduleService) PauseSchedule(ctx context.Context, req *connect.Request[agentsv1.PauseScheduleRequest]) (*connect.Response[agentsv1.PauseScheduleResponse], error) {
	sc, err := h.setEnabled(ctx, req.Msg.GetScheduleId(), false)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.PauseScheduleResponse{Schedule: sc}), nil
}

func (h *scheduleService) ResumeSchedule(ctx context.Context, req *connect.Request[agentsv1.ResumeScheduleRequest]) (*connect.Response[agentsv1.ResumeScheduleResponse], error) {
	sc, err := h.setEnabled(ctx, req.Msg.GetScheduleId(), true)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.ResumeScheduleResponse{Schedule: sc}), nil
}

func (h *scheduleService) FireSchedule(ctx context.Context, req *connect.Request[agentsv1.FireScheduleRequest]) (*connect.Response[agentsv1.FireScheduleResponse], error) {
	if err := requireScheduleID(req.Msg.GetScheduleId()); err != nil {
		return nil, err
	}
	f, err := h.s.runner.FireSchedule(ctx, scheduleOwner(ctx), req.Msg.GetScheduleId())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.FireScheduleResponse{Firing: wire.Firing(f)}), nil
}

func (h *scheduleService) ListFirings(ctx context.Context, req *connect.Request[agentsv1.ListFiringsRequest]) (*connect.Response[agentsv1.ListFiringsResponse], error) {
	if err := requireScheduleID(req.Msg.GetScheduleId()); err != nil {
		return nil, err
	}
	limit := int(req.Msg.GetLimit())
	if limit <= 0 {
		limit = defaultFirings
	}
	list, err := h.s.runner.ListFirings(ctx, scheduleOwner(ctx), req.Msg.GetScheduleId(), min(limit, maxFirings))
	if err != nil {
		return nil, err
	}
	out := &agentsv1.ListFiringsResponse{Firings: make([]*agentsv1.ScheduleFiring, len(list))}
	for i, f := range list {
		out.Firings[i] = wire.Firing(f)
	}
	return connect.NewResponse(out), nil
}

// scheduleOf is a schedule on the wire.
func scheduleOf(v runner.ScheduleView) *agentsv1.Schedule {
	sp := v.Spec
	out := &agentsv1.Schedule{
		Id: v.ID, Owner: v.Owner, Name: sp.Name, Agent: sp.Agent, SessionId: sp.SessionID,
		Cron: sp.Cron, Every: sp.Every, At: wire.Timestamp(sp.At), Timezone: sp.Timezone,
		Message: &agentsv1.Message{Text: sp.Text}, Budget: wire.Budget(sp.Budget), Params: sp.Params,
		Enabled: v.Enabled, Created: wire.Timestamp(v.Created), Updated: wire.Timestamp(v.Updated),
		Overlap: agentsv1.ScheduleOverlap_SCHEDULE_OVERLAP_SKIP, Missed: agentsv1.ScheduleMissed_SCHEDULE_MISSED_SKIP,
	}
	for _, a := range sp.Attachments {
		out.Message.Attachments = append(out.Message.Attachments, &agentsv1.Attachment{Name: a.Name, MediaType: a.MediaType, Data: a.Data})
	}
	if sp.Overlap == schedule.OverlapQueue {
		out.Overlap = agentsv1.ScheduleOverlap_SCHEDULE_OVERLAP_QUEUE
	}
	if sp.Missed == schedule.MissedOnce {
		out.Missed = agentsv1.ScheduleMissed_SCHEDULE_MISSED_ONCE
	}
	for _, t := range v.Next {
		out.NextFirings = append(out.NextFirings, wire.Timestamp(t))
	}
	if v.Last != nil {
		out.LastFiring = wire.Firing(*v.Last)
	}
	return out
}
