package server

import (
	"context"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/wire"
)

// ownerService serves OwnerService.
type ownerService struct {
	s *Server
}

var _ agentsv1connect.OwnerServiceHandler = (*ownerService)(nil)

// checkCost refuses a cost limit session.CheckDollars refuses, naming the
// field: beyond its range the limit would not hold in Nanos. (Every
// request's negative integers are refused already, the token limits with
// them: see checkValue.)
func checkCost(field string, cost *float64) error {
	if cost == nil {
		return nil
	}
	if err := session.CheckDollars(*cost); err != nil {
		return errs.Invalid(errs.CodeInvalidArgument, "%s %v", field, err)
	}
	return nil
}

// budgetArg checks and converts a request's budget; nil for none.
func budgetArg(b *agentsv1.Budget) (*session.Budget, error) {
	if b == nil {
		return nil, nil
	}
	if err := checkCost("budget.cost_usd", b.CostUsd); err != nil {
		return nil, err
	}
	return wire.BudgetFrom(b), nil
}

func (h *sessionService) UpdateSession(ctx context.Context, req *connect.Request[agentsv1.UpdateSessionRequest]) (*connect.Response[agentsv1.UpdateSessionResponse], error) {
	m := req.Msg
	if err := requireID(m.GetSessionId()); err != nil {
		return nil, err
	}
	b, err := budgetArg(m.GetBudget())
	if err != nil {
		return nil, err
	}
	meta, err := h.s.runner.UpdateSession(ctx, owner(ctx), m.GetSessionId(), runner.Update{Budget: b, Title: m.Title})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.UpdateSessionResponse{Meta: wire.Meta(meta)}), nil
}

// ownerArg is the owner a read names: the caller's when empty; another
// one's needs an admin token.
func ownerArg(ctx context.Context, name string) (string, error) {
	if name == "" || name == owner(ctx) {
		return owner(ctx), nil
	}
	if !isAdmin(ctx) {
		return "", errs.PermissionDenied(errs.CodePermissionDenied, "another owner's budget and usage need an admin token")
	}
	return name, nil
}

func (h *ownerService) SetOwnerBudget(ctx context.Context, req *connect.Request[agentsv1.SetOwnerBudgetRequest]) (*connect.Response[agentsv1.SetOwnerBudgetResponse], error) {
	m := req.Msg
	if !isAdmin(ctx) {
		return nil, errs.PermissionDenied(errs.CodePermissionDenied, "setting a budget needs an admin token")
	}
	if m.GetOwner() == "" {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "owner is required")
	}
	if err := checkCost("cost_usd", m.CostUsd); err != nil {
		return nil, err
	}
	b := session.OwnerBudget{Owner: m.GetOwner(), Period: period(m.GetPeriod())}
	if l := wire.BudgetFrom(&agentsv1.Budget{Tokens: m.Tokens, CostUsd: m.CostUsd, AutoResume: m.GetAutoResume()}); l != nil {
		b.Budget = *l
	}
	set, err := h.s.runner.SetOwnerBudget(ctx, b)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.SetOwnerBudgetResponse{Budget: ownerBudget(set)}), nil
}

func (h *ownerService) GetOwnerBudget(ctx context.Context, req *connect.Request[agentsv1.GetOwnerBudgetRequest]) (*connect.Response[agentsv1.GetOwnerBudgetResponse], error) {
	name, err := ownerArg(ctx, req.Msg.GetOwner())
	if err != nil {
		return nil, err
	}
	b, err := h.s.runner.OwnerBudget(ctx, name)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.GetOwnerBudgetResponse{Budget: ownerBudget(b)}), nil
}

func (h *ownerService) GetOwnerUsage(ctx context.Context, req *connect.Request[agentsv1.GetOwnerUsageRequest]) (*connect.Response[agentsv1.GetOwnerUsageResponse], error) {
	name, err := ownerArg(ctx, req.Msg.GetOwner())
	if err != nil {
		return nil, err
	}
	u, err := h.s.runner.OwnerUsage(ctx, name)
	if err != nil {
		return nil, err
	}
	out := &agentsv1.OwnerUsage{
		Owner:   name,
		Budget:  ownerBudget(u.Budget),
		Current: wire.BudgetState(&u.Budget.Budget, u.InPeriod),
		Total:   wire.Spend(u.Total),
	}
	if !u.Start.IsZero() {
		out.PeriodStart, out.PeriodEnd = wire.Timestamp(u.Start), wire.Timestamp(u.End)
	}
	if out.Series, err = h.series(ctx, name, req.Msg); err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.GetOwnerUsageResponse{Usage: out}), nil
}

