package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/committer"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/schedule"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/wire"
)

// Schedules. A schedule fires by a change like any other request's: a
// new session of its agent (CreateSession) or a message posted to its
// session (an operation, so a session another server holds gets it
// through that server). The firing's row rides in that change (see
// store.FiringClaim): the session or message and the firing are stored
// together or not at all, so a crash between the claim and the start
// neither loses nor repeats a firing, and of two servers that find the
// schedule due, the one whose change moves its next time first fires.

// DefaultScheduleGrace is how late a firing may be and still count as on
// time; a time further past was missed while no server ran, and follows
// the schedule's missed rule.
const DefaultScheduleGrace = 15 * time.Second

// ScheduleView is a schedule as a client sees it, with its last firing
// (Schedule.Last).
type ScheduleView struct {
	store.Schedule
	Spec schedule.Spec
	// Next are the next firing times.
	Next []time.Time
}

// CreateSchedule stores a schedule for owner, enabled unless told
// otherwise. With an idempotency key, a retry returns the schedule the
// first request created.
func (r *Runner) CreateSchedule(ctx context.Context, owner string, spec schedule.Spec, enabled bool, key string) (ScheduleView, error) {
	idem := keyFor(key, opSchedule, struct {
		Spec    schedule.Spec
		Enabled bool
	}{spec, enabled})
	if done, err := r.replayed(ctx, owner, idem); err != nil || done != nil {
		if err != nil {
			return ScheduleView{}, err
		}
		return r.GetSchedule(ctx, owner, done.ScheduleID)
	}
	now := r.now()
	spec.Anchor = now
	tm, err := r.checkSchedule(ctx, owner, &spec, false)
	if err != nil {
		return ScheduleView{}, err
	}
	sc := store.Schedule{ID: uuid.NewString(), Owner: owner, Agent: spec.Agent, SessionID: spec.SessionID,
		Enabled: enabled, Created: now, Updated: now}
	if enabled {
		sc.NextDue = tm.Next(now)
	}
	if sc.Spec, err = spec.Encode(); err != nil {
		return ScheduleView{}, err
	}
	ch := &store.Change{Schedule: &sc, Idempotency: r.idempotency(owner, idem, keyed{ScheduleID: sc.ID})}
	if err := r.write(ctx, ch, []*agentsv1.Event{scheduleChanged(owner, sc.ID, agentsv1.ScheduleChange_SCHEDULE_CHANGE_CREATED)}); err != nil {
		if errs.KindOf(err) == errs.KindConflict && key != "" {
			// The same key raced this request and won: answer as it did.
			if done, rerr := r.replayed(ctx, owner, idem); rerr == nil && done != nil {
				return r.GetSchedule(ctx, owner, done.ScheduleID)
			}
		}
		return ScheduleView{}, err
	}
	r.wakeScheduler()
	return r.scheduleView(sc)
}

// scheduleChanged announces a change of a schedule to its owner's
// clients, and to the schedulers of the servers sharing the database
// (see follow), which look at their next times again.
func scheduleChanged(owner, id string, change agentsv1.ScheduleChange) *agentsv1.Event {
	return events.WithKind(&agentsv1.Event{Owner: owner,
		Body: &agentsv1.Event_ScheduleChanged{ScheduleChanged: &agentsv1.ScheduleChanged{ScheduleId: id, Change: change}}})
}

// checkSchedule checks a spec and its target: an agent that exists with
// the params it requires, or a session of owner's. A single time that is
// past is refused unless pastAt allows it (an update that leaves it as
// it was: the schedule just fires no more).
func (r *Runner) checkSchedule(ctx context.Context, owner string, spec *schedule.Spec, pastAt bool) (schedule.Timing, error) {
	tm, err := spec.Check()
	if err != nil {
		return nil, err
	}
	if !pastAt && !spec.At.IsZero() && !spec.At.After(r.now()) {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "at: %s is past", spec.At.Format(time.RFC3339)).With("field", "at")
	}
	if err := checkMessage(&Message{Text: spec.Text, Attachments: spec.Attachments}); err != nil {
		return nil, err
	}
	if spec.Budget != nil {
		if spec.SessionID != "" {
			return nil, errs.Invalid(errs.CodeInvalidArgument, "budget: only a schedule of an agent starts sessions with a budget; set the session's with UpdateSession").With("field", "budget")
		}
		if !spec.Budget.Limited() {
			spec.Budget = nil
		}
	}
	if spec.Agent != "" {
		agent, err := r.cat.Get(spec.Agent)
		if err != nil {
			return nil, err
		}
		if err := noSecretParams(agent.Params, spec.Params); err != nil {
			return nil, err
		}
		if missing := missingIn(agent.Params, spec.Params); len(missing) > 0 {
			return nil, paramsRequired(missing)
		}
		return tm, nil
	}
	m, err := r.store.GetMeta(ctx, spec.SessionID)
	if err != nil {
		return nil, err
	}
	if owner != AnyOwner && m.Owner != owner {
		return nil, unknownSession(spec.SessionID)
	}
	if agent, err := r.cat.Get(m.Agent); err == nil {
		if err := noSecretParams(agent.Params, spec.Params); err != nil {
			return nil, err
		}
	}
	return tm, nil
}

