package runner

import (
	"context"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// agentGone reports whether err says a session's stored agent is gone
// (see agentFor): posting to the session is refused with it.
func agentGone(err error) bool {
	code := errs.CodeOf(err)
	return code == errs.CodeAgentDeleted || code == errs.CodeAgentReplaced
}

// pinned is agent at version, for a session pinned to it; nil when
// version is 0 (the session follows the latest). A version the agent
// does not have, or a file agent, is errs.Invalid.
func (r *Runner) pinned(ctx context.Context, agent *catalog.Agent, version int64) (*catalog.Agent, error) {
	if version == 0 {
		return nil, nil
	}
	if version < 0 {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "agent_version: %d is not a version (versions start at 1; 0 follows the latest)", version)
	}
	a, err := r.cat.Version(ctx, agent.Slug, version)
	if err != nil {
		e, _ := errs.As(err)
		if e == nil {
			return nil, err
		}
		return nil, errs.Invalid(e.Code, "agent_version: %s", e.Message).With("field", "agent_version")
	}
	return a, nil
}

// runVersion is the version of its stored agent a run of a session
// keeps to (0: a file agent, or a pinned session, which runs its pin): the
// current one, or, for a run that goes on with the work of the last one
// (recovered after a restart or a failover, resumed after a pause or a
// client's answer), the version that one ran (the session's, stored when
// it started), so that neither a crash nor a wait makes it mix versions.
func (r *Runner) runVersion(m session.Meta, trigger agentsv1.RunTrigger) int64 {
	if m.AgentPin != 0 {
		return 0
	}
	cur, err := r.cat.Get(m.Agent)
	switch {
	case err != nil || cur.Source != catalog.SourceStored:
		return 0
	case goesOn(trigger) && m.AgentVersion >= cur.Generation:
		return m.AgentVersion
	}
	return cur.Version
}

// agentFor is the agent a session's next step runs: the version it is
// pinned to, else the version its run started with (started, 0: none),
// else the current one; never another generation of its
// stored agent than the one it was created with (errs.CodeAgentReplaced), and
// a stored agent no longer served is errs.CodeAgentDeleted.
func (r *Runner) agentFor(ctx context.Context, m session.Meta, started int64) (*catalog.Agent, error) {
	cur, err := r.cat.Get(m.Agent)
	if err != nil {
		if m.AgentGen != 0 {
			return nil, errs.FailedPrecondition(errs.CodeAgentDeleted, "the stored agent %q this session ran is no longer served: it was deleted (or no longer loads: the agents' load errors say why)", m.Agent)
		}
		return nil, err
	}
	if m.AgentGen != 0 && cur.Generation != m.AgentGen {
		return nil, errs.FailedPrecondition(errs.CodeAgentReplaced, "the agent %q this session ran was deleted, and the agent now under its slug is another (created at its version %d): fork the session to continue with it", m.Agent, cur.Generation)
	}
	want := m.AgentPin
	if want == 0 {
		want = started
	}
	if want == 0 || want == cur.Version {
		return cur, nil
	}
	return r.cat.Version(ctx, m.Agent, want)
}

// goesOn reports whether a run with this trigger goes on with the work
// of the session's last run rather than with new input.
func goesOn(trigger agentsv1.RunTrigger) bool {
	return trigger == agentsv1.RunTrigger_RUN_TRIGGER_RECOVERY || trigger == agentsv1.RunTrigger_RUN_TRIGGER_RESUME
}