// series reads the usage series a GetOwnerUsage request asks for, of the
// owner name or, with all_owners, of every owner; nil for none.
func (h *ownerService) series(ctx context.Context, name string, m *agentsv1.GetOwnerUsageRequest) (*agentsv1.UsageSeries, error) {
	var bucket time.Duration
	switch m.GetBucket() {
	case agentsv1.UsageBucket_USAGE_BUCKET_UNSPECIFIED:
		if m.GetAllOwners() || m.Since != nil || m.Until != nil {
			return nil, errs.Invalid(errs.CodeInvalidArgument, "since, until and all_owners shape a usage series: ask for one with bucket (hour or day)")
		}
		return nil, nil
	case agentsv1.UsageBucket_USAGE_BUCKET_HOUR:
		bucket = runner.Hour
	case agentsv1.UsageBucket_USAGE_BUCKET_DAY:
		bucket = runner.Day
	default:
		return nil, errs.Invalid(errs.CodeInvalidArgument, "unknown usage bucket %d", m.GetBucket())
	}
	if m.GetAllOwners() {
		if !isAdmin(ctx) {
			return nil, errs.PermissionDenied(errs.CodePermissionDenied, "every owner's usage needs an admin token")
		}
		name = ""
	}
	var since, until time.Time
	for _, f := range []struct {
		name string
		ts   *timestamppb.Timestamp
		dst  *time.Time
	}{{"since", m.Since, &since}, {"until", m.Until, &until}} {
		if f.ts == nil {
			continue
		}
		if err := f.ts.CheckValid(); err != nil {
			return nil, errs.Invalid(errs.CodeInvalidArgument, "%s: %v", f.name, err)
		}
		*f.dst = f.ts.AsTime()
	}
	q, points, err := h.s.runner.UsageSeries(ctx, name, bucket, since, until)
	if err != nil {
		return nil, err
	}
	out := &agentsv1.UsageSeries{Bucket: m.GetBucket(), Since: wire.Timestamp(q.Since), Until: wire.Timestamp(q.Until), Points: make([]*agentsv1.UsagePoint, len(points))}
	for i, p := range points {
		out.Points[i] = &agentsv1.UsagePoint{
			Start: wire.Timestamp(p.Start), Owner: p.Owner, Agent: p.Agent, Model: p.Model, Calls: p.Calls,
			PromptTokens: p.Prompt, CompletionTokens: p.Completion, CostUsd: p.Cost.Dollars(),
		}
	}
	return out, nil
}

func period(p agentsv1.BudgetPeriod) session.Period {
	switch p {
	case agentsv1.BudgetPeriod_BUDGET_PERIOD_DAY:
		return session.PeriodDay
	case agentsv1.BudgetPeriod_BUDGET_PERIOD_MONTH:
		return session.PeriodMonth
	}
	return session.PeriodTotal
}

func ownerBudget(b session.OwnerBudget) *agentsv1.OwnerBudget {
	out := &agentsv1.OwnerBudget{Owner: b.Owner, Budget: wire.Budget(&b.Budget)}
	switch b.Period {
	case session.PeriodDay:
		out.Period = agentsv1.BudgetPeriod_BUDGET_PERIOD_DAY
	case session.PeriodMonth:
		out.Period = agentsv1.BudgetPeriod_BUDGET_PERIOD_MONTH
	default:
		out.Period = agentsv1.BudgetPeriod_BUDGET_PERIOD_TOTAL
	}
	switch b.Source {
	case "owner":
		out.Source = agentsv1.BudgetSource_BUDGET_SOURCE_OWNER
	case "default":
		out.Source = agentsv1.BudgetSource_BUDGET_SOURCE_DEFAULT
	default:
		out.Source = agentsv1.BudgetSource_BUDGET_SOURCE_NONE
	}
	return out
}