// noSecretParams refuses a schedule's params that name a secret param
// of its agent: a schedule stores its params and shows them in every
// answer, and a secret is never stored nor returned.
func noSecretParams(declared []agentfile.Param, given map[string]string) error {
	for _, p := range declared {
		if _, ok := given[p.Name]; ok && p.Secret {
			return errs.Invalid(errs.CodeInvalidArgument, "params.%s: the agent declares %s secret, and a schedule stores its params and shows them: a secret is never stored (give a schedule no secret)", p.Name, p.Name).With("field", "params."+p.Name)
		}
	}
	return nil
}

func unknownSession(id string) error {
	return errs.NotFound(errs.CodeUnknownSession, "unknown session %s", id)
}

func unknownSchedule(id string) error {
	return errs.NotFound(errs.CodeUnknownSchedule, "unknown schedule %s", id)
}

// ownSchedule reads a schedule of owner's: another owner's is not
// found, so ids of other owners cannot be probed.
func (r *Runner) ownSchedule(ctx context.Context, owner, id string) (store.Schedule, schedule.Spec, error) {
	sc, err := r.store.GetSchedule(ctx, id)
	if err != nil {
		return store.Schedule{}, schedule.Spec{}, err
	}
	if owner != AnyOwner && sc.Owner != owner {
		return store.Schedule{}, schedule.Spec{}, unknownSchedule(id)
	}
	spec, err := schedule.Decode(sc.Spec)
	return sc, spec, err
}

// GetSchedule returns a schedule of owner's.
func (r *Runner) GetSchedule(ctx context.Context, owner, id string) (ScheduleView, error) {
	sc, _, err := r.ownSchedule(ctx, owner, id)
	if err != nil {
		return ScheduleView{}, err
	}
	return r.scheduleView(sc)
}

// ListSchedules lists the schedules f selects of owner's (AnyOwner:
// every owner's).
func (r *Runner) ListSchedules(ctx context.Context, owner string, f store.ScheduleFilter) ([]ScheduleView, error) {
	f.Owner = owner
	list, err := r.store.ListSchedules(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]ScheduleView, 0, len(list))
	for _, sc := range list {
		v, err := r.scheduleView(sc)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// UpdateSchedule changes a schedule of owner's with change, which edits
// its spec and enabled flag. A new timing, or a schedule enabled again,
// counts its next time from now. The change is announced as a pause or
// a resume when it turned the schedule off or on, else as an update.
func (r *Runner) UpdateSchedule(ctx context.Context, owner, id string, change func(spec *schedule.Spec, enabled *bool) error) (ScheduleView, error) {
	sc, spec, err := r.ownSchedule(ctx, owner, id)
	if err != nil {
		return ScheduleView{}, err
	}
	before, wasEnabled := spec, sc.Enabled
	if err := change(&spec, &sc.Enabled); err != nil {
		return ScheduleView{}, err
	}
	now := r.now()
	retimed := spec.Cron != before.Cron || spec.Every != before.Every || !spec.At.Equal(before.At) || spec.Timezone != before.Timezone
	if retimed || (sc.Enabled && !wasEnabled) {
		spec.Anchor = now
	}
	tm, err := r.checkSchedule(ctx, sc.Owner, &spec, spec.At.Equal(before.At))
	if err != nil {
		return ScheduleView{}, err
	}
	switch {
	case !sc.Enabled:
		sc.NextDue = time.Time{}
	case retimed || !wasEnabled || sc.NextDue.IsZero():
		sc.NextDue = tm.Next(now)
	}
	sc.Agent, sc.SessionID, sc.Updated = spec.Agent, spec.SessionID, now
	if sc.Spec, err = spec.Encode(); err != nil {
		return ScheduleView{}, err
	}
	what := agentsv1.ScheduleChange_SCHEDULE_CHANGE_UPDATED
	switch {
	case wasEnabled && !sc.Enabled:
		what = agentsv1.ScheduleChange_SCHEDULE_CHANGE_PAUSED
	case !wasEnabled && sc.Enabled:
		what = agentsv1.ScheduleChange_SCHEDULE_CHANGE_RESUMED
	}
	ch := &store.Change{ScheduleChange: &store.ScheduleChange{Update: &sc}}
	if err := r.write(ctx, ch, []*agentsv1.Event{scheduleChanged(sc.Owner, sc.ID, what)}); err != nil {
		return ScheduleView{}, err
	}
	r.wakeScheduler()
	return r.scheduleView(sc)
}

// DeleteSchedule deletes a schedule of owner's with its firings.
func (r *Runner) DeleteSchedule(ctx context.Context, owner, id string) error {
	sc, _, err := r.ownSchedule(ctx, owner, id)
	if err != nil {
		return err
	}
	ch := &store.Change{ScheduleChange: &store.ScheduleChange{Delete: id}}
	return r.write(ctx, ch, []*agentsv1.Event{scheduleChanged(sc.Owner, id, agentsv1.ScheduleChange_SCHEDULE_CHANGE_DELETED)})
}

// schedulesGoneWith announces the deletion of the schedules that post to
// a session, which the session's delete takes with it (store.Change.Delete).
func (r *Runner) schedulesGoneWith(ctx context.Context, sessionID string) ([]*agentsv1.Event, error) {
	list, err := r.store.ListSchedules(ctx, store.ScheduleFilter{SessionID: sessionID})
	if err != nil {
		return nil, err
	}
	evs := make([]*agentsv1.Event, len(list))
	for i, sc := range list {
		evs[i] = scheduleChanged(sc.Owner, sc.ID, agentsv1.ScheduleChange_SCHEDULE_CHANGE_DELETED)
	}
	return evs, nil
}

// ListFirings lists the firings of a schedule of owner's, newest first.
func (r *Runner) ListFirings(ctx context.Context, owner, id string, limit int) ([]store.Firing, error) {
	if _, _, err := r.ownSchedule(ctx, owner, id); err != nil {
		return nil, err
	}
	return r.store.ListFirings(ctx, id, limit)
}

// FireSchedule fires a schedule of owner's now, once, paused or not; its
// regular times are unchanged.
func (r *Runner) FireSchedule(ctx context.Context, owner, id string) (store.Firing, error) {
	sc, spec, err := r.ownSchedule(ctx, owner, id)
	if err != nil {
		return store.Firing{}, err
	}
	now := r.now()
	return r.fire(ctx, sc, spec, store.FiringClaim{Firing: store.Firing{ScheduleID: sc.ID, FireTime: now, Fired: now, Manual: true}})
}

// scheduleView is sc as a client sees it: its spec and next times.
func (r *Runner) scheduleView(sc store.Schedule) (ScheduleView, error) {
	spec, err := schedule.Decode(sc.Spec)
	if err != nil {
		return ScheduleView{}, err
	}
	v := ScheduleView{Schedule: sc, Spec: spec}
	if sc.Enabled && !sc.NextDue.IsZero() {
		if tm, err := spec.Timing(); err == nil {
			v.Next = append([]time.Time{sc.NextDue}, schedule.Next(tm, sc.NextDue, schedule.Upcoming-1)...)
		}
	}
	return v, nil
}

// fireDue fires a schedule found due: at its next time, or, when that
// time is past the grace, as its missed rule says.
func (r *Runner) fireDue(ctx context.Context, sc store.Schedule) error {
	spec, err := schedule.Decode(sc.Spec)
	if err != nil {
		return err
	}
	tm, err := spec.Timing()
	if err != nil {
		return err
	}
	now, due := r.now(), sc.NextDue
	claim := store.FiringClaim{
		Firing:  store.Firing{ScheduleID: sc.ID, FireTime: due, Fired: now},
		Advance: &store.Advance{From: due, To: tm.Next(due)},
	}
	if now.Sub(due) > r.scheduleGrace() {
		// Missed while no server ran: the schedule goes on from now.
		claim.Advance.To = tm.Next(now)
		if spec.Missed != schedule.MissedOnce {
			_, err := r.store.AdvanceSchedule(ctx, sc.ID, due, claim.Advance.To)
			r.log.Info("schedule missed its times while no server ran; skipped", "schedule", sc.ID, "from", due, "next", claim.Advance.To)
			return err
		}
		// Once for them all: the firing stands for the first missed time.
		claim.Firing.CatchUp = true
	}
	_, err = r.fire(ctx, sc, spec, claim)
	return err
}

func (r *Runner) scheduleGrace() time.Duration {
	if r.opts.ScheduleGrace > 0 {
		return r.opts.ScheduleGrace
	}
	return DefaultScheduleGrace
}

// fire does a firing: starts a session of the schedule's agent, or posts
// to its session. A firing that cannot send its message is recorded as
// failed, with why; one that another server claimed first, or that this
// server cannot do now (it is closing, the database is away), is left to
// the next try, on this server or another.
func (r *Runner) fire(ctx context.Context, sc store.Schedule, spec schedule.Spec, claim store.FiringClaim) (store.Firing, error) {
	var f store.Firing
	var err error
	if spec.Agent != "" {
		f, err = r.fireAgent(ctx, sc, spec, claim)
	} else {
		f, _, err = onHolder(ctx, r, sc.Owner, spec.SessionID, fireCommand{Claim: claim, Text: spec.Text,
			Attachments: spec.Attachments, Params: spec.Params, Overlap: spec.Overlap})
	}
	if err == nil || retryFiring(err) {
		return f, err
	}
	f = claim.Firing
	f.Status, f.SessionID = store.FiringFailed, spec.SessionID
	f.Reason = "internal error"
	if e, ok := errs.As(err); ok {
		f.Reason = e.Message
	} else {
		r.log.Error("fire schedule", "schedule", sc.ID, "err", err)
	}
	claim.Firing = f
	if werr := r.write(ctx, &store.Change{Firing: &claim}, []*agentsv1.Event{firedEvent(f, sc.Owner)}); werr != nil {
		return store.Firing{}, werr
	}
	return f, nil
}

// retryFiring says a firing's error leaves it to a later try: claimed by
// another server, or not done for reasons of the moment.
func retryFiring(err error) bool {
	switch errs.KindOf(err) {
	case errs.KindConflict, errs.KindUnavailable, errs.KindCanceled:
		return true
	}
	return errors.Is(err, errClosing) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		committer.Classify(err) == committer.Transient
}

// fireAgent starts a session of the schedule's agent with its message;
// the firing is stored with the session.
func (r *Runner) fireAgent(ctx context.Context, sc store.Schedule, spec schedule.Spec, claim store.FiringClaim) (store.Firing, error) {
	view, err := r.CreateSession(ctx, sc.Owner, CreateRequest{
		Agent:   spec.Agent,
		Message: &Message{Text: spec.Text, Attachments: spec.Attachments},
		Params:  spec.Params,
		Title:   spec.Name,
		Budget:  spec.Budget,
		firing:  &claim,
	})
	if err != nil {
		return store.Firing{}, err
	}
	f := claim.Firing
	f.Status, f.SessionID = store.FiringStarted, view.Meta.ID
	return f, nil
}

// startedBy adds to a new session's first write the firing that starts
// it, with schedule.fired.
func startedBy(e *edit, claim *store.FiringClaim) {
	if claim == nil {
		return
	}
	c := *claim
	c.Firing.Status, c.Firing.SessionID = store.FiringStarted, e.meta.ID
	e.firing = &c
	e.events = append(e.events, firedEvent(c.Firing, e.meta.Owner))
}

// firedEvent announces a firing.
func firedEvent(f store.Firing, owner string) *agentsv1.Event {
	return events.WithKind(&agentsv1.Event{SessionId: f.SessionID, Owner: owner,
		Body: &agentsv1.Event_ScheduleFired{ScheduleFired: &agentsv1.ScheduleFired{Firing: wire.Firing(f)}}})
}

// fireCommand is a firing of a schedule that posts to a session, on the
// session's holder.
type fireCommand struct {
	Claim       store.FiringClaim    `json:"claim"`
	Text        string               `json:"text"`
	Attachments []session.Attachment `json:"attachments,omitempty"`
	Params      map[string]string    `json:"params,omitempty"`
	Overlap     schedule.Overlap     `json:"overlap"`
}

func (fireCommand) name() string { return "fire_schedule" }

// apply posts the message, or, while the session is busy, queues it as
// mail or skips it as the schedule's overlap says; the firing is stored
// with what it did. A command applied twice (its first holder died
// before finishing it) finds the firing claimed.
func (b fireCommand) apply(ctx context.Context, r *Runner, at target) (store.Firing, error) {
	var f store.Firing
	err := r.withSession(ctx, at.session, func(a *actor) error {
		if err := a.authorize(at.owner); err != nil {
			return err
		}
		if _, err := r.agentFor(ctx, a.st.meta, 0); agentGone(err) {
			return err
		}
		claim := b.Claim
		claim.Firing.SessionID = a.id
		busy := a.run != nil || !a.st.meta.Status.AcceptsInput()
		switch {
		case busy && b.Overlap == schedule.OverlapQueue:
			claim.Firing.Status = store.FiringQueued
			a.setParams(b.Params)
			_, err := a.addMail(ctx, session.Mail{
				Sender: session.Sender{Kind: session.SenderUser, Name: a.st.meta.Owner},
				Body:   session.MailBody{Kind: session.MailUserMessage, Text: b.Text, AttachmentNames: attachmentNames(b.Attachments), Attachments: b.Attachments},
			}, keyedRequest{}, &claim)
			f = claim.Firing
			return err
		case busy:
			claim.Firing.Status = store.FiringSkipped
			claim.Firing.Reason = fmt.Sprintf("the session was %s", a.st.meta.Status)
			f = claim.Firing
			return a.write(ctx, &store.Change{Firing: &claim}, []*agentsv1.Event{firedEvent(claim.Firing, a.owner)})
		}
		if missing := missingIn(a.agentParams(), a.withParams(b.Params)); len(missing) > 0 {
			return paramsRequired(missing)
		}
		a.setParams(b.Params)
		claim.Firing.Status = store.FiringPosted
		e := a.edit()
		if e.meta.Title == "" {
			e.meta.Title = titleFrom(b.Text)
		}
		a.addUserTurn(e, session.UserTurn{Text: b.Text, Attachments: b.Attachments})
		e.firing = &claim
		e.events = append(e.events, firedEvent(claim.Firing, a.owner))
		f = claim.Firing
		return a.startRun(e, agentsv1.RunTrigger_RUN_TRIGGER_MESSAGE, 0)
	})
	if err != nil {
		return store.Firing{}, err
	}
	return f, nil
}

// The scheduler: every server runs one loop that fires the schedules due
// and sleeps until the next one is, or a schedule changes (its own
// server wakes it; the others when schedule.changed reaches them), or
// the poll passes (a safety net under those events). Of
// servers that find one schedule due together, one fires it (see
// fireDue); the others find it claimed.

// DefaultSchedulePoll is the longest the loop sleeps (Options.SchedulePoll
// at zero).
const DefaultSchedulePoll = 5 * time.Second

func (r *Runner) schedulePoll() time.Duration {
	if r.opts.SchedulePoll > 0 {
		return r.opts.SchedulePoll
	}
	return DefaultSchedulePoll
}

// scheduleBatch is how many due schedules one read takes.
const scheduleBatch = 32

// runSchedules is the scheduler loop; it ends with the runner.
func (r *Runner) runSchedules() {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-timer.C:
		case <-r.scheduleWake:
		}
		timer.Reset(r.fireDueSchedules())
	}
}

// wakeScheduler has the loop look again now: a schedule was created or
// changed, here or, as its schedule.changed event says, on another
// server sharing the database.
func (r *Runner) wakeScheduler() {
	select {
	case r.scheduleWake <- struct{}{}:
	default:
	}
}

// fireDueSchedules fires every schedule due and returns how long to
// sleep.
func (r *Runner) fireDueSchedules() time.Duration {
	if r.draining.Load() {
		return r.schedulePoll() // the other servers, or the next start, fire them
	}
	held := false
	for {
		due, err := r.store.DueSchedules(r.ctx, r.now(), scheduleBatch)
		if err != nil {
			if r.ctx.Err() == nil {
				r.log.Warn("read due schedules", "err", err)
			}
			return time.Second
		}
		for _, sc := range due {
			if err := r.fireDue(r.ctx, sc); err != nil {
				// Left due: tried again, not at once.
				held = true
				if errs.KindOf(err) != errs.KindConflict && r.ctx.Err() == nil {
					r.log.Warn("fire schedule", "schedule", sc.ID, "err", err)
				}
			}
		}
		if len(due) < scheduleBatch || held {
			break
		}
	}
	wait := r.schedulePoll()
	if next, err := r.store.NextDue(r.ctx); err == nil && !next.IsZero() {
		wait = min(max(next.Sub(r.now()), 0), r.schedulePoll())
	}
	if held {
		wait = max(wait, time.Second)
	}
	return wait
}
